// Observability: what the daemon runs for metrics and status — the sessions'
// ClientStatsBook, the HA event log, the StatusCollector over the registry
// and the HTTP endpoint on canal.metrics.pull.port, with the admin API
// (admin_api.h) on the same port.
//
// The endpoint is an aid, not the service: when its port cannot be bound the
// error is logged and the server runs on without it (as Canal does).
#pragma once

#include <memory>
#include <string>

#include "canal/server/admin_api.h"
#include "canal/server/client_stats.h"
#include "canal/server/cluster_placement.h"
#include "canal/server/config.h"
#include "canal/server/http_endpoint.h"
#include "canal/server/instance_registry.h"
#include "canal/server/status_report.h"

namespace spdlog {
class logger;
}

namespace canal::server {

class Observability {
 public:
  Observability(const CanalConfig& config, std::shared_ptr<spdlog::logger> logger);
  ~Observability();  // Stop()s

  const std::shared_ptr<ClientStatsBook>& client_stats() const { return client_stats_; }
  HaEventLog* ha_events() { return &ha_events_; }

  // The admin API's settings (canal.admin.*) and the server mode it reports;
  // call before Start. Without it /api is still served, changes refused.
  void SetAdmin(AdminConfig config, std::string mode);
  // The admin API's cursor, config, log and snapshot routes act through it
  // (must outlive Stop()); without it they answer 503.
  void SetOperations(AdminOperations* operations) { operations_ = operations; }
  // A balanced cluster's placement (must outlive Stop()): /status shows it and
  // /api/cluster acts on it. Call before Start.
  void SetCluster(ClusterPlacement* cluster) { cluster_ = cluster; }

  // Serves the registry's destinations (`arbiter`: HA, may be null); the
  // address names this server on /status. Returns the endpoint's error
  // (also logged) and leaves it off; OK when canal.metrics.pull.port is 0.
  Status Start(InstanceRegistry* registry, const DestinationArbiter* arbiter, std::string server_address);
  void Stop();
  // The endpoint's port; 0 when it is off.
  uint16_t port() const;

 private:
  HttpEndpointOptions options_;
  bool enabled_ = false;
  std::shared_ptr<spdlog::logger> log_;
  std::shared_ptr<ClientStatsBook> client_stats_;
  HaEventLog ha_events_;
  std::unique_ptr<StatusCollector> collector_;
  AdminConfig admin_config_;
  AdminOperations* operations_ = nullptr;
  ClusterPlacement* cluster_ = nullptr;
  std::string mode_ = "tcp";
  std::unique_ptr<AdminApi> admin_;
  std::unique_ptr<HttpEndpoint> endpoint_;
};

}  // namespace canal::server
