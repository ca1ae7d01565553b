// MySQL binary DECIMAL (NEWDECIMAL) to plain text.
//
// Layout, from the MySQL manual's description of the storage format: the integer
// part and the fraction part are each cut into groups of 9 decimal digits, each
// stored big-endian in 4 bytes. The integer part's leftover leading digits and the
// fraction part's leftover trailing digits take dig2bytes[n] bytes. The whole value
// is stored with the top bit of the first byte inverted, and negative values have
// every byte inverted on top of that, so that the bytes sort like the numbers.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {
namespace {

constexpr int kDigitsPerGroup = 9;
constexpr int kBytesPerGroup = 4;
constexpr std::array<int, 10> kDigitBytes = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr std::array<uint32_t, 10> kPowersOf10 = {1,      10,      100,      1000,      10000,
                                                  100000, 1000000, 10000000, 100000000, 1000000000};
// MySQL's limits are precision 65 and scale 30; MariaDB allows scale up to 38.
constexpr int kMaxPrecision = 65;
constexpr int kMaxScale = 38;

bool ValidPrecisionScale(int precision, int scale) {
  return precision >= 1 && precision <= kMaxPrecision && scale >= 0 && scale <= kMaxScale &&
         scale <= precision;
}

uint32_t LoadBigEndian(const uint8_t* p, int n) {
  if (n == kBytesPerGroup) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return __builtin_bswap32(v);
  }
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// "00", "01", ... "99".
constexpr char kDigitPairs[] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

// Writes `value` as exactly `width` digits (zero-padded) from `p`, two per step
// (a DECIMAL column was ~7% of canal-binlog decode).
char* PutDigits(uint32_t value, int width, char* p) {
  int i = width;
  for (; i >= 2; i -= 2) {
    const uint32_t pair = value % 100;
    value /= 100;
    p[i - 2] = kDigitPairs[2 * pair];
    p[i - 1] = kDigitPairs[2 * pair + 1];
  }
  if (i == 1) p[0] = static_cast<char>('0' + value % 10);
  return p + width;
}

}  // namespace

size_t DecimalBinarySize(int precision, int scale) {
  if (!ValidPrecisionScale(precision, scale)) return 0;
  const int intg = precision - scale;
  return static_cast<size_t>((intg / kDigitsPerGroup) * kBytesPerGroup +
                             kDigitBytes[intg % kDigitsPerGroup] +
                             (scale / kDigitsPerGroup) * kBytesPerGroup +
                             kDigitBytes[scale % kDigitsPerGroup]);
}

namespace {

// A binary DECIMAL's digit groups, most significant first, checked.
struct DecimalGroups {
  std::array<uint32_t, 2 * (kMaxPrecision / kDigitsPerGroup + 2)> value{};
  std::array<uint8_t, 2 * (kMaxPrecision / kDigitsPerGroup + 2)> digits{};
  int integer_groups = 0, groups = 0;
  bool negative = false;
  // The first group that held more digits than it may.
  uint32_t bad_value = 0;
  int bad_digits = 0;
};

// False when a group holds more digits than it may. `raw` must be
// DecimalBinarySize(precision, scale) bytes of a valid precision and scale.
bool ReadGroups(std::string_view raw, int precision, int scale, DecimalGroups* g) {
  // 65 digits need at most 8 groups + 2 partial groups = 30 bytes. Negative
  // values have every byte inverted.
  const auto* in = reinterpret_cast<const uint8_t*>(raw.data());
  g->negative = (in[0] & 0x80) == 0;
  const uint32_t flip = g->negative ? 0xFFFFFFFFu : 0;
  const int intg = precision - scale;
  bool first = true;
  const auto read = [&](int digits, int nbytes) {
    uint32_t v = LoadBigEndian(in, nbytes);
    if (first) v ^= uint32_t{0x80} << (8 * (nbytes - 1));  // the sign bit
    first = false;
    v = (v ^ flip) & (nbytes == 4 ? 0xFFFFFFFFu : (uint32_t{1} << (8 * nbytes)) - 1);
    in += nbytes;
    if (v >= kPowersOf10[digits]) {
      g->bad_value = v;
      g->bad_digits = digits;
      return false;
    }
    g->value[g->groups] = v;
    g->digits[g->groups] = static_cast<uint8_t>(digits);
    ++g->groups;
    return true;
  };
  if (intg % kDigitsPerGroup != 0 && !read(intg % kDigitsPerGroup, kDigitBytes[intg % kDigitsPerGroup])) return false;
  for (int i = 0; i < intg / kDigitsPerGroup; ++i) {
    if (!read(kDigitsPerGroup, kBytesPerGroup)) return false;
  }
  g->integer_groups = g->groups;
  for (int i = 0; i < scale / kDigitsPerGroup; ++i) {
    if (!read(kDigitsPerGroup, kBytesPerGroup)) return false;
  }
  return scale % kDigitsPerGroup == 0 || read(scale % kDigitsPerGroup, kDigitBytes[scale % kDigitsPerGroup]);
}

// The text: the integer part without leading zeros ("0" when it has none),
// then "." and every fraction digit; "-" unless the value is zero (never "-0").
char* WriteGroups(const DecimalGroups& g, bool has_fraction, char* p) {
  bool zero = true;
  for (int i = 0; i < g.groups; ++i) zero = zero && g.value[i] == 0;
  if (g.negative && !zero) *p++ = '-';
  int i = 0;
  while (i < g.integer_groups && g.value[i] == 0) ++i;
  if (i == g.integer_groups) {
    *p++ = '0';
  } else {
    int width = 1;
    while (width < kDigitsPerGroup && g.value[i] >= kPowersOf10[width]) ++width;
    p = PutDigits(g.value[i], width, p);
    for (++i; i < g.integer_groups; ++i) p = PutDigits(g.value[i], g.digits[i], p);
  }
  if (has_fraction) {
    *p++ = '.';
    for (i = g.integer_groups; i < g.groups; ++i) p = PutDigits(g.value[i], g.digits[i], p);
  }
  return p;
}

}  // namespace

