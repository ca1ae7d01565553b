// Canal's value strings (CANAL_PROTOCOL.md "Value strings"), Column.sqlType and
// Column.mysqlType, from the decoder's typed values.
//
// AppendCanalValue is the hot path (once per column per row): numbers and
// temporal values are formatted with std::to_chars into stack buffers and
// appended, so it allocates nothing beyond the caller's string growing (errors
// aside). CanalMysqlType builds a fresh string; callers can cache it per table.
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "canal/render/canal_value.h"

#include "canal/parser/binlog/column_text.h"
#include "canal/parser/binlog/json_binary.h"
#include "canal/render/java_float_text.h"

namespace canal::render {

using binlog::AppendAsUtf8;
using binlog::AppendDecimalText;
using binlog::WriteDecimalText;
using binlog::AppendJsonText;
using binlog::ColumnInfo;
using binlog::ColumnType;
using binlog::ColumnValue;
using binlog::EffectiveType;
using binlog::IsBinaryCharset;
using binlog::IsTextBlob;
using binlog::TemporalValue;

namespace {



// "00".."99": two digits per lookup for integers and the temporal fields.
constexpr std::array<char, 200> MakeDigitPairs() {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[2 * i] = static_cast<char>('0' + i / 10);
    t[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return t;
}
constexpr std::array<char, 200> kDigitPairs = MakeDigitPairs();

// Decimal digits of u > 0 (1-20): the bit length's estimate, one comparison.
int DigitCount(uint64_t u) {
  static constexpr uint64_t kPowers[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                           10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                           100000000000ull, 1000000000000ull, 10000000000000ull,
                                           100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                           100000000000000000ull, 1000000000000000000ull,
                                           10000000000000000000ull};
  const int estimate = ((64 - std::countl_zero(u | 1)) * 1233) >> 12;  // floor(log10(2^bits))
  return estimate + (u >= kPowers[estimate] ? 1 : 0);
}

// The digits of u, two per step from the end (std::to_chars finds the length
// by a loop of divisions first; integers are most of a row's values).
char* WriteUnsigned(uint64_t u, char* out) {
  if (u < 10) {
    *out = static_cast<char>('0' + u);
    return out + 1;
  }
  char* const end = out + DigitCount(u);
  char* p = end;
  while (u >= 100) {
    p -= 2;
    std::memcpy(p, kDigitPairs.data() + 2 * (u % 100), 2);
    u /= 100;
  }
  if (u >= 10) {
    std::memcpy(p - 2, kDigitPairs.data() + 2 * u, 2);
  } else {
    p[-1] = static_cast<char>('0' + u);
  }
  return end;
}

char* WriteInt(uint64_t v, char* out) { return WriteUnsigned(v, out); }
char* WriteInt(int64_t v, char* out) {
  if (v >= 0) return WriteUnsigned(static_cast<uint64_t>(v), out);
  *out = '-';
  return WriteUnsigned(uint64_t{0} - static_cast<uint64_t>(v), out + 1);
}

template <typename Int>
void AppendInt(Int v, std::string* out) {
  char buf[24];
  out->append(buf, WriteInt(v, buf));
}

// FLOAT and DOUBLE text in MySQL's forms (TextForms::kMysql; Canal's forms are
// java_float_text.cc).
//
// Digits: the shortest string that reads back as the same float/double (FLOAT:
// 3.14159f -> "3.14159", not MySQL's 6-digit rounding).
// Notation: MySQL's (checked on MariaDB 10.11, same code as MySQL's my_gcvt):
// plain decimals for 1e-15 <= |x| < 1e15 and d.ddde[-]N outside that (1e15,
// 1.5e-16, 1.7976931348623157e308).
// -0 keeps its sign ("-0"); NaN/infinity (not storable in MySQL) print as Java does.
template <typename Float>
char* WriteMysqlFloating(Float v, char* out) {
  if (std::isnan(v) || std::isinf(v)) {
    const std::string_view text = std::isnan(v) ? "NaN" : v < 0 ? "-Infinity" : "Infinity";
    return std::copy(text.begin(), text.end(), out);
  }
  char sci[40];
  const auto r = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
  // sci is "[-]d[.ddd]e(+|-)XX": split into sign, digits and decimal exponent.
  const char* p = sci;
  const bool negative = *p == '-';
  if (negative) ++p;
  char digits[24];
  int ndigits = 0;
  for (; p < r.ptr && *p != 'e'; ++p) {
    if (*p != '.') digits[ndigits++] = *p;
  }
  int exponent = 0;
  if (p < r.ptr) {
    ++p;  // 'e'
    const bool exp_negative = *p == '-';
    ++p;  // sign
    std::from_chars(p, r.ptr, exponent);
    if (exp_negative) exponent = -exponent;
  }

  // At most 1 + 1 + 15 + 17 chars (-0.000000000000000ddd...), or 1 + 17 + 1 + 1 + 4 with an exponent.
  char* o = out;
  if (negative) *o++ = '-';
  if (exponent >= -15 && exponent < 15) {
    if (exponent >= 0) {
      const int int_digits = exponent + 1;
      for (int i = 0; i < int_digits; ++i) *o++ = i < ndigits ? digits[i] : '0';
      if (ndigits > int_digits) {
        *o++ = '.';
        for (int i = int_digits; i < ndigits; ++i) *o++ = digits[i];
      }
    } else {
      *o++ = '0';
      *o++ = '.';
      for (int i = 0; i < -exponent - 1; ++i) *o++ = '0';
      for (int i = 0; i < ndigits; ++i) *o++ = digits[i];
    }
  } else {
    *o++ = digits[0];
    if (ndigits > 1) {
      *o++ = '.';
      for (int i = 1; i < ndigits; ++i) *o++ = digits[i];
    }
    *o++ = 'e';
    o = std::to_chars(o, o + 8, exponent).ptr;
  }
  return o;
}

// Temporal text, written at the caller's pointer. Fields wider than MySQL
// allows (corrupt input) still fit kCanalFixedTextMax: 64 bits of year and 32 of
// each other field.
struct TemporalText {
  char* p;

  explicit TemporalText(char* out) : p(out) {}
  void Char(char c) { *p++ = c; }
  void Pair(uint32_t v) {  // v < 100
    std::memcpy(p, kDigitPairs.data() + 2 * v, 2);
    p += 2;
  }
  // At least `width` digits, zero-padded on the left.
  void Padded(uint64_t v, int width) {
    if (width == 2 && v < 100) return Pair(static_cast<uint32_t>(v));
    if (width == 4 && v < 10000) {
      Pair(static_cast<uint32_t>(v / 100));
      return Pair(static_cast<uint32_t>(v % 100));
    }
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    for (int len = static_cast<int>(r.ptr - tmp); len < width; ++len) *p++ = '0';
    for (const char* c = tmp; c < r.ptr; ++c) *p++ = *c;
  }
  void Date(uint64_t year, uint32_t month, uint32_t day) {
    Padded(year, 4);
    Char('-');
    Padded(month, 2);
    Char('-');
    Padded(day, 2);
  }
  void Clock(uint32_t hour, uint32_t minute, uint32_t second) {
    Padded(hour, 2);
    Char(':');
    Padded(minute, 2);
    Char(':');
    Padded(second, 2);
  }
  // Exactly fsp digits (at most 6) of the microseconds, as MySQL prints TIME(fsp).
  void Fraction(uint32_t micros, uint8_t fsp) {
    if (fsp == 0) return;
    if (fsp > 6) fsp = 6;
    const uint32_t v = micros % 1000000;
    char frac[6];
    std::memcpy(frac, kDigitPairs.data() + 2 * (v / 10000), 2);
    std::memcpy(frac + 2, kDigitPairs.data() + 2 * (v / 100 % 100), 2);
    std::memcpy(frac + 4, kDigitPairs.data() + 2 * (v % 100), 2);
    Char('.');
    std::memcpy(p, frac, fsp);
    p += fsp;
  }
};

char* WritePadded(uint64_t v, int width, char* out) {
  TemporalText t(out);
  t.Padded(v, width);
  return t.p;
}

char* WriteDate(const TemporalValue& v, char* out) {
  TemporalText t(out);
  t.Date(v.year, v.month, v.day);
  return t.p;
}

char* WriteTime(const TemporalValue& v, uint8_t fsp, char* out) {
  TemporalText t(out);
  // MySQL normalises -00:00:00 to 00:00:00, so a sign only goes with a non-zero value.
  if (v.negative && (v.hour | v.minute | v.second | v.micros) != 0) t.Char('-');
  t.Clock(v.hour, v.minute, v.second);
  t.Fraction(v.micros, fsp);
  return t.p;
}

char* WriteDateTime(const TemporalValue& v, uint8_t fsp, char* out) {
  TemporalText t(out);
  t.Date(v.year, v.month, v.day);
  t.Char(' ');
  t.Clock(v.hour, v.minute, v.second);
  t.Fraction(v.micros, fsp);
  return t.p;
}

// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
// civil_from_days arithmetic: eras of 400 years = 146097 days, years starting
// in March so that the leap day is last). No libc time calls: thread-safe and
// independent of the process time zone.
struct CivilDate {
  int64_t year;
  uint32_t month, day;
};
CivilDate CivilFromDays(int64_t days) {
  const int64_t z = days + 719468;  // days since 0000-03-01
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t day_of_era = z - era * 146097;  // [0, 146096]
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t month_from_march = (5 * day_of_year + 2) / 153;  // [0, 11]
  const auto day = static_cast<uint32_t>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  const auto month = static_cast<uint32_t>(month_from_march < 10 ? month_from_march + 3
                                                                 : month_from_march - 9);
  const int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  return {year, month, day};
}

char* WriteTimestamp(uint64_t unix_seconds, uint32_t micros, uint8_t fsp, int32_t offset_seconds, char* out) {
  TemporalText t(out);
  if (unix_seconds == 0) {
    // TIMESTAMP 0 is MySQL's zero timestamp, not the epoch (which it cannot store).
    t.Date(0, 0, 0);
    t.Char(' ');
    t.Clock(0, 0, 0);
  } else {
    // Far beyond any real TIMESTAMP (2038 / 2106); capped so the arithmetic cannot overflow.
    constexpr uint64_t kMaxSeconds = uint64_t{1} << 50;
    const int64_t local =
        static_cast<int64_t>(unix_seconds < kMaxSeconds ? unix_seconds : kMaxSeconds) +
        offset_seconds;
    int64_t days = local / 86400;
    int64_t secs = local % 86400;
    if (secs < 0) {
      secs += 86400;
      --days;
    }
    const CivilDate date = CivilFromDays(days);
    // local >= 1 - 2^31 puts the year at 1901 or later: never negative.
    t.Date(static_cast<uint64_t>(date.year), date.month, date.day);
    t.Char(' ');
    const auto s = static_cast<uint32_t>(secs);
    t.Clock(s / 3600, s / 60 % 60, s % 60);
  }
  t.Fraction(micros, fsp);
  return t.p;
}

char* WriteYear(int64_t year, char* out) {
  if (year < 0) return WriteInt(year, out);  // not a YEAR MySQL can store; show it as is
  return WritePadded(static_cast<uint64_t>(year), 4, out);  // 0 -> "0000"
}

// BINARY(n) is stored padded with 0x00 to n bytes, but both servers log it
// with the trailing 0x00s cut (as they cut CHAR's trailing spaces, which a
// SELECT cuts too): the zeros are put back, so the value is the one the
// database holds and returns (Canal itself sends the cut bytes).
size_t BinaryPadding(const ColumnValue& value, const ColumnInfo& column) {
  if (EffectiveType(column) != ColumnType::kString || column.max_length <= value.raw.size()) return 0;
  return column.max_length - value.raw.size();
}

void AppendBase64(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->reserve(out->size() + (bytes.size() + 2) / 3 * 4);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const uint32_t v = uint32_t(p[i]) << 16 | uint32_t(p[i + 1]) << 8 | p[i + 2];
    const char quad[4] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63],
                          kAlphabet[v & 63]};
    out->append(quad, 4);
  }
  if (i < n) {
    const uint32_t v = uint32_t(p[i]) << 16 | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0);
    const char quad[4] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63],
                          i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=', '='};
    out->append(quad, 4);
  }
}

