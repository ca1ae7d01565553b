// IsValidUtf8 against a validator written from the Unicode Standard's table of well-formed byte
// sequences (Table 3-7), one byte at a time: the word-at-a-time scan must agree with it wherever
// a sequence starts or ends relative to an 8-byte word and to the end of the string.
#include "canal/common/utf8.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace canal {
namespace {

// Table 3-7: the ranges of each byte of a well-formed sequence, by its first byte.
bool ReferenceValid(std::string_view s) {
  size_t i = 0;
  const auto at = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const auto in = [&](size_t k, uint8_t lo, uint8_t hi) { return k < s.size() && at(k) >= lo && at(k) <= hi; };
  while (i < s.size()) {
    const uint8_t c = at(i);
    if (c <= 0x7F) {
      i += 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      if (!in(i + 1, 0x80, 0xBF)) return false;
      i += 2;
    } else if (c == 0xE0 || c == 0xED || (c >= 0xE1 && c <= 0xEF)) {
      const uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      if (!in(i + 1, lo, hi) || !in(i + 2, 0x80, 0xBF)) return false;
      i += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      const uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      if (!in(i + 1, lo, hi) || !in(i + 2, 0x80, 0xBF) || !in(i + 3, 0x80, 0xBF)) return false;
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

TEST(IsValidUtf8, EveryStringOfOneAndTwoBytesAgreesWithTheTable) {
  EXPECT_TRUE(IsValidUtf8(""));
  for (int a = 0; a < 256; ++a) {
    const std::string one(1, static_cast<char>(a));
    ASSERT_EQ(IsValidUtf8(one), ReferenceValid(one)) << a;
    for (int b = 0; b < 256; ++b) {
      const std::string two{static_cast<char>(a), static_cast<char>(b)};
      ASSERT_EQ(IsValidUtf8(two), ReferenceValid(two)) << a << " " << b;
    }
  }
}

// Each interesting sequence at every offset from 0 to 17 after ASCII, with ASCII or nothing
// after it: sequences that straddle a word or a 16-byte block, end a string early or sit in a
// short tail.
TEST(IsValidUtf8, SequencesAtEveryOffsetOfAWordAndOfTheTail) {
  const std::string sequences[] = {
      "\xC3\xA9",         "\xE2\x82\xAC",     "\xF0\x9F\x99\x82", "\xEF\xBF\xBD",     "\xF4\x8F\xBF\xBF",
      "\xC0\xAF",         "\xC1\xBF",         "\xE0\x80\xAF",     "\xED\xA0\x80",     "\xF4\x90\x80\x80",
      "\xF5\x80\x80\x80", "\x80",             "\xBF",             "\xFE",             "\xFF",
      "\xC3",             "\xE2\x82",         "\xF0\x9F\x99",     "\xE2\x28\xA1",     "\xF0\x9F\x28\x82"};
  for (const std::string& seq : sequences) {
    for (size_t before = 0; before < 34; ++before) {
      for (size_t after : {0, 1, 7, 9, 15, 17}) {
        const std::string s = std::string(before, 'a') + seq + std::string(after, 'z');
        EXPECT_EQ(IsValidUtf8(s), ReferenceValid(s)) << "before " << before << " after " << after;
      }
    }
  }
}

// Random strings mostly of ASCII with high bytes sprinkled in: lengths 0 to 40, and 0 to 120
// with long ASCII runs between them (whole 16-byte blocks, then a sequence).
TEST(IsValidUtf8, RandomMostlyAsciiStringsAgreeWithTheTable) {
  for (const auto& [max_len, one_in] : {std::pair{40, 9}, std::pair{120, 60}}) {
    std::mt19937 rng(20261206 + max_len);
    std::uniform_int_distribution<int> len(0, max_len), ascii(0x20, 0x7E), any(0, 255), pick(0, one_in);
    size_t valid = 0, invalid = 0;
    for (int n = 0; n < 200000; ++n) {
      std::string s;
      const int l = len(rng);
      for (int k = 0; k < l; ++k) {
        switch (pick(rng)) {
          case 0: s += static_cast<char>(any(rng)); break;
          case 1: s += "\xC3\xA9"; break;
          case 2: s += "\xF0\x9F\x99\x82"; break;
          default: s += static_cast<char>(ascii(rng));
        }
      }
      const bool want = ReferenceValid(s);
      ASSERT_EQ(IsValidUtf8(s), want) << n;
      (want ? valid : invalid) += 1;
    }
    // Both answers must be exercised, or the comparison proves little.
    EXPECT_GT(valid, 10000u);
    EXPECT_GT(invalid, 10000u);
  }
}

}  // namespace
}  // namespace canal
