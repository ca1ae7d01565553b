// A snapshot request as bin/canal-admin.sh snapshot writes it to conf/DEST/snapshot.request:
//   {"tables": ["schema.table", ...], "where": "<condition>"}   ("where" optional)
// Whoever can write the conf folder writes it, so it is bounded (kMaxSnapshotRequestBytes read at
// most, 1..kMaxSnapshotRequestTables names) and every other shape is an InvalidArgument naming
// what is wrong. The names and the condition are checked later, against the destination's
// filter and the database (Instance::RequestSnapshot).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::server {

inline constexpr size_t kMaxSnapshotRequestBytes = 64 * 1024;
inline constexpr size_t kMaxSnapshotRequestTables = 1000;

struct SnapshotRequest {
  std::vector<std::string> tables;
  std::string where;
};

Status ParseSnapshotRequest(std::string_view text, SnapshotRequest* request);

}  // namespace canal::server
