// WriteJavaDoubleText's shortcut (a double nearest to a decimal of at most 15
// digits in [1e-3, 1e7) prints that decimal, without Java's digit generator)
// against the generator alone (WriteJavaDoubleTextByGenerator), which
// java_float_text_test.cc checks against a JVM. The shortcut is only right if
// the two never differ: millions of values where it applies, where it nearly
// applies (neighbours one and two ULPs away, 16 and 17 digits), at both ends
// of its range, at powers of two and ten, and random doubles of any exponent.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "canal/render/java_float_text.h"

namespace canal::render {
namespace {

std::string Shortcut(double v) {
  char buf[kJavaFloatTextMax];
  return std::string(buf, WriteJavaDoubleText(v, buf));
}

std::string Generated(double v) {
  char buf[kJavaFloatTextMax];
  return std::string(buf, WriteJavaDoubleTextByGenerator(v, buf));
}

// Compares v and its neighbours up to `ulps` away on both sides; counts the
// values compared and reports the first differences.
class Comparer {
 public:
  void Around(double v, int ulps) {
    Check(v);
    double up = v, down = v;
    for (int i = 0; i < ulps; ++i) {
      up = std::nextafter(up, std::numeric_limits<double>::infinity());
      down = std::nextafter(down, -std::numeric_limits<double>::infinity());
      Check(up);
      Check(down);
    }
  }

  void Check(double v) {
    ++compared_;
    const std::string a = Shortcut(v), b = Generated(v);
    if (a != b && ++differing_ <= 20) {
      ADD_FAILURE() << std::hexfloat << v << " (bits " << std::hex << std::bit_cast<uint64_t>(v)
                    << "): shortcut " << a << ", generator " << b;
    }
  }

  uint64_t compared() const { return compared_; }
  uint64_t differing() const { return differing_; }

 private:
  uint64_t compared_ = 0, differing_ = 0;
};

// A random decimal of `digits` significant digits (leading digit non-zero)
// times 10^exponent, parsed as a database or a JVM would (strtod: correctly rounded).
double Decimal(std::mt19937_64& rng, int digits, int exponent, bool negative) {
  std::string text = negative ? "-" : "";
  text += static_cast<char>('1' + rng() % 9);
  for (int i = 1; i < digits; ++i) text += static_cast<char>('0' + rng() % 10);
  text += "e" + std::to_string(exponent);
  return std::strtod(text.c_str(), nullptr);
}

TEST(JavaDoubleShortcut, ShortDecimalsAndTheirNeighboursPrintAsTheGeneratorPrintsThem) {
  std::mt19937_64 rng(20261202);
  Comparer c;
  for (int i = 0; i < 400000; ++i) {
    const int digits = 1 + static_cast<int>(rng() % 17);  // 16 and 17: where the shortcut must refuse
    // The value's leading digit from 1e-4 to 1e8: inside the range and past both ends.
    const int lead = -4 + static_cast<int>(rng() % 13);
    c.Around(Decimal(rng, digits, lead - (digits - 1), rng() % 2 == 0), 2);
  }
  EXPECT_EQ(c.differing(), 0u) << "of " << c.compared();
  EXPECT_GE(c.compared(), 2000000u);
}

TEST(JavaDoubleShortcut, DecimalsOfTheBenchmarkAndOfMoneyColumns) {
  // n / 7.0 - 1000 at 4 decimal places (bench/gen_bench_binlog.sh's score), and
  // cents: the kinds of values the shortcut is for.
  Comparer c;
  for (int n = 0; n < 400000; ++n) {
    c.Check(std::round((n / 7.0 - 1000) * 1e4) / 1e4);
    c.Check(n / 100.0);
    c.Check(-n / 1000.0);
  }
  EXPECT_EQ(c.differing(), 0u) << "of " << c.compared();
  EXPECT_EQ(Shortcut(-999.8571), "-999.8571");
  EXPECT_EQ(Shortcut(0.001), "0.001");
  EXPECT_EQ(Shortcut(9999999.999999998), "9999999.999999998");
  EXPECT_EQ(Shortcut(1e7), "1.0E7");
  EXPECT_EQ(Shortcut(100.0), "100.0");
  EXPECT_EQ(Shortcut(0.1 + 0.2), "0.30000000000000004");
}

TEST(JavaDoubleShortcut, EdgesOfItsRangeAndPowersOfTwoAndTen) {
  Comparer c;
  for (double v : {1e-3, 1e-2, 1e-1, 1.0, 10.0, 1e6, 1e7, 0.5, 0.25, 0.125, 1e-3 * 1.5}) c.Around(v, 64);
  for (int e = -12; e <= 25; ++e) {
    c.Around(std::ldexp(1.0, e), 8);
    c.Around(-std::ldexp(1.0, e), 8);
    c.Around(std::ldexp(3.0, e), 4);
  }
  for (int e = -5; e <= 8; ++e) c.Around(std::pow(10.0, e), 16);
  EXPECT_EQ(c.differing(), 0u) << "of " << c.compared();
}

TEST(JavaDoubleShortcut, RandomDoublesOfEveryExponentAndInItsRange) {
  std::mt19937_64 rng(7);
  Comparer c;
  for (int i = 0; i < 300000; ++i) c.Check(std::bit_cast<double>(rng()));
  // Uniform bit patterns between 1e-3 and 1e7 (mostly 17-digit values: refused).
  const uint64_t lo = std::bit_cast<uint64_t>(1e-3), hi = std::bit_cast<uint64_t>(1e7);
  for (int i = 0; i < 300000; ++i) c.Check(std::bit_cast<double>(lo + rng() % (hi - lo)));
  EXPECT_EQ(c.differing(), 0u) << "of " << c.compared();
}

}  // namespace
}  // namespace canal::render
