// PlacementCoordinator: destinations spread over a cluster of canal-servers
// by an elected leader, through ZooKeeper (library canal_coord). Nodes and
// their JSON: placement_layout.h; the placement rules: placement.h.
//
// Every server registers an ephemeral node (its address, cap, the
// destinations its conf lists, whether it is draining, its measured load)
// and contends for the ephemeral leader node; whoever creates it leads, the
// others watch it and contend again when it goes. The leader watches the
// server nodes (children and data), the drain, pin and weight nodes, and on
// any change (bursts coalesced) recomputes the placement (Place) from the
// assignment in force and writes the assignment node, only when it changed,
// with the generation one higher. Every server watches the assignment node
// and hands each new one to `on_assignment`; running what it is given is the
// owner's business.
//
// Leaving: Stop() is a clean leave (the node says draining, the leader moves
// the destinations away at once, then the node goes). A node that vanishes
// without saying draining (a crash, a lost session) keeps its destinations
// for `lost_server_delay` first (0: none), so a blip moves nothing; a new
// leader counts that delay from its election for servers it never saw.
// After a session expiry the coordinator reopens the session (unless told
// not to) and registers again; ZooKeeper down fails nothing: calls are
// retried with backoff and the last assignment stays in force.
//
// Threads: one worker thread of its own makes every ZooKeeper call and runs
// `on_assignment` (never two at once; it must not call Stop). The methods may
// be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/coord/placement_layout.h"

namespace spdlog {
class logger;
}

namespace canal::coord {

class ZkClient;

using Assignment = layout::Assignment;

struct PlacementCoordinatorOptions {
  std::string address;                 // "ip:port" of this server (required)
  uint32_t cap = 0;                    // canal.cluster.max.destinations; 0 = no cap
  std::set<std::string> destinations;  // what this server's conf folder lists
  // Wait before reassigning the destinations of a server whose node vanished
  // without it having said it was draining.
  std::chrono::milliseconds lost_server_delay{0};
  // The leader recomputes this long after the first change of a burst.
  std::chrono::milliseconds coalesce{200};
  // SetLoad rewrites this server's node at most this often.
  std::chrono::milliseconds load_interval{5000};
  // Stop() waits at most this for the leader to move this server's destinations away.
  std::chrono::milliseconds stop_timeout{10000};
  // Backoff of failing ZooKeeper calls and of reopening an expired session.
  std::chrono::milliseconds retry_min{200};
  std::chrono::milliseconds retry_max{5000};
  // Reopen the ZkClient's session when it expires. Turn off when another
  // user of the same ZkClient (a RunningMonitor) reopens it.
  bool reopen_expired_session = true;
  // Each new assignment, on the coordinator's thread: when the assignment node
  // changes, and once at start when it exists.
  std::function<void(const Assignment& full, uint64_t generation)> on_assignment;
  std::shared_ptr<spdlog::logger> logger;  // null logs nowhere
};

class PlacementCoordinator {
 public:
  // `zk` is the caller's and must outlive the coordinator.
  PlacementCoordinator(ZkClient* zk, PlacementCoordinatorOptions options);
  ~PlacementCoordinator();  // Stop()s
  PlacementCoordinator(const PlacementCoordinator&) = delete;
  PlacementCoordinator& operator=(const PlacementCoordinator&) = delete;

  // Starts the worker; InvalidArgument for a bad address or destination name,
  // no client, or a second Start. Connecting happens in the background.
  Status Start();
  // Clean leave: marks this server draining, waits (at most stop_timeout, and
  // only while connected) until the assignment gives it nothing, then deletes
  // its node, resigns the leadership if it held it, and joins the worker.
  // Idempotent; a stopped coordinator does not start again.
  void Stop();

  // Measured bytes per second per destination (for the leader's weights).
  void SetLoad(std::map<std::string, double> bytes_per_second);
  // The conf folder changed. Names that are not usable as node names are
  // dropped (and logged).
  void SetDestinations(std::set<std::string> destinations);
  // What the conf says of where each destination should run (weight, preferred and excluded
  // servers); announced with this server's node. The leader takes a destination's hints from
  // the first server, by address, that announces some for it.
  void SetHints(std::map<std::string, layout::DestinationHints> hints);

  // Leads in the current, connected session.
  bool IsLeader() const;
  // The last assignment read or written (generation 0 before any).
  Assignment CurrentAssignment() const;
  // The destinations the current assignment gives this server.
  std::set<std::string> AssignedHere() const;
  const std::string& address() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- The operator's side (canal-admin) -------------------------------------

// Drains a server (it is given nothing; its destinations move away) or ends
// the drain. InvalidArgument for an address that is not "ip:port".
Status SetDrain(ZkClient* zk, std::string_view address, bool draining);
// Pins a destination to a server (honoured while that server can run it), or
// removes the pin when `address` is empty.
Status SetPin(ZkClient* zk, std::string_view destination, std::string_view address);
// Sets a destination's configured weight (> 0, at most 1e6); 0 removes it (weight 1).
Status SetWeight(ZkClient* zk, std::string_view destination, double weight);

struct ClusterView {
  std::map<std::string, layout::ServerNode> servers;  // by the node's name ("ip:port")
  std::map<std::string, std::string> unreadable;      // node path -> why it was skipped
  std::string leader;                                 // "" when none
  bool has_assignment = false;
  Assignment assignment;  // with the unassigned destinations and their reasons
  std::set<std::string> drained;
  std::map<std::string, std::string> pins;  // destination -> address
  std::map<std::string, double> weights;    // destination -> configured weight
};
// Reads every placement node. Missing nodes are empty parts of the view;
// malformed ones are listed in `unreadable`. An error only when ZooKeeper fails.
Status ReadClusterView(ZkClient* zk, ClusterView* view);

}  // namespace canal::coord