// Readable ENUM: the 1-based label; 0 is MySQL's "" error value. Without labels
// (no optional metadata / schema) or with an index past them, the index.
void AppendEnumLabel(uint64_t index, const ColumnInfo& column, std::string* out) {
  if (index == 0) return;
  const auto& labels = column.enum_or_set_labels;
  if (index > labels.size()) {
    AppendInt(index, out);
    return;
  }
  AppendAsUtf8(labels[index - 1], column.charset, out);
}

// Readable SET: labels of the set bits, comma-separated, in definition order
// (as MySQL prints them). Without labels for every set bit, the bitmask.
void AppendSetLabels(uint64_t bits, const ColumnInfo& column, std::string* out) {
  const auto& labels = column.enum_or_set_labels;
  if (labels.size() < 64 && (bits >> labels.size()) != 0) {
    AppendInt(bits, out);
    return;
  }
  bool first = true;
  for (size_t i = 0; i < labels.size() && i < 64; ++i) {
    if ((bits >> i & 1) == 0) continue;
    if (!first) out->push_back(',');
    first = false;
    AppendAsUtf8(labels[i], column.charset, out);
  }
}

}  // namespace

char* WriteCanalFixedText(const ColumnValue& value, const ColumnInfo& column, const ValueFormatOptions& options,
                          char* out) {
  switch (value.kind) {
    case ColumnValue::Kind::kSigned:
    case ColumnValue::Kind::kUnsigned: {
      const ColumnType type = value.type != ColumnType::kNull ? value.type : EffectiveType(column);
      // Readable ENUM/SET print labels.
      if (options.readable && (type == ColumnType::kEnum || type == ColumnType::kSet) &&
          value.kind == ColumnValue::Kind::kUnsigned) {
        return nullptr;
      }
      if (type == ColumnType::kYear) {
        return value.kind == ColumnValue::Kind::kSigned ? WriteYear(value.i64, out) : WritePadded(value.u64, 4, out);
      }
      return value.kind == ColumnValue::Kind::kSigned ? WriteInt(value.i64, out) : WriteInt(value.u64, out);
    }
    case ColumnValue::Kind::kFloat:
      return options.forms == TextForms::kCanal ? WriteJavaFloatText(value.f32, out)
                                                : WriteMysqlFloating(value.f32, out);
    case ColumnValue::Kind::kDouble:
      return options.forms == TextForms::kCanal ? WriteJavaDoubleText(value.f64, out)
                                                : WriteMysqlFloating(value.f64, out);
    case ColumnValue::Kind::kDate:
      return WriteDate(value.temporal, out);
    case ColumnValue::Kind::kTime:
      return WriteTime(value.temporal, value.fsp, out);
    case ColumnValue::Kind::kDateTime:
      return WriteDateTime(value.temporal, value.fsp, out);
    case ColumnValue::Kind::kTimestamp:
      return WriteTimestamp(value.u64, value.timestamp_micros, value.fsp, options.timestamp_utc_offset_seconds, out);
    case ColumnValue::Kind::kDecimal:
      return WriteDecimalText(value.raw, column.precision, column.decimals, out);  // nullptr when not a decimal
    case ColumnValue::Kind::kDecimalText:
      if (value.raw.size() > kCanalFixedTextMax) return nullptr;
      return std::copy(value.raw.begin(), value.raw.end(), out);
    default:
      return nullptr;  // not a fixed kind
  }
}

