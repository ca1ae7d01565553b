#include "canal/server/observability.h"

#include <spdlog/spdlog.h>

namespace canal::server {

Observability::Observability(const CanalConfig& config, std::shared_ptr<spdlog::logger> logger)
    : log_(logger ? std::move(logger) : spdlog::default_logger()), client_stats_(std::make_shared<ClientStatsBook>()) {
  enabled_ = config.metrics_port != 0;
  options_.ip = config.metrics_ip;
  options_.port = config.metrics_port;
  options_.max_connections = static_cast<size_t>(config.metrics_max_connections);
}

Observability::~Observability() { Stop(); }

Status Observability::Start(InstanceRegistry* registry, const DestinationArbiter* arbiter, std::string server_address) {
  if (!enabled_) {
    log_->info("metrics endpoint off (canal.metrics.pull.port = 0)");
    return Status::OK();
  }
  StatusSources sources;
  sources.destinations = [registry] { return registry->Destinations(); };
  sources.arbiter = arbiter;
  sources.ha_events = &ha_events_;
  sources.clients = client_stats_.get();
  sources.server_address = std::move(server_address);
  collector_ = std::make_unique<StatusCollector>(std::move(sources));
  Status s = HttpEndpoint::Create(options_, collector_.get(), log_, &endpoint_);
  if (!s.ok()) {
    log_->error("{}; serving clients without metrics and status", s.ToString());
    return s;
  }
  endpoint_->Start();
  return Status::OK();
}

void Observability::Stop() {
  if (endpoint_) endpoint_->Stop();
}

uint16_t Observability::port() const { return endpoint_ ? endpoint_->port() : 0; }

}  // namespace canal::server
