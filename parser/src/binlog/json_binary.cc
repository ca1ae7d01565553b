// MySQL binary JSON: validation, rendering to MySQL-style text, and decoding
// into the internal DOM used by partial updates.
//
// Layout (MySQL json_binary): a value is a type byte followed by its data.
// Objects and arrays start with an element count and a byte size (2 bytes each
// in the "small" forms, 4 in the "large" ones), then per-element key entries
// (objects: key offset + 2-byte key length) and value entries (type byte +
// offset, or the value itself for literals and small integers). Offsets are
// relative to the first byte after the container's type byte.

#include "canal/parser/binlog/json_binary.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "canal/parser/binlog/byte_reader.h"
#include "binlog/json_dom.h"

namespace canal::binlog {
namespace json {
namespace {

// MySQL field types that may appear as opaque JSON payloads with a dedicated
// rendering; every other type prints as "base64:typeNN:...".
constexpr uint8_t kFieldTimestamp = 7;
constexpr uint8_t kFieldDate = 10;
constexpr uint8_t kFieldTime = 11;
constexpr uint8_t kFieldDateTime = 12;
constexpr uint8_t kFieldVarString = 253;
constexpr uint8_t kFieldNewDecimal = 246;

std::string At(size_t offset) { return " at byte " + std::to_string(offset); }

// ---------------------------------------------------------------- scalars

void AppendUnsigned(uint64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void AppendSigned(int64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

// Zero-padded decimal of at least `width` digits.
void AppendPadded(uint64_t v, int width, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  for (int n = static_cast<int>(r.ptr - buf); n < width; ++n) out->push_back('0');
  out->append(buf, r.ptr);
}

// MySQL escapes only '"', '\\' and control characters; other bytes (including
// non-ASCII) pass through unchanged.
void AppendQuoted(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->reserve(out->size() + s.size() + 2);
  out->push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c > 0x1f && c != '"' && c != '\\') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    out->push_back('\\');
    switch (c) {
      case '\b': out->push_back('b'); break;
      case '\t': out->push_back('t'); break;
      case '\n': out->push_back('n'); break;
      case '\f': out->push_back('f'); break;
      case '\r': out->push_back('r'); break;
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      default:
        out->append("u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xf]);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

// Doubles as MySQL prints JSON doubles (my_gcvt with a 34-character field):
// the shortest round-trip digits, in fixed notation when the decimal exponent
// is within [-14, 15] (or the digits reach past the point), otherwise as
// d.ddde[-]X; integral fixed values get ".0" so they stay doubles.
Status AppendDouble(double d, std::string* out) {
  if (!std::isfinite(d)) return Status::Corruption("JSON double is not finite");
  char sci[40];
  auto r = std::to_chars(sci, sci + sizeof(sci), d, std::chars_format::scientific);
  // sci = [-]D[.DDD]e(+|-)XX
  const char* p = sci;
  const char* end = r.ptr;
  const bool negative = *p == '-';
  if (negative) ++p;
  char digits[24];
  int len = 0;
  while (p < end && *p != 'e') {
    if (*p != '.' && len < static_cast<int>(sizeof(digits))) digits[len++] = *p;
    ++p;
  }
  int exponent = 0;
  if (p < end) std::from_chars(p + (p[1] == '+' ? 2 : 1), end, exponent);
  // Drop trailing zeros (only "0" itself can have them here).
  while (len > 1 && digits[len - 1] == '0') --len;
  const int decpt = exponent + 1;  // digits are 0.DDD x 10^decpt

  if (negative) out->push_back('-');
  if (decpt >= -14 && (decpt <= 15 || len > decpt)) {
    if (decpt <= 0) {
      out->append("0.");
      out->append(static_cast<size_t>(-decpt), '0');
      out->append(digits, static_cast<size_t>(len));
    } else if (decpt < len) {
      out->append(digits, static_cast<size_t>(decpt));
      out->push_back('.');
      out->append(digits + decpt, static_cast<size_t>(len - decpt));
    } else {
      out->append(digits, static_cast<size_t>(len));
      out->append(static_cast<size_t>(decpt - len), '0');
      out->append(".0");
    }
    return Status::OK();
  }
  out->push_back(digits[0]);
  if (len > 1) {
    out->push_back('.');
    out->append(digits + 1, static_cast<size_t>(len - 1));
  }
  out->push_back('e');
  AppendSigned(exponent, out);
  return Status::OK();
}

void AppendBase64(std::string_view data, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* s = reinterpret_cast<const uint8_t*>(data.data());
  size_t line = 0;
  for (size_t i = 0; i < data.size(); i += 3) {
    // MySQL's encoder breaks lines every 76 characters.
    if (line == 76) {
      out->push_back('\n');
      line = 0;
    }
    const size_t n = std::min<size_t>(3, data.size() - i);
    uint32_t v = uint32_t(s[i]) << 16;
    if (n > 1) v |= uint32_t(s[i + 1]) << 8;
    if (n > 2) v |= s[i + 2];
    out->push_back(kAlphabet[(v >> 18) & 0x3f]);
    out->push_back(kAlphabet[(v >> 12) & 0x3f]);
    out->push_back(n > 1 ? kAlphabet[(v >> 6) & 0x3f] : '=');
    out->push_back(n > 2 ? kAlphabet[v & 0x3f] : '=');
    line += 4;
  }
}

// MySQL binary DECIMAL (precision and scale bytes, then the packed digits) as
// MySQL prints it: all `scale` fraction digits, a leading "0" before the point.
Status AppendJsonDecimal(std::string_view data, std::string* out) {
  static constexpr int kDigitBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  static constexpr uint32_t kPow10[10] = {1,      10,      100,      1000,      10000,
                                          100000, 1000000, 10000000, 100000000, 1000000000};
  if (data.size() < 2) return Status::Corruption("JSON decimal shorter than its header");
  const int precision = static_cast<uint8_t>(data[0]);
  const int scale = static_cast<uint8_t>(data[1]);
  if (precision < 1 || precision > 65 || scale > 30 || scale > precision) {
    return Status::Corruption("JSON decimal has invalid precision " + std::to_string(precision) +
                              " / scale " + std::to_string(scale));
  }
  const int intg = precision - scale;
  const int intg_full = intg / 9, intg_rest = intg % 9;
  const int frac_full = scale / 9, frac_rest = scale % 9;
  const size_t size = size_t(intg_full) * 4 + kDigitBytes[intg_rest] + size_t(frac_full) * 4 +
                      kDigitBytes[frac_rest];
  if (data.size() - 2 != size) {
    return Status::Corruption("JSON decimal(" + std::to_string(precision) + "," +
                              std::to_string(scale) + ") payload is " +
                              std::to_string(data.size() - 2) + " bytes, expected " +
                              std::to_string(size));
  }
  std::array<uint8_t, 40> buf{};
  std::memcpy(buf.data(), data.data() + 2, size);
  // The sign lives in the top bit (set = positive); negative values store every
  // byte inverted.
  const bool negative = (buf[0] & 0x80) == 0;
  buf[0] ^= 0x80;
  if (negative) {
    for (size_t i = 0; i < size; ++i) buf[i] = static_cast<uint8_t>(~buf[i]);
  }
  size_t pos = 0;
  auto group = [&](int digits, uint32_t* v) {
    const int n = kDigitBytes[digits];
    uint32_t r = 0;
    for (int i = 0; i < n; ++i) r = (r << 8) | buf[pos++];
    *v = r;
    return r < kPow10[digits];
  };
  std::string text;  // digits only; short (at most 66 characters)
  uint32_t v;
  if (intg_rest > 0) {
    if (!group(intg_rest, &v)) return Status::Corruption("JSON decimal digit group out of range");
    AppendPadded(v, intg_rest, &text);
  }
  for (int i = 0; i < intg_full; ++i) {
    if (!group(9, &v)) return Status::Corruption("JSON decimal digit group out of range");
    AppendPadded(v, 9, &text);
  }
  const size_t first = text.find_first_not_of('0');
  const std::string_view int_part =
      first == std::string::npos ? std::string_view("0") : std::string_view(text).substr(first);
  std::string frac;
  for (int i = 0; i < frac_full; ++i) {
    if (!group(9, &v)) return Status::Corruption("JSON decimal digit group out of range");
    AppendPadded(v, 9, &frac);
  }
  if (frac_rest > 0) {
    if (!group(frac_rest, &v)) return Status::Corruption("JSON decimal digit group out of range");
    AppendPadded(v, frac_rest, &frac);
  }
  const bool is_zero = first == std::string::npos && frac.find_first_not_of('0') == std::string::npos;
  if (negative && !is_zero) out->push_back('-');
  out->append(int_part);
  if (scale > 0) {
    out->push_back('.');
    out->append(frac);
  }
  return Status::OK();
}

// `sep`, then `v` zero-padded to `width` digits: one field of a date or time.
void AppendField(char sep, uint64_t v, int width, std::string* out) {
  out->push_back(sep);
  AppendPadded(v, width, out);
}

// HH:MM:SS.ffffff, the time of day of TIME and DATETIME as MySQL prints them.
void AppendClock(uint64_t hour, uint64_t minute, uint64_t second, uint64_t micros, std::string* out) {
  AppendPadded(hour, 2, out);
  AppendField(':', minute, 2, out);
  AppendField(':', second, 2, out);
  AppendField('.', micros, 6, out);
}

// DATE/TIME/DATETIME/TIMESTAMP payload: MySQL's packed longlong (8 bytes LE),
// printed as MySQL does with 6 fraction digits (DATE without a time part).
Status AppendJsonTemporal(uint8_t field_type, std::string_view data, std::string* out) {
  if (data.size() != 8) {
    return Status::Corruption("JSON temporal payload is " + std::to_string(data.size()) +
                              " bytes, expected 8");
  }
  uint64_t raw = 0;
  for (int i = 7; i >= 0; --i) raw = (raw << 8) | static_cast<uint8_t>(data[i]);
  const auto packed = static_cast<int64_t>(raw);
  const bool negative = packed < 0;
  const uint64_t magnitude = negative ? uint64_t(0) - raw : raw;
  const uint64_t micros = magnitude & 0xffffff;
  const uint64_t whole = magnitude >> 24;
  if (micros > 999999) return Status::Corruption("JSON temporal fraction out of range");

  if (field_type == kFieldTime) {
    const uint64_t hour = (whole >> 12) & 0x3ff;
    const uint64_t minute = (whole >> 6) & 0x3f;
    const uint64_t second = whole & 0x3f;
    if (minute > 59 || second > 59) return Status::Corruption("JSON time field out of range");
    out->push_back('"');
    if (negative) out->push_back('-');
    AppendClock(hour, minute, second, micros, out);
    out->push_back('"');
    return Status::OK();
  }

  // Date and datetime share one layout: year*13+month, day, hour, minute, second.
  const uint64_t ymd = whole >> 17;
  const uint64_t hms = whole & 0x1ffff;
  const uint64_t day = ymd & 0x1f;
  const uint64_t year_month = ymd >> 5;
  const uint64_t month = year_month % 13;
  const uint64_t year = year_month / 13;
  const uint64_t hour = hms >> 12;
  const uint64_t minute = (hms >> 6) & 0x3f;
  const uint64_t second = hms & 0x3f;
  if (year > 9999 || hour > 23 || minute > 59 || second > 59) {
    return Status::Corruption("JSON datetime field out of range");
  }
  out->push_back('"');
  AppendPadded(year, 4, out);
  AppendField('-', month, 2, out);
  AppendField('-', day, 2, out);
  if (field_type != kFieldDate) {
    out->push_back(' ');
    AppendClock(hour, minute, second, micros, out);
  }
  out->push_back('"');
  return Status::OK();
}

Status AppendOpaque(uint8_t field_type, std::string_view data, std::string* out) {
  switch (field_type) {
    case kFieldNewDecimal:
      return AppendJsonDecimal(data, out);
    case kFieldDate:
    case kFieldTime:
    case kFieldDateTime:
    case kFieldTimestamp:
      return AppendJsonTemporal(field_type, data, out);
    case kFieldVarString:
      // MySQL treats strings wrapped as opaque as plain JSON strings.
      AppendQuoted(data, out);
      return Status::OK();
    default: {
      std::string text = "base64:type";
      AppendUnsigned(field_type, &text);
      text.push_back(':');
      AppendBase64(data, &text);
      AppendQuoted(text, out);
      return Status::OK();
    }
  }
}

// ---------------------------------------------------------------- walker

// Walks a binary JSON value depth-first, validating every offset and size, and
// reports it to a Sink (text renderer or DOM builder).
template <class Sink>
class Walker {
 public:
  Walker(std::string_view binary, Sink* sink)
      : data_(reinterpret_cast<const uint8_t*>(binary.data())),
        size_(binary.size()),
        sink_(sink),
        // A well-formed value never visits more elements and payload bytes than
        // it occupies; entries sharing one sub-value could otherwise make the
        // walk exponential. Generous slack keeps odd-but-valid layouts.
        budget_(2 * binary.size() + 64) {}

  // binary = type byte + value; must not be empty.
  Status Run() { return Value(data_[0], 1, size_, 0); }

 private:
  Status Charge(size_t n, size_t offset) {
    if (n > budget_) {
      return Status::Corruption("JSON binary: values overlap (more data visited than stored)" +
                                At(offset));
    }
    budget_ -= n;
    return Status::OK();
  }

  // Adds the value's position to a payload error from the sink.
  static Status Located(Status s, size_t offset) {
    if (s.ok()) return s;
    return Status::Corruption(std::string(s.message()) + At(offset));
  }

  // A value of `type` whose bytes start at `begin` and may run up to `end`.
  Status Value(uint8_t type, size_t begin, size_t end, int depth) {
    CANAL_RETURN_IF_ERROR(Charge(1, begin));
    const size_t avail = end - begin;
    const uint8_t* p = data_ + begin;
    auto need = [&](size_t n, const char* what) {
      return avail >= n ? Status::OK()
                        : Status::Corruption(std::string("JSON binary: truncated ") + what +
                                             At(begin));
    };
    switch (type) {
      case kTypeSmallObject:
      case kTypeLargeObject:
      case kTypeSmallArray:
      case kTypeLargeArray:
        return Container(type, begin, end, depth);
      case kTypeLiteral:
        CANAL_RETURN_IF_ERROR(need(1, "literal"));
        switch (p[0]) {
          case 0: return sink_->Null();
          case 1: return sink_->Bool(true);
          case 2: return sink_->Bool(false);
          default:
            return Status::Corruption("JSON binary: unknown literal " + std::to_string(p[0]) +
                                      At(begin));
        }
      case kTypeInt16:
        CANAL_RETURN_IF_ERROR(need(2, "int16"));
        return sink_->Int(static_cast<int16_t>(LoadU16LE(p)));
      case kTypeUint16:
        CANAL_RETURN_IF_ERROR(need(2, "uint16"));
        return sink_->Uint(LoadU16LE(p));
      case kTypeInt32:
        CANAL_RETURN_IF_ERROR(need(4, "int32"));
        return sink_->Int(static_cast<int32_t>(LoadU32LE(p)));
      case kTypeUint32:
        CANAL_RETURN_IF_ERROR(need(4, "uint32"));
        return sink_->Uint(LoadU32LE(p));
      case kTypeInt64:
      case kTypeUint64:
      case kTypeDouble: {
        CANAL_RETURN_IF_ERROR(need(8, "8-byte number"));
        const uint64_t v = uint64_t(LoadU32LE(p)) | uint64_t(LoadU32LE(p + 4)) << 32;
        if (type == kTypeInt64) return sink_->Int(static_cast<int64_t>(v));
        if (type == kTypeUint64) return sink_->Uint(v);
        double d;
        std::memcpy(&d, &v, sizeof(d));
        return Located(sink_->Double(d), begin);
      }
      case kTypeString: {
        std::string_view s;
        CANAL_RETURN_IF_ERROR(LengthPrefixed(begin, end, "string", &s));
        return sink_->String(s);
      }
      case kTypeOpaque: {
        CANAL_RETURN_IF_ERROR(need(1, "opaque type"));
        std::string_view s;
        CANAL_RETURN_IF_ERROR(LengthPrefixed(begin + 1, end, "opaque value", &s));
        return Located(sink_->Opaque(p[0], s), begin);
      }
      default:
        return Status::Corruption("JSON binary: unknown value type " + std::to_string(type) +
                                  " for value" + At(begin));
    }
  }

  // Variable-length size (7 bits per byte, low groups first, at most 5 bytes,
  // fitting 32 bits) followed by that many bytes.
  Status LengthPrefixed(size_t begin, size_t end, const char* what, std::string_view* out) {
    uint64_t length = 0;
    size_t pos = begin;
    for (int i = 0;; ++i) {
      if (i == 5 || pos >= end) {
        return Status::Corruption(std::string("JSON binary: bad length of ") + what + At(begin));
      }
      const uint8_t b = data_[pos++];
      length |= uint64_t(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) break;
    }
    if (length > UINT32_MAX || length > end - pos) {
      return Status::Corruption(std::string("JSON binary: ") + what + " of " +
                                std::to_string(length) + " bytes overruns its container" +
                                At(begin));
    }
    CANAL_RETURN_IF_ERROR(Charge(length, begin));
    *out = std::string_view(reinterpret_cast<const char*>(data_ + pos), length);
    return Status::OK();
  }

  Status Container(uint8_t type, size_t begin, size_t end, int depth) {
    const bool object = type == kTypeSmallObject || type == kTypeLargeObject;
    const bool large = type == kTypeLargeObject || type == kTypeLargeArray;
    if (depth + 1 > kMaxDepth) {
      return Status::Corruption("JSON binary: nesting deeper than " + std::to_string(kMaxDepth) +
                                At(begin));
    }
    const size_t width = large ? 4 : 2;
    if (end - begin < 2 * width) {
      return Status::Corruption("JSON binary: truncated container header" + At(begin));
    }
    const uint8_t* p = data_ + begin;
    const uint64_t count = large ? LoadU32LE(p) : LoadU16LE(p);
    const uint64_t bytes = large ? LoadU32LE(p + width) : LoadU16LE(p + width);
    if (bytes > end - begin) {
      return Status::Corruption("JSON binary: container size " + std::to_string(bytes) +
                                " exceeds the " + std::to_string(end - begin) +
                                " bytes available" + At(begin));
    }
    const size_t key_entry = object ? width + 2 : 0;
    const size_t value_entry = 1 + width;
    const uint64_t header = 2 * width + count * (key_entry + value_entry);
    if (header > bytes) {
      return Status::Corruption("JSON binary: " + std::to_string(count) +
                                " entries do not fit a container of " + std::to_string(bytes) +
                                " bytes" + At(begin));
    }
    const size_t cend = begin + static_cast<size_t>(bytes);
    const auto n = static_cast<uint32_t>(count);
    if (object) {
      sink_->BeginObject(n);
    } else {
      sink_->BeginArray(n);
    }
    const size_t keys_at = begin + 2 * width;
    const size_t values_at = keys_at + n * key_entry;
    for (uint32_t i = 0; i < n; ++i) {
      if (object) {
        const uint8_t* k = data_ + keys_at + i * key_entry;
        const uint64_t key_offset = large ? LoadU32LE(k) : LoadU16LE(k);
        const uint64_t key_length = LoadU16LE(k + width);
        if (key_offset < header || key_offset + key_length > bytes) {
          return Status::Corruption("JSON binary: key " + std::to_string(i) + " (offset " +
                                    std::to_string(key_offset) + ", length " +
                                    std::to_string(key_length) + ") outside its object" +
                                    At(keys_at + i * key_entry));
        }
        CANAL_RETURN_IF_ERROR(Charge(key_length, keys_at + i * key_entry));
        sink_->Key(i, std::string_view(reinterpret_cast<const char*>(data_ + begin + key_offset),
                                       key_length));
      } else {
        sink_->Element(i);
      }
      CANAL_RETURN_IF_ERROR(Entry(values_at + i * value_entry, large, begin, header, cend, depth + 1));
    }
    if (object) {
      sink_->EndObject();
    } else {
      sink_->EndArray();
    }
    return Status::OK();
  }

  // A value entry at `at`: type byte, then the inlined value or an offset from
  // the container start `cbegin`.
  Status Entry(size_t at, bool large, size_t cbegin, uint64_t header, size_t cend, int depth) {
    const uint8_t type = data_[at];
    const size_t width = large ? 4 : 2;
    const bool inlined = type == kTypeLiteral || type == kTypeInt16 || type == kTypeUint16 ||
                         (large && (type == kTypeInt32 || type == kTypeUint32));
    if (inlined) return Value(type, at + 1, at + 1 + width, depth);
    const uint8_t* p = data_ + at + 1;
    const uint64_t offset = large ? LoadU32LE(p) : LoadU16LE(p);
    if (offset < header || offset >= cend - cbegin) {
      return Status::Corruption("JSON binary: value offset " + std::to_string(offset) +
                                " outside its container of " + std::to_string(cend - cbegin) +
                                " bytes" + At(at));
    }
    return Value(type, cbegin + static_cast<size_t>(offset), cend, depth);
  }

  const uint8_t* data_;
  size_t size_;
  Sink* sink_;
  size_t budget_;
};

// Renders straight to text while walking.
class TextSink {
 public:
  explicit TextSink(std::string* out) : out_(out) {}
  Status Null() { return Append("null"); }
  Status Bool(bool v) { return Append(v ? "true" : "false"); }
  Status Int(int64_t v) {
    AppendSigned(v, out_);
    return Status::OK();
  }
  Status Uint(uint64_t v) {
    AppendUnsigned(v, out_);
    return Status::OK();
  }
  Status Double(double v) { return AppendDouble(v, out_); }
  Status String(std::string_view s) {
    AppendQuoted(s, out_);
    return Status::OK();
  }
  Status Opaque(uint8_t field_type, std::string_view data) {
    return AppendOpaque(field_type, data, out_);
  }
  void BeginArray(uint32_t) { out_->push_back('['); }
  void Element(uint32_t i) {
    if (i > 0) out_->append(", ");
  }
  void EndArray() { out_->push_back(']'); }
  void BeginObject(uint32_t) { out_->push_back('{'); }
  void Key(uint32_t i, std::string_view key) {
    if (i > 0) out_->append(", ");
    AppendQuoted(key, out_);
    out_->append(": ");
  }
  void EndObject() { out_->push_back('}'); }

 private:
  Status Append(std::string_view s) {
    out_->append(s);
    return Status::OK();
  }
  std::string* out_;
};

// Builds a JsonNode tree. Containers reserve their exact element count before
// any child is added, so the parent pointers kept on the stack stay valid.
class DomSink {
 public:
  explicit DomSink(JsonNode* root) : root_(root) {}
  Status Null() { return Scalar(JsonKind::kNull); }
  Status Bool(bool v) { return Scalar(v ? JsonKind::kTrue : JsonKind::kFalse); }
  Status Int(int64_t v) {
    JsonNode* n = Next();
    n->kind = JsonKind::kInt;
    n->i64 = v;
    return Status::OK();
  }
  Status Uint(uint64_t v) {
    JsonNode* n = Next();
    n->kind = JsonKind::kUint;
    n->u64 = v;
    return Status::OK();
  }
  Status Double(double v) {
    if (!std::isfinite(v)) return Status::Corruption("JSON double is not finite");
    JsonNode* n = Next();
    n->kind = JsonKind::kDouble;
    n->f64 = v;
    return Status::OK();
  }
  Status String(std::string_view s) {
    JsonNode* n = Next();
    n->kind = JsonKind::kString;
    n->bytes = s;
    return Status::OK();
  }
  Status Opaque(uint8_t field_type, std::string_view data) {
    JsonNode* n = Next();
    n->kind = JsonKind::kOpaque;
    n->opaque_type = field_type;
    n->bytes = data;
    return Status::OK();
  }
  void BeginArray(uint32_t count) { Open(JsonKind::kArray, count); }
  void Element(uint32_t) {}
  void EndArray() { stack_.pop_back(); }
  void BeginObject(uint32_t count) {
    Open(JsonKind::kObject, count);
    stack_.back()->keys.reserve(count);
  }
  void Key(uint32_t, std::string_view key) { stack_.back()->keys.push_back(key); }
  void EndObject() { stack_.pop_back(); }

 private:
  JsonNode* Next() {
    if (stack_.empty()) return root_;
    stack_.back()->children.emplace_back();
    return &stack_.back()->children.back();
  }
  Status Scalar(JsonKind kind) {
    Next()->kind = kind;
    return Status::OK();
  }
  void Open(JsonKind kind, uint32_t count) {
    JsonNode* n = Next();
    n->kind = kind;
    n->children.reserve(count);
    stack_.push_back(n);
  }

  JsonNode* root_;
  std::vector<JsonNode*> stack_;
};

Status AppendNode(const JsonNode& node, int depth, std::string* out) {
  switch (node.kind) {
    case JsonKind::kNull: out->append("null"); return Status::OK();
    case JsonKind::kTrue: out->append("true"); return Status::OK();
    case JsonKind::kFalse: out->append("false"); return Status::OK();
    case JsonKind::kInt: AppendSigned(node.i64, out); return Status::OK();
    case JsonKind::kUint: AppendUnsigned(node.u64, out); return Status::OK();
    case JsonKind::kDouble: return AppendDouble(node.f64, out);
    case JsonKind::kString: AppendQuoted(node.bytes, out); return Status::OK();
    case JsonKind::kOpaque: return AppendOpaque(node.opaque_type, node.bytes, out);
    case JsonKind::kArray:
    case JsonKind::kObject: {
      if (depth + 1 > kMaxDepth) {
        return Status::Corruption("JSON document nests deeper than " + std::to_string(kMaxDepth));
      }
      const bool object = node.kind == JsonKind::kObject;
      if (object && node.keys.size() != node.children.size()) {
        return Status::Corruption("JSON object has mismatched keys and values");
      }
      out->push_back(object ? '{' : '[');
      for (size_t i = 0; i < node.children.size(); ++i) {
        if (i > 0) out->append(", ");
        if (object) {
          AppendQuoted(node.keys[i], out);
          out->append(": ");
        }
        CANAL_RETURN_IF_ERROR(AppendNode(node.children[i], depth + 1, out));
      }
      out->push_back(object ? '}' : ']');
      return Status::OK();
    }
  }
  return Status::Corruption("JSON node of unknown kind");
}

}  // namespace

Status ParseJsonBinary(std::string_view binary, JsonNode* root) {
  if (binary.empty()) return Status::Corruption("JSON binary: empty value");
  *root = JsonNode();
  DomSink sink(root);
  return Walker<DomSink>(binary, &sink).Run();
}

Status AppendJsonNodeText(const JsonNode& node, std::string* out) {
  const size_t original = out->size();
  Status s = AppendNode(node, 0, out);
  if (!s.ok()) out->resize(original);
  return s;
}

}  // namespace json

Status AppendJsonText(std::string_view binary, std::string* out) {
  if (binary.empty()) {
    out->append("null");
    return Status::OK();
  }
  const size_t original = out->size();
  json::TextSink sink(out);
  Status s = json::Walker<json::TextSink>(binary, &sink).Run();
  if (!s.ok()) out->resize(original);
  return s;
}

}  // namespace canal::binlog