Status AppendCanalValue(const ColumnValue& value, const ColumnInfo& column,
                        const ValueFormatOptions& options, std::string* out) {
  char buf[kCanalFixedTextMax];
  if (const char* end = WriteCanalFixedText(value, column, options, buf)) {
    out->append(buf, static_cast<size_t>(end - buf));
    return Status::OK();
  }
  switch (value.kind) {
    case ColumnValue::Kind::kAbsent:
    case ColumnValue::Kind::kNull:
      return Status::InvalidArgument("an absent or NULL column has no value text");
    case ColumnValue::Kind::kUnsigned: {
      // Readable ENUM/SET (other integers have fixed text).
      const ColumnType type = value.type != ColumnType::kNull ? value.type : EffectiveType(column);
      if (type == ColumnType::kEnum) {
        AppendEnumLabel(value.u64, column, out);
      } else {
        AppendSetLabels(value.u64, column, out);
      }
      return Status::OK();
    }
    case ColumnValue::Kind::kSigned:
    case ColumnValue::Kind::kFloat:
    case ColumnValue::Kind::kDouble:
    case ColumnValue::Kind::kDate:
    case ColumnValue::Kind::kTime:
    case ColumnValue::Kind::kDateTime:
    case ColumnValue::Kind::kTimestamp:
      break;  // fixed text, written above
    case ColumnValue::Kind::kDecimalText:
      out->append(value.raw);
      return Status::OK();
    case ColumnValue::Kind::kDecimal: {
      // Only a value that is not a valid decimal gets here: for the error.
      const size_t old_size = out->size();
      Status s = AppendDecimalText(value.raw, column.precision, column.decimals, out);
      if (!s.ok()) out->resize(old_size);
      return s;
    }
    case ColumnValue::Kind::kString:
      AppendAsUtf8(value.raw, column.charset, out);
      return Status::OK();
    case ColumnValue::Kind::kBytes: {
      const size_t pad = BinaryPadding(value, column);
      if (options.readable) {
        if (pad == 0) {
          AppendBase64(value.raw, out);
        } else {
          std::string padded(value.raw);
          padded.append(pad, '\0');
          AppendBase64(padded, out);
        }
      } else {
        AppendAsUtf8(value.raw, /*charset=binary: ISO-8859-1*/ 63, out);
        out->append(pad, '\0');
      }
      return Status::OK();
    }
    case ColumnValue::Kind::kJson: {
      if (value.json_is_text) {
        // MariaDB's JSON is LONGTEXT in the column's charset; a document the
        // decoder built is UTF-8 already.
        if (IsBinaryCharset(column.charset)) {
          out->append(value.raw);
        } else {
          AppendAsUtf8(value.raw, column.charset, out);
        }
        return Status::OK();
      }
      const size_t old_size = out->size();
      Status s = AppendJsonText(value.raw, out);
      if (!s.ok()) {
        out->resize(old_size);
        return s.WithContext("JSON value");
      }
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown column value kind");
}

bool CanalValueSize(const ColumnValue& value, const ColumnInfo& column, const ValueFormatOptions& options,
                    size_t* size) {
  switch (value.kind) {
    case ColumnValue::Kind::kString:
      return binlog::SizeAsUtf8(value.raw, column.charset, size);
    case ColumnValue::Kind::kBytes: {
      const size_t pad = BinaryPadding(value, column);
      if (options.readable) {
        *size = (value.raw.size() + pad + 2) / 3 * 4;  // AppendBase64: padded, no line breaks
        return true;
      }
      if (!binlog::SizeAsUtf8(value.raw, /*charset=binary: ISO-8859-1*/ 63, size)) return false;
      *size += pad;
      return true;
    }
    default:
      return false;
  }
}

std::string CanalMysqlType(const ColumnInfo& column, const ValueFormatOptions& options,
                           bool integer_display_widths) {
  if (options.forms == TextForms::kMysql) return binlog::ColumnTypeText(column, false);
  if (!column.column_type.empty()) return column.column_type;  // as the server says it
  return binlog::ColumnTypeText(column, integer_display_widths);
}

}  // namespace canal::render
