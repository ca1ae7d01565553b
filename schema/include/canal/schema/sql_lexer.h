// SqlLexer: MySQL/MariaDB statement text as tokens, for the statement
// classifier and the DDL parser.
//
// Comments (/* */, "-- ", #) are skipped; executable comments (/*! ... */,
// /*!50100 ... */, /*M! ... */, /*M!100301 ... */) are read as their contents
// when the server would run them (LexerOptions). Quoted identifiers and string
// literals are unescaped. Never fails: an unterminated quote or comment ends the
// token stream with a kError token that names the offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace canal::schema {

struct LexerOptions {
  // The server's version as MAJOR*10000 + MINOR*100 + PATCH (100611 for
  // MariaDB 10.6.11, 80036 for MySQL 8.0.36); 0 = unknown, every executable
  // comment is read.
  uint32_t server_version = 0;
  bool mariadb = true;               // /*M! */ comments are read only by MariaDB
  bool ansi_quotes = false;          // sql_mode ANSI_QUOTES: "x" is an identifier
  bool no_backslash_escapes = false;  // sql_mode NO_BACKSLASH_ESCAPES
};

enum class TokenKind : uint8_t {
  kEnd,          // end of the statement
  kWord,         // bare word: keyword or unquoted identifier
  kQuotedIdent,  // `x` (or "x" under ANSI_QUOTES); text unescaped
  kString,       // 'x' / "x" / N'x' / _charset'x'; text unescaped
  kHexString,    // X'..' / 0x..  / B'..' / 0b..; text as written
  kNumber,       // 12, 1.5, 1e3
  kPunct,        // one character: ( ) , . ; = and the rest
  kError,        // unterminated quote or comment; text names it
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  size_t offset = 0;  // byte offset of the token in the statement

  bool IsWord(std::string_view upper) const;  // a bare word equal (ignoring case) to `upper`
  bool IsPunct(char c) const { return kind == TokenKind::kPunct && text.size() == 1 && text[0] == c; }
  bool IsIdentifier() const { return kind == TokenKind::kWord || kind == TokenKind::kQuotedIdent; }
};

class SqlLexer {
 public:
  explicit SqlLexer(std::string_view sql, LexerOptions options = {}) : sql_(sql), options_(options) {}

  // The next token; kEnd (repeatedly) at the end, kError once then kEnd.
  Token Next();

  size_t offset() const { return i_; }

 private:
  // Skips blanks and comments; enters executable comments. False on an
  // unterminated comment (error_ set).
  bool SkipBlanksAndComments();
  Token Quoted(char quote, TokenKind kind, size_t start);
  Token WordOrNumber(size_t start);

  std::string_view sql_;
  LexerOptions options_;
  size_t i_ = 0;
  int executable_depth_ = 0;  // inside /*! ... */: its "*/" is skipped
  bool done_ = false;
  std::string error_;
};

// ASCII upper-case copy (identifiers compare case-insensitively for keywords).
std::string AsciiUpper(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace canal::schema
