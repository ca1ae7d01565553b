// Every statement of tests/schema/ddl_corpus.sql meets the parser with the
// outcome the corpus names: applied, known not to change columns, not DDL, or
// a clear NotSupported/Corruption error naming where it stopped.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "canal/schema/ddl.h"
#include "canal/schema/statement.h"

namespace canal::schema {
namespace {

struct Entry {
  std::string expect, sql;
  int line = 0;
};

std::vector<Entry> LoadCorpus() {
  std::ifstream in(std::string(CANAL_SOURCE_DIR) + "/tests/schema/ddl_corpus.sql");
  std::vector<Entry> out;
  std::string line;
  int n = 0;
  bool header = true;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("@expect ", 0) == 0) {
      header = false;
      out.push_back({line.substr(8), "", n + 1});
      continue;
    }
    if (header) continue;
    if (!out.back().sql.empty()) out.back().sql += '\n';
    out.back().sql += line;
  }
  return out;
}

TEST(DdlCorpus, EveryStatementHasItsExpectedOutcome) {
  const auto corpus = LoadCorpus();
  ASSERT_GT(corpus.size(), 80u);
  int counts[4] = {};
  for (const Entry& e : corpus) {
    DdlStatement ddl;
    const Status s = ParseDdl(e.sql, "shop", LexerOptions{}, &ddl);
    const std::string where = "corpus line " + std::to_string(e.line) + ": " + e.sql;
    if (e.expect == "unsupported") {
      ++counts[3];
      EXPECT_FALSE(s.ok()) << where;
      EXPECT_TRUE(s.code() == Status::Code::kNotSupported || s.code() == Status::Code::kCorruption) << where;
      // The message says where the parser stopped.
      const std::string msg = s.ToString();
      EXPECT_TRUE(msg.find("offset") != std::string::npos || msg.find("end of the statement") != std::string::npos ||
                  msg.find("PRIMARY KEY") != std::string::npos)
          << where << " -> " << msg;
      continue;
    }
    ASSERT_TRUE(s.ok()) << where << " -> " << s.ToString();
    if (e.expect == "change") {
      ++counts[0];
      EXPECT_NE(ddl.kind, DdlStatement::Kind::kNotDdl) << where;
      EXPECT_NE(ddl.kind, DdlStatement::Kind::kNoColumnChange) << where;
      EXPECT_TRUE(MayChangeColumns(ClassifyStatement(e.sql))) << where;
    } else if (e.expect == "none") {
      ++counts[1];
      EXPECT_EQ(ddl.kind, DdlStatement::Kind::kNoColumnChange) << where;
      EXPECT_FALSE(ddl.note.empty()) << where;
    } else {
      ASSERT_EQ(e.expect, "notddl") << where;
      ++counts[2];
      EXPECT_EQ(ddl.kind, DdlStatement::Kind::kNotDdl) << where;
    }
  }
  EXPECT_GT(counts[0], 30);
  EXPECT_GT(counts[1], 10);
  EXPECT_GT(counts[2], 10);
  EXPECT_GT(counts[3], 15);
}

// Every prefix of every corpus statement: an answer, never a crash or a hang.
TEST(DdlCorpus, EveryPrefixGivesAnAnswer) {
  for (const Entry& e : LoadCorpus()) {
    for (size_t n = 0; n <= e.sql.size(); ++n) {
      DdlStatement ddl;
      const Status s = ParseDdl(std::string_view(e.sql).substr(0, n), "shop", LexerOptions{}, &ddl);
      if (!s.ok()) {
        EXPECT_FALSE(s.ToString().empty());
      }
    }
  }
}

}  // namespace
}  // namespace canal::schema
