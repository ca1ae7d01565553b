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

  // 65 digits need at most 8 groups + 2 partial groups = 30 bytes; only the
  // first `size` are read. Negative values have every byte inverted.
  std::array<uint8_t, 32> bytes;
  const bool negative = (static_cast<uint8_t>(raw[0]) & 0x80) == 0;
  const uint8_t flip = negative ? 0xFF : 0x00;
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(raw[i]) ^ flip;
  bytes[0] ^= 0x80;

  const int intg = precision - scale;
  const int lead_digits = intg % kDigitsPerGroup;
  const int int_groups = intg / kDigitsPerGroup;
  const int frac_groups = scale / kDigitsPerGroup;
  const int trail_digits = scale % kDigitsPerGroup;

  // Layout in `text`: two spare chars (for "-" and a lone "0"), the integer
  // digits, then "." and the fraction digits; appended to *out in one go.
  std::array<char, 2 + kMaxPrecision + 1> text;
  char* const int_start = text.data() + 2;
  char* p = int_start;
  const uint8_t* in = bytes.data();
  uint32_t bad_value = 0;
  int bad_digits = 0;

  // One group of `digits` digits in `nbytes` bytes; false when it holds more digits.
  auto read_group = [&](int digits, int nbytes) {
    const uint32_t v = LoadBigEndian(in, nbytes);
    in += nbytes;
    if (v >= kPowersOf10[digits]) {
      bad_value = v;
      bad_digits = digits;
      return false;
    }
    p = PutDigits(v, digits, p);
    return true;
  };

  bool ok = lead_digits == 0 || read_group(lead_digits, kDigitBytes[lead_digits]);
  for (int g = 0; ok && g < int_groups; ++g) ok = read_group(kDigitsPerGroup, kBytesPerGroup);
  char* const int_end = p;
  if (scale > 0) *p++ = '.';
  for (int g = 0; ok && g < frac_groups; ++g) ok = read_group(kDigitsPerGroup, kBytesPerGroup);
  if (ok && trail_digits > 0) ok = read_group(trail_digits, kDigitBytes[trail_digits]);
  if (!ok) {
    return Status::Corruption("DECIMAL(" + std::to_string(precision) + "," +
                              std::to_string(scale) + ") digit group " +
                              std::to_string(bad_value) + " has more than " +
                              std::to_string(bad_digits) + " digits");
  }

  // Integer part without leading zeros; "0" when it is all zeros (or absent).
  char* begin = int_start;
  while (begin < int_end && *begin == '0') ++begin;
  bool is_zero = begin == int_end;
  for (const char* f = int_end; is_zero && f < p; ++f) is_zero = *f == '0' || *f == '.';
  if (begin == int_end) *--begin = '0';
  if (negative && !is_zero) *--begin = '-';  // never "-0"
  out->append(begin, p);
  return Status::OK();
}

}  // namespace canal::binlog
