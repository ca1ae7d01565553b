// Canal's ZooKeeper layout, in one place (library canal_coord): the paths and
// the running nodes' JSON that Canal's servers, its clients and its meta
// manager share, which a Canal Java client or server reading the same
// ZooKeeper must find where Canal puts them. Used by server/ (running nodes,
// the cluster list), client-sdk/ (server discovery, client election) and
// meta/ (cursors, filters, the schema history).
//
//   /otter/canal/cluster/{ip:port}                     ephemeral, a running server
//   /otter/canal/destinations/{dest}/cluster/{ip:port} ephemeral, a server that can run dest
//   /otter/canal/destinations/{dest}/running           ephemeral, the active server:
//                                                      {"active":true,"address":"ip:port"}
//   /otter/canal/destinations/{dest}/{clientId}         the client's meta
//   /otter/canal/destinations/{dest}/{clientId}/running ephemeral, the active client:
//                                                      {"active":true,"address":"host:pid","clientId":1001}
//   /otter/canal/destinations/{dest}/{clientId}/cursor  the acked position (JSON, meta/)
//   /otter/canal/destinations/{dest}/{clientId}/filter  the subscription's filter
//   /otter/canal/destinations/{dest}/schema_history     ours: the schema history (meta/)
#pragma once

#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::coord::layout {

inline constexpr std::string_view kRoot = "/otter/canal";

std::string ServerClusterPath(std::string_view address);
std::string DestinationPath(std::string_view destination);
std::string DestinationClusterPath(std::string_view destination, std::string_view address);
std::string ServerRunningPath(std::string_view destination);
std::string ClientPath(std::string_view destination, std::string_view client_id);
std::string ClientRunningPath(std::string_view destination, std::string_view client_id);
std::string ClientCursorPath(std::string_view destination, std::string_view client_id);
std::string ClientFilterPath(std::string_view destination, std::string_view client_id);
std::string SchemaHistoryPath(std::string_view destination);

// A running node's body, as Canal writes it.
std::string ServerRunningBody(std::string_view address);
// `client_id` all digits (at most 9) is written as a number, as Canal's client writes it.
std::string ClientRunningBody(std::string_view address, std::string_view client_id);

struct RunningNode {
  bool active = true;   // Canal writes true; a false one names no active holder
  std::string address;  // "ip:port" of a server, "host:pid" of a client
};
// InvalidArgument when `body` is not a JSON object with a non-empty "address"
// string holding a ':'; the message quotes (at most 200 bytes of) the body.
Status ParseRunningNode(std::string_view body, RunningNode* out);

}  // namespace canal::coord::layout
