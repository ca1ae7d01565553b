// Java's Float/Double.toString (JDK 8-18 FloatingDecimal), reimplemented.
//
// The steps, as Java takes them (each quirk is kept on purpose: the output must
// be byte-identical, including where Java's choice is not the shortest form):
//
// 1. Unpack the IEEE bits into a 53-bit-aligned significand `fract` (hidden bit
//    set, subnormals normalised), its binary exponent `e2` and the number of
//    significant bits of the format (`sig_bits`: 53 or 24; less for subnormals).
//    A float goes through the same generator with sig_bits 24: its half-ULP,
//    and so its stopping point, is a float's.
// 2. Integers with e2 <= 62 print their exact digits, after rounding away the
//    digits below the format's precision (1e10f prints as 1.0E10, not 1.0000000E10).
// 3. Otherwise estimate k = floor(log10(v)) from the bits, and set up integers
//    B / S = v / 10^k (so 1 <= B/S < 10 when k is right) and M = half an ULP of v
//    on B's scale (a quarter below a power of two). Digits are generated as
//    quotients of B by S; generation stops when the remainder is within M of
//    either neighbour ("low": below M; "high": 10S - remainder below M), and the
//    last digit is rounded up when the upper neighbour is nearer (ties: to even).
//    The first quotient is dropped when the estimate of k was one too high.
//    Outside [1e-3, 1e7) at least two digits are generated (d.dE form).
//    B, S and M use 32-bit ints or 64-bit ints (with Java's wrap-around) when
//    Java does; otherwise exact arithmetic with Java's big-integer "high" test
//    (B + M >= 10 S, not >), here on one 128-bit word when the values fit and
//    on float_text_bignat.h's big integers when they do not.
// 4. Layout: 1e-3 <= |v| < 1e7 as plain decimal with at least one fraction
//    digit ("100.0", "0.001"); otherwise d.ddddE[-]n ("1.0E7", "1.23E-5").
#include "canal/render/java_float_text.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "float_text_bignat.h"

