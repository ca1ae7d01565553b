// The JSON lines both tools print (canal/tools/row_json.h): escaping of every
// kind of byte, invalid UTF-8, and the pieces of a line.
#include "canal/tools/row_json.h"

#include <string>

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
