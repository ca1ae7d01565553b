// A value of a chunk row as ChunkReader (chunk_reader.h) hands it out: the binary protocol's
// typed value, with the server's column type, before any rendering (snapshot_render.h turns it
// into the decoder's typed value). Plain values; no connection needed to read them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace canal::snapshot {

// A DATE, DATETIME, TIMESTAMP or TIME value's fields as the server sent them.
struct TimeValue {
  uint32_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  uint32_t microsecond = 0;
  bool negative = false;  // TIME only
};

enum class FieldKind : uint8_t { kNull, kSigned, kUnsigned, kDouble, kTime, kBytes };

// A value's type and, for every kind but kBytes, the value itself.
struct TypedValue {
  FieldKind kind = FieldKind::kNull;
  uint8_t field_type = 0;  // the server's column type (MYSQL_TYPE_*: 3 LONG, 12 DATETIME, 253 VAR_STRING, ...)
  bool binary = false;     // charset 63: bytes are not text
  int64_t i64 = 0;
  uint64_t u64 = 0;
  double f64 = 0;
  TimeValue time;
};

// One column of one row, valid only during the callback that receives it.
struct FieldValue : TypedValue {
  std::string_view bytes;
};

// A key column's value kept past its row: what the next chunk's statement is bound with, and
// what a snapshot's progress stores (snapshot_progress.h).
struct KeyValue : TypedValue {
  std::string bytes;
};

}  // namespace canal::snapshot
