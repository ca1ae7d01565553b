// Column bytes in a collation's charset -> UTF-8.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {
namespace internal {
int CharsetMaxBytesPerChar(uint32_t collation);  // charset.cc
}  // namespace internal
namespace {

std::string ToUtf8(std::string_view bytes, uint32_t charset) {
  std::string out;
  AppendAsUtf8(bytes, charset, &out);
  return out;
}

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

// Independent UTF-8 decoder: returns false on any malformed, overlong or
// surrogate sequence.
bool DecodeUtf8(std::string_view s, std::u32string* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    const auto b0 = static_cast<uint8_t>(s[i]);
    int len = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<uint8_t>(s[i + k]);
      if ((b >> 6) != 2) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static const char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    out->push_back(cp);
    i += static_cast<size_t>(len);
  }
  return true;
}

constexpr uint32_t kUtf8mb3 = 33, kUtf8mb4 = 45, kMySql8Default = 255, kLatin1 = 8,
                   kAscii = 11, kBinary = 63, kUcs2 = 35, kUtf16 = 54, kUtf16le = 56,
                   kUtf32 = 60, kGbk = 28, kCp1251 = 51;

TEST(AppendAsUtf8, CopiesUtf8FamilyAsciiAndUnknownCollations) {
  const std::string text = "h\xC3\xA9llo \xF0\x9F\x98\x80";  // héllo 😀
  for (uint32_t id : {kUtf8mb3, kUtf8mb4, kMySql8Default, 46u, 83u, 192u, 223u, 224u, 247u, 309u,
                      323u, 576u, 610u, 1057u, 1069u, 2048u, 2304u, 2503u, 0u, 9999u, 100000u}) {
    EXPECT_EQ(ToUtf8(text, id), text) << "collation " << id;
  }
  EXPECT_EQ(ToUtf8("plain", kAscii), "plain");
}

TEST(AppendAsUtf8, InvalidUtf8BecomesReplacementCharactersAsJavaDecodesIt) {
  // A protobuf string must be valid UTF-8 (proto3 clients refuse the entry
  // otherwise); each maximal ill-formed subsequence becomes one U+FFFD.
  const std::string bad = Bytes({'a', 0xC3, 0x28, 0xFF, 0xED, 0xA0, 0x80, 'z'});
  EXPECT_EQ(ToUtf8(bad, kUtf8mb4), "a\uFFFD(\uFFFD\uFFFD\uFFFD\uFFFDz");
  EXPECT_EQ(ToUtf8(bad, kUtf8mb3), "a\uFFFD(\uFFFD\uFFFD\uFFFD\uFFFDz");
  // A truncated sequence is one subpart: E2 82 is the start of a three-byte form.
  EXPECT_EQ(ToUtf8(Bytes({0xE2, 0x82, 'x', 0xF0, 0x9F, 0x99}), kUtf8mb4), "\uFFFDx\uFFFD");
  // Overlong and past-U+10FFFF forms.
  EXPECT_EQ(ToUtf8(Bytes({0xC0, 0xAF, 0xF4, 0x90, 0x80, 0x80}), kUtf8mb4),
            "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD");
  const std::string good = "ok \u00e9 \u4e2d \U0001F642";
  EXPECT_EQ(ToUtf8(good, kUtf8mb4), good);
}

TEST(AppendAsUtf8, BytesOfAnUnknownCharsetThatAreNotUtf8KeepEveryByte) {
  // No charset metadata and no schema (a MySQL 5.6 TINYBLOB holding a PNG):
  // the bytes may be binary, so they become ISO-8859-1 text, Canal's binary form.
  const std::string png = Bytes({0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF});
  EXPECT_EQ(ToUtf8(png, 0), "\u0089PNG\r\n\x1a\n" + std::string(1, '\0') + "\u00ff");
  EXPECT_EQ(ToUtf8("caf\xc3\xa9", 0), "caf\u00e9");  // well-formed UTF-8 is taken as text
}

