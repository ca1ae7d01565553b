// RunningMonitor: which server is active for each destination when several
// canal-servers share the destinations (HA), coordinated through ZooKeeper in
// Canal's layout (docs/cluster.md, CANAL_PROTOCOL.md "ZooKeeper layout"):
//
//   /otter/canal/cluster/{ip:port}                        ephemeral, this server
//   /otter/canal/destinations/{dest}/cluster/{ip:port}    ephemeral, per destination it can run
//   /otter/canal/destinations/{dest}/running              ephemeral, the active server:
//                                                         {"active":true,"address":"ip:port"}
//
// Contention: the server that creates the running node is active and runs
// the destination (the handler's activate); the others watch the node. When
// it goes, they try again after `takeover_delay`, or at once when the node
// was this server's own (its earlier session, e.g. after an expiry).
//
// Fencing: the active server holds a lease, renewed by a cheap ZooKeeper call
// every fifth of the fencing bound and dated from when that call was sent.
// ZooKeeper keeps the session (and the running node) for the whole session
// timeout after it last heard from us, so no other server can be active
// before lease + session timeout. The lease ends after the fencing bound
// (default half the negotiated session timeout), and then:
//   - IsActive() is false at once, with no ZooKeeper call, so a session
//     server that asks it before every request never serves stale data, even
//     in a process that was frozen (SIGSTOP) and has just resumed;
//   - a watchdog thread deactivates the destination (stops the instance,
//     then `on_deactivated` closes its client sessions) and logs a WARN.
// When the connection comes back within the session, the node is still ours
// and the destination becomes active again; after an expiry the monitor
// opens a new session (with backoff) and contends like any other server.
//
// ZooKeeper down at start or later never fails anything here: calls are
// retried with backoff and logged, and destinations stay inactive meanwhile.
//
// Threads: every method may be called from any thread. The handlers run on
// the monitor's threads, one at a time; they must not call Join or Leave.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/server/instance_registry.h"

namespace spdlog {
class logger;
}
namespace canal::coord {
class ZkClient;
}

namespace canal::server {

// Canal's paths and running-node bodies: canal/coord/canal_layout.h.

// The "ip:port" this server announces: `register_ip` (canal.register.ip)
// when set, else `listen_ip` (canal.ip) unless it is a wildcard, else the
// first non-loopback IPv4 address of this host (127.0.0.1 when none).
std::string ClusterAddress(const std::string& register_ip, const std::string& listen_ip, uint16_t port);

struct RunningMonitorOptions {
  std::string address;  // "ip:port" clients reach this server at (required)
  // Wait before taking over a destination another server ran
  // (canal.zookeeper.takeover.delay): a brief connection blip of the active
  // server then does not move the destination.
  std::chrono::milliseconds takeover_delay{1000};
  // The fencing bound (canal.zookeeper.fence.timeout); 0, or one not below
  // the negotiated session timeout, means half the negotiated timeout.
  std::chrono::milliseconds fence_after{0};
  // Backoff of failing ZooKeeper calls and of reopening an expired session.
  std::chrono::milliseconds retry_min{200};
  std::chrono::milliseconds retry_max{5000};
  std::shared_ptr<spdlog::logger> logger;  // null logs nowhere
  // Before a destination's handler activates it here (the daemon reloads its
  // cursors from ZooKeeper: another server may have moved them). An error
  // counts as a failed start: the node is released for another server.
  std::function<Status(const std::string& destination)> before_activate;
  // After a destination stopped being active here (its instance is stopped
  // already): the daemon closes the destination's client sessions.
  std::function<void(const std::string& destination, const std::string& reason)> on_deactivated;
  // Placement (canal.cluster.placement = balanced, docs/cluster.md): a destination is contended
  // for only while Assign() names it here; one Assign() takes away is handed over at once (its
  // instance stopped, its cursors flushed, its running node deleted) and is no longer served
  // from that moment. False: every joined destination is contended for (Canal's race, the pair).
  bool placement = false;
};

class RunningMonitor final : public DestinationArbiter {
 public:
  // `zk` must outlive the monitor; the monitor reopens it after an expiry.
  RunningMonitor(coord::ZkClient* zk, RunningMonitorOptions options);
  ~RunningMonitor() override;  // Stop()s
  RunningMonitor(const RunningMonitor&) = delete;
  RunningMonitor& operator=(const RunningMonitor&) = delete;

  // Starts the monitor's threads; InvalidArgument without an address or when
  // started twice. Connecting happens in the background.
  Status Start();
  // Deactivates every destination, removes this server's nodes (when
  // ZooKeeper answers) and joins the threads. Idempotent.
  void Stop();

  // DestinationArbiter
  void Join(const std::string& destination, Handler handler) override;
  void Leave(const std::string& destination) override;
  bool IsActive(std::string_view destination) const override;
  // Whether this server may write the destination's state in ZooKeeper (its
  // cursors, its schema history): it is active, or it holds the running node
  // and its handler's activate is running, which may write before the
  // destination is active (an MQ destination subscribes its publisher's
  // client, client 1001, before its instance starts). Like IsActive, false
  // once the lease ended.
  bool MayWrite(std::string_view destination) const;

  // With `placement`: the destinations the cluster's assignment gives this server (the rest
  // are handed over or left alone). Ignored without `placement`.
  void Assign(const std::vector<std::string>& mine);
  // With `placement`: what the last Assign() gave this server, sorted.
  std::vector<std::string> Assigned() const;

  // Destinations active here, sorted.
  std::vector<std::string> Active() const;
  // The fencing bound in force (0 before the first session).
  std::chrono::milliseconds fence_bound() const;
  const std::string& address() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace canal::server
