// SlowestCursorSource: where a destination's parser starts, the slowest
// subscribed client's cursor (meta::SlowestCursor), read at each (re)start
// so that no client misses anything.
#pragma once

#include <string>

#include "canal/parser/event_parser.h"

namespace canal::meta {
class MetaManager;
}

namespace canal::server {

class SlowestCursorSource final : public parser::CursorSource {
 public:
  // `meta` must outlive this source.
  SlowestCursorSource(meta::MetaManager* meta, std::string destination)
      : meta_(meta), destination_(std::move(destination)) {}

  // *found false (and *cursor untouched) while no client of the destination has a cursor.
  Status LoadCursor(LogPosition* cursor, bool* found) override;

 private:
  meta::MetaManager* const meta_;
  const std::string destination_;
};

}  // namespace canal::server