// Canal's Java decodes every charset; so do we, through iconv.
TEST(AppendAsUtf8, ConvertsEastAsianAndCyrillicCharsets) {
  EXPECT_EQ(ToUtf8(Bytes({0xC4, 0xE3, 0xBA, 0xC3}), kGbk), "你好");
  EXPECT_EQ(ToUtf8(Bytes({0xC4, 0xE3, 0xBA, 0xC3}), 87), "你好");    // gbk_bin
  EXPECT_EQ(ToUtf8(Bytes({0xC4, 0xE3, 0xBA, 0xC3}), 1052), "你好");  // gbk NO PAD (MariaDB)
  EXPECT_EQ(ToUtf8(Bytes({0xA7, 0x41, 0xA6, 0x6E}), 1), "你好");     // big5
  EXPECT_EQ(ToUtf8(Bytes({0x82, 0xA0, 0x82, 0xA2}), 13), "あい");     // sjis
  EXPECT_EQ(ToUtf8(Bytes({0xCF, 0xF0}), kCp1251), "Пр");
  EXPECT_EQ(ToUtf8(Bytes({0xB1, 0xE6}), 9), "ąć");                    // latin2
  EXPECT_FALSE(CopiesThroughAsUtf8(kGbk));
  EXPECT_FALSE(CopiesThroughAsUtf8(kCp1251));
}

TEST(AppendAsUtf8, BytesACharsetDoesNotDefineBecomeReplacementCharacters) {
  // A lone GBK lead byte at the end, and 0xFF (undefined in GBK) in the middle.
  EXPECT_EQ(ToUtf8(Bytes({'a', 0xFF, 'b', 0xC4}), kGbk), "a\uFFFDb\uFFFD");
  EXPECT_EQ(ToUtf8(Bytes({0x98}), kCp1251), "\uFFFD");  // cp1251 leaves 0x98 undefined
  EXPECT_EQ(ToUtf8("", kGbk), "");
}

TEST(AppendAsUtf8, CharsetsWithoutAConverterPassThrough) {
  EXPECT_EQ(ToUtf8(Bytes({0x41, 0x42}), 3), "AB");  // dec8
  EXPECT_TRUE(CopiesThroughAsUtf8(3));
  // ... as long as the bytes are UTF-8: the rest is repaired, never sent as it is.
  EXPECT_EQ(ToUtf8(Bytes({0xE4, 0x41}), 3), "\uFFFDA");
}

TEST(DefaultCollationOfCharset, NamesMapToTheirDefaultCollation) {
  EXPECT_EQ(DefaultCollationOfCharset("gbk"), kGbk);
  EXPECT_EQ(DefaultCollationOfCharset("cp1251"), kCp1251);
  EXPECT_EQ(DefaultCollationOfCharset("latin1"), kLatin1);
  EXPECT_EQ(DefaultCollationOfCharset("binary"), 63u);
  EXPECT_EQ(DefaultCollationOfCharset("utf8mb3"), DefaultCollationOfCharset("utf8"));
  EXPECT_EQ(DefaultCollationOfCharset("klingon"), 0u);
}

TEST(AppendAsUtf8, AppendsToExistingOutput) {
  std::string out = "prefix:";
  AppendAsUtf8(Bytes({0xE9}), kLatin1, &out);
  EXPECT_EQ(out, "prefix:\xC3\xA9");
  AppendAsUtf8("", kUtf16, &out);
  EXPECT_EQ(out, "prefix:\xC3\xA9");
}

TEST(AppendAsUtf8, Latin1IsCp1252WithC1ControlsForItsHoles) {
  EXPECT_EQ(ToUtf8(Bytes({'c', 'a', 'f', 0xE9}), kLatin1), "caf\xC3\xA9");
  EXPECT_EQ(ToUtf8(Bytes({0x80}), kLatin1), "\xE2\x82\xAC");  // €
  EXPECT_EQ(ToUtf8(Bytes({0x99}), kLatin1), "\xE2\x84\xA2");  // ™
  EXPECT_EQ(ToUtf8(Bytes({0x9F}), kLatin1), "\xC5\xB8");      // Ÿ
  EXPECT_EQ(ToUtf8(Bytes({0x81}), kLatin1), "\xC2\x81");      // undefined in cp1252
  EXPECT_EQ(ToUtf8(Bytes({0x8D, 0x8F, 0x90, 0x9D}), kLatin1), "\xC2\x8D\xC2\x8F\xC2\x90\xC2\x9D");
  EXPECT_EQ(ToUtf8(Bytes({0xA0}), kLatin1), "\xC2\xA0");
  EXPECT_EQ(ToUtf8(Bytes({0xFF}), kLatin1), "\xC3\xBF");  // ÿ
  EXPECT_EQ(ToUtf8(Bytes({0x00, 0x7F}), kLatin1), Bytes({0x00, 0x7F}));
}

