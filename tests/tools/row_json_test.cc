// The JSON lines both tools print (canal/tools/row_json.h): escaping of every
// kind of byte, invalid UTF-8, and the pieces of a line.
#include "canal/tools/row_json.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace canal::tools {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

TEST(RowJson, PlainTextIsQuotedAsItIs) {
  EXPECT_EQ(Json(""), "\"\"");
  EXPECT_EQ(Json("abc"), "\"abc\"");
  EXPECT_EQ(Json("a longer run of plain ASCII text, past one word"), "\"a longer run of plain ASCII text, past one word\"");
}

TEST(RowJson, QuotesBackslashesAndControlsAreEscaped) {
  EXPECT_EQ(Json("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
  EXPECT_EQ(Json("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(Json(std::string("\x00\x01\x1f", 3)), "\"\\u0000\\u0001\\u001f\"");
  // The special byte at every place of an 8-byte word.
  for (size_t i = 0; i < 9; ++i) {
    std::string s(9, 'x');
    s[i] = '"';
    std::string want = "\"" + std::string(i, 'x') + "\\\"" + std::string(8 - i, 'x') + "\"";
    EXPECT_EQ(Json(s), want) << i;
  }
}

TEST(RowJson, ValidUtf8IsCopiedAndInvalidBecomesReplacementCharacters) {
  EXPECT_EQ(Json("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\"");
  EXPECT_EQ(Json("\xff"), "\"\\ufffd\"");
  EXPECT_EQ(Json("\xc3"), "\"\\ufffd\"") << "a sequence cut short";
  EXPECT_EQ(Json("\xc0\xaf"), "\"\\ufffd\\ufffd\"") << "overlong";
  EXPECT_EQ(Json("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"") << "a surrogate";
  EXPECT_EQ(Json("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"") << "past U+10FFFF";
}

// ---------------------------------------------------------------- WriteJsonString against a reference

// A byte-at-a-time reference: the RFC 8259 escapes, other controls as \u00xx,
// well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF)
// copied, every other byte U+FFFD.
std::string Reference(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      const char* named = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : nullptr;
      if (named != nullptr) {
        out += named;
      } else if (c < 0x20) {
        char u[8];
        std::snprintf(u, sizeof u, "\\u%04x", c);
        out += u;
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // Decode one sequence and check its code point's range.
    const size_t len = c >= 0xF8 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    uint32_t cp = len == 4 ? c & 0x07u : len == 3 ? c & 0x0Fu : c & 0x1Fu;
    bool ok = len != 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<uint8_t>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = cp << 6 | (b & 0x3Fu);
    }
    const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    ok = ok && cp >= min_cp && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  return out + "\"";
}

// WriteJsonString into a buffer of exactly its bound (so an overrun shows
// under ASan), checked against AppendJsonString and the reference.
std::string Written(std::string_view s) {
  std::vector<char> buf(JsonStringBound(s.size()));
  char* end = WriteJsonString(s, buf.data());
  EXPECT_LE(static_cast<size_t>(end - buf.data()), buf.size());
  std::string out(buf.data(), end);
  EXPECT_EQ(out, Json(s));
  return out;
}

// 41 bytes: two 16-byte vector steps, one 8-byte word and a byte, so the
// special byte is met by each of the escaper's scans, at each lane.
TEST(RowJsonWrite, EveryByteAtEveryPlaceOfEachScanWidth) {
  for (int c = 0; c < 256; ++c) {
    for (size_t at = 0; at < 41; ++at) {
      std::string s(41, 'a');
      s[at] = static_cast<char>(c);
      EXPECT_EQ(Written(s), Reference(s)) << "byte " << c << " at " << at;
    }
  }
}

TEST(RowJsonWrite, Utf8SequencesAcrossWordBoundariesAndCutShort) {
  const std::string seqs[] = {"\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
                              "\xc0\xaf", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x8f\xbf\xbf",
                              "\xc2", "\xe4\xb8", "\xf0\x9f\x98", "\x80", "\xbf\xbf", "\xf8\x88\x80\x80\x80"};
  for (const std::string& seq : seqs) {
    for (size_t at = 0; at < 12; ++at) {
      const std::string s = std::string(at, 'x') + seq + std::string(3, 'y');
      EXPECT_EQ(Written(s), Reference(s)) << at;
      const std::string at_end = std::string(at, 'x') + seq;
      EXPECT_EQ(Written(at_end), Reference(at_end)) << at;
    }
  }
}

TEST(RowJsonWrite, WorstCaseFillsTheBoundExactly) {
  // Every byte a six-char escape: controls and invalid UTF-8.
  const std::string controls(100, '\x01');
  EXPECT_EQ(Written(controls).size(), JsonStringBound(controls.size()));
  const std::string invalid(100, '\xff');
  EXPECT_EQ(Written(invalid).size(), JsonStringBound(invalid.size()));
  EXPECT_EQ(Written(""), "\"\"");
}

TEST(RowJsonWrite, RandomStringsMatchTheReference) {
  std::mt19937 rng(12);
  // Bytes drawn mostly from the interesting classes.
  const std::string pool = std::string("aZ09 \"\\\n\t\x01\x1f\x7f", 13) + "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\xff\x80\xc0";
  for (int round = 0; round < 20000; ++round) {
    std::string s(rng() % 40, ' ');
    for (char& c : s) c = (rng() % 4 == 0) ? static_cast<char>(rng()) : pool[rng() % pool.size()];
    ASSERT_EQ(Written(s), Reference(s)) << round;
  }
}

TEST(RowJson, RowLineHasCanalBinlogsShape) {
  std::string line;
  AppendLineHead("mysql-bin.000001", 200, "0-1-42", 1700000000, &line);
  AppendRowTarget("shop", "or\"ders", "INSERT", &line);
  EXPECT_EQ(line,
            "{\"file\":\"mysql-bin.000001\",\"pos\":200,\"gtid\":\"0-1-42\",\"ts\":1700000000,"
            "\"db\":\"shop\",\"table\":\"or\\\"ders\",\"type\":\"INSERT\"");
}

TEST(RowJson, StatementLineSaysDdlOrQuery) {
  std::string ddl, query;
  AppendLineHead("f", 4, "", 0, &ddl);
  AppendStatement("shop", true, "ALTER TABLE t ADD c INT", &ddl);
  EXPECT_EQ(ddl, "{\"file\":\"f\",\"pos\":4,\"gtid\":\"\",\"ts\":0,\"db\":\"shop\",\"type\":\"DDL\",\"sql\":"
                 "\"ALTER TABLE t ADD c INT\"");
  AppendStatement("", false, "INSERT INTO t VALUES ('\n')", &query);
  EXPECT_EQ(query, ",\"db\":\"\",\"type\":\"QUERY\",\"sql\":\"INSERT INTO t VALUES ('\\n')\"");
}

TEST(RowJson, LineWriterWritesEveryLineInOrder) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    JsonLineWriter w(f);
    for (int i = 0; i < 3; ++i) {
      w.buffer().append("{\"n\":" + std::to_string(i) + "}");
      w.EndLine();
    }
    ASSERT_TRUE(w.Flush());
    EXPECT_TRUE(w.buffer().empty());
  }
  std::rewind(f);
  char buf[64] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  EXPECT_EQ(std::string(buf, n), "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
}

}  // namespace
}  // namespace canal::tools
