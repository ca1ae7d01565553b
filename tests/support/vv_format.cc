#include "support/vv_format.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "canal/common/status.h"
#include "canal/parser/binlog/column_text.h"

namespace canal::testing {

namespace {

using binlog::ColumnInfo;
using binlog::ColumnType;
using binlog::ColumnValue;
using Kind = binlog::ColumnValue::Kind;

ColumnType EffectiveType(const ColumnValue& v, const ColumnInfo& col) {
  if (v.type != ColumnType::kNull) return v.type;
  if (col.real_type != ColumnType::kNull) return col.real_type;
  return col.type;
}

int IntWidth(ColumnType t) {
  switch (t) {
    case ColumnType::kTiny: return 1;
    case ColumnType::kShort: return 2;
    case ColumnType::kInt24: return 3;
    case ColumnType::kLong: return 4;
    case ColumnType::kLongLong: return 8;
    default: return 0;
  }
}

uint64_t RawBits(const ColumnValue& v) {
  return v.kind == Kind::kSigned ? static_cast<uint64_t>(v.i64) : v.u64;
}

// Fractional digits of a temporal value: the value's own, else the column's
// TIME2/DATETIME2/TIMESTAMP2 metadata.
int Fsp(const ColumnValue& v, const ColumnInfo& col) {
  if (v.fsp > 0) return v.fsp > 6 ? 6 : v.fsp;
  bool v2 = col.type == ColumnType::kTime2 || col.type == ColumnType::kDateTime2 ||
            col.type == ColumnType::kTimestamp2;
  return v2 && col.meta <= 6 ? col.meta : 0;
}

std::string Fraction(uint32_t micros, int fsp) {
  if (fsp <= 0) return {};
  if (fsp > 6) fsp = 6;
  std::string digits = std::to_string(1000000 + micros % 1000000).substr(1);  // 6 digits
  digits.resize(static_cast<size_t>(fsp));
  digits.insert(digits.begin(), '.');
  return digits;
}

std::string FormatInteger(uint64_t bits, int width) {
  if (width > 0 && width < 8) bits &= (uint64_t{1} << (8 * width)) - 1;
  int64_t as_signed = static_cast<int64_t>(bits);
  if (width > 0 && width < 8 && (bits >> (8 * width - 1)) & 1) {
    as_signed = static_cast<int64_t>(bits | ~((uint64_t{1} << (8 * width)) - 1));
  }
  std::string s = std::to_string(as_signed);
  if (as_signed < 0) s += " (" + std::to_string(bits) + ")";
  return s;
}

// BIT(n) width: the decoder's bit count, else TABLE_MAP meta (bytes << 8 | bits).
int BitWidth(const ColumnInfo& col) {
  if (col.max_length > 0 && col.max_length <= 64) return static_cast<int>(col.max_length);
  int bits = (col.meta >> 8) * 8 + (col.meta & 0xFF);
  return bits > 0 && bits <= 64 ? bits : 64;
}

// SET storage size in bytes: 1, 2, 3, 4 or 8.
int SetBytes(const ColumnInfo& col) {
  if ((col.meta >> 8) == static_cast<unsigned>(ColumnType::kSet)) {
    int n = col.meta & 0xFF;
    if (n >= 1 && n <= 8) return n;
  }
  if (col.max_length >= 1 && col.max_length <= 8) return static_cast<int>(col.max_length);
  if (!col.enum_or_set_labels.empty()) {
    size_t n = (col.enum_or_set_labels.size() + 7) / 8;
    return n > 4 ? 8 : static_cast<int>(n);
  }
  return 8;
}

std::string BitString(uint64_t value, int nbits) {
  std::string s = "b'";
  for (int i = nbits - 1; i >= 0; --i) s += ((value >> i) & 1) ? '1' : '0';
  return s + "'";
}

std::string SetString(uint64_t value, int nbytes) {
  std::string s = "b'";
  for (int byte = 0; byte < nbytes; ++byte) {
    for (int bit = 7; bit >= 0; --bit) s += ((value >> (8 * byte + bit)) & 1) ? '1' : '0';
  }
  return s + "'";
}

std::string Quoted(std::string_view raw) {
  std::string out = "'";
  out += EscapeLikeMariadbBinlog(raw);
  out += '\'';
  return out;
}

// ---- parsing -vv text ------------------------------------------------------

template <typename T>
bool ParseNumber(std::string_view s, T* v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool StripQuotes(std::string_view s, std::string_view* inner) {
  if (s.size() < 2 || s.front() != '\'' || s.back() != '\'') return false;
  *inner = s.substr(1, s.size() - 2);
  return true;
}

// b'0101' -> its digits.
bool BitDigits(std::string_view s, std::string_view* digits) {
  if (s.size() < 3 || s.substr(0, 2) != "b'" || s.back() != '\'') return false;
  *digits = s.substr(2, s.size() - 3);
  if (digits->empty() || digits->size() > 64) return false;
  return digits->find_first_not_of("01") == std::string_view::npos;
}

// "<digits>[.<1-6 digits>]" -> whole part and microseconds.
bool ParseSecondsAndFraction(std::string_view s, uint64_t* whole, uint32_t* micros) {
  size_t dot = s.find('.');
  *micros = 0;
  if (!ParseNumber(s.substr(0, dot), whole)) return false;
  if (dot == std::string_view::npos) return true;
  std::string_view frac = s.substr(dot + 1);
  if (frac.empty() || frac.size() > 6) return false;
  uint32_t f = 0;
  if (!ParseNumber(frac, &f)) return false;
  for (size_t i = frac.size(); i < 6; ++i) f *= 10;
  *micros = f;
  return true;
}

// "HH:MM:SS[.f]" (hours may exceed 99).
bool ParseClock(std::string_view s, uint32_t* h, uint32_t* m, uint32_t* sec, uint32_t* micros) {
  size_t c1 = s.find(':');
  if (c1 == std::string_view::npos) return false;
  size_t c2 = s.find(':', c1 + 1);
  if (c2 == std::string_view::npos || c2 != c1 + 3) return false;
  uint64_t whole = 0;
  if (!ParseNumber(s.substr(0, c1), h) || !ParseNumber(s.substr(c1 + 1, 2), m) ||
      !ParseSecondsAndFraction(s.substr(c2 + 1), &whole, micros) || whole > 59 ||
      s.substr(c2 + 1, 2).find('.') != std::string_view::npos) {
    return false;
  }
  *sec = static_cast<uint32_t>(whole);
  return true;
}

bool ParseDateParts(std::string_view s, char sep, uint32_t* y, uint32_t* mo, uint32_t* d) {
  if (s.size() != 10 || s[4] != sep || s[7] != sep) return false;
  return ParseNumber(s.substr(0, 4), y) && ParseNumber(s.substr(5, 2), mo) &&
         ParseNumber(s.substr(8, 2), d);
}

// Decimal text without insignificant zeros: "-0.0100" -> "-0.01", "-0.00" -> "0".
std::optional<std::string> NormalizeDecimal(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  size_t dot = s.find('.');
  std::string_view int_part = s.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (int_part.empty() && frac.empty()) return std::nullopt;
  if (int_part.find_first_not_of("0123456789") != std::string_view::npos ||
      frac.find_first_not_of("0123456789") != std::string_view::npos ||
      (dot != std::string_view::npos && frac.empty())) {
    return std::nullopt;
  }
  while (int_part.size() > 1 && int_part.front() == '0') int_part.remove_prefix(1);
  while (!frac.empty() && frac.back() == '0') frac.remove_suffix(1);
  std::string out(int_part.empty() ? std::string_view("0") : int_part);
  if (!frac.empty()) {
    out += '.';
    out += frac;
  }
  if (negative && out != "0") out.insert(out.begin(), '-');
  return out;
}

bool Fail(std::string* why, std::string msg) {
  *why = std::move(msg);
  return false;
}

bool MatchInteger(const ColumnValue& v, std::string_view text, std::string* why) {
  // "S" or "S (U)".
  std::string_view s_text = text, u_text;
  size_t sp = text.find(" (");
  if (sp != std::string_view::npos) {
    if (text.back() != ')') return Fail(why, "bad integer text");
    s_text = text.substr(0, sp);
    u_text = text.substr(sp + 2, text.size() - sp - 3);
  }
  int64_t s = 0;
  uint64_t u = 0;
  if (!ParseNumber(s_text, &s)) return Fail(why, "bad integer text");
  if (!u_text.empty()) {
    if (!ParseNumber(u_text, &u)) return Fail(why, "bad unsigned reading");
  } else {
    if (s < 0) return Fail(why, "negative value printed without its unsigned reading");
    u = static_cast<uint64_t>(s);
  }
  if (v.kind == Kind::kSigned) {
    if (v.i64 == s) return true;
    return Fail(why, "ours " + std::to_string(v.i64) + ", -vv reads " + std::string(text));
  }
  if (v.u64 == u) return true;
  return Fail(why, "ours " + std::to_string(v.u64) + " (unsigned), -vv reads " + std::string(text));
}

bool MatchImpl(const ColumnValue& v, const ColumnInfo& col, std::string_view text, std::string* why) {
  if (v.kind == Kind::kAbsent) return Fail(why, "column absent from our image");
  if (text == "NULL" || v.kind == Kind::kNull) {
    if (text == "NULL" && v.kind == Kind::kNull) return true;
    return Fail(why, v.kind == Kind::kNull ? "ours NULL, -vv " + std::string(text) : "ours not NULL, -vv NULL");
  }
  ColumnType type = EffectiveType(v, col);
  switch (v.kind) {
    case Kind::kSigned:
    case Kind::kUnsigned: {
      uint64_t bits = RawBits(v);
      if (type == ColumnType::kYear) {
        int64_t year = v.kind == Kind::kSigned ? v.i64 : static_cast<int64_t>(v.u64);
        int64_t printed = 0;
        if (!ParseNumber(text, &printed)) return Fail(why, "bad YEAR text");
        if (printed == year || (year == 0 && printed == 1900)) return true;
        return Fail(why, "ours year " + std::to_string(year) + ", -vv " + std::string(text));
      }
      if (type == ColumnType::kBit || type == ColumnType::kSet) {
        std::string_view digits;
        if (!BitDigits(text, &digits)) return Fail(why, "not b'<bits>'");
        uint64_t value = 0;
        if (type == ColumnType::kBit) {
          for (char c : digits) value = (value << 1) | static_cast<uint64_t>(c - '0');
        } else {
          if (digits.size() % 8 != 0) return Fail(why, "SET bitmap is not whole bytes");
          for (size_t i = 0; i < digits.size(); ++i) {
            size_t byte = i / 8, bit = 7 - i % 8;
            if (digits[i] == '1') value |= uint64_t{1} << (8 * byte + bit);
          }
        }
        if (value == bits) return true;
        return Fail(why, "ours " + std::to_string(bits) + ", -vv " + std::string(text) + " = " +
                             std::to_string(value));
      }
      if (type == ColumnType::kEnum) {
        uint64_t index = 0;
        if (!ParseNumber(text, &index)) return Fail(why, "bad ENUM index");
        if (index == bits) return true;
        return Fail(why, "ours ENUM index " + std::to_string(bits) + ", -vv " + std::string(text));
      }
      return MatchInteger(v, text, why);
    }
    case Kind::kFloat: {
      std::string ours = FormatLikeMariadbBinlog(v, col);
      if (ours == text) return true;
      return Fail(why, "ours " + ours + " at 6 digits, -vv " + std::string(text));
    }
    case Kind::kDouble: {
      std::string t(text);
      char* end = nullptr;
      double d = std::strtod(t.c_str(), &end);
      if (end != t.c_str() + t.size()) return Fail(why, "bad DOUBLE text");
      if (d == v.f64) return true;
      return Fail(why, "ours " + FormatLikeMariadbBinlog(v, col) + ", -vv " + t);
    }
    case Kind::kDecimal:
    case Kind::kDecimalText: {
      std::string ours(v.raw);
      Status s = v.kind == Kind::kDecimalText ? Status::OK() : [&] {
        ours.clear();
        return binlog::AppendDecimalText(v.raw, col.precision, col.decimals, &ours);
      }();
      if (!s.ok()) return Fail(why, "our DECIMAL does not render: " + s.ToString());
      std::optional<std::string> a = NormalizeDecimal(ours), b = NormalizeDecimal(text);
      if (!a || !b) return Fail(why, "bad DECIMAL text (ours " + ours + ", -vv " + std::string(text) + ")");
      if (*a == *b) return true;
      return Fail(why, "ours " + ours + ", -vv " + std::string(text));
    }
    case Kind::kDate: {
      std::string_view inner;
      uint32_t y = 0, m = 0, d = 0;
      if (!StripQuotes(text, &inner) || !ParseDateParts(inner, ':', &y, &m, &d)) {
        return Fail(why, "not 'YYYY:MM:DD'");
      }
      const binlog::TemporalValue& t = v.temporal;
      if (t.year == y && t.month == m && t.day == d) return true;
      return Fail(why, "ours " + FormatLikeMariadbBinlog(v, col) + ", -vv " + std::string(text));
    }
    case Kind::kTime: {
      std::string_view inner;
      if (!StripQuotes(text, &inner)) return Fail(why, "TIME not quoted");
      bool negative = !inner.empty() && inner[0] == '-';
      if (negative) inner.remove_prefix(1);
      uint32_t h = 0, m = 0, s = 0, us = 0;
      if (!ParseClock(inner, &h, &m, &s, &us)) return Fail(why, "not '[-]HH:MM:SS[.f]'");
      const binlog::TemporalValue& t = v.temporal;
      bool zero = h == 0 && m == 0 && s == 0 && us == 0;
      bool ours_zero = t.hour == 0 && t.minute == 0 && t.second == 0 && t.micros == 0;
      // The sign of zero carries no value.
      bool sign_ok = (negative == t.negative) || (zero && ours_zero);
      if (sign_ok && t.hour == h && t.minute == m && t.second == s && t.micros == us) return true;
      return Fail(why, "ours " + FormatLikeMariadbBinlog(v, col) + ", -vv " + std::string(text));
    }
    case Kind::kDateTime: {
      std::string_view inner;
      uint32_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, us = 0;
      if (!StripQuotes(text, &inner) || inner.size() < 19 || inner[10] != ' ' ||
          !ParseDateParts(inner.substr(0, 10), '-', &y, &mo, &d) ||
          !ParseClock(inner.substr(11), &h, &mi, &s, &us) || inner[13] != ':') {
        return Fail(why, "not 'YYYY-MM-DD HH:MM:SS[.f]'");
      }
      const binlog::TemporalValue& t = v.temporal;
      if (t.year == y && t.month == mo && t.day == d && t.hour == h && t.minute == mi &&
          t.second == s && t.micros == us) {
        return true;
      }
      return Fail(why, "ours " + FormatLikeMariadbBinlog(v, col) + ", -vv " + std::string(text));
    }
    case Kind::kTimestamp: {
      uint64_t secs = 0;
      uint32_t us = 0;
      if (!ParseSecondsAndFraction(text, &secs, &us)) return Fail(why, "not <seconds>[.f]");
      if (secs == v.u64 && us == v.timestamp_micros) return true;
      return Fail(why, "ours " + FormatLikeMariadbBinlog(v, col) + ", -vv " + std::string(text));
    }
    case Kind::kJson:
      if (!v.json_is_text) return Fail(why, "binary JSON has no -vv form (MariaDB logs JSON as text)");
      [[fallthrough]];
    case Kind::kString:
    case Kind::kBytes: {
      std::string_view inner;
      if (!StripQuotes(text, &inner)) return Fail(why, "string not quoted");
      std::string ours = EscapeLikeMariadbBinlog(v.raw);
      if (ours == inner) return true;
      size_t at = 0;
      while (at < ours.size() && at < inner.size() && ours[at] == inner[at]) ++at;
      return Fail(why, "strings differ at escaped byte " + std::to_string(at) + " (ours " +
                           std::to_string(v.raw.size()) + " bytes)");
    }
    case Kind::kAbsent:
    case Kind::kNull:
      break;
  }
  return Fail(why, "unhandled value kind");
}

}  // namespace

std::string EscapeLikeMariadbBinlog(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatLikeMariadbBinlog(const ColumnValue& v, const ColumnInfo& col) {
  ColumnType type = EffectiveType(v, col);
  char buf[64];
  switch (v.kind) {
    case Kind::kAbsent: return {};
    case Kind::kNull: return "NULL";
    case Kind::kSigned:
    case Kind::kUnsigned: {
      uint64_t bits = RawBits(v);
      if (type == ColumnType::kYear) return bits == 0 ? "1900" : std::to_string(bits);
      if (type == ColumnType::kBit) return BitString(bits, BitWidth(col));
      if (type == ColumnType::kSet) return SetString(bits, SetBytes(col));
      if (type == ColumnType::kEnum) return std::to_string(bits);
      int width = IntWidth(type);
      if (width == 0) return v.kind == Kind::kSigned ? std::to_string(v.i64) : std::to_string(v.u64);
      return FormatInteger(bits, width);
    }
    case Kind::kFloat:
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v.f32));
      return buf;
    case Kind::kDouble:
      std::snprintf(buf, sizeof buf, "%.20g", v.f64);
      return buf;
    case Kind::kDecimalText:
      return std::string(v.raw);
    case Kind::kDecimal: {
      std::string out;
      Status s = binlog::AppendDecimalText(v.raw, col.precision, col.decimals, &out);
      if (!s.ok()) return "<bad decimal: " + s.ToString() + ">";
      return out;
    }
    case Kind::kDate:
      std::snprintf(buf, sizeof buf, "'%04u:%02u:%02u'", v.temporal.year, v.temporal.month, v.temporal.day);
      return buf;
    case Kind::kTime:
      std::snprintf(buf, sizeof buf, "'%s%02u:%02u:%02u", v.temporal.negative ? "-" : "", v.temporal.hour,
                    v.temporal.minute, v.temporal.second);
      return buf + Fraction(v.temporal.micros, Fsp(v, col)) + "'";
    case Kind::kDateTime:
      std::snprintf(buf, sizeof buf, "'%04u-%02u-%02u %02u:%02u:%02u", v.temporal.year, v.temporal.month,
                    v.temporal.day, v.temporal.hour, v.temporal.minute, v.temporal.second);
      return buf + Fraction(v.temporal.micros, Fsp(v, col)) + "'";
    case Kind::kTimestamp:
      return std::to_string(v.u64) + Fraction(v.timestamp_micros, Fsp(v, col));
    case Kind::kJson:
      if (!v.json_is_text) return "<binary JSON>";
      return Quoted(v.raw);
    case Kind::kString:
    case Kind::kBytes:
      return Quoted(v.raw);
  }
  return {};
}

bool VvValueMatches(const ColumnValue& v, const ColumnInfo& col, std::string_view vv_text,
                    std::string* why) {
  std::string reason;
  bool ok = MatchImpl(v, col, vv_text, &reason);
  if (!ok && why != nullptr) *why = reason;
  return ok;
}

}  // namespace canal::testing
