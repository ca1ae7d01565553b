// Placement of destinations over a cluster of canal-servers (library
// canal_coord): a pure function, no ZooKeeper, no clock. The elected leader of
// PlacementCoordinator (placement_coordinator.h) calls it on every change and
// writes its result to ZooKeeper; canal-admin can call it to preview a move.
//
// Rules, in order (each step only uses servers that are eligible for the
// destination: the server lists it in its conf, is not draining and is not in
// the destination's excluded list; a cap is never exceeded):
//   1. Pins: a destination pinned to an eligible server goes there.
//   2. Sticky: a destination stays on its previous server when that server is
//      still eligible and under its cap (destinations taken by name order).
//   3. Placement: the rest go, heaviest first (then by name), to the least
//      loaded eligible server under its cap; its eligible preferred servers
//      first when one of them is under its cap.
//   4. Rebalance: repeatedly move the one destination whose move from a more
//      loaded server to a less loaded one reduces the load spread the most
//      (load = sum of weights), only while a move strictly reduces it. Each
//      destination moves at most once per call; pinned ones never. So with
//      unit weights each server ends with floor or ceil of the average, and
//      only as many destinations move as that takes.
// Deterministic: the same input gives the same output (ties by name, then id).
// Bad input never crashes: duplicates are dropped (first kept), weights that
// are not finite and > 0 count as 1, unknown servers in pins, preferred and
// excluded lists are ignored; each such fix is listed in `warnings`.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace canal::coord {

struct PlacementServer {
  std::string id{};  // "ip:port"
  uint32_t cap = 0;  // most destinations it may run (canal.cluster.max.destinations); 0 = no cap
  bool draining = false;  // gets nothing (leaving, or drained by an operator)
  std::set<std::string> destinations{};  // what its conf folder lists: the only ones it can be given
};

struct PlacementDestination {
  std::string name{};
  double weight = 1.0;  // configured weight times measured load factor; > 0
  std::vector<std::string> preferred{};  // servers to use first, when eligible and under cap
  std::vector<std::string> excluded{};   // servers never to use
  std::string pin{};                     // "" none; an operator's move, honoured when eligible
};

struct PlacementInput {
  std::vector<PlacementServer> servers;
  std::vector<PlacementDestination> destinations;
  std::map<std::string, std::string> previous;  // destination -> server, the assignment in force
};

// One destination whose server changed relative to `previous`. `from` is ""
// for a destination not assigned before; `to` is "" for one no longer
// assigned (unassigned now, or no longer among the destinations).
struct PlacementMove {
  std::string destination;
  std::string from;
  std::string to;
  bool operator==(const PlacementMove&) const = default;
};

struct PlacementResult {
  std::map<std::string, std::string> assignment;  // destination -> server
  std::map<std::string, std::string> unassigned;  // destination -> why, and what to change
  std::vector<PlacementMove> moves;               // sorted by destination
  std::vector<std::string> warnings;              // input fixed up (duplicates, bad weights, ...)
};

PlacementResult Place(const PlacementInput& input);

// Load factors from measured bytes per second per destination, for
// PlacementDestination::weight (configured weight times factor): a destination
// busier than both the mean rate and kBusyBytesPerSecond weighs its rate over
// the larger of the two, rounded to a power of two up to 8; every other one
// (idle, below the mean, or without a usable rate: missing, negative, not
// finite) weighs 1, as do all when fewer than two have a usable rate. So an
// idle cluster is balanced by count, and ordinary jitter changes no weight
// (and moves nothing).
inline constexpr double kBusyBytesPerSecond = 1 << 20;
std::map<std::string, double> LoadFactors(const std::map<std::string, double>& bytes_per_second);

}  // namespace canal::coord
