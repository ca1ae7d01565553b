// The observability side of the server: one ServerReport, collected at
// scrape time from what the modules keep anyway (each instance's parser,
// sink and ring snapshots, the sessions' ClientStats, the meta manager's
// cursors, the HA arbiter), rendered as
//   - Prometheus metrics (RenderMetrics; the series are listed in
//     docs/operations.md: Canal's canal_instance_* names, labels and
//     meanings, plus ours),
//   - /status as JSON (RenderStatusJson) and as an HTML page for a person
//     (RenderStatusHtml),
//   - /health (Healthy): every destination that should be active here is
//     streaming.
// Collecting takes each instance's status mutex briefly; nothing on a hot
// path waits for a scrape.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/metrics/process_stats.h"
#include "canal/server/client_stats.h"
#include "canal/server/instance.h"
#include "canal/server/instance_registry.h"

namespace canal::server {

// What HA did to each destination here: the daemon feeds it the
// RunningMonitor's on_deactivated calls (a fence's reason starts "fenced:").
class HaEventLog {
 public:
  struct Record {
    uint64_t fencing_events = 0;
    bool last_was_fence = false;
    std::string last_reason;
    int64_t last_ms = 0;  // 0: never deactivated
  };
  void OnDeactivated(const std::string& destination, const std::string& reason);
  Record Get(std::string_view destination) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Record, std::less<>> records_;
};

struct DestinationReport {
  std::string name;
  bool configured = false;  // its instance.properties was accepted
  // "active" (served here), "standby" (HA: another server or nobody holds
  // it; this one waits), "fenced" (HA: was active here, lost its lease).
  std::string role;
  bool has_status = false;
  InstanceStatus status;  // when has_status
  // The parser's state (connecting, streaming, reconnecting, stopped,
  // failed); "standby"/"fenced" while not active here; "not configured".
  std::string state;
  int64_t delay_ms = 0;  // Canal's traffic delay (see StatusCollector::Collect)
  int64_t get_delay_ms = 0, ack_delay_ms = 0;
  std::optional<LogPosition> acked;  // the slowest subscribed client's cursor
  size_t subscriptions = 0;
  std::shared_ptr<const ClientStats> client;  // null: no client ever subscribed
  HaEventLog::Record ha;
};

// A balanced cluster as this server sees it (canal.cluster.placement = balanced, docs/cluster.md).
struct ClusterReport {
  bool leader = false;      // this server computes the assignment
  uint64_t generation = 0;  // of the assignment in force; 0 before the first
  std::string leader_address;
  std::map<std::string, std::string> assignment;  // destination -> server
  std::map<std::string, std::string> unassigned;  // destination -> why, and what to change
  std::vector<std::string> assigned_here;         // sorted
};

struct ServerReport {
  int64_t now_ms = 0;
  std::string server_address;  // canal.ip:canal.port (or the HA address)
  bool ha = false;
  bool has_process = false;
  metrics::ProcessStats process;
  std::vector<DestinationReport> destinations;  // by name
  std::optional<ClusterReport> cluster;          // balanced placement only
};

struct StatusSources {
  // Every destination known here (InstanceRegistry::Destinations).
  std::function<std::vector<std::pair<std::string, std::shared_ptr<ManagedDestination>>>()> destinations;
  const DestinationArbiter* arbiter = nullptr;  // HA; null: every destination is active here
  const HaEventLog* ha_events = nullptr;
  const ClientStatsBook* clients = nullptr;
  std::string server_address;
  std::function<int64_t()> now_ms;  // tests; default: the system clock
  std::function<ClusterReport()> cluster;  // balanced placement; null otherwise
};

// Collects reports; remembers when each destination was last seen
// streaming, so that the delay of a destination whose primary went away
// keeps growing (as Canal's does) instead of reading 0. Thread-safe.
class StatusCollector {
 public:
  explicit StatusCollector(StatusSources sources);
  ServerReport Collect();

 private:
  const StatusSources sources_;
  std::mutex mu_;
  std::map<std::string, int64_t, std::less<>> last_streaming_ms_;
};

std::string RenderMetrics(const ServerReport& report);
class StatusHistory;
// `history` (optional): each destination gets "history", its recent samples
// (status_history.h), for the admin page's sparklines.
std::string RenderStatusJson(const ServerReport& report, const StatusHistory* history = nullptr);
std::string RenderStatusHtml(const ServerReport& report);
// True when every destination that should be active here is streaming;
// otherwise *why lists the others, one line each.
bool Healthy(const ServerReport& report, std::string* why);

// The number of a binlog file name ("mysql-bin.000012" -> 12); 0 without one.
uint64_t BinlogFileIndex(std::string_view journal_name);

}  // namespace canal::server