namespace canal::render {

namespace {

constexpr int kDoubleFractionBits = 52;  // explicit significand bits of a double
constexpr int kFloatFractionBits = 23;
constexpr uint64_t kHiddenBit = uint64_t{1} << kDoubleFractionBits;

// ceil(log2(5^i)) as Java's generator approximates it to pick integer widths.
constexpr int kBitsOfPow5[] = {0,  3,  5,  7,  10, 12, 14, 17, 19, 21, 24, 26, 28, 31,
                               33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61};
constexpr int kBitsOfPow5Size = sizeof kBitsOfPow5 / sizeof kBitsOfPow5[0];

int ApproxBitsOfPow5(int p5) { return p5 < kBitsOfPow5Size ? kBitsOfPow5[p5] : p5 * 3; }

constexpr uint64_t Pow5Slow(int n) {
  uint64_t v = 1;
  for (int i = 0; i < n; ++i) v *= 5;
  return v;
}

// 5^n for n <= 27 (the largest under 2^63), and floor((2^64 - 1) / 5^n) for
// Reciprocal: the generators' divisors are 5^n * 2^m, whose reciprocals are
// then a shift away, with no 64-bit division per value.
constexpr int kPow5Table = 28;
constexpr std::array<uint64_t, kPow5Table> MakePow5Table(bool inverse) {
  std::array<uint64_t, kPow5Table> t{};
  for (int n = 0; n < kPow5Table; ++n) t[n] = inverse ? ~uint64_t{0} / Pow5Slow(n) : Pow5Slow(n);
  return t;
}
constexpr std::array<uint64_t, kPow5Table> kPow5 = MakePow5Table(false);
constexpr std::array<uint64_t, kPow5Table> kInversePow5 = MakePow5Table(true);

// 5^n, wrapping past 2^64 as Java's long arithmetic would.
constexpr uint64_t Pow5(int n) { return n < kPow5Table ? kPow5[n] : Pow5Slow(n); }

// Decimal digits of an integer power of two 2^p, minus one (how many low decimal
// digits of an integer with p bits below the format's precision are noise).
int NoiseDigitsOfPow2(int p) {
  if (p <= 1 || p >= 64) return 0;
  uint64_t v = uint64_t{1} << p;
  int n = 0;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// The generated digits: value = 0.<digits> x 10^point.
struct Digits {
  // Java's digit buffer holds 20; generation never needs more (a double's half
  // ULP is reached by the 18th digit), and the loops stop there regardless.
  static constexpr int kMax = 20;
  char d[24];
  int first = 0;
  int count = 0;
  int point = 0;

  char& Last() { return d[first + count - 1]; }

  // Adds one unit in the last place. A carry out of every digit (all nines)
  // leaves "1" followed by zeros, and the digit count unchanged, as Java does.
  void RoundUp() {
    int i = first + count - 1;
    while (d[i] == '9' && i > first) d[i--] = '0';
    if (d[i] == '9') {
      d[first] = '1';
      ++point;
      return;
    }
    ++d[i];
  }
};

// Exact digits of an integer, trailing zeros dropped, after rounding off `noise`
// low decimal digits (half up).
void IntegerDigits(uint64_t v, int noise, Digits* out) {
  int point = 0;
  if (noise > 0) {
    uint64_t p10 = 1;
    for (int i = 0; i < noise; ++i) p10 *= 10;
    const uint64_t rest = v % p10;
    v /= p10;
    if (rest >= p10 / 2) ++v;
    point += noise;
  }
  while (v % 10 == 0) {
    v /= 10;
    ++point;
  }
  char* end = out->d + sizeof out->d;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out->first = static_cast<int>(p - out->d);
  out->count = static_cast<int>(end - p);
  out->point = point + out->count;
}

// floor(log10(v)) estimated from the bits, as Java estimates it: log10 of the
// significand in [1, 2) by a line through 1.5, plus e2 * log10(2). Evaluated
// in double with the same operations, so it rounds the same.
int EstimateDecimalExponent(uint64_t fract, int e2) {
  const double m = std::bit_cast<double>((uint64_t{1023} << kDoubleFractionBits) | (fract & (kHiddenBit - 1)));
  const volatile double line = (m - 1.5) * 0.289529654;  // volatile: no fused multiply-add
  const volatile double scaled = static_cast<double>(e2) * 0.301029995663981;
  const double estimate = line + 0.176091259 + scaled;
  // floor() without the libm call (a tenth of the digit generator's time):
  // truncation, one down for a negative non-integer. |estimate| < 400.
  const int truncated = static_cast<int>(estimate);
  return estimate < truncated ? truncated - 1 : truncated;
}

// Outside [1e-3, 1e7) Java prints d.dE form, which needs a digit after the point:
// generation then goes on past the first digit even when it could stop.
bool NeedsSecondDigit(int k) { return k < -3 || k >= 8; }

// Takes the first quotient: a zero (with no stop) means the estimate of k was
// one too high, and is no digit. Then, where Java's layout needs a second digit,
// generation goes on whatever the stop tests said.
void FirstDigit(int q, bool* low, bool* high, int* k, Digits* out) {
  if (q == 0 && !*high) {
    --*k;
  } else {
    out->d[out->count++] = static_cast<char>('0' + q);
  }
  if (NeedsSecondDigit(*k)) *low = *high = false;
}

// How generation ended, for the final rounding.
struct Ending {
  bool low = false;
  bool high = false;
  int twice_rest_vs_ten_s = 0;  // sign of 2 * remainder - 10 S
};

// b / s and b % s for the native generators by a multiplication with 2^64 / s
// instead of a hardware division (the hot spot: tens of cycles each on many
// CPUs). The estimate is q or q - 1; one comparison corrects it. A negative b
// (Java's wrap-around; not reached) divides as Java does.
class Reciprocal {
 public:
  explicit Reciprocal(int64_t s) : s_(static_cast<uint64_t>(s)), inverse_(~uint64_t{0} / s_) {}
  // s = 5^p5 * 2^p2 (> 0): floor(floor(x / a) / b) = floor(x / ab).
  Reciprocal(int64_t s, int p5, int p2) : s_(static_cast<uint64_t>(s)) {
    inverse_ = p5 < kPow5Table && p2 < 64 && s > 0 && (kPow5[p5] << p2 >> p2) == kPow5[p5] &&
                       (kPow5[p5] << p2) == s_
                   ? kInversePow5[p5] >> p2
                   : ~uint64_t{0} / s_;
  }

  template <typename Int>
  int Divide(Int* b) const {
    if (*b < 0) {
      const auto s = static_cast<Int>(s_);
      const int q = static_cast<int>(*b / s);
      *b = static_cast<Int>(*b % s);
      return q;
    }
    const auto v = static_cast<uint64_t>(*b);
    uint64_t q = static_cast<uint64_t>((static_cast<unsigned __int128>(v) * inverse_) >> 64);
    uint64_t r = v - q * s_;
    if (r >= s_) {
      ++q;
      r -= s_;
    }
    *b = static_cast<Int>(r);
    return static_cast<int>(q);
  }

  // v / s and v % s for any unsigned 64-bit v (the estimate is then at most 2
  // below the quotient).
  uint64_t DivideUnsigned(uint64_t v, uint64_t* rest) const {
    uint64_t q = static_cast<uint64_t>((static_cast<unsigned __int128>(v) * inverse_) >> 64);
    uint64_t r = v - q * s_;
    while (r >= s_) {
      ++q;
      r -= s_;
    }
    *rest = r;
    return q;
  }

 private:
  uint64_t s_;
  uint64_t inverse_;
};

using u128 = unsigned __int128;

// b / s and b % s for 0 <= b < 10 s on 128-bit values: the quotient of the top
// bits (s's top 59 and b's bits from the same place) is q or q + 1, so one
// 128-bit multiplication and comparison finish it, with no call to the
// compiler's 128-bit division. Out of that range (not reached), a real division.
class WideDivider {
 public:
  explicit WideDivider(u128 s)
      : s_(s), shift_(BitWidth(s) > 59 ? BitWidth(s) - 59 : 0), top_(static_cast<int64_t>(s >> shift_)) {}

  int Step(u128* b) const {
    if (*b >= s_ * 10) {
      const int q = static_cast<int>(*b / s_);
      *b %= s_;
      return q;
    }
    auto top = static_cast<int64_t>(*b >> shift_);
    int q = top_.Divide(&top);
    u128 product = s_ * static_cast<unsigned>(q);
    if (product > *b) {
      --q;
      product -= s_;
    }
    *b -= product;
    return q;
  }

 private:
  static int BitWidth(u128 v) {
    const auto hi = static_cast<uint64_t>(v >> 64);
    return hi != 0 ? 128 - std::countl_zero(hi) : 64 - std::countl_zero(static_cast<uint64_t>(v));
  }

  u128 s_;
  int shift_;
  Reciprocal top_;
};

// Java's int and long generators share one shape; `Int` is int32_t or int64_t
// and every product wraps around exactly as Java's does (the generator relies
// on it: an overflowed M reads as "stop").
template <typename Int>
struct NativeGenerator {
  using UInt = std::make_unsigned_t<Int>;
  static Int Mul(Int a, Int b) { return static_cast<Int>(static_cast<UInt>(a) * static_cast<UInt>(b)); }
  static Int Add(Int a, Int b) { return static_cast<Int>(static_cast<UInt>(a) + static_cast<UInt>(b)); }
  static Int Sub(Int a, Int b) { return static_cast<Int>(static_cast<UInt>(a) - static_cast<UInt>(b)); }
  static Int Shl(Int a, int s) { return static_cast<Int>(static_cast<UInt>(a) << s); }

  static Ending Run(uint64_t fract, int b5, int b2, int s5, int s2, int m5, int m2, int* k, Digits* out) {
    Int b = Shl(Mul(static_cast<Int>(fract), static_cast<Int>(Pow5(b5))), b2);
    const Int s = Shl(static_cast<Int>(Pow5(s5)), s2);
    Int m = Shl(static_cast<Int>(Pow5(m5)), m2);
    const Int ten_s = Mul(s, 10);
    const Reciprocal divider(s, s5, s2);
    int q = divider.Divide(&b);
    b = Mul(b, 10);
    m = Mul(m, 10);
    bool low = b < m;
    bool high = Add(b, m) > ten_s;
    FirstDigit(q, &low, &high, k, out);
    // The count stays in a register: stores of digits (chars) may alias it.
    int count = out->count;
    // One digit's step as Java takes it, from B (remainder times ten) = `next`.
    auto step = [&](Int next, int digit) {
      b = next;
      m = Mul(m, 10);
      if (m > 0) {
        low = b < m;
        high = Add(b, m) > ten_s;
      } else {
        low = high = true;  // M overflowed: Java stops here
      }
      out->d[count++] = static_cast<char>('0' + digit);
    };
    if (s > 0 && b >= 0 && static_cast<uint64_t>(s) <= uint64_t{std::numeric_limits<Int>::max()} / 10 &&
        static_cast<uint64_t>(s) <= std::numeric_limits<uint64_t>::max() / 100) {
      // Two digits per division (the loop below is a chain of dependent
      // multiplications, ~15% of canal-binlog's time on a DOUBLE column):
      // with 0 <= B < 10 S, floor(10 B / S) = 10 q1 + q2 and 10 B mod S is the
      // remainder after both. No value wraps here (10 S fits Int), so B takes
      // exactly the values of the one-digit loop, and M and the tests are its.
      while (!low && !high && count < Digits::kMax) {
        uint64_t rest;
        const auto pair = static_cast<int>(divider.DivideUnsigned(static_cast<uint64_t>(b) * 10, &rest));
        const int q1 = pair / 10;
        step(Mul(Sub(b, Mul(static_cast<Int>(q1), s)), 10), q1);
        if (low || high || count >= Digits::kMax) break;
        step(Mul(static_cast<Int>(rest), 10), pair - 10 * q1);
      }
    }
    while (!low && !high && count < Digits::kMax) {
      q = divider.Divide(&b);
      step(Mul(b, 10), q);
    }
    out->count = count;
    const Int diff = Sub(Shl(b, 1), ten_s);
    return {low, high, diff < 0 ? -1 : diff > 0 ? 1 : 0};
  }
};

u128 Pow5Wide(int n) {
  u128 v = 1;
  for (; n >= 13; n -= 13) v *= Pow5(13);
  return v * Pow5(n);
}

// Values under 2^124 (the big-integer generator's exact arithmetic, in one
// 128-bit word: B, 10 S, M and B + M never wrap there, since the loop runs
// only while M <= B < 10 S). Same tests as RunBig, so the same digits.
Ending RunWide(uint64_t fract, int b5, int b2, int s5, int s2, int m2, int* k, Digits* out) {
  const u128 s = Pow5Wide(s5) << s2;
  const u128 p5 = Pow5Wide(b5);
  u128 b = (p5 * fract) << b2;
  u128 m = (p5 * 5) << (m2 + 1);  // 10 M
  const u128 ten_s = s * 10;
  const WideDivider divider(s);
  int q = divider.Step(&b);
  b *= 10;
  bool low = b < m;
  bool high = b + m >= ten_s;
  FirstDigit(q, &low, &high, k, out);
  while (!low && !high && out->count < Digits::kMax) {
    q = divider.Step(&b);
    b *= 10;
    m *= 10;
    low = b < m;
    high = b + m >= ten_s;
    out->d[out->count++] = static_cast<char>('0' + q);
  }
  Ending e{low, high, 0};
  if (low && high) {
    const u128 twice = b << 1;
    e.twice_rest_vs_ten_s = twice < ten_s ? -1 : twice > ten_s ? 1 : 0;
  }
  return e;
}

// The same generator on big integers. Its "high" test is B + M >= 10 S where
// the native ones use >, and the final comparison only happens when both
// tests fired: both as Java has them.
// M's power of five is B's (m5 == b5).
Ending RunBig(uint64_t fract, int b5, int b2, int s5, int s2, int m2, int* k, Digits* out) {
  using internal::FloatTextBigNat;
  FloatTextBigNat s;
  s.SetPow5(s5);
  s.ShiftLeft(s2);
  // Scale everything alike so that S's top word has four leading zero bits,
  // which DivStep's quotient estimate needs.
  const int bias = s.NormalizingShift();
  s.ShiftLeft(bias);
  // B and M share their power of five: computed once.
  FloatTextBigNat b;
  b.SetPow5(b5);
  FloatTextBigNat m = b;
  b.MulSmall(fract);
  b.ShiftLeft(b2 + bias);
  m.MulSmall(5);
  m.ShiftLeft(m2 + bias + 1);  // 10 M: the first step multiplies B by 10
  FloatTextBigNat ten_s = s;
  ten_s.MulSmall(10);

  int q = b.DivStep(s);
  bool low = b.Compare(m) < 0;
  bool high = ten_s.ReachedBySum(b, m);
  FirstDigit(q, &low, &high, k, out);
  while (!low && !high && out->count < Digits::kMax) {
    q = b.DivStep(s);
    m.MulSmall(10);
    low = b.Compare(m) < 0;
    high = ten_s.ReachedBySum(b, m);
    out->d[out->count++] = static_cast<char>('0' + q);
  }
  Ending e{low, high, 0};
  if (low && high) {
    b.ShiftLeft(1);
    e.twice_rest_vs_ten_s = b.Compare(ten_s);
  }
  return e;
}

// Java's generator for a value it does not print as an integer: B / S = v /
// 10^k and M (half an ULP) as 5^b5 * 2^b2 * fract, 5^s5 * 2^s2 and 5^m5 *
// 2^m2, and the integer width Java computes them in.
struct Generator {
  enum class Width { kInt, kLong, kWide, kBig };
  uint64_t fract;  // odd
  int k, b5, b2, s5, s2, m5, m2;
  Width width;
};

int FractionBitsOf(uint64_t fract) { return kDoubleFractionBits + 1 - std::countr_zero(fract); }
int TinyBitsOf(int fract_bits, int e2) { return fract_bits - e2 - 1 > 0 ? fract_bits - e2 - 1 : 0; }

Generator SetUpGenerator(uint64_t fract, int e2, int sig_bits) {
  const int fract_bits = FractionBitsOf(fract);
  const int tiny_bits = TinyBitsOf(fract_bits, e2);
  Generator g;
  g.k = EstimateDecimalExponent(fract, e2);
  g.b5 = g.k < 0 ? -g.k : 0;
  g.b2 = g.b5 + tiny_bits + e2;
  g.s5 = g.k > 0 ? g.k : 0;
  g.s2 = g.s5 + tiny_bits;
  g.m5 = g.b5;
  g.m2 = g.b2 - sig_bits;

  g.fract = fract >> std::countr_zero(fract);
  g.b2 -= fract_bits - 1;
  const int common = g.b2 < g.s2 ? g.b2 : g.s2;
  g.b2 -= common;
  g.s2 -= common;
  g.m2 -= common;
  if (fract_bits == 1) --g.m2;  // Java's adjustment for exact powers of two
  if (g.m2 < 0) {
    g.b2 -= g.m2;
    g.s2 -= g.m2;
    g.m2 = 0;
  }

  const int b_bits = fract_bits + g.b2 + ApproxBitsOfPow5(g.b5);
  const int ten_s_bits = g.s2 + 1 + ApproxBitsOfPow5(g.s5 + 1);
  g.width = b_bits < 32 && ten_s_bits < 32     ? Generator::Width::kInt
            : b_bits < 64 && ten_s_bits < 64   ? Generator::Width::kLong
            : b_bits < 124 && ten_s_bits < 124 ? Generator::Width::kWide
                                               : Generator::Width::kBig;
  return g;
}

// Digits of the finite, non-zero value fract * 2^(e2 - 52) (fract has bit 52 set).
void GenerateDigits(uint64_t fract, int e2, int sig_bits, Digits* out) {
  if (TinyBitsOf(FractionBitsOf(fract), e2) == 0 && e2 >= -21 && e2 <= 62) {
    // An integer that fits 64 bits.
    const int noise = e2 > sig_bits ? NoiseDigitsOfPow2(e2 - sig_bits - 1) : 0;
    const uint64_t v = e2 >= kDoubleFractionBits ? fract << (e2 - kDoubleFractionBits)
                                                 : fract >> (kDoubleFractionBits - e2);
    IntegerDigits(v, noise, out);
    return;
  }

  const Generator g = SetUpGenerator(fract, e2, sig_bits);
  int k = g.k;
  out->first = 0;
  out->count = 0;
  Ending e;
  switch (g.width) {
    case Generator::Width::kInt:
      e = NativeGenerator<int32_t>::Run(g.fract, g.b5, g.b2, g.s5, g.s2, g.m5, g.m2, &k, out);
      break;
    case Generator::Width::kLong:
      e = NativeGenerator<int64_t>::Run(g.fract, g.b5, g.b2, g.s5, g.s2, g.m5, g.m2, &k, out);
      break;
    case Generator::Width::kWide:
      e = RunWide(g.fract, g.b5, g.b2, g.s5, g.s2, g.m2, &k, out);
      break;
    case Generator::Width::kBig:
      e = RunBig(g.fract, g.b5, g.b2, g.s5, g.s2, g.m2, &k, out);
      break;
  }
  out->point = k + 1;
  if (e.high) {
    if (!e.low || e.twice_rest_vs_ten_s > 0 || (e.twice_rest_vs_ten_s == 0 && ((out->Last() - '0') & 1) != 0)) {
      out->RoundUp();
    }
  }
}

// Whether Java's tests at a 15th digit cannot wrap for this value: in its int
// and long generators B + M < 11.12 S there (see ShortDecimalDigits), so 12 S
// must fit the width; the 128-bit and big-integer ones do not wrap.
bool FifteenDigitsFit(uint64_t fract, int e2) {
  const Generator g = SetUpGenerator(fract, e2, kDoubleFractionBits + 1);
  if (g.width != Generator::Width::kInt && g.width != Generator::Width::kLong) return true;
  const uint64_t limit = g.width == Generator::Width::kInt ? uint64_t{std::numeric_limits<int32_t>::max()}
                                                            : uint64_t{std::numeric_limits<int64_t>::max()};
  return g.s5 < kPow5Table && g.s2 < 63 && kPow5[g.s5] <= (limit / 12) >> g.s2;
}

// Java's digits without running its generator, for the values a database
// mostly holds: the double v nearest to a decimal of at most 15 significant
// digits, in Java's plain range [1e-3, 1e7). Java prints that decimal's digits:
// - Decimals of at most 15 digits are more than 4 ULPs apart at this size (an
//   ULP is under 2^-52 of the value), so at most one of them rounds to v; none
//   is a midpoint between doubles (under 2^53 a midpoint needs 54 significant
//   bits), so it lies strictly within half an ULP of v.
// - Java's generator stops at the first digit count n where the n-digit
//   truncation of v, or the next n-digit decimal above it, lies within M (half
//   an ULP) of v. Such a decimal would round to v, so that cannot happen before
//   n = the decimal's digit count N; at N the truncation is the decimal (v above
//   it) or the next one up is (v below it, and the last digit is rounded up,
//   with no carry: the decimal's last digit is not 0).
// - What that needs of Java's arithmetic: M exactly half an ULP (not so at a
//   power of two, where Java takes a quarter: refused), and no int/long
//   wrap-around in its tests (B < 10 S; the sum B + M). At digit N,
//   M < 1.12e-15 * 10^N * S. With N <= 14, B + M < 10.12 S, and 10 S = 5^a * 2^b
//   (a <= 27) is at most 0.978 of the power of two above it: B + M fits
//   wherever 10 S does. At N = 15, B + M < 11.12 S: FifteenDigitsFit checks.
// The decimal is found as W = round(|v| * 10^s) with s making W 15 digits, and
// kept only when W / 10^s (one correctly rounded division of exact doubles) is
// v again. tests/render/java_double_shortcut_test.cc compares this with the
// generator on millions of values, java_float_text_test.cc with a JVM.
bool ShortDecimalDigits(uint64_t fract, int e2, double magnitude, Digits* out) {
  static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                      1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
  if (!(magnitude >= 1e-3 && magnitude < 1e7)) return false;
  if (fract == kHiddenBit) return false;  // a power of two: Java's M is a quarter ULP
  // p = floor(log10(magnitude)); one less just above 0.01 and 0.1, whose
  // doubles lie above them (W then has 16 digits and is refused below).
  static constexpr double kNextPow10[] = {1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
  int p = -3;
  while (p < 6 && magnitude >= kNextPow10[p + 3]) ++p;
  const int s = 14 - p;  // 8 <= s <= 17: 10^s is exact
  // Any candidate W will do (the check below proves it), so no careful
  // rounding: nearbyint's library call would cost more than the rest.
  const double scaled = magnitude * kPow10[s] + 0.5;
  constexpr uint64_t kFifteenDigits = 1'000'000'000'000'000;
  if (!(scaled < static_cast<double>(kFifteenDigits))) return false;
  auto w = static_cast<uint64_t>(scaled);
  if (static_cast<double>(w) / kPow10[s] != magnitude) return false;
  if (w % 10 != 0 && !FifteenDigitsFit(fract, e2)) return false;
  // Trailing zeros off (at most 14: w is not 0), in halving steps.
  int point = -s;
  for (const auto& [ten_power, zeros] : {std::pair<uint64_t, int>{100'000'000, 8}, {10'000, 4}, {100, 2}, {10, 1}}) {
    if (w % ten_power == 0) {
      w /= ten_power;
      point += zeros;
    }
  }
  const char* end = std::to_chars(out->d, out->d + sizeof out->d, w).ptr;
  out->first = 0;
  out->count = static_cast<int>(end - out->d);
  out->point = point + out->count;
  return true;
}

// Java's layout of 0.<digits> x 10^point.
char* Layout(bool negative, const Digits& g, char* o) {
  if (negative) *o++ = '-';
  const char* d = g.d + g.first;
  const int n = g.count;
  const int point = g.point;
  if (point > 0 && point < 8) {
    // [1, 1e7): integer digits, then at least one fraction digit.
    const int int_digits = n < point ? n : point;
    std::memcpy(o, d, static_cast<size_t>(int_digits));
    o += int_digits;
    for (int i = int_digits; i < point; ++i) *o++ = '0';
    *o++ = '.';
    if (n > point) {
      std::memcpy(o, d + point, static_cast<size_t>(n - point));
      o += n - point;
    } else {
      *o++ = '0';
    }
  } else if (point <= 0 && point > -3) {
    // [1e-3, 1): 0.00ddd
    *o++ = '0';
    *o++ = '.';
    for (int i = point; i < 0; ++i) *o++ = '0';
    std::memcpy(o, d, static_cast<size_t>(n));
    o += n;
  } else {
    *o++ = d[0];
    *o++ = '.';
    if (n > 1) {
      std::memcpy(o, d + 1, static_cast<size_t>(n - 1));
      o += n - 1;
    } else {
      *o++ = '0';
    }
    *o++ = 'E';
    int e = point - 1;
    if (e < 0) {
      *o++ = '-';
      e = -e;
    }
    if (e >= 100) *o++ = static_cast<char>('0' + e / 100);
    if (e >= 10) *o++ = static_cast<char>('0' + e / 10 % 10);
    *o++ = static_cast<char>('0' + e % 10);
  }
  return o;
}

char* Special(bool negative, bool nan, char* o) {
  const char* text = nan ? "NaN" : negative ? "-Infinity" : "Infinity";
  const size_t len = std::strlen(text);
  std::memcpy(o, text, len);
  return o + len;
}

char* Zero(bool negative, char* o) {
  const char* text = negative ? "-0.0" : "0.0";
  const size_t len = std::strlen(text);
  std::memcpy(o, text, len);
  return o + len;
}

// Unpacks a binary64 (Bits = uint64_t) or binary32 (uint32_t) and writes its Java text.
// kShortcut: try ShortDecimalDigits first (doubles only).
template <typename Bits, int kFractionBits, int kBias, bool kShortcut>
char* WriteJavaText(Bits bits, char* out) {
  constexpr int kWidth = static_cast<int>(sizeof(Bits)) * 8;
  constexpr int kExponentMax = (1 << (kWidth - 1 - kFractionBits)) - 1;
  const bool negative = (bits >> (kWidth - 1)) != 0;
  Bits fract = bits & ((Bits{1} << kFractionBits) - 1);
  int biased = static_cast<int>((bits >> kFractionBits) & kExponentMax);
  if (biased == kExponentMax) return Special(negative, fract != 0, out);
  int sig_bits = kFractionBits + 1;
  if (biased == 0) {
    if (fract == 0) return Zero(negative, out);
    // Subnormal: shift the leading one up to the hidden bit's place; fewer
    // significant bits, so a wider half-ULP.
    const int zeros = std::countl_zero(fract);
    const int shift = zeros - (kWidth - 1 - kFractionBits);
    fract = static_cast<Bits>(fract << shift);
    biased = 1 - shift;
    sig_bits = kWidth - zeros;
  } else {
    fract |= Bits{1} << kFractionBits;
  }
  Digits g;
  if constexpr (kShortcut) {
    const double magnitude = std::bit_cast<double>(static_cast<uint64_t>(bits & ~(Bits{1} << (kWidth - 1))));
    if (ShortDecimalDigits(fract, biased - kBias, magnitude, &g)) return Layout(negative, g, out);
  }
  // A float's significand goes in the double's position; sig_bits keeps the
  // float's precision, so digit generation stops where a float's ULP says.
  GenerateDigits(uint64_t{fract} << (kDoubleFractionBits - kFractionBits), biased - kBias, sig_bits, &g);
  return Layout(negative, g, out);
}

}  // namespace

char* WriteJavaDoubleText(double v, char* out) {
  return WriteJavaText<uint64_t, kDoubleFractionBits, 1023, true>(std::bit_cast<uint64_t>(v), out);
}

char* WriteJavaDoubleTextByGenerator(double v, char* out) {
  return WriteJavaText<uint64_t, kDoubleFractionBits, 1023, false>(std::bit_cast<uint64_t>(v), out);
}

char* WriteJavaFloatText(float v, char* out) {
  return WriteJavaText<uint32_t, kFloatFractionBits, 127, false>(std::bit_cast<uint32_t>(v), out);
}

}  // namespace canal::render
