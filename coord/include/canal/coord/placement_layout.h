// The placement nodes in ZooKeeper (library canal_coord): ours, beside
// Canal's own layout (canal_layout.h) and outside its nodes, so that Canal's
// servers and clients sharing the ZooKeeper never read them.
//
//   /otter/canal/placement/servers/{ip:port}  ephemeral, a server taking part:
//       {"address":"ip:port","cap":N,"destinations":[...],"draining":false,"load":{"dest":bytesPerSecond},
//        "hints":{"dest":{"weight":W,"preferred":["ip:port"],"excluded":["ip:port"]}}}
//   /otter/canal/placement/leader             ephemeral, the server computing the assignment:
//       {"address":"ip:port"}
//   /otter/canal/placement/assignment         persistent, written by the leader only:
//       {"generation":N,"leader":"ip:port","assignment":{"dest":"ip:port"},"unassigned":{"dest":"reason"}}
//   /otter/canal/placement/drain/{ip:port}    persistent, present = the server is drained (an operator's)
//   /otter/canal/placement/pins/{dest}        persistent, body "ip:port" (an operator's move)
//   /otter/canal/placement/weights/{dest}     persistent, optional configured weight (a number > 0)
//
// Parse* never crash on any bytes: malformed JSON, wrong types, out-of-range
// numbers and deep nesting are InvalidArgument naming the path and quoting at
// most 200 bytes of the body; `*out` is left as it was then.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::coord::layout {

inline constexpr std::string_view kPlacementRoot = "/otter/canal/placement";

std::string PlacementServersPath();                            // parent of the server nodes
std::string PlacementServerPath(std::string_view address);
std::string PlacementLeaderPath();
std::string PlacementAssignmentPath();
std::string PlacementDrainsPath();                             // parent of the drain nodes
std::string PlacementDrainPath(std::string_view address);
std::string PlacementPinsPath();                               // parent of the pin nodes
std::string PlacementPinPath(std::string_view destination);
std::string PlacementWeightsPath();                            // parent of the weight nodes
std::string PlacementWeightPath(std::string_view destination);

// A name usable as one path component: non-empty, at most 255 bytes, no '/',
// no NUL, not "." or "..". An address is also host:port: a host name, IPv4 or
// [IPv6] (letters, digits, . - _ : [ ] %), then ':' and 1 to 5 digits.
bool ValidNodeName(std::string_view name);
bool ValidAddress(std::string_view address);

// What a server's conf says of where a destination should run (canal.instance.cluster.*):
// its weight, servers to use first and servers never to use.
struct DestinationHints {
  double weight = 1.0;                   // finite, > 0, at most 1e6
  std::vector<std::string> preferred{};  // "ip:port"
  std::vector<std::string> excluded{};   // "ip:port"
  bool operator==(const DestinationHints&) const = default;
};

struct ServerNode {
  std::string address{};                 // "ip:port"
  uint32_t cap = 0;                      // 0 = no cap
  std::set<std::string> destinations{};  // what its conf folder lists
  bool draining = false;
  std::map<std::string, double> load{};  // destination -> bytes per second (finite, >= 0)
  std::map<std::string, DestinationHints> hints{};  // "hints": only destinations that have some
  bool operator==(const ServerNode&) const = default;
};
std::string ServerNodeBody(const ServerNode& node);
// "address" is required; the rest default (cap 0, no destinations, not
// draining, no load). Unknown keys are ignored (a newer server's additions).
Status ParseServerNode(std::string_view path, std::string_view body, ServerNode* out);

std::string LeaderBody(std::string_view address);
Status ParseLeader(std::string_view path, std::string_view body, std::string* address);

// The assignment node. PlacementCoordinator hands it to its owner as is.
struct Assignment {
  uint64_t generation = 0;  // grows by one on each write; 0 = none written yet
  std::string leader{};     // the server that wrote it
  std::map<std::string, std::string> assignment{};  // destination -> "ip:port"
  std::map<std::string, std::string> unassigned{};  // destination -> reason
  bool operator==(const Assignment&) const = default;
};
std::string AssignmentBody(const Assignment& assignment);
// "generation" (an integer 0..2^63-1) and "assignment" are required.
Status ParseAssignment(std::string_view path, std::string_view body, Assignment* out);

// A pin's body: an address, surrounding whitespace ignored.
Status ParsePin(std::string_view path, std::string_view body, std::string* address);
// A weight's body: a finite number > 0 and <= 1e6 (a bare number; JSON or not).
Status ParseWeight(std::string_view path, std::string_view body, double* weight);

}  // namespace canal::coord::layout
