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

#include "canal/parser/binlog/value_format.h"

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

// Writes `value` as exactly `width` digits (zero-padded) ending at `end`.
char* PutDigits(uint32_t value, int width, char* p) {
  for (int i = width - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
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

  // 65 digits need at most 8 groups + 2 partial groups = 30 bytes.
  std::array<uint8_t, 32> bytes{};
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(raw[i]);
  const bool negative = (bytes[0] & 0x80) == 0;
  if (negative) {
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(~bytes[i]);
  }
  bytes[0] ^= 0x80;

  const int intg = precision - scale;
  const int lead_digits = intg % kDigitsPerGroup;
  const int int_groups = intg / kDigitsPerGroup;
  const int frac_groups = scale / kDigitsPerGroup;
  const int trail_digits = scale % kDigitsPerGroup;

  // All digits, integer part first; sign, point and a lone "0" are added on output.
  std::array<char, kMaxPrecision> text;
  char* const digits_begin = text.data();
  char* p = digits_begin;
  const uint8_t* in = bytes.data();

  auto read_group = [&](int digits, int nbytes, const char* part) -> Status {
    const uint32_t v = LoadBigEndian(in, nbytes);
    in += nbytes;
    if (v >= kPowersOf10[digits]) {
      return Status::Corruption(std::string("DECIMAL ") + part + " group " + std::to_string(v) +
                                " has more than " + std::to_string(digits) + " digits");
    }
    p = PutDigits(v, digits, p);
    return Status::OK();
  };

  if (lead_digits > 0) {
    CANAL_RETURN_IF_ERROR(read_group(lead_digits, kDigitBytes[lead_digits], "integer"));
  }
  for (int g = 0; g < int_groups; ++g) {
    CANAL_RETURN_IF_ERROR(read_group(kDigitsPerGroup, kBytesPerGroup, "integer"));
  }
  char* const int_end = p;
  for (int g = 0; g < frac_groups; ++g) {
    CANAL_RETURN_IF_ERROR(read_group(kDigitsPerGroup, kBytesPerGroup, "fraction"));
  }
  if (trail_digits > 0) {
    CANAL_RETURN_IF_ERROR(read_group(trail_digits, kDigitBytes[trail_digits], "fraction"));
  }
  char* const frac_end = p;

  // Integer part without leading zeros; "0" when it is all zeros (or absent).
  char* int_begin = digits_begin;
  while (int_begin < int_end && *int_begin == '0') ++int_begin;
  bool is_zero = int_begin == int_end;
  for (const char* f = int_end; is_zero && f < frac_end; ++f) is_zero = *f == '0';

  out->reserve(out->size() + static_cast<size_t>(frac_end - digits_begin) + 3);
  if (negative && !is_zero) out->push_back('-');  // never "-0"
  if (int_begin == int_end) {
    out->push_back('0');
  } else {
    out->append(int_begin, int_end);
  }
  if (scale > 0) {
    out->push_back('.');
    out->append(int_end, frac_end);
  }
  return Status::OK();
}

}  // namespace canal::binlog
