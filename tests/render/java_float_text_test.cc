// Java's String.valueOf(float|double) (java_float_text.h): fixed vectors, and a
// real JVM as the oracle on a million random and edge-case values.
#include "canal/render/java_float_text.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <bit>
#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

namespace canal::render {
namespace {

std::string J(double v) {
  char buf[kJavaFloatTextMax];
  return std::string(buf, WriteJavaDoubleText(v, buf));
}

std::string J(float v) {
  char buf[kJavaFloatTextMax];
  return std::string(buf, WriteJavaFloatText(v, buf));
}

TEST(JavaFloatText, IssueVectors) {
  EXPECT_EQ(J(100.0), "100.0");
  EXPECT_EQ(J(0.0), "0.0");
  EXPECT_EQ(J(1e20), "1.0E20");
  EXPECT_EQ(J(0.0000123), "1.23E-5");
  EXPECT_EQ(J(10000000.0), "1.0E7");
  EXPECT_EQ(J(-1e300), "-1.0E300");
  EXPECT_EQ(J(3.4e38f), "3.4E38");
  EXPECT_EQ(J(1.7976931348623157e308), "1.7976931348623157E308");
  EXPECT_EQ(J(123456790.0f), "1.23456792E8");
  EXPECT_EQ(J(0.1), "0.1");
  EXPECT_EQ(J(0.001), "0.001");
  EXPECT_EQ(J(1234567.125), "1234567.125");
}

TEST(JavaFloatText, LayoutBoundariesFromJavasSpecification) {
  // 1e-3 <= |v| < 1e7: plain, at least one digit after the point.
  EXPECT_EQ(J(0.001), "0.001");
  EXPECT_EQ(J(0.0009999), "9.999E-4");
  EXPECT_EQ(J(9999999.0), "9999999.0");
  EXPECT_EQ(J(9999999.5), "9999999.5");
  EXPECT_EQ(J(1.0), "1.0");
  EXPECT_EQ(J(-1.5), "-1.5");
  EXPECT_EQ(J(-0.0), "-0.0");
  EXPECT_EQ(J(0.0f), "0.0");
  EXPECT_EQ(J(-0.0f), "-0.0");
  EXPECT_EQ(J(1e7f), "1.0E7");
  EXPECT_EQ(J(1e-3f), "0.001");
  EXPECT_EQ(J(100.0f), "100.0");
}

TEST(JavaFloatText, FloatHasItsOwnPrecision) {
  // A float printed through a double would show the binary noise.
  EXPECT_EQ(J(0.1f), "0.1");
  EXPECT_EQ(J(static_cast<double>(0.1f)), "0.10000000149011612");
  EXPECT_EQ(J(3.14159f), "3.14159");
  EXPECT_EQ(J(1e10f), "1.0E10");
  EXPECT_EQ(J(FLT_MAX), "3.4028235E38");
  EXPECT_EQ(J(FLT_MIN), "1.17549435E-38");
  EXPECT_EQ(J(std::numeric_limits<float>::denorm_min()), "1.4E-45");
}

TEST(JavaFloatText, NotAlwaysTheShortestDigitsAsJdk17) {
  // JDK-4511638: the old algorithm prints more digits than needed here; Canal's
  // JVMs (8-17) do, so we do.
  EXPECT_EQ(J(2.82879384806159E17), "2.82879384806159008E17");
  EXPECT_EQ(J(1e23), "9.999999999999999E22");
  EXPECT_EQ(J(std::numeric_limits<double>::denorm_min()), "4.9E-324");
  EXPECT_EQ(J(DBL_MIN), "2.2250738585072014E-308");
}

TEST(JavaFloatText, NonFiniteValues) {
  EXPECT_EQ(J(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(J(-std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(J(std::bit_cast<double>(uint64_t{0x7ff0000000000001})), "NaN");  // signalling NaN
  EXPECT_EQ(J(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(J(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(J(std::numeric_limits<float>::quiet_NaN()), "NaN");
  EXPECT_EQ(J(std::bit_cast<float>(uint32_t{0xff800001})), "NaN");
  EXPECT_EQ(J(-std::numeric_limits<float>::infinity()), "-Infinity");
}

TEST(JavaFloatText, NeverWritesPastTheDocumentedMaximum) {
  // The longest forms: a negative 17-digit double with a three-digit negative
  // exponent, and 18/19-digit outputs like the JDK-4511638 one.
  for (double v : {-2.2250738585072014E-308, -2.82879384806159E17, -1.2345678901234567E-300,
                   -std::numeric_limits<double>::denorm_min()}) {
    char buf[kJavaFloatTextMax + 8];
    std::memset(buf, '#', sizeof buf);
    const char* end = WriteJavaDoubleText(v, buf);
    EXPECT_LE(static_cast<size_t>(end - buf), kJavaFloatTextMax);
    EXPECT_EQ(buf[kJavaFloatTextMax], '#');
  }
}

// --------------------------------------------------------------- Java oracle

bool HaveProgram(const char* name) {
  const std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// javac compiles tests/render/java/FloatTextOracle.java; java prints
// String.valueOf of over a million values with their bit patterns; each must
// equal ours. Debian's default-jdk-headless (OpenJDK 17) is the reference: the
// JVMs Canal runs on (8-17) share this algorithm.
TEST(JavaFloatText, MatchesTheJvmOnAMillionValues) {
  if (!HaveProgram("javac") || !HaveProgram("java")) {
    GTEST_SKIP() << "javac/java not found: install default-jdk-headless (scripts/install-deps.sh) to compare "
                    "with Java's String.valueOf";
  }
  const std::filesystem::path source =
      std::filesystem::path(CANAL_SOURCE_DIR) / "tests" / "render" / "java" / "FloatTextOracle.java";
  ASSERT_TRUE(std::filesystem::exists(source)) << source;
  const std::filesystem::path dir =
      std::filesystem::path(CANAL_BINARY_DIR) / "java_float_text_oracle";
  std::filesystem::create_directories(dir);
  const std::string compile = "javac -d '" + dir.string() + "' '" + source.string() + "' 2>&1";
  ASSERT_EQ(std::system(compile.c_str()), 0) << compile;

  constexpr int kRandomValues = 1000000;
  const std::string run =
      "java -Xshare:auto -cp '" + dir.string() + "' FloatTextOracle " + std::to_string(kRandomValues) + " 20261201";
  FILE* oracle = popen(run.c_str(), "r");
  ASSERT_NE(oracle, nullptr) << run;
  char line[128];
  uint64_t checked = 0, doubles = 0, floats = 0, differing = 0;
  while (std::fgets(line, sizeof line, oracle) != nullptr) {
    std::string_view l(line);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.remove_suffix(1);
    // "D <16 hex> <text>" or "F <8 hex> <text>"
    const size_t space = l.find(' ', 2);
    ASSERT_TRUE(l.size() > 4 && (l[0] == 'D' || l[0] == 'F') && space != std::string_view::npos) << l;
    const uint64_t bits = std::strtoull(std::string(l.substr(2, space - 2)).c_str(), nullptr, 16);
    const std::string_view java = l.substr(space + 1);
    std::string ours;
    if (l[0] == 'D') {
      ours = J(std::bit_cast<double>(bits));
      ++doubles;
    } else {
      ours = J(std::bit_cast<float>(static_cast<uint32_t>(bits)));
      ++floats;
    }
    ++checked;
    if (ours != java) {
      if (++differing <= 20) ADD_FAILURE() << l.substr(0, space) << ": Java " << java << ", ours " << ours;
    }
  }
  const int status = pclose(oracle);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << run << " failed";
  EXPECT_EQ(differing, 0u) << "of " << checked;
  EXPECT_GE(checked, static_cast<uint64_t>(kRandomValues));
  EXPECT_GT(doubles, 400000u);
  EXPECT_GT(floats, 400000u);
  std::printf("compared %llu doubles and %llu floats with Java's String.valueOf\n",
              static_cast<unsigned long long>(doubles), static_cast<unsigned long long>(floats));
}

}  // namespace
}  // namespace canal::render
