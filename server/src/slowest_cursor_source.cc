#include "canal/server/slowest_cursor_source.h"

#include <optional>

#include "canal/meta/slowest_cursor.h"

namespace canal::server {

Status SlowestCursorSource::LoadCursor(LogPosition* cursor, bool* found) {
  std::optional<LogPosition> slowest;
  CANAL_RETURN_IF_ERROR(meta::SlowestCursor(meta_, destination_, &slowest));
  *found = slowest.has_value();
  if (*found) *cursor = std::move(*slowest);
  return Status::OK();
}

}  // namespace canal::server
