#include "canal/snapshot/chunk_query.h"

#include <gtest/gtest.h>

namespace canal::snapshot {
namespace {

TableShape Customer() {
  TableShape s;
  s.schema = "shop";
  s.table = "customer";
  s.columns = {{"id", "bigint", false}, {"region", "varchar", false}, {"created", "datetime", false},
               {"note", "text", true}};
  s.indexes = {{"PRIMARY", true, {"region", "created"}}};
  return s;
}

TEST(ChunkQueryTest, CompositeKeyPagesByIndexRangesNotARowComparison) {
  TableShape shape = Customer();
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  ChunkQuery q;
  ASSERT_TRUE(PlanChunkQuery(shape, key, "", 500, &q).ok());
  EXPECT_EQ(q.first,
            "SELECT `id`, `region`, `created`, `note` FROM `shop`.`customer` FORCE INDEX (`PRIMARY`) "
            "ORDER BY `region`, `created` LIMIT ?");
  EXPECT_EQ(q.next,
            "SELECT `id`, `region`, `created`, `note` FROM `shop`.`customer` FORCE INDEX (`PRIMARY`) "
            "WHERE (`region` > ? OR (`region` = ? AND `created` > ?)) ORDER BY `region`, `created` LIMIT ?");
  EXPECT_EQ(q.parameters, 3u);
  EXPECT_EQ(q.parameter_keys, (std::vector<size_t>{0, 0, 1}));
  // MariaDB reads a row comparison from the index's start on every chunk.
  EXPECT_EQ(q.next.find(") > ("), std::string::npos);
}

TEST(ChunkQueryTest, ThreeColumnKeyBindsEachPrefixOnce) {
  TableShape shape = Customer();
  shape.indexes = {{"PRIMARY", true, {"region", "created", "id"}}};
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  ChunkQuery q;
  ASSERT_TRUE(PlanChunkQuery(shape, key, "id <> 0", 10, &q).ok());
  EXPECT_NE(q.next.find("WHERE (`region` > ? OR (`region` = ? AND `created` > ?) OR "
                        "(`region` = ? AND `created` = ? AND `id` > ?)) AND (id <> 0) ORDER BY"),
            std::string::npos)
      << q.next;
  EXPECT_EQ(q.parameters, 6u);
  EXPECT_EQ(q.parameter_keys, (std::vector<size_t>{0, 0, 1, 0, 1, 2}));
}

TEST(ChunkQueryTest, SingleColumnKeyAndAFilterOnEveryChunk) {
  TableShape shape = Customer();
  shape.indexes = {{"uk_id", true, {"id"}}};
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  ChunkQuery q;
  ASSERT_TRUE(PlanChunkQuery(shape, key, "region = 'eu' OR note IS NULL", 8192, &q).ok());
  EXPECT_EQ(q.first,
            "SELECT `id`, `region`, `created`, `note` FROM `shop`.`customer` FORCE INDEX (`uk_id`) "
            "WHERE (region = 'eu' OR note IS NULL) ORDER BY `id` LIMIT ?");
  EXPECT_EQ(q.next,
            "SELECT `id`, `region`, `created`, `note` FROM `shop`.`customer` FORCE INDEX (`uk_id`) "
            "WHERE `id` > ? AND (region = 'eu' OR note IS NULL) ORDER BY `id` LIMIT ?");
  EXPECT_EQ(q.parameters, 1u);
}

TEST(ChunkQueryTest, KeylessTableIsOneStatementWithoutOrder) {
  TableShape shape = Customer();
  shape.indexes.clear();
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  ChunkQuery q;
  ASSERT_TRUE(PlanChunkQuery(shape, key, "id > 10", 100, &q).ok());
  EXPECT_EQ(q.first, "SELECT `id`, `region`, `created`, `note` FROM `shop`.`customer` WHERE (id > 10)");
  EXPECT_TRUE(q.next.empty());
  EXPECT_EQ(q.parameters, 0u);
}

TEST(ChunkQueryTest, QuotesEveryIdentifier) {
  EXPECT_EQ(QuoteIdentifier("a`b"), "`a``b`");
  EXPECT_EQ(QuoteIdentifier(""), "``");
  TableShape shape;
  shape.schema = "we`ird";
  shape.table = "t t";
  shape.columns = {{"k`", "int", false}};
  shape.indexes = {{"PRIMARY", true, {"k`"}}};
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  ChunkQuery q;
  ASSERT_TRUE(PlanChunkQuery(shape, key, "", 1, &q).ok());
  EXPECT_EQ(q.first, "SELECT `k``` FROM `we``ird`.`t t` FORCE INDEX (`PRIMARY`) ORDER BY `k``` LIMIT ?");
}

TEST(ChunkQueryTest, RefusesAZeroChunkForAKeyedTable) {
  TableShape shape = Customer();
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  ChunkQuery q;
  Status s = PlanChunkQuery(shape, key, "", 0, &q);
  ASSERT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("0 rows"), std::string_view::npos);
}

TEST(ChunkQueryTest, RefusesAKeyOutsideTheShape) {
  TableShape shape = Customer();
  ChunkKey key;
  key.kind = ChunkKey::Kind::kPrimary;
  key.index = "PRIMARY";
  key.columns = {7};
  ChunkQuery q;
  EXPECT_FALSE(PlanChunkQuery(shape, key, "", 10, &q).ok());
}

TEST(WhereClauseTest, AcceptsConditionsWithQuotedPunctuation) {
  for (const char* w : {"id > 5", "name = 'a;b' AND (x = 1 OR y = 2)", "note = 'it''s -- fine /* here */'",
                        "`weird;col` = \"#x\"", "((a))", "a - b > 1", "a / 2 = 1"}) {
    EXPECT_TRUE(CheckWhereClause(w).ok()) << w << ": " << CheckWhereClause(w).ToString();
  }
}

TEST(WhereClauseTest, RefusesWhatCouldEscapeTheParentheses) {
  struct Case {
    const char* where;
    const char* says;
  };
  const Case cases[] = {
      {"1) OR (1", "closes no '('"},
      {"id > 1; DROP TABLE t", "';'"},
      {"id > 1 -- ORDER BY", "comment ('--')"},
      {"id > 1 # x", "comment ('#')"},
      {"id > 1 /* x */", "comment ('/*')"},
      {"name = 'open", "never closed"},
      {"(id > 1", "'(' never closed"},
      {"name = 'a\\' OR 1=1 OR ''='", "backslash"},
      {"   ", "blank"},
  };
  for (const Case& c : cases) {
    Status s = CheckWhereClause(c.where);
    ASSERT_EQ(s.code(), Status::Code::kInvalidArgument) << c.where;
    EXPECT_NE(s.message().find(c.says), std::string_view::npos) << c.where << ": " << s.ToString();
  }
  EXPECT_FALSE(CheckWhereClause(std::string_view("a = 1\0", 6)).ok());
}

TEST(WhereClauseTest, RefusesAnOversizedClause) {
  std::string big(kMaxWhereClauseBytes + 1, '1');
  Status s = CheckWhereClause(big);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("4096"), std::string_view::npos);
  EXPECT_TRUE(CheckWhereClause(std::string(kMaxWhereClauseBytes, '1')).ok());
}

TEST(WhereClauseTest, PlanNamesTheTableWhenTheFilterIsBad) {
  TableShape shape = Customer();
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  ChunkQuery q;
  Status s = PlanChunkQuery(shape, key, "1) OR (1", 10, &q);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("`shop`.`customer`"), std::string_view::npos) << s.ToString();
}

}  // namespace
}  // namespace canal::snapshot
