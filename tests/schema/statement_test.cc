#include "canal/schema/statement.h"

#include <gtest/gtest.h>

namespace canal::schema {
namespace {

TEST(ClassifyStatement, KindsAgreeWithCommentsAnywhere) {
  struct Case {
    const char* sql;
    StatementKind kind;
  } cases[] = {
      {"ALTER TABLE t ADD c INT", StatementKind::kDdl},
      {"/* x */ ALTER TABLE t ADD c INT", StatementKind::kDdl},
      {"-- c\nalter table t add c int", StatementKind::kDdl},
      {"# c\nDROP TABLE t", StatementKind::kDdl},
      {"/*!40000 ALTER TABLE `t` DISABLE KEYS */", StatementKind::kDdl},
      {"TRUNCATE t", StatementKind::kDdl},
      {"CREATE USER u", StatementKind::kDcl},
      {"CREATE OR REPLACE USER u", StatementKind::kDcl},
      {"DROP USER u", StatementKind::kDcl},
      {"RENAME USER a TO b", StatementKind::kDcl},
      {"GRANT ALL ON *.* TO x", StatementKind::kDcl},
      {"set password for u = 'x'", StatementKind::kDcl},
      {"INSERT INTO t VALUES (1)", StatementKind::kDml},
      {"replace into t values (1)", StatementKind::kDml},
      {"LOAD DATA INFILE 'x' INTO TABLE t", StatementKind::kDml},
      {"BEGIN", StatementKind::kOther},
      {"SAVEPOINT a", StatementKind::kOther},
      {"", StatementKind::kOther},
      {"/* only a comment", StatementKind::kOther},
      {"'string'", StatementKind::kOther},
  };
  for (const auto& c : cases) EXPECT_EQ(ClassifyStatement(c.sql).kind, c.kind) << c.sql;
}

TEST(ClassifyStatement, ObjectsAndTables) {
  auto c = ClassifyStatement("CREATE UNIQUE INDEX i ON s.t (a)");
  EXPECT_EQ(c.object, DdlObject::kIndex);
  EXPECT_EQ(c.verb, DdlVerb::kCreate);
  EXPECT_EQ(c.db, "s");
  EXPECT_EQ(c.table, "t");
  c = ClassifyStatement("create temporary table if not exists `db`.`t 1` (a int)");
  EXPECT_EQ(c.object, DdlObject::kTable);
  EXPECT_EQ(c.table, "t 1");
  c = ClassifyStatement("ALTER ONLINE IGNORE TABLE IF EXISTS s.t ADD x INT");
  EXPECT_EQ(c.db, "s");
  EXPECT_EQ(c.table, "t");
  c = ClassifyStatement("CREATE VIEW v AS SELECT 1");
  EXPECT_EQ(c.object, DdlObject::kOther);
  EXPECT_TRUE(c.table.empty());
  EXPECT_FALSE(MayChangeColumns(c));
  c = ClassifyStatement("CREATE DATABASE d");
  EXPECT_EQ(c.object, DdlObject::kDatabase);
  EXPECT_TRUE(MayChangeColumns(c));
  EXPECT_TRUE(MayChangeColumns(ClassifyStatement("/* x */ ALTER TABLE t ADD c INT")));
  EXPECT_FALSE(MayChangeColumns(ClassifyStatement("CREATE INDEX i ON t (a)")));
  EXPECT_FALSE(MayChangeColumns(ClassifyStatement("INSERT INTO t VALUES (1)")));
}

}  // namespace
}  // namespace canal::schema
