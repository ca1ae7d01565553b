#include "canal/schema/sql_lexer.h"

#include "canal/common/ascii_case.h"

namespace canal::schema {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWordChar(char c) {
  // Unquoted identifiers may hold any non-ASCII character (UTF-8 bytes).
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
char Upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

}  // namespace

std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Upper(c);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) { return AsciiEqualsIgnoreCase(a, b); }

bool Token::IsWord(std::string_view upper) const { return kind == TokenKind::kWord && EqualsIgnoreCase(text, upper); }

bool SqlLexer::SkipBlanksAndComments() {
  while (i_ < sql_.size()) {
    const char c = sql_[i_];
    if (IsSpace(c)) {
      ++i_;
    } else if (c == '#' || (c == '-' && sql_.compare(i_, 2, "--") == 0 &&
                            (i_ + 2 == sql_.size() || IsSpace(sql_[i_ + 2])))) {
      const size_t end = sql_.find('\n', i_);
      i_ = end == std::string_view::npos ? sql_.size() : end + 1;
    } else if (c == '*' && executable_depth_ > 0 && sql_.compare(i_, 2, "*/") == 0) {
      --executable_depth_;
      i_ += 2;
    } else if (c == '/' && sql_.compare(i_, 2, "/*") == 0) {
      const size_t start = i_;
      size_t j = i_ + 2;
      const bool maria = sql_.compare(j, 2, "M!") == 0;
      const bool mysql = !maria && j < sql_.size() && sql_[j] == '!';
      if ((maria || mysql) && executable_depth_ == 0) {
        j += maria ? 2 : 1;
        const size_t digits = j;
        uint32_t version = 0;
        while (j < sql_.size() && IsDigit(sql_[j]) && j - digits < 6) version = version * 10 + (sql_[j++] - '0');
        const bool has_version = j > digits;
        bool run = !maria || options_.mariadb;
        if (run && has_version && options_.server_version != 0 && version > options_.server_version) run = false;
        if (run) {
          executable_depth_ = 1;
          i_ = j;
          continue;
        }
      }
      const size_t end = sql_.find("*/", start + 2);
      if (end == std::string_view::npos) {
        error_ = "unterminated comment at offset " + std::to_string(start);
        i_ = sql_.size();
        return false;
      }
      i_ = end + 2;
    } else {
      return true;
    }
  }
  return true;
}

Token SqlLexer::Quoted(char quote, TokenKind kind, size_t start) {
  Token t;
  t.kind = kind;
  t.offset = start;
  const bool escapes = kind == TokenKind::kString && !options_.no_backslash_escapes;
  for (size_t j = i_ + 1; j < sql_.size(); ++j) {
    const char c = sql_[j];
    if (c == quote) {
      if (j + 1 < sql_.size() && sql_[j + 1] == quote) {  // doubled quote
        t.text.push_back(quote);
        ++j;
        continue;
      }
      i_ = j + 1;
      return t;
    }
    if (c == '\\' && escapes && j + 1 < sql_.size()) {
      const char e = sql_[++j];
      switch (e) {
        case 'n': t.text.push_back('\n'); break;
        case 't': t.text.push_back('\t'); break;
        case 'r': t.text.push_back('\r'); break;
        case 'b': t.text.push_back('\b'); break;
        case '0': t.text.push_back('\0'); break;
        case 'Z': t.text.push_back('\x1a'); break;
        case '%': case '_': t.text.push_back('\\'); t.text.push_back(e); break;  // LIKE patterns keep it
        default: t.text.push_back(e); break;
      }
      continue;
    }
    t.text.push_back(c);
  }
  i_ = sql_.size();
  Token err;
  err.kind = TokenKind::kError;
  err.offset = start;
  err.text = std::string("unterminated ") + (kind == TokenKind::kString ? "string" : "quoted identifier") +
             " at offset " + std::to_string(start);
  done_ = true;
  return err;
}

Token SqlLexer::WordOrNumber(size_t start) {
  size_t j = i_;
  bool all_digits = true;
  while (j < sql_.size() && IsWordChar(sql_[j])) {
    if (!IsDigit(sql_[j])) all_digits = false;
    ++j;
  }
  Token t;
  t.offset = start;
  if (all_digits) {
    // A number: digits [. digits] [e [+-] digits]
    if (j < sql_.size() && sql_[j] == '.') {
      ++j;
      while (j < sql_.size() && IsDigit(sql_[j])) ++j;
    }
    if (j < sql_.size() && (sql_[j] == 'e' || sql_[j] == 'E')) {
      size_t k = j + 1;
      if (k < sql_.size() && (sql_[k] == '+' || sql_[k] == '-')) ++k;
      if (k < sql_.size() && IsDigit(sql_[k])) {
        j = k;
        while (j < sql_.size() && IsDigit(sql_[j])) ++j;
      }
    }
    t.kind = TokenKind::kNumber;
  } else if (j - i_ > 2 && sql_[i_] == '0' && (sql_[i_ + 1] == 'x' || sql_[i_ + 1] == 'b')) {
    t.kind = TokenKind::kHexString;  // 0x1F, 0b101 (an identifier when other letters follow: rare)
  } else {
    t.kind = TokenKind::kWord;
  }
  t.text.assign(sql_.substr(i_, j - i_));
  i_ = j;
  return t;
}

Token SqlLexer::Next() {
  Token t;
  if (done_) return t;
  if (!SkipBlanksAndComments()) {
    done_ = true;
    t.kind = TokenKind::kError;
    t.offset = i_;
    t.text = error_;
    return t;
  }
  t.offset = i_;
  if (i_ >= sql_.size()) {
    done_ = true;
    return t;
  }
  const size_t start = i_;
  const char c = sql_[i_];
  if (c == '`') return Quoted('`', TokenKind::kQuotedIdent, start);
  if (c == '"') return Quoted('"', options_.ansi_quotes ? TokenKind::kQuotedIdent : TokenKind::kString, start);
  if (c == '\'') return Quoted('\'', TokenKind::kString, start);
  // X'..', B'..', N'..' and _charset'..' prefixes.
  if ((c == 'x' || c == 'X' || c == 'b' || c == 'B') && i_ + 1 < sql_.size() && sql_[i_ + 1] == '\'') {
    ++i_;
    Token h = Quoted('\'', TokenKind::kString, start);
    if (h.kind == TokenKind::kString) h.kind = TokenKind::kHexString;
    return h;
  }
  if ((c == 'n' || c == 'N') && i_ + 1 < sql_.size() && sql_[i_ + 1] == '\'') {
    ++i_;
    return Quoted('\'', TokenKind::kString, start);
  }
  if (IsWordChar(c)) {
    Token w = WordOrNumber(start);
    // _utf8mb4'text': the introducer is dropped, the string stays.
    if (w.kind == TokenKind::kWord && w.text.size() > 1 && w.text[0] == '_' && i_ < sql_.size() && sql_[i_] == '\'') {
      return Quoted('\'', TokenKind::kString, start);
    }
    return w;
  }
  t.kind = TokenKind::kPunct;
  t.text.assign(1, c);
  ++i_;
  return t;
}

}  // namespace canal::schema
