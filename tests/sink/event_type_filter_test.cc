// Canal's event-type switches: defaults keep everything; each key drops its kind.
#include <gtest/gtest.h>

#include "canal/sink/event_type_filter.h"

namespace canal::sink {
namespace {

TEST(EventTypeFilter, DefaultsKeepEverything) {
  EventTypeFilter f;
  EXPECT_FALSE(f.DropsRows(binlog::RowsKind::kWrite));
  EXPECT_FALSE(f.DropsRows(binlog::RowsKind::kUpdate));
  EXPECT_FALSE(f.DropsRows(binlog::RowsKind::kDelete));
  EXPECT_FALSE(f.DropsStatement("ALTER TABLE t ADD c INT"));
  EXPECT_FALSE(f.DropsStatement("GRANT ALL ON *.* TO u"));
  EXPECT_FALSE(f.DropsStatement("INSERT INTO t VALUES (1)"));
  EXPECT_FALSE(f.DropsTransactionEntries());
}

TEST(EventTypeFilter, EachKeyDropsItsKind) {
  EventTypeFilter f;
  ASSERT_TRUE(f.Set("canal.instance.filter.dml.update", " TRUE ").ok());
  EXPECT_TRUE(f.DropsRows(binlog::RowsKind::kUpdate));
  EXPECT_FALSE(f.DropsRows(binlog::RowsKind::kWrite));
  ASSERT_TRUE(f.Set("canal.instance.filter.query.ddl", "true").ok());
  EXPECT_TRUE(f.DropsStatement("/* x */ alter table t add c int"));
  EXPECT_TRUE(f.DropsStatement("DROP TABLE t"));
  EXPECT_FALSE(f.DropsStatement("DROP USER u"));  // DCL, not DDL
  ASSERT_TRUE(f.Set("canal.instance.filter.query.dcl", "true").ok());
  EXPECT_TRUE(f.DropsStatement("DROP USER u"));
  EXPECT_TRUE(f.DropsStatement("set password for u = 'x'"));
  ASSERT_TRUE(f.Set("canal.instance.filter.query.dml", "true").ok());
  EXPECT_TRUE(f.DropsStatement("replace into t values (1)"));
  EXPECT_FALSE(f.DropsStatement("SAVEPOINT a"));
  ASSERT_TRUE(f.Set("canal.instance.filter.transaction.entry", "true").ok());
  EXPECT_TRUE(f.DropsTransactionEntries());
  ASSERT_TRUE(f.Set("canal.instance.filter.dml.update", "false").ok());
  EXPECT_FALSE(f.DropsRows(binlog::RowsKind::kUpdate));
}

TEST(EventTypeFilter, BadValuesAndUnknownKeysAreErrors) {
  EventTypeFilter f;
  Status s = f.Set("canal.instance.filter.dml.insert", "yes");
  EXPECT_TRUE(s.code() == Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("canal.instance.filter.dml.insert = 'yes': expected true or false"), std::string::npos);
  EXPECT_TRUE(f.Set("canal.instance.filter.regex", "true").IsNotFound());
}

TEST(EventTypeFilter, StatementKinds) {
  EXPECT_EQ(ClassifyStatementKind("CREATE USER u"), StatementKind::kDcl);
  EXPECT_EQ(ClassifyStatementKind("create table t (a int)"), StatementKind::kDdl);
  EXPECT_EQ(ClassifyStatementKind("TRUNCATE t"), StatementKind::kDdl);
  EXPECT_EQ(ClassifyStatementKind("UPDATE t SET a = 1"), StatementKind::kDml);
  EXPECT_EQ(ClassifyStatementKind("LOAD DATA INFILE 'x' INTO TABLE t"), StatementKind::kDml);
  EXPECT_EQ(ClassifyStatementKind("BEGIN"), StatementKind::kOther);
  EXPECT_EQ(ClassifyStatementKind(""), StatementKind::kOther);
}

}  // namespace
}  // namespace canal::sink