TEST(AppendAsUtf8, EveryLatin1CollationConverts) {
  for (uint32_t id : {5u, 8u, 15u, 31u, 47u, 48u, 49u, 94u, 1032u, 1071u}) {
    EXPECT_EQ(ToUtf8(Bytes({0x80, 0xE9}), id), "\xE2\x82\xAC\xC3\xA9") << "collation " << id;
  }
}

TEST(AppendAsUtf8, EveryLatin1ByteBecomesOneValidCharacter) {
  // cp1252 0x80..0x9F, spelled out independently of charset.cc's table.
  const char32_t kHigh[32] = {0x20AC, 0x81,   0x201A, 0x192,  0x201E, 0x2026, 0x2020, 0x2021,
                              0x2C6,  0x2030, 0x160,  0x2039, 0x152,  0x8D,   0x17D,  0x8F,
                              0x90,   0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                              0x2DC,  0x2122, 0x161,  0x203A, 0x153,  0x9D,   0x17E,  0x178};
  for (int b = 0; b < 256; ++b) {
    std::u32string decoded;
    ASSERT_TRUE(DecodeUtf8(ToUtf8(Bytes({b}), kLatin1), &decoded)) << b;
    ASSERT_EQ(decoded.size(), 1u) << b;
    const char32_t expected = (b >= 0x80 && b < 0xA0) ? kHigh[b - 0x80] : char32_t(b);
    EXPECT_EQ(decoded[0], expected) << "byte " << b;
  }
}

