// ClusterPlacement: a server's part in a balanced cluster (canal.cluster.placement = balanced,
// docs/cluster.md). It stands between the registry and the RunningMonitor as the registry's
// DestinationArbiter: every destination the registry joins is announced to the cluster's
// PlacementCoordinator (coord/placement_coordinator.h) as one this server can run, and each
// assignment the elected leader writes tells the monitor which of them to contend for
// (RunningMonitor::Assign). The monitor keeps doing what makes a destination run on one server
// at a time: the running node in Canal's layout, the lease, the fence.
//
// The coordinator has a ZooKeeper session of its own, so that its reopening after an expiry
// and the monitor's never meet on one client.
//
// Stop() is the clean leave: this server says it is draining, the leader moves its
// destinations to the others at once, and the monitor hands each one over (instance stopped,
// cursors flushed, running node deleted) before the process goes on to stop.
//
// Threads: the coordinator's thread calls the monitor's Assign; the registry's threads call
// Join and Leave. Every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "canal/common/status.h"
#include "canal/coord/placement_coordinator.h"
#include "canal/server/instance_registry.h"
#include "canal/server/running_monitor.h"
#include "canal/server/status_report.h"

namespace spdlog {
class logger;
}
namespace canal::coord {
class ZkClient;
}

namespace canal::server {

struct ClusterPlacementOptions {
  std::string zk_servers;                    // canal.zkServers
  int session_timeout_ms = 6000;             // canal.zookeeper.session.timeout
  uint32_t cap = 0;                          // canal.cluster.max.destinations
  std::chrono::milliseconds lost_delay{0};   // canal.cluster.lost.delay
  std::chrono::milliseconds stop_timeout{10000};  // the clean leave's wait for the hand-over
  std::shared_ptr<spdlog::logger> logger;    // null logs nowhere
  // Binlog bytes read so far by each destination running here (the parsers' counters); sampled
  // every `load_interval` into bytes/s for the leader's weights. Null: no load is reported.
  std::function<std::map<std::string, uint64_t>()> bytes_read;
  std::chrono::milliseconds load_interval{5000};
};

class ClusterPlacement final : public DestinationArbiter {
 public:
  // `monitor` must be made with RunningMonitorOptions::placement and outlive this.
  static Status Create(RunningMonitor* monitor, ClusterPlacementOptions options,
                       std::unique_ptr<ClusterPlacement>* out);
  ~ClusterPlacement() override;  // Stop()s

  // Starts taking part (connecting in the background).
  Status Start();
  // The clean leave (see above). Idempotent.
  void Stop();

  // DestinationArbiter: the registry's joins and leaves, passed on to the monitor.
  void Join(const std::string& destination, Handler handler) override;
  void Leave(const std::string& destination) override;
  bool IsActive(std::string_view destination) const override;


  // For /status: the assignment in force as this server last read it.
  ClusterReport Describe() const;
  // ZooKeeper's whole view for the admin API (every server with its load, drains, pins,
  // weights), as JSON text.
  Status ViewJson(std::string* json_text) const;
  // Operator actions (canal-admin drain / move).
  Status Drain(std::string_view address, bool draining);
  Status Move(std::string_view destination, std::string_view address);

 private:
  ClusterPlacement(RunningMonitor* monitor, ClusterPlacementOptions options);
  void OnAssignment(const coord::Assignment& assignment, uint64_t generation);
  void SampleLoad();
  RunningMonitor* const monitor_;
  const ClusterPlacementOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<coord::PlacementCoordinator> coordinator_;

  mutable std::mutex mu_;
  std::set<std::string> joined_;  // guarded by mu_
  std::map<std::string, coord::layout::DestinationHints> hints_;  // guarded by mu_: the confs' hints
  bool stopped_ = false;          // guarded by mu_
  std::condition_variable cv_;    // wakes the load sampler at Stop
  std::thread sampler_;
};

}  // namespace canal::server
