// The parts of PlacementCoordinator (placement_coordinator.cc) kept apart:
// the watched reads (placement_watches.cc) and the leader's decision, which
// makes no ZooKeeper call (placement_leader.cc). Not installed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/coord/placement.h"
#include "canal/coord/placement_layout.h"

namespace spdlog {
class logger;
}

namespace canal::coord {

class ZkClient;

namespace internal {

using Clock = std::chrono::steady_clock;

// Reads that arm a one-shot watch, with a table of what is armed (a serial
// per key: who watches, then the path): a node whose watch is still armed has
// not changed since it was read, so it is not read again (the Cached* calls
// return the copy) and no second watch piles up on it. A fired watch drops
// its entry, then `fired(kind)` runs on the client's event thread.
class WatchedReads {
 public:
  // Kinds (a key's first byte).
  static constexpr char kSelf = 's';      // this server's own node
  static constexpr char kLeader = 'l';    // the leader node
  static constexpr char kAssign = 'a';    // the assignment node
  static constexpr char kData = 'd';      // a node the leader reads (Cached*)
  static constexpr char kChildren = 'c';  // a folder the leader lists (Cached*)

  WatchedReads(ZkClient* zk, std::function<void(char kind)> fired);
  ~WatchedReads();  // Close()s
  WatchedReads(const WatchedReads&) = delete;
  WatchedReads& operator=(const WatchedReads&) = delete;

  // A missing node is *exists = false (a watch then waits for its creation).
  Status Get(char kind, const std::string& path, bool* exists, std::string* body);
  Status Children(char kind, const std::string& path, std::vector<std::string>* names);
  // The leader's reads: the cached copy while the node's watch is armed. A
  // missing node is nullopt; a missing folder NotFound.
  Status CachedGet(const std::string& path, std::optional<std::string>* body);
  Status CachedChildren(const std::string& path, std::vector<std::string>* names);
  void ClearCache();
  // A new session: its watches died with the old one.
  void ForgetWatches();
  // No `fired` call once this returns (waits for one running).
  void Close();

 private:
  struct Gate;
  uint64_t Arm(const std::string& key);  // 0 when armed already
  void Disarm(const std::string& key, uint64_t serial);
  bool Armed(const std::string& key);

  ZkClient* const zk_;
  std::shared_ptr<Gate> gate_;
  std::mutex mu_;
  std::map<std::string, uint64_t> armed_;  // guarded by mu_
  uint64_t next_serial_ = 0;               // guarded by mu_
  // Only the caller's thread (the coordinator's worker) touches the caches.
  std::map<std::string, std::optional<std::string>> data_cache_;
  std::map<std::string, std::vector<std::string>> children_cache_;
};

// What the leader read from ZooKeeper for one recomputation.
struct ClusterSnapshot {
  std::map<std::string, layout::ServerNode> servers;  // readable server nodes, by node name
  std::set<std::string> drained;
  std::map<std::string, std::string> pins;
  std::map<std::string, double> weights;
  bool has_base = false;  // the assignment node was read and parsed
  layout::Assignment base;  // the assignment in force
};

struct LeaderDecision {
  layout::Assignment next;  // generation left 0: the writer sets it
  std::vector<PlacementMove> moves;
  bool changed = false;  // differs from the base (or there was no readable base)
  std::optional<Clock::time_point> recheck_at;  // a vanished server's delay ends then
};

// The leader's memory between recomputations: the servers it saw, and the
// vanished ones whose destinations wait out lost_server_delay. Reset on each
// election. Logs what it decides; never calls ZooKeeper.
class LeaderState {
 public:
  LeaderState(std::string address, std::chrono::milliseconds lost_server_delay, std::shared_ptr<spdlog::logger> log);

  void Reset(Clock::time_point elected);
  LeaderDecision Decide(const ClusterSnapshot& snapshot, Clock::time_point now);
  // The same complaint once per leadership, not on every recomputation.
  void WarnOnce(const std::string& what);

 private:
  void TrackLostServers(const ClusterSnapshot& s, Clock::time_point now);

  const std::string address_;
  const std::chrono::milliseconds delay_;
  const std::shared_ptr<spdlog::logger> log_;
  Clock::time_point elected_{};
  std::set<std::string> live_;                                // registered at the last recomputation
  std::map<std::string, layout::ServerNode> last_bodies_;     // their nodes then
  std::map<std::string, Clock::time_point> ghosts_;           // vanished, holding on until then
  std::set<std::string> gone_;                                // vanished, their destinations move
  std::set<std::string> warned_;
};

// Reads what the leader decides on, through `reads` (watched, cached),
// creating the folders it lists when missing. Malformed nodes are left out
// (and logged once through `leader`). The assignment is read afresh;
// `has_base` is false when it is missing or malformed.
Status ReadSnapshot(ZkClient* zk, WatchedReads* reads, LeaderState* leader, ClusterSnapshot* out);

// "d: a -> b, ..." for the log, the first few only.
std::string MovesText(const std::vector<PlacementMove>& moves);

}  // namespace internal
}  // namespace canal::coord
