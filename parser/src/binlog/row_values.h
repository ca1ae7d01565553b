// Loads and value fills shared by RowsReader's two paths (rows_reader.cc): the
// plan-driven fast loop and the checked per-type decoder that produces every
// error message. Sharing them keeps the paths' values identical by
// construction. Internal to parser/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "canal/parser/binlog/column_value.h"

namespace canal::binlog::rows {

inline uint64_t LoadBE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

inline uint64_t LoadLE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// The next min(8, avail) bytes as a little-endian word, the bytes past `avail`
// zero: one unaligned load except at the very end of an event. Callers keep
// the low 8 * width bits (ZeroExtend / SignExtend) after checking width <= avail.
inline uint64_t Word(const uint8_t* p, size_t avail) {
  uint64_t v = 0;
  if (avail >= 8) {
    std::memcpy(&v, p, 8);  // x86 and the other targets we build for: little-endian
  } else {
    for (size_t i = 0; i < avail; ++i) v |= uint64_t{p[i]} << (8 * i);
  }
  return v;
}

// The first `width` bytes (1..8) of a Word, as unsigned or signed: `drop` is
// 64 - 8 * width.
inline uint64_t ZeroExtend(uint64_t word, unsigned drop) { return word << drop >> drop; }
inline int64_t SignExtend(uint64_t word, unsigned drop) { return static_cast<int64_t>(word << drop) >> drop; }

// The first `width` bytes (1..8) of a Word read big-endian.
inline uint64_t BigEndian(uint64_t word, unsigned drop) { return __builtin_bswap64(word) >> drop; }

// Fractional-second bytes of TIME2/DATETIME2/TIMESTAMP2 for a precision.
inline size_t FracBytes(uint8_t fsp) { return (fsp + 1) / 2; }

// Scales the stored fraction to microseconds.
inline uint32_t FracToMicros(uint64_t frac, uint8_t fsp) {
  switch (FracBytes(fsp)) {
    case 1: return static_cast<uint32_t>(frac * 10000);
    case 2: return static_cast<uint32_t>(frac * 100);
    default: return static_cast<uint32_t>(frac);
  }
}

// What a fill found wrong with a value whose bytes were all there.
enum class Fill : uint8_t { kOk, kNegative, kFraction, kRange };

// DATE: 3 bytes little-endian, day | month << 5 | year << 9.
inline void FillDate(uint32_t d, ColumnValue* v) {
  TemporalValue t{};
  t.day = d & 31;
  t.month = (d >> 5) & 15;
  t.year = static_cast<uint16_t>(d >> 9);
  v->kind = ColumnValue::Kind::kDate;
  v->temporal = t;
  v->fsp = 0;
}

// Old TIME: 3 bytes little-endian, signed HHMMSS.
inline void FillTime(uint32_t raw24, ColumnValue* v) {
  const int32_t hhmmss = static_cast<int32_t>(raw24 << 8) >> 8;
  TemporalValue t{};
  t.negative = hhmmss < 0;
  const uint32_t a = static_cast<uint32_t>(hhmmss < 0 ? -static_cast<int64_t>(hhmmss) : hhmmss);
  t.hour = a / 10000;
  t.minute = static_cast<uint8_t>(a / 100 % 100);
  t.second = static_cast<uint8_t>(a % 100);
  v->kind = ColumnValue::Kind::kTime;
  v->temporal = t;
  v->fsp = 0;
}

// Old DATETIME: 8 bytes little-endian, YYYYMMDDhhmmss.
inline void FillDateTime(uint64_t dt, ColumnValue* v) {
  const uint64_t date = dt / 1000000, time = dt % 1000000;
  TemporalValue t{};
  t.year = static_cast<uint16_t>(date / 10000 % 10000);
  t.month = static_cast<uint8_t>(date / 100 % 100);
  t.day = static_cast<uint8_t>(date % 100);
  t.hour = static_cast<uint32_t>(time / 10000);
  t.minute = static_cast<uint8_t>(time / 100 % 100);
  t.second = static_cast<uint8_t>(time % 100);
  v->kind = ColumnValue::Kind::kDateTime;
  v->temporal = t;
  v->fsp = 0;
}

// TIMESTAMP2: `be` is the 4 + fb bytes big-endian (seconds, then the fraction).
inline Fill FillTimestamp2(uint64_t be, size_t fb, uint8_t fsp, ColumnValue* v) {
  v->kind = ColumnValue::Kind::kTimestamp;
  v->u64 = be >> (8 * fb);
  v->timestamp_micros = FracToMicros(be & ((uint64_t{1} << (8 * fb)) - 1), fsp);
  v->fsp = fsp;
  return v->timestamp_micros > 999999 ? Fill::kFraction : Fill::kOk;
}

// DATETIME2: `be` is the 5 + fb bytes big-endian: 1 sign bit, 17 bits
// year*13+month, 5 day, 5 hour, 6 minute, 6 second; then the fraction.
inline Fill FillDateTime2(uint64_t be, size_t fb, uint8_t fsp, ColumnValue* v) {
  const int64_t packed = static_cast<int64_t>(be >> (8 * fb)) - 0x8000000000LL;
  if (packed < 0) return Fill::kNegative;
  const uint64_t ymd = static_cast<uint64_t>(packed) >> 17, hms = static_cast<uint64_t>(packed) & 0x1FFFF;
  const uint64_t ym = ymd >> 5;
  TemporalValue t{};
  t.year = static_cast<uint16_t>(ym / 13);
  t.month = static_cast<uint8_t>(ym % 13);
  t.day = static_cast<uint8_t>(ymd & 31);
  t.hour = static_cast<uint32_t>(hms >> 12);
  t.minute = static_cast<uint8_t>((hms >> 6) & 63);
  t.second = static_cast<uint8_t>(hms & 63);
  t.micros = FracToMicros(be & ((uint64_t{1} << (8 * fb)) - 1), fsp);
  v->kind = ColumnValue::Kind::kDateTime;
  v->temporal = t;
  v->fsp = fsp;
  return t.micros > 999999 ? Fill::kFraction : Fill::kOk;
}

// TIME2: `be` is the 3 + fb bytes big-endian. The packed value is
// (hms << 24) + fraction in micros, offset so that it sorts as unsigned.
inline Fill FillTime2(uint64_t be, size_t fb, uint8_t fsp, ColumnValue* v) {
  int64_t packed;
  if (fb == 3) {
    packed = static_cast<int64_t>(be) - 0x800000000000LL;
  } else {
    int64_t intpart = static_cast<int64_t>(be >> (8 * fb)) - 0x800000LL;
    int64_t frac = static_cast<int64_t>(be & ((uint64_t{1} << (8 * fb)) - 1));
    if (fb == 1) {
      if (intpart < 0 && frac) {
        ++intpart;
        frac -= 0x100;
      }
      packed = intpart * (int64_t{1} << 24) + frac * 10000;
    } else if (fb == 2) {
      if (intpart < 0 && frac) {
        ++intpart;
        frac -= 0x10000;
      }
      packed = intpart * (int64_t{1} << 24) + frac * 100;
    } else {
      packed = intpart * (int64_t{1} << 24);
    }
  }
  TemporalValue t{};
  t.negative = packed < 0;
  const uint64_t a = static_cast<uint64_t>(packed < 0 ? -packed : packed);
  const uint64_t hms = a >> 24;
  t.micros = static_cast<uint32_t>(a & 0xFFFFFF);
  t.hour = static_cast<uint32_t>((hms >> 12) & 0x3FF);
  t.minute = static_cast<uint8_t>((hms >> 6) & 63);
  t.second = static_cast<uint8_t>(hms & 63);
  v->kind = ColumnValue::Kind::kTime;
  v->temporal = t;
  v->fsp = fsp;
  return t.micros > 999999 ? Fill::kFraction : Fill::kOk;
}

// MariaDB's own high-resolution TIMESTAMP(N)/DATETIME(N)/TIME(N) (5.3 on;
// since 10.1 only for columns made with mysql56_temporal_format=OFF), logged
// under the old type codes 7/12/11 with no metadata: N comes from the schema.
// Each is big-endian, the fraction counted in units of 10^-N seconds (not
// rounded to TIMESTAMP2's even digits). Bytes per N = 1..6:
inline size_t MariaTimestampBytes(uint8_t fsp) { return 4 + (fsp + 1) / 2; }  // 5 5 6 6 7 7
inline size_t MariaDateTimeBytes(uint8_t fsp) {
  static constexpr uint8_t kBytes[7] = {8, 6, 6, 7, 7, 7, 8};  // [0]: the plain 8-byte DATETIME
  return kBytes[fsp];
}
inline size_t MariaTimeBytes(uint8_t fsp) {
  static constexpr uint8_t kBytes[7] = {3, 4, 4, 5, 5, 5, 6};
  return kBytes[fsp];
}
inline uint64_t Pow10(uint8_t n) {
  static constexpr uint64_t kPow[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  return kPow[n];
}

// TIMESTAMP(N): 4 bytes of seconds, then the fraction in the rest of `be`.
inline Fill FillMariaTimestamp(uint64_t be, size_t frac_bytes, uint8_t fsp, ColumnValue* v) {
  const uint64_t frac = be & ((uint64_t{1} << (8 * frac_bytes)) - 1);
  v->kind = ColumnValue::Kind::kTimestamp;
  v->u64 = be >> (8 * frac_bytes);
  v->timestamp_micros = static_cast<uint32_t>(frac * Pow10(6 - fsp));
  v->fsp = fsp;
  return frac >= Pow10(fsp) ? Fill::kFraction : Fill::kOk;
}

// Splits MariaDB's packed time, ((((year*13+month)*32+day)*24+hour)*60+minute)*60+second
// in micros, shifted down to N digits.
inline TemporalValue UnpackMariaTime(uint64_t packed, uint8_t fsp) {
  TemporalValue t{};
  uint64_t x = packed * Pow10(6 - fsp);
  t.micros = static_cast<uint32_t>(x % 1000000);
  x /= 1000000;
  t.second = static_cast<uint8_t>(x % 60);
  x /= 60;
  t.minute = static_cast<uint8_t>(x % 60);
  x /= 60;
  t.hour = static_cast<uint32_t>(x);  // DATETIME splits days off; TIME keeps up to 838 hours
  return t;
}

inline Fill FillMariaDateTime(uint64_t packed, uint8_t fsp, ColumnValue* v) {
  TemporalValue t = UnpackMariaTime(packed, fsp);
  uint64_t x = t.hour;  // < 2^64 / 3600e6
  t.hour = static_cast<uint32_t>(x % 24);
  x /= 24;
  t.day = static_cast<uint8_t>(x % 32);
  x /= 32;
  t.month = static_cast<uint8_t>(x % 13);
  t.year = static_cast<uint16_t>(x / 13);
  v->kind = ColumnValue::Kind::kDateTime;
  v->temporal = t;
  v->fsp = fsp;
  return x / 13 > 9999 ? Fill::kRange : Fill::kOk;
}

// TIME(N): the packed time plus an offset (838:59:59 and one second, at N
// digits) so that negative times sort below positive ones as unsigned bytes.
inline Fill FillMariaTime(uint64_t be, uint8_t fsp, ColumnValue* v) {
  const uint64_t zero = uint64_t{3020400} * Pow10(fsp);
  const bool negative = be < zero;
  TemporalValue t = UnpackMariaTime(negative ? zero - be : be - zero, fsp);
  t.negative = negative;
  v->kind = ColumnValue::Kind::kTime;
  v->temporal = t;
  v->fsp = fsp;
  return Fill::kOk;
}

}  // namespace canal::binlog::rows
