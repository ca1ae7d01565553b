// MySQL binary JSON (column type JSON, 245): rendering to JSON text, and the
// partial-update diffs of PARTIAL_UPDATE_ROWS events.
//
// Text is rendered the way MySQL prints JSON ({"a": 1, "b": [true, null]}), with
// opaque values (DATE, TIME, DATETIME, DECIMAL, other MySQL types) as MySQL's
// JSON_EXTRACT prints them, and unknown opaque types as "base64:typeNN:...".
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::binlog {

// Appends the JSON text of `binary` (the column value without its length prefix)
// to *out. An empty input is the JSON null MySQL writes for an empty column.
// Corruption (offsets or sizes outside the value, nesting deeper than 100) is an
// error naming the byte offset inside the value.
Status AppendJsonText(std::string_view binary, std::string* out);

// Applies the diff list of one JSON column in a PARTIAL_UPDATE_ROWS after image
// (`diffs`: the bytes after the column's length prefix) to the before-image
// document `before_binary`, and writes the complete after document as JSON text.
Status ApplyJsonDiffs(std::string_view before_binary, std::string_view diffs,
                      std::string* after_text);

// The same for several updates in a row: applies each diff list in order to the
// document `before_binary`, as when a row's JSON column was partially updated by
// successive events since its last full image.
Status ApplyJsonDiffChain(std::string_view before_binary, const std::vector<std::string_view>& diff_lists,
                          std::string* after_text);

}  // namespace canal::binlog