Status AppendDecimalText(std::string_view raw, int precision, int scale, std::string* out) {
  if (!ValidPrecisionScale(precision, scale)) {
    return Status::Corruption("DECIMAL(" + std::to_string(precision) + "," +
                              std::to_string(scale) + ") is outside what MySQL allows");
  }
  const size_t size = DecimalBinarySize(precision, scale);
  if (raw.size() != size) {
    return Status::Corruption("DECIMAL(" + std::to_string(precision) + "," +
                              std::to_string(scale) + ") needs " + std::to_string(size) +
                              " bytes, value has " + std::to_string(raw.size()));
  }
  DecimalGroups g;
  if (!ReadGroups(raw, precision, scale, &g)) {
    return Status::Corruption("DECIMAL(" + std::to_string(precision) + "," +
                              std::to_string(scale) + ") digit group " +
                              std::to_string(g.bad_value) + " has more than " +
                              std::to_string(g.bad_digits) + " digits");
  }
  char text[kDecimalTextMax];
  out->append(text, WriteGroups(g, scale > 0, text));
  return Status::OK();
}

namespace {

// The common DECIMAL (at most 18 integer digits, at most 9 fraction digits:
// DECIMAL(12,2), DECIMAL(18,4)...): the integer part read as one number, the
// fraction as another, no group arrays. Same text as WriteGroups.
char* WriteNarrowDecimal(const uint8_t* in, int intg, int scale, char* p) {
  const bool negative = (in[0] & 0x80) == 0;
  const uint32_t flip = negative ? 0xFFFFFFFFu : 0;
  bool first = true;
  bool ok = true;
  const auto read = [&](int digits) {
    const int nbytes = digits == kDigitsPerGroup ? kBytesPerGroup : kDigitBytes[digits];
    uint32_t v = LoadBigEndian(in, nbytes);
    in += nbytes;
    if (first) v ^= uint32_t{0x80} << (8 * (nbytes - 1));
    first = false;
    v = (v ^ flip) & (nbytes == 4 ? 0xFFFFFFFFu : (uint32_t{1} << (8 * nbytes)) - 1);
    ok = ok && v < kPowersOf10[digits];
    return v;
  };
  uint64_t integer = 0;
  if (intg % kDigitsPerGroup != 0) integer = read(intg % kDigitsPerGroup);
  for (int i = 0; i < intg / kDigitsPerGroup; ++i) integer = integer * kPowersOf10[kDigitsPerGroup] + read(kDigitsPerGroup);
  const uint32_t fraction = scale > 0 ? read(scale) : 0;
  if (!ok) return nullptr;
  if (negative && (integer | fraction) != 0) *p++ = '-';
  // Up to 18 digits, most significant first, two at a time.
  int width = 1;
  for (uint64_t x = integer; x >= 10; x /= 10) ++width;
  if (width > kDigitsPerGroup) {
    const uint64_t high = integer / kPowersOf10[kDigitsPerGroup];
    p = PutDigits(static_cast<uint32_t>(high), width - kDigitsPerGroup, p);
    p = PutDigits(static_cast<uint32_t>(integer - high * kPowersOf10[kDigitsPerGroup]), kDigitsPerGroup, p);
  } else {
    p = PutDigits(static_cast<uint32_t>(integer), width, p);
  }
  if (scale > 0) {
    *p++ = '.';
    p = PutDigits(fraction, scale, p);
  }
  return p;
}

}  // namespace

