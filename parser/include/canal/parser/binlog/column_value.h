// ColumnValue: one decoded column of one row image, typed, without copying.
//
// Variable-length values (strings, blobs, decimals, JSON, geometry, vectors) are
// views into the rows event (or into a scratch buffer the row decoder owns for
// values it had to build, such as the full document of a partial JSON update).
// They stay valid until the RowsReader moves on; copy what must outlive it.
#pragma once

#include <cstdint>
#include <string_view>

#include "canal/parser/binlog/column_type.h"

namespace canal::binlog {

// Calendar/clock value as MySQL stores it (no time zone applied).
struct TemporalValue {
  bool negative = false;  // TIME only
  uint16_t year = 0;
  uint8_t month = 0, day = 0;
  uint32_t hour = 0;  // TIME can exceed 23 (up to 838)
  uint8_t minute = 0, second = 0;
  uint32_t micros = 0;
};

struct ColumnValue {
  enum class Kind : uint8_t {
    kAbsent,     // column not in this image (MINIMAL/NOBLOB bitmaps)
    kNull,
    kSigned,     // TINY..LONGLONG signed, YEAR
    kUnsigned,   // TINY..LONGLONG unsigned, BIT, ENUM index, SET bitmask
    kFloat,      // FLOAT
    kDouble,     // DOUBLE
    kDecimal,    // raw = MySQL binary decimal; precision/scale from the column
    kDecimalText,  // raw = the decimal as Canal prints it ([-]digits[.scale digits]), checked by its maker
    kDate,       // temporal
    kTime,       // temporal (negative allowed)
    kDateTime,   // temporal
    kTimestamp,  // unix seconds + micros (UTC instant)
    kString,     // raw = bytes in the column's charset
    kBytes,      // raw = binary bytes (BINARY, VARBINARY, BLOB, GEOMETRY, VECTOR, INET/UUID)
    kJson,       // raw = MySQL binary JSON (or text JSON when json_is_text)
  };

  Kind kind = Kind::kAbsent;
  ColumnType type = ColumnType::kNull;  // binlog type after STRING real-type unfolding
  uint8_t fsp = 0;                      // fractional digits of temporal types
  bool json_is_text = false;            // MariaDB JSON, or a built partial-update document
  union {
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
  };
  TemporalValue temporal;       // kDate, kTime, kDateTime
  uint32_t timestamp_micros = 0;  // kTimestamp (seconds in u64)
  std::string_view raw;

  ColumnValue() : u64(0) {}
  bool is_null() const { return kind == Kind::kNull; }
  bool is_present() const { return kind != Kind::kAbsent; }
};

}  // namespace canal::binlog