TEST(AppendAsUtf8, BinaryIsIso88591ForEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  std::u32string decoded;
  ASSERT_TRUE(DecodeUtf8(ToUtf8(all, kBinary), &decoded));
  ASSERT_EQ(decoded.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(decoded[b], char32_t(b));
}

TEST(AppendAsUtf8, Ucs2IsBigEndianWithoutSurrogates) {
  EXPECT_EQ(ToUtf8(Bytes({0x00, 'A', 0x00, 0xE9, 0x4E, 0x2D}), kUcs2), "A\xC3\xA9\xE4\xB8\xAD");
  // A surrogate code unit is not a UCS-2 character.
  EXPECT_EQ(ToUtf8(Bytes({0xD8, 0x3D, 0xDE, 0x00}), kUcs2), "\xEF\xBF\xBD\xEF\xBF\xBD");
  // A dangling odd byte.
  EXPECT_EQ(ToUtf8(Bytes({0x00, 'A', 0x00}), kUcs2), "A\xEF\xBF\xBD");
  for (uint32_t id : {90u, 128u, 151u, 159u, 640u, 1059u, 1152u, 2560u, 2759u}) {
    EXPECT_EQ(ToUtf8(Bytes({0x00, 'x'}), id), "x") << "collation " << id;
  }
}

TEST(AppendAsUtf8, Utf16JoinsSurrogatePairsAndReplacesLoneHalves) {
  EXPECT_EQ(ToUtf8(Bytes({0x00, 'A', 0xD8, 0x3D, 0xDE, 0x00}), kUtf16), "A\xF0\x9F\x98\x80");
  EXPECT_EQ(ToUtf8(Bytes({0xD8, 0x3D}), kUtf16), "\xEF\xBF\xBD");                // high at end
  EXPECT_EQ(ToUtf8(Bytes({0xDE, 0x00, 0x00, 'B'}), kUtf16), "\xEF\xBF\xBD" "B");  // lone low
  EXPECT_EQ(ToUtf8(Bytes({0xD8, 0x3D, 0x00, 'B'}), kUtf16), "\xEF\xBF\xBD" "B");  // high + BMP
  EXPECT_EQ(ToUtf8(Bytes({0xD8, 0x3D, 0xD8, 0x3D, 0xDE, 0x00}), kUtf16),
            "\xEF\xBF\xBD\xF0\x9F\x98\x80");
  EXPECT_EQ(ToUtf8(Bytes({0xDB, 0xFF, 0xDF, 0xFF}), kUtf16), "\xF4\x8F\xBF\xBF");  // U+10FFFF
  EXPECT_EQ(ToUtf8(Bytes({0x00}), kUtf16), "\xEF\xBF\xBD");
  for (uint32_t id : {55u, 101u, 124u, 672u, 1078u, 2816u, 3015u}) {
    EXPECT_EQ(ToUtf8(Bytes({0x00, 'x'}), id), "x") << "collation " << id;
  }
}

TEST(AppendAsUtf8, Utf16leIsLittleEndian) {
  EXPECT_EQ(ToUtf8(Bytes({'A', 0x00, 0x3D, 0xD8, 0x00, 0xDE}), kUtf16le), "A\xF0\x9F\x98\x80");
  EXPECT_EQ(ToUtf8(Bytes({0xE9, 0x00}), 62), "\xC3\xA9");
  EXPECT_EQ(ToUtf8(Bytes({0x00, 0xDC}), kUtf16le), "\xEF\xBF\xBD");
  EXPECT_EQ(ToUtf8(Bytes({'x', 0x00}), 1080), "x");
}

TEST(AppendAsUtf8, Utf32IsBigEndianAndReplacesNonCharacters) {
  EXPECT_EQ(ToUtf8(Bytes({0, 0, 0, 'A', 0, 1, 0xF6, 0x00}), kUtf32), "A\xF0\x9F\x98\x80");
  EXPECT_EQ(ToUtf8(Bytes({0, 0x11, 0, 0}), kUtf32), "\xEF\xBF\xBD");     // > U+10FFFF
  EXPECT_EQ(ToUtf8(Bytes({0, 0, 0xD8, 0}), kUtf32), "\xEF\xBF\xBD");     // surrogate
  EXPECT_EQ(ToUtf8(Bytes({0xFF, 0, 0, 0}), kUtf32), "\xEF\xBF\xBD");
  EXPECT_EQ(ToUtf8(Bytes({0, 0, 0, 'A', 0, 0, 0}), kUtf32), "A\xEF\xBF\xBD");  // 3 trailing bytes
  for (uint32_t id : {61u, 160u, 183u, 736u, 1084u, 3072u, 3271u}) {
    EXPECT_EQ(ToUtf8(Bytes({0, 0, 0, 'x'}), id), "x") << "collation " << id;
  }
}

TEST(AppendAsUtf8, WideCharsetOutputIsAlwaysValidUtf8) {
  // Every 2-byte input in each 16-bit charset, and a sweep of 4-byte ones.
  for (uint32_t id : {kUcs2, kUtf16, kUtf16le}) {
    for (int hi = 0; hi < 256; ++hi) {
      for (int lo = 0; lo < 256; ++lo) {
        std::u32string decoded;
        const std::string out = ToUtf8(Bytes({hi, lo, lo, hi, hi}), id);
        ASSERT_TRUE(DecodeUtf8(out, &decoded)) << id << " " << hi << " " << lo;
      }
    }
  }
  for (uint32_t v = 0; v < 0x120000; v += 0x7F) {
    std::u32string decoded;
    const std::string out = ToUtf8(Bytes({int(v >> 24), int(v >> 16 & 255), int(v >> 8 & 255),
                                          int(v & 255)}),
                                   kUtf32);
    ASSERT_TRUE(DecodeUtf8(out, &decoded)) << v;
    ASSERT_EQ(decoded.size(), 1u);
    if (v <= 0x10FFFF && !(v >= 0xD800 && v <= 0xDFFF)) {
      EXPECT_EQ(decoded[0], v);
    }
  }
}

// Max bytes per character for every collation id MariaDB 10.11 lists
// (information_schema.COLLATION_CHARACTER_SET_APPLICABILITY joined with
// CHARACTER_SETS.MAXLEN), as inclusive id ranges.
TEST(CharsetMaxBytesPerChar, MatchesMariaDbsCollationList) {
  struct Range {
    uint32_t first, last;
    int maxlen;
  };
  const Range kMariaDb[] = {
      {1, 1, 2},        {2, 11, 1},       {12, 12, 3},      {13, 13, 2},      {14, 16, 1},
      {18, 18, 1},      {19, 19, 2},      {20, 23, 1},      {24, 24, 2},      {25, 27, 1},
      {28, 28, 2},      {29, 32, 1},      {33, 33, 3},      {34, 34, 1},      {35, 35, 2},
      {36, 44, 1},      {45, 46, 4},      {47, 53, 1},      {54, 56, 4},      {57, 59, 1},
      {60, 62, 4},      {63, 75, 1},      {77, 82, 1},      {83, 83, 3},      {84, 88, 2},
      {89, 89, 1},      {90, 90, 2},      {91, 91, 3},      {92, 94, 1},      {95, 96, 2},
      {97, 98, 3},      {99, 99, 1},      {101, 124, 4},    {128, 151, 2},    {159, 159, 2},
      {160, 183, 4},    {192, 215, 3},    {223, 223, 3},    {224, 247, 4},    {576, 578, 3},
      {608, 610, 4},    {640, 642, 2},    {672, 674, 4},    {736, 738, 4},    {1025, 1025, 2},
      {1027, 1028, 1},  {1030, 1035, 1},  {1036, 1036, 3},  {1037, 1037, 2},  {1040, 1040, 1},
      {1042, 1042, 1},  {1043, 1043, 2},  {1046, 1046, 1},  {1048, 1048, 2},  {1049, 1050, 1},
      {1052, 1052, 2},  {1054, 1054, 1},  {1056, 1056, 1},  {1057, 1057, 3},  {1059, 1059, 2},
      {1060, 1065, 1},  {1067, 1067, 1},  {1069, 1070, 4},  {1071, 1071, 1},  {1074, 1075, 1},
      {1077, 1077, 1},  {1078, 1080, 4},  {1081, 1083, 1},  {1084, 1086, 4},  {1088, 1099, 1},
      {1101, 1106, 1},  {1107, 1107, 3},  {1108, 1112, 2},  {1113, 1113, 1},  {1114, 1114, 2},
      {1115, 1115, 3},  {1116, 1117, 1},  {1119, 1120, 2},  {1121, 1122, 3},  {1125, 1125, 4},
      {1147, 1147, 4},  {1152, 1152, 2},  {1174, 1174, 2},  {1184, 1184, 4},  {1206, 1206, 4},
      {1216, 1216, 3},  {1238, 1238, 3},  {1248, 1248, 4},  {1270, 1270, 4},  {2048, 2215, 3},
      {2232, 2247, 3},  {2304, 2471, 4},  {2488, 2503, 4},  {2560, 2727, 2},  {2744, 2759, 2},
      {2816, 2983, 4},  {3000, 3015, 4},  {3072, 3239, 4},  {3256, 3271, 4},
  };
  for (const Range& r : kMariaDb) {
    for (uint32_t id = r.first; id <= r.last; ++id) {
      EXPECT_EQ(internal::CharsetMaxBytesPerChar(id), r.maxlen) << "collation " << id;
    }
  }
}

TEST(CharsetMaxBytesPerChar, KnowsMySql8CollationsAndNotUnknownIds) {
  EXPECT_EQ(internal::CharsetMaxBytesPerChar(76), 3);  // utf8mb3_tolower_ci
  for (uint32_t id = 255; id <= 323; ++id) EXPECT_EQ(internal::CharsetMaxBytesPerChar(id), 4) << id;
  for (uint32_t id : {248u, 249u, 250u}) EXPECT_EQ(internal::CharsetMaxBytesPerChar(id), 4) << id;
  for (uint32_t id : {0u, 17u, 100u, 251u, 324u, 1000u, 4000u, 0xFFFFFFFFu}) {
    EXPECT_EQ(internal::CharsetMaxBytesPerChar(id), 0) << id;
  }
}

}  // namespace
}  // namespace canal::binlog
