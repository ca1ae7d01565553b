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

// How a column of a binary-protocol result row is read (canal_snapshot_reader), from the server's column type
// (MYSQL_TYPE_*) and its UNSIGNED flag: integers as signed or unsigned, FLOAT/DOUBLE as double,
// DATE/DATETIME/TIMESTAMP/TIME as their fields, everything else as bytes.
FieldKind BinaryFieldKind(uint8_t field_type, bool is_unsigned);
// The bytes an integer value of `field_type` takes in a binary-protocol row (1, 2, 4 or 8; YEAR 2).
size_t BinaryIntegerBytes(uint8_t field_type);
// What ReadCommonBinaryValue reads of a column inline: an integer's bytes, 8 for DOUBLE, else 0.
uint8_t BinaryFixedBytes(FieldKind kind, uint8_t field_type);

// Reads one non-NULL value of a binary-protocol result row (kind by BinaryFieldKind, never
// kNull) from *at, where the readable bytes end at `end`: fills *out's kind and value (bytes as a
// view into the row), adds what it counts against a chunk's byte bound to *counted (8 for a fixed
// value, the length of bytes) and moves *at past the value. A TIME's days are folded into its
// hours. On a value that runs past `end` or has a length its type cannot have, returns what is
// wrong (static text) and moves *at to `end`; nullptr otherwise.
const char* ReadBinaryValue(FieldKind kind, uint8_t field_type, const unsigned char** at, const unsigned char* end,
                            FieldValue* out, uint64_t* counted);

// ReadBinaryValue's result for the common values, without its dispatch: integers and DOUBLE
// (`fixed_bytes` from BinaryFixedBytes) and bytes shorter than 251 (a one-byte length). False,
// nothing read, for anything else, including a value that runs past `end`: ReadBinaryValue then
// reads it or names the problem.
bool ReadCommonBinaryValue(FieldKind kind, uint8_t fixed_bytes, const unsigned char** at, const unsigned char* end,
                           FieldValue* out, uint64_t* counted);

// A key column's value kept past its row: what the next chunk's statement is bound with, and
// what a snapshot's progress stores (snapshot_progress.h).
struct KeyValue : TypedValue {
  std::string bytes;
};

}  // namespace canal::snapshot
