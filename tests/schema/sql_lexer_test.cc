#include "canal/schema/sql_lexer.h"

#include <gtest/gtest.h>

#include <vector>

namespace canal::schema {
namespace {

std::vector<Token> All(std::string_view sql, LexerOptions o = {}) {
  SqlLexer lx(sql, o);
  std::vector<Token> out;
  while (true) {
    Token t = lx.Next();
    if (t.kind == TokenKind::kEnd) return out;
    out.push_back(t);
    if (out.size() > 10000) return out;
  }
}

std::string Texts(std::string_view sql, LexerOptions o = {}) {
  std::string s;
  for (const Token& t : All(sql, o)) {
    if (!s.empty()) s += '|';
    s += t.text;
  }
  return s;
}

TEST(SqlLexer, CommentsOfEveryKindAreSkipped) {
  EXPECT_EQ(Texts("/* a */ ALTER -- note\n TABLE # x\n t"), "ALTER|TABLE|t");
  EXPECT_EQ(Texts("ALTER/*x*/TABLE"), "ALTER|TABLE");
  EXPECT_EQ(Texts("a --b"), "a|-|-|b");  // "--" needs a blank after it
  EXPECT_EQ(Texts("a --"), "a");
}

TEST(SqlLexer, ExecutableCommentsFollowTheServerVersion) {
  EXPECT_EQ(Texts("/*!40000 ALTER TABLE `t` DISABLE KEYS */"), "ALTER|TABLE|t|DISABLE|KEYS");
  LexerOptions old;
  old.server_version = 50700;
  EXPECT_EQ(Texts("a /*!80000 b */ c /*!50100 d */", old), "a|c|d");
  EXPECT_EQ(Texts("a /*M!100301 b */ c"), "a|b|c");
  LexerOptions mysql;
  mysql.mariadb = false;
  EXPECT_EQ(Texts("a /*M! b */ c /*! d */", mysql), "a|c|d");
  EXPECT_EQ(Texts("/*+ HINT */ x"), "x");
}

TEST(SqlLexer, QuotesAndEscapes) {
  auto t = All("`a``b` 'it''s' 'x\\ny' \"dq\" N'n' _utf8mb4'u' X'0A' 0x1f 12.5e3 db.t");
  ASSERT_EQ(t.size(), 12u);
  EXPECT_EQ(t[0].kind, TokenKind::kQuotedIdent);
  EXPECT_EQ(t[0].text, "a`b");
  EXPECT_EQ(t[1].text, "it's");
  EXPECT_EQ(t[2].text, "x\ny");
  EXPECT_EQ(t[3].kind, TokenKind::kString);
  EXPECT_EQ(t[4].text, "n");
  EXPECT_EQ(t[5].text, "u");
  EXPECT_EQ(t[6].kind, TokenKind::kHexString);
  EXPECT_EQ(t[7].kind, TokenKind::kHexString);
  EXPECT_EQ(t[8].kind, TokenKind::kNumber);
  EXPECT_EQ(t[8].text, "12.5e3");
  EXPECT_EQ(t[10].text, ".");
  LexerOptions ansi;
  ansi.ansi_quotes = true;
  ansi.no_backslash_escapes = true;
  auto a = All("\"col\" 'a\\b'", ansi);
  EXPECT_EQ(a[0].kind, TokenKind::kQuotedIdent);
  EXPECT_EQ(a[1].text, "a\\b");
}

TEST(SqlLexer, UnterminatedInputEndsWithAnError) {
  for (const char* sql : {"'abc", "`abc", "/* abc", "x \"abc", "/*! abc"}) {
    auto t = All(sql);
    if (std::string(sql) == "/*! abc") {
      EXPECT_EQ(t.back().text, "abc");  // an open executable comment just ends
      continue;
    }
    ASSERT_FALSE(t.empty()) << sql;
    EXPECT_EQ(t.back().kind, TokenKind::kError) << sql;
    EXPECT_NE(t.back().text.find("offset"), std::string::npos) << sql;
  }
}

TEST(SqlLexer, NonAsciiIdentifiersAndNumbersLikeNames) {
  auto t = All("表名 1abc 123");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].kind, TokenKind::kWord);
  EXPECT_EQ(t[1].kind, TokenKind::kWord);
  EXPECT_EQ(t[2].kind, TokenKind::kNumber);
}

}  // namespace
}  // namespace canal::schema
