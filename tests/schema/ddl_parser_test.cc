#include "canal/schema/ddl.h"

#include <gtest/gtest.h>

namespace canal::schema {
namespace {

DdlStatement Parse(std::string_view sql, std::string_view db = "shop") {
  DdlStatement d;
  Status s = ParseDdl(sql, db, LexerOptions{}, &d);
  EXPECT_TRUE(s.ok()) << sql << ": " << s.ToString();
  return d;
}

TEST(DdlParser, ColumnTypesAsInformationSchemaNamesThem) {
  const DdlStatement d = Parse(
      "CREATE TABLE t (a INTEGER UNSIGNED, b BOOL, c DEC(5,1), d FLOAT(30), e DOUBLE PRECISION, f INT8, "
      "g NUMERIC, h CHAR, i VARBINARY(3), j LONG, k JSON, l ENUM('x','y'), m DATETIME(6), n SERIAL)");
  ASSERT_EQ(d.kind, DdlStatement::Kind::kCreateTable);
  ASSERT_EQ(d.columns.size(), 14u);
  EXPECT_EQ(d.columns[0].type, "int");
  EXPECT_TRUE(d.columns[0].is_unsigned);
  EXPECT_EQ(d.columns[1].type, "tinyint");
  EXPECT_EQ(d.columns[2].type, "decimal");
  EXPECT_EQ(d.columns[2].precision, 5);
  EXPECT_EQ(d.columns[2].scale, 1);
  EXPECT_EQ(d.columns[3].type, "double");
  EXPECT_EQ(d.columns[4].type, "double");
  EXPECT_EQ(d.columns[5].type, "bigint");
  EXPECT_EQ(d.columns[6].precision, 10);
  EXPECT_EQ(d.columns[7].length, 1);
  EXPECT_EQ(d.columns[8].charset, "binary");
  EXPECT_EQ(d.columns[9].type, "mediumtext");
  EXPECT_EQ(d.columns[10].type, "longtext");  // MariaDB's JSON
  EXPECT_EQ(d.columns[11].labels.size(), 2u);
  EXPECT_EQ(d.columns[12].precision, 6);
  EXPECT_TRUE(d.columns[13].is_unsigned);
  EXPECT_FALSE(d.columns[13].nullable);
  LexerOptions mysql;
  mysql.mariadb = false;
  DdlStatement m;
  ASSERT_TRUE(ParseDdl("CREATE TABLE t (k JSON)", "db", mysql, &m).ok());
  EXPECT_EQ(m.columns[0].type, "json");
}

TEST(DdlParser, NamesQualifiedQuotedAndDefaulted) {
  DdlStatement d = Parse("ALTER TABLE `my db`.`t``1` ADD x INT");
  EXPECT_EQ(d.table.db, "my db");
  EXPECT_EQ(d.table.name, "t`1");
  d = Parse("ALTER TABLE t ADD x INT", "dflt");
  EXPECT_EQ(d.table.db, "dflt");
  d = Parse("RENAME TABLE a TO x.b, c TO d");
  ASSERT_EQ(d.renames.size(), 2u);
  EXPECT_EQ(d.renames[0].second.db, "x");
  EXPECT_EQ(d.renames[1].first.db, "shop");
  DdlStatement none;
  const Status s = ParseDdl("ALTER TABLE t ADD x INT", "", LexerOptions{}, &none);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("no default database"), std::string::npos);
}

TEST(DdlParser, PositionsAndMultipleClauses) {
  const DdlStatement d = Parse("ALTER TABLE t ADD a INT FIRST, MODIFY b INT AFTER a, CHANGE c d TEXT, DROP e");
  ASSERT_EQ(d.ops.size(), 4u);
  EXPECT_EQ(d.ops[0].position.kind, ColumnPosition::Kind::kFirst);
  EXPECT_EQ(d.ops[1].position.kind, ColumnPosition::Kind::kAfter);
  EXPECT_EQ(d.ops[1].position.after, "a");
  EXPECT_EQ(d.ops[1].name, "b");
  EXPECT_EQ(d.ops[2].name, "c");
  EXPECT_EQ(d.ops[2].column.name, "d");
  EXPECT_EQ(d.ops[3].kind, AlterOp::Kind::kDropColumn);
}

TEST(DdlParser, VersionedCommentsFollowTheServer) {
  LexerOptions old;
  old.server_version = 50700;
  DdlStatement d;
  ASSERT_TRUE(ParseDdl("ALTER TABLE t ADD a INT /*!80000 , ADD b INT */", "s", old, &d).ok());
  EXPECT_EQ(d.ops.size(), 1u);
  ASSERT_TRUE(ParseDdl("ALTER TABLE t ADD a INT /*!50100 , ADD b INT */", "s", old, &d).ok());
  EXPECT_EQ(d.ops.size(), 2u);
}

TEST(DdlParser, ErrorsNameWhereTheyStopped) {
  DdlStatement d;
  Status s = ParseDdl("ALTER TABLE t1 ADD COLUMN c FANCYTYPE", "s", LexerOptions{}, &d);
  EXPECT_EQ(s.code(), Status::Code::kNotSupported);
  EXPECT_NE(s.ToString().find("unknown data type at offset 28 near 'FANCYTYPE'"), std::string::npos) << s.ToString();
  s = ParseDdl("ALTER TABLE t1 ADD c INT, FROB", "s", LexerOptions{}, &d);
  EXPECT_NE(s.ToString().find("unknown ALTER TABLE clause"), std::string::npos) << s.ToString();
  s = ParseDdl("CREATE TABLE t ('x' INT)", "s", LexerOptions{}, &d);
  EXPECT_NE(s.ToString().find("expected a column name"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace canal::schema
