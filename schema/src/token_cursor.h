// TokenCursor: lookahead over SqlLexer for the classifier and the DDL parser.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <utility>

#include "canal/schema/sql_lexer.h"

namespace canal::schema {

class TokenCursor {
 public:
  TokenCursor(std::string_view sql, const LexerOptions& options) : lexer_(sql, options) {}

  const Token& Peek(size_t k = 0) {
    while (ahead_.size() <= k) ahead_.push_back(lexer_.Next());
    return ahead_[k];
  }
  Token Take() {
    Peek();
    Token t = std::move(ahead_.front());
    ahead_.pop_front();
    ++taken_;
    return t;
  }
  bool AtEnd() { return Peek().kind == TokenKind::kEnd || Peek().kind == TokenKind::kError; }
  // The statement's end, allowing one trailing ';'.
  bool AtStatementEnd() {
    if (Peek().IsPunct(';')) Take();
    return AtEnd();
  }

  bool Word(std::string_view upper) {
    if (!Peek().IsWord(upper)) return false;
    Take();
    return true;
  }
  // Both words in a row, or nothing consumed.
  bool Words(std::string_view a, std::string_view b) {
    if (!Peek().IsWord(a) || !Peek(1).IsWord(b)) return false;
    Take();
    Take();
    return true;
  }
  bool Punct(char c) {
    if (!Peek().IsPunct(c)) return false;
    Take();
    return true;
  }
  bool IfExists() { return Words("IF", "EXISTS"); }
  bool IfNotExists() {
    if (!Peek().IsWord("IF") || !Peek(1).IsWord("NOT") || !Peek(2).IsWord("EXISTS")) return false;
    Take();
    Take();
    Take();
    return true;
  }

  // One identifier, bare or quoted.
  bool Identifier(std::string* out) {
    if (!Peek().IsIdentifier()) return false;
    *out = Take().text;
    return !out->empty();
  }
  // [db.]name; *db left empty when unqualified.
  bool QualifiedName(std::string* db, std::string* name) {
    std::string first;
    if (!Identifier(&first)) return false;
    if (Peek().IsPunct('.')) {
      Take();
      std::string second;
      if (!Identifier(&second)) return false;
      *db = std::move(first);
      *name = std::move(second);
      return true;
    }
    db->clear();
    *name = std::move(first);
    return true;
  }

  // Skips one token, or a whole parenthesised group when it starts with '('.
  // False at the end or on a lexer error.
  bool SkipOne() {
    if (AtEnd()) return false;
    if (!Peek().IsPunct('(')) {
      Take();
      return true;
    }
    int depth = 0;
    while (!AtEnd()) {
      const Token t = Take();
      if (t.IsPunct('(')) ++depth;
      if (t.IsPunct(')') && --depth == 0) return true;
    }
    return false;
  }
  // Skips to the next ',' or ')' at this nesting level (not consumed) or the end.
  void SkipToCommaOrClose() {
    while (!AtEnd() && !Peek().IsPunct(',') && !Peek().IsPunct(')') && !Peek().IsPunct(';')) {
      if (!SkipOne()) return;
    }
  }

  size_t taken() const { return taken_; }

 private:
  SqlLexer lexer_;
  std::deque<Token> ahead_;
  size_t taken_ = 0;
};

}  // namespace canal::schema
