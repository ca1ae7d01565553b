#include "canal/parser/resume_from_cursor.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace canal::parser {

Status ResumePointFromCursor(const LogPosition& cursor, ResumePoint* out) {
  const std::string what = "stored cursor " + cursor.ToString();
  if (cursor.journal_name.empty()) {
    return Status::InvalidArgument(what +
                                   ": no journal name; fix or remove the client's cursor in meta.dat "
                                   "(or its ZooKeeper cursor node) to start from the configured position");
  }
  if (cursor.position < kFirstEventOffset) {
    return Status::InvalidArgument(what + ": offset " + std::to_string(cursor.position) +
                                   " is before the first event; set \"position\" to 4 to start at the file's "
                                   "beginning");
  }
  ResumePoint point;
  point.file = cursor.journal_name;
  if (cursor.transaction_begin != 0) {
    if (cursor.transaction_begin < kFirstEventOffset || cursor.transaction_begin >= cursor.position) {
      return Status::InvalidArgument(what + ": transactionBegin " + std::to_string(cursor.transaction_begin) +
                                     " must lie between 4 and the position; remove \"transactionBegin\" only "
                                     "together with setting \"position\" to that transaction's start");
    }
    point.position = cursor.transaction_begin;
    point.skip_until = cursor.position;
  } else {
    point.position = cursor.position;
    point.gtid = cursor.gtid;
    const int64_t seconds = cursor.timestamp_ms / 1000;
    point.timestamp = seconds <= 0 ? 0 : static_cast<uint32_t>(std::min<int64_t>(seconds, UINT32_MAX));
  }
  *out = std::move(point);
  return Status::OK();
}

}  // namespace canal::parser
