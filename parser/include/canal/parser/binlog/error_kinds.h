// The decoder's error kinds a caller branches on, as Status::subcode() values.
// Negative, so that they never meet the MySQL server's error numbers, which
// the replica connections attach to the errors the primary sends.
#pragma once

#include <cstdint>

namespace canal::binlog {

// An event's CRC32 does not match its bytes: damaged on the way (reading
// again from the resume point cures it) or on the primary's disk.
inline constexpr int32_t kErrorChecksumMismatch = -101;
// A schema provider's columns do not fit a TABLE_MAP (count or type family):
// the schema history is behind or wrong (rebuilding it is the fix).
inline constexpr int32_t kErrorSchemaMismatch = -102;
// A new primary (after a failover) lacks transactions the stream already delivered
// (canal.instance.failover.diverged=stop): an operator decides.
inline constexpr int32_t kErrorDiverged = -103;
// The stream reached another server and has no GTID state to resume by (GTIDs off, or
// not yet known) and the timestamp fallback is off: an operator decides.
inline constexpr int32_t kErrorNoGtidState = -104;

}  // namespace canal::binlog
