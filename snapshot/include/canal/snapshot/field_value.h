// A value of a chunk row as ChunkReader (chunk_reader.h) hands it out: the binary protocol's
// typed value, with the server's column type, before any rendering (snapshot_render.h turns it
// into the decoder's typed value). Plain values; no connection needed to read them.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
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
// A signed integer of `bytes` (1-8) little-endian bytes, read as unsigned, with its sign.
inline int64_t SignExtendBinaryInteger(uint64_t v, size_t bytes) {
  const unsigned shift = static_cast<unsigned>(64 - 8 * bytes);
  return static_cast<int64_t>(v << shift) >> shift;
}
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
// (Inline: it runs for every column of every snapshot row.)
static_assert(std::endian::native == std::endian::little,
              "ReadCommonBinaryValue loads the protocol's little-endian integers as they are");
inline bool ReadCommonBinaryValue(FieldKind kind, uint8_t fixed_bytes, const unsigned char** at, const unsigned char* end,
                                  FieldValue* f, uint64_t* counted) {
  const unsigned char* p = *at;
  const auto left = static_cast<size_t>(end - p);
  if (fixed_bytes != 0) {
    const size_t n = fixed_bytes;
    if (left < n || (n != 1 && n != 2 && n != 4 && n != 8)) return false;  // ReadBinaryValue says how it ran short
    // Little-endian, as the protocol and this host; sizes fixed per case, so no memcpy call.
    uint64_t bits;
    switch (n) {
      case 1: bits = p[0]; break;
      case 2: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        bits = v;
        break;
      }
      case 4: {
        uint32_t v;
        std::memcpy(&v, p, 4);
        bits = v;
        break;
      }
      default: std::memcpy(&bits, p, 8); break;  // 8, checked above
    }
    f->kind = kind;
    if (kind == FieldKind::kDouble) {
      std::memcpy(&f->f64, &bits, 8);
    } else if (kind == FieldKind::kUnsigned) {
      f->u64 = bits;
    } else {
      f->i64 = SignExtendBinaryInteger(bits, n);
    }
    *at = p + n;
    *counted += 8;
    return true;
  }
  if (kind != FieldKind::kBytes || left == 0 || p[0] >= 251) return false;
  // A length below 251 is its own one-byte prefix (251 is NULL's mark, 252-254 longer prefixes).
  const size_t length = p[0];
  if (left - 1 < length) return false;
  f->kind = FieldKind::kBytes;
  f->bytes = std::string_view(reinterpret_cast<const char*>(p + 1), length);
  *at = p + 1 + length;
  *counted += length;
  return true;
}

// A key column's value kept past its row: what the next chunk's statement is bound with, and
// what a snapshot's progress stores (snapshot_progress.h).
struct KeyValue : TypedValue {
  std::string bytes;
};

}  // namespace canal::snapshot
