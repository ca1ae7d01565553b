// The header prop that marks every entry of a snapshot chunk (TRANSACTIONBEGIN,
// each ROWDATA INSERT, TRANSACTIONEND): how a consumer tells a table's
// existing rows from the stream's inserts (docs/snapshot.md). Here, header-only
// in proto/, because the sink writes it and mq/ (which does not link the sink)
// reads it to mark flat messages.
#pragma once

#include <string_view>

namespace canal::proto {

inline constexpr std::string_view kSnapshotPropKey = "snapshot";
inline constexpr std::string_view kSnapshotPropValue = "true";

}  // namespace canal::proto
