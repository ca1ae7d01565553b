// The binary protocol's result row values (the server's ProtocolBinary::ResultsetRow): fixed
// little-endian integers and floats, temporal values as a length byte and fields, everything
// else as a length-encoded string. The protocol's type codes are the binlog's (column_type.h).
#include "canal/snapshot/field_value.h"

#include <cstring>

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

uint64_t LittleEndian(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

int64_t SignExtend(uint64_t v, size_t bytes) {
  const unsigned shift = static_cast<unsigned>(64 - 8 * bytes);
  return static_cast<int64_t>(v << shift) >> shift;
}

size_t IntegerBytes(uint8_t type) {
  switch (type) {
    case kTiny: return 1;
    case kShort:
    case kYear: return 2;
    case kInt24:
    case kLong: return 4;
    default: return 8;
  }
}

}  // namespace

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
  const unsigned char* p = *at;
  const size_t left = static_cast<size_t>(end - p);
  const auto past_end = [&]() {
    *at = end;
    return "runs past the packet";
  };
  out->kind = kind;
  switch (kind) {
    case FieldKind::kSigned:
    case FieldKind::kUnsigned: {
      const size_t n = IntegerBytes(field_type);
      if (left < n) return past_end();
      const uint64_t v = LittleEndian(p, n);
      if (kind == FieldKind::kUnsigned) {
        out->u64 = v;
      } else {
        out->i64 = SignExtend(v, n);
      }
      *at = p + n;
      *counted += 8;
      return nullptr;
    }
    case FieldKind::kDouble: {
      if (field_type == kFloat) {
        if (left < 4) return past_end();
        float v;
        std::memcpy(&v, p, 4);
        out->f64 = v;  // exact: a float widens to a double without rounding
        *at = p + 4;
      } else {
        if (left < 8) return past_end();
        std::memcpy(&out->f64, p, 8);
        *at = p + 8;
      }
      *counted += 8;
      return nullptr;
    }
    case FieldKind::kTime: {
      if (left < 1) return past_end();
      const size_t n = p[0];
      if (left < 1 + n) return past_end();
      const unsigned char* v = p + 1;
      TimeValue t;
      if (field_type == kTime) {
        if (n != 0 && n != 8 && n != 12) {
          *at = end;
          return "is a TIME of a length the protocol does not have";
        }
        if (n > 0) {
          t.negative = v[0] != 0;
          // Days folded into the hours ('838:59:59'), as client libraries hand a TIME out.
          t.hour = static_cast<uint32_t>(LittleEndian(v + 1, 4) * 24 + v[5]);
          t.minute = v[6];
          t.second = v[7];
          if (n == 12) t.microsecond = static_cast<uint32_t>(LittleEndian(v + 8, 4));
        }
      } else {
        if (n != 0 && n != 4 && n != 7 && n != 11) {
          *at = end;
          return "is a date or datetime of a length the protocol does not have";
        }
        if (n >= 4) {
          t.year = static_cast<uint32_t>(LittleEndian(v, 2));
          t.month = v[2];
          t.day = v[3];
        }
        if (n >= 7) {
          t.hour = v[4];
          t.minute = v[5];
          t.second = v[6];
        }
        if (n == 11) t.microsecond = static_cast<uint32_t>(LittleEndian(v + 7, 4));
      }
      out->time = t;
      *at = p + 1 + n;
      *counted += 8;
      return nullptr;
    }
    case FieldKind::kBytes: {
      if (left < 1) return past_end();
      uint64_t length = p[0];
      size_t header = 1;
      if (length >= 251) {
        header = length == 252 ? 3 : length == 253 ? 4 : length == 254 ? 9 : 0;
        if (header == 0) {
          *at = end;
          return "has a length prefix the protocol does not have";
        }
        if (left < header) return past_end();
        length = LittleEndian(p + 1, header - 1);
      }
      if (length > left - header) return past_end();
      out->bytes = std::string_view(reinterpret_cast<const char*>(p + header), length);
      *at = p + header + length;
      *counted += length;
      return nullptr;
    }
    case FieldKind::kNull:
      break;
  }
  *at = end;
  return "was asked for as NULL, which a NULL flag says, not a value";
}

}  // namespace canal::snapshot