char* WriteDecimalText(std::string_view raw, int precision, int scale, char* out) {
  if (!ValidPrecisionScale(precision, scale) || raw.size() != DecimalBinarySize(precision, scale)) return nullptr;
  if (precision - scale <= 2 * kDigitsPerGroup && scale <= kDigitsPerGroup) {
    return WriteNarrowDecimal(reinterpret_cast<const uint8_t*>(raw.data()), precision - scale, scale, out);
  }
  DecimalGroups g;
  if (!ReadGroups(raw, precision, scale, &g)) return nullptr;
  return WriteGroups(g, scale > 0, out);
}

// The inverse of AppendDecimalText: the digits in groups of nine, the integer
// part's short group first and the fraction's last, each group big-endian in
// its byte count; then the sign flips as described at the top.
Status AppendDecimalBinary(std::string_view text, int precision, int scale, std::string* out) {
  auto refuse = [&](const char* why) {
    return Status::InvalidArgument("\"" + std::string(text.substr(0, 80)) + "\" is not a DECIMAL(" +
                                   std::to_string(precision) + "," + std::to_string(scale) + ") value: " + why);
  };
  if (!ValidPrecisionScale(precision, scale)) return refuse("no such DECIMAL");
  const bool negative = !text.empty() && text[0] == '-';
  std::string_view body = negative ? text.substr(1) : text;
  const size_t point = body.find('.');
  std::string_view whole = body.substr(0, point);
  std::string_view fraction = point == std::string_view::npos ? std::string_view() : body.substr(point + 1);
  if (whole.empty() && fraction.empty()) return refuse("no digits");
  for (std::string_view part : {whole, fraction}) {
    for (char c : part) {
      if (c < '0' || c > '9') return refuse("not a digit");
    }
  }
  while (!whole.empty() && whole[0] == '0') whole.remove_prefix(1);
  const int intg = precision - scale;
  if (static_cast<int>(whole.size()) > intg) return refuse("too many integer digits");
  if (static_cast<int>(fraction.size()) > scale) return refuse("too many fraction digits");

  const size_t start = out->size();
  // Digit `i` of the integer part counted from its most significant place of
  // `intg` (the missing leading ones are zeros); of the fraction, padded with zeros.
  auto whole_digit = [&](int i) {
    const int at = i - (intg - static_cast<int>(whole.size()));
    return at < 0 ? 0 : whole[static_cast<size_t>(at)] - '0';
  };
  auto fraction_digit = [&](int i) {
    return i < static_cast<int>(fraction.size()) ? fraction[static_cast<size_t>(i)] - '0' : 0;
  };
  auto put_group = [&](auto digit, int from, int count) {
    uint32_t v = 0;
    for (int i = from; i < from + count; ++i) v = v * 10 + static_cast<uint32_t>(digit(i));
    for (int b = kDigitBytes[static_cast<size_t>(count)] - 1; b >= 0; --b) {
      out->push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
    }
  };
  const int lead = intg % kDigitsPerGroup;
  if (lead > 0) put_group(whole_digit, 0, lead);
  for (int at = lead; at < intg; at += kDigitsPerGroup) put_group(whole_digit, at, kDigitsPerGroup);
  int at = 0;
  for (; at + kDigitsPerGroup <= scale; at += kDigitsPerGroup) put_group(fraction_digit, at, kDigitsPerGroup);
  if (at < scale) put_group(fraction_digit, at, scale - at);

  bool zero = true;
  for (size_t i = start; i < out->size(); ++i) zero = zero && (*out)[i] == 0;
  if (negative && !zero) {  // "-0.00" is stored as 0, as the server does
    for (size_t i = start; i < out->size(); ++i) (*out)[i] = static_cast<char>(~(*out)[i]);
  }
  (*out)[start] = static_cast<char>((*out)[start] ^ 0x80);
  return Status::OK();
}

}  // namespace canal::binlog
