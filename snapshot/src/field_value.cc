// The binary protocol's result row values (the server's ProtocolBinary::ResultsetRow): fixed
// little-endian integers and floats, temporal values as a length byte and fields, everything
// else as a length-encoded string. The protocol's type codes are the binlog's (column_type.h).
#include "canal/snapshot/field_value.h"

#include <cstring>

#include "canal/parser/binlog/byte_reader.h"
#include "canal/parser/binlog/column_type.h"

namespace canal::snapshot {
namespace {

using binlog::ColumnType;
constexpr uint8_t Code(ColumnType t) { return static_cast<uint8_t>(t); }
constexpr uint8_t kTiny = Code(ColumnType::kTiny), kShort = Code(ColumnType::kShort), kLong = Code(ColumnType::kLong),
                  kFloat = Code(ColumnType::kFloat), kDouble = Code(ColumnType::kDouble),
                  kTimestamp = Code(ColumnType::kTimestamp), kLongLong = Code(ColumnType::kLongLong),
                  kInt24 = Code(ColumnType::kInt24), kDate = Code(ColumnType::kDate), kTime = Code(ColumnType::kTime),
                  kDateTime = Code(ColumnType::kDateTime), kYear = Code(ColumnType::kYear),
                  kNewDate = Code(ColumnType::kNewDate);

}  // namespace

size_t BinaryIntegerBytes(uint8_t type) {
  switch (type) {
    case kTiny: return 1;
    case kShort:
    case kYear: return 2;
    case kInt24:
    case kLong: return 4;
    default: return 8;
  }
}

uint8_t BinaryFixedBytes(FieldKind kind, uint8_t field_type) {
  if (kind == FieldKind::kSigned || kind == FieldKind::kUnsigned) return static_cast<uint8_t>(BinaryIntegerBytes(field_type));
  return kind == FieldKind::kDouble && field_type == kDouble ? 8 : 0;
}

FieldKind BinaryFieldKind(uint8_t field_type, bool is_unsigned) {
  switch (field_type) {
    case kTiny:
    case kShort:
    case kInt24:
    case kLong:
    case kLongLong:
    case kYear:
      return is_unsigned ? FieldKind::kUnsigned : FieldKind::kSigned;
    case kFloat:
    case kDouble:
      return FieldKind::kDouble;
    case kDate:
    case kNewDate:
    case kDateTime:
    case kTimestamp:
    case kTime:
      return FieldKind::kTime;
    default:
      return FieldKind::kBytes;
  }
}

const char* ReadBinaryValue(FieldKind kind, uint8_t field_type, const unsigned char** at, const unsigned char* end,
                            FieldValue* out, uint64_t* counted) {
  binlog::ByteReader r(*at, static_cast<size_t>(end - *at));
  const auto fail = [&](const char* why) {
    *at = end;
    return why;
  };
  constexpr const char* kPastEnd = "runs past the packet";
  out->kind = kind;
  switch (kind) {
    case FieldKind::kSigned:
    case FieldKind::kUnsigned: {
      const size_t n = BinaryIntegerBytes(field_type);
      uint64_t v;
      if (!r.ReadUIntLE(n, &v)) return fail(kPastEnd);
      if (kind == FieldKind::kUnsigned) {
        out->u64 = v;
      } else {
        out->i64 = SignExtendBinaryInteger(v, n);
      }
      *counted += 8;
      break;
    }
    case FieldKind::kDouble: {
      uint64_t bits;
      if (field_type == kFloat) {
        if (!r.ReadUIntLE(4, &bits)) return fail(kPastEnd);
        float v;
        const auto b32 = static_cast<uint32_t>(bits);
        std::memcpy(&v, &b32, 4);
        out->f64 = v;  // exact: a float widens to a double without rounding
      } else {
        if (!r.ReadUIntLE(8, &bits)) return fail(kPastEnd);
        std::memcpy(&out->f64, &bits, 8);
      }
      *counted += 8;
      break;
    }
    case FieldKind::kTime: {
      uint8_t n;
      std::string_view body;
      if (!r.ReadU8(&n) || !r.ReadBytes(n, &body)) return fail(kPastEnd);
      // The length is checked against the type below, so these reads cannot run short.
      binlog::ByteReader v(body);
      const auto u8 = [&v] {
        uint8_t x = 0;
        v.ReadU8(&x);
        return uint32_t{x};
      };
      const auto le = [&v](size_t bytes) {
        uint64_t x = 0;
        v.ReadUIntLE(bytes, &x);
        return x;
      };
      TimeValue t;
      if (field_type == kTime) {
        if (n != 0 && n != 8 && n != 12) return fail("is a TIME of a length the protocol does not have");
        if (n > 0) {
          t.negative = u8() != 0;
          const uint64_t days = le(4);  // folded into the hours ('838:59:59'), as client libraries hand a TIME out
          t.hour = static_cast<uint32_t>(days * 24 + u8());
          t.minute = u8();
          t.second = u8();
          if (n == 12) t.microsecond = static_cast<uint32_t>(le(4));
        }
      } else {
        if (n != 0 && n != 4 && n != 7 && n != 11) {
          return fail("is a date or datetime of a length the protocol does not have");
        }
        if (n >= 4) {
          t.year = static_cast<uint32_t>(le(2));
          t.month = u8();
          t.day = u8();
        }
        if (n >= 7) {
          t.hour = u8();
          t.minute = u8();
          t.second = u8();
        }
        if (n == 11) t.microsecond = static_cast<uint32_t>(le(4));
      }
      out->time = t;
      *counted += 8;
      break;
    }
    case FieldKind::kBytes: {
      uint64_t length;
      if (!r.ReadPackedInt(&length)) {
        // 0xFB is NULL (a flag in the row's bitmap here) and 0xFF no length at all.
        const bool bad_prefix = r.remaining() > 0 && (*r.current() == 0xFB || *r.current() == 0xFF);
        return fail(bad_prefix ? "has a length prefix the protocol does not have" : kPastEnd);
      }
      if (!r.ReadBytes(length, &out->bytes)) return fail(kPastEnd);
      *counted += length;
      break;
    }
    case FieldKind::kNull:
      return fail("was asked for as NULL, which a NULL flag says, not a value");
  }
  *at = r.current();
  return nullptr;
}

}  // namespace canal::snapshot
