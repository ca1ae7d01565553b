// The DDL parser and the history together: each statement form changes the
// column list as the server does.
#include "canal/schema/schema_history.h"

#include <gtest/gtest.h>

namespace canal::schema {
namespace {

std::string Names(const SchemaHistory& h, std::string_view db, std::string_view table) {
  const TableSchema* t = h.Find(db, table);
  if (t == nullptr) return "<none>";
  std::string s;
  for (const Column& c : t->columns) {
    if (!s.empty()) s += ',';
    s += c.name;
  }
  return s;
}

void Exec(SchemaHistory* h, std::string_view sql, std::string_view db = "shop") {
  Status s = h->ApplySql(sql, db);
  ASSERT_TRUE(s.ok()) << sql << ": " << s.ToString();
}

TEST(SchemaHistory, AlterClausesMoveColumnsAsTheServerDoes) {
  SchemaHistory h;
  Exec(&h, "CREATE TABLE t (id INT PRIMARY KEY, x INT, c INT) DEFAULT CHARSET=latin1");
  EXPECT_EQ(Names(h, "shop", "t"), "id,x,c");
  Exec(&h, "ALTER TABLE t MODIFY c INT AFTER id");
  EXPECT_EQ(Names(h, "shop", "t"), "id,c,x");
  Exec(&h, "/* why */ ALTER TABLE `shop`.t ADD COLUMN d VARCHAR(10) FIRST, DROP x, CHANGE c cc BIGINT UNSIGNED");
  EXPECT_EQ(Names(h, "shop", "t"), "d,id,cc");
  const TableSchema* t = h.Find("shop", "t");
  EXPECT_EQ(t->columns[0].charset, "latin1");
  EXPECT_EQ(t->columns[2].type, "bigint");
  EXPECT_TRUE(t->columns[2].is_unsigned);
  EXPECT_TRUE(t->columns[1].is_key);
  Exec(&h, "ALTER TABLE t RENAME COLUMN d TO dd, ADD (e ENUM('a','b''c'), f SET('x')), DROP PRIMARY KEY");
  EXPECT_EQ(Names(h, "shop", "t"), "dd,id,cc,e,f");
  t = h.Find("shop", "t");
  EXPECT_FALSE(t->columns[1].is_key);
  EXPECT_EQ(t->columns[3].labels, (std::vector<std::string>{"a", "b'c"}));
  Exec(&h, "ALTER TABLE t ADD PRIMARY KEY (cc, id), ALGORITHM=INPLACE, LOCK=NONE");
  t = h.Find("shop", "t");
  EXPECT_TRUE(t->columns[1].is_key && t->columns[2].is_key && !t->columns[0].is_key);
  Exec(&h, "ALTER TABLE t ALTER COLUMN dd SET DEFAULT 'x', ALTER cc DROP DEFAULT, ENGINE=InnoDB");
  EXPECT_EQ(Names(h, "shop", "t"), "dd,id,cc,e,f");
}

// Found by the randomized test against MariaDB: a column added and then
// modified (no position) in one statement ends up last.
TEST(SchemaHistory, AColumnAddedThenModifiedInOneStatementGoesLast) {
  SchemaHistory h;
  Exec(&h, "CREATE TABLE t (id INT, a INT, b INT)");
  Exec(&h, "ALTER TABLE t ADD c INT AFTER id, MODIFY c TINYINT, ADD d INT AFTER id");
  EXPECT_EQ(Names(h, "shop", "t"), "id,d,a,b,c");
  Exec(&h, "ALTER TABLE t MODIFY a TINYINT, ADD e INT AFTER id");
  EXPECT_EQ(Names(h, "shop", "t"), "id,e,d,a,b,c");
}

// Found by the randomized test against MariaDB: a column clause's IF [NOT]
// EXISTS looks at the table before the statement, not after earlier clauses.
TEST(SchemaHistory, IfExistsInAnAlterLooksAtTheTableBeforeTheStatement) {
  struct Case {
    const char* alter;
    const char* columns;  // what MariaDB 10.11 leaves
  };
  const Case cases[] = {
      {"ADD COLUMN c INT, DROP COLUMN IF EXISTS c", "id,a,b,c"},
      {"DROP COLUMN a, DROP COLUMN IF EXISTS a", "id,b"},
      {"ADD COLUMN c INT, ADD COLUMN IF NOT EXISTS c INT", "id,a,b,c"},
      {"DROP COLUMN a, ADD COLUMN IF NOT EXISTS a BIGINT", "id,b"},
      {"RENAME COLUMN a TO z, CHANGE COLUMN IF EXISTS z y INT", "id,z,b"},
      {"RENAME COLUMN a TO z, RENAME COLUMN IF EXISTS z TO w", "id,z,b"},
      {"CHANGE a z INT, DROP COLUMN IF EXISTS z", "id,z,b"},
      {"ADD COLUMN c INT, CHANGE COLUMN IF EXISTS c d INT", "id,a,b,c"},
      {"ADD COLUMN c INT, MODIFY c BIGINT", "id,a,b,c"},
      {"DROP COLUMN IF EXISTS nope, CHANGE COLUMN IF EXISTS a a2 INT FIRST", "a2,id,b"},
  };
  for (const Case& c : cases) {
    SchemaHistory h;
    Exec(&h, "CREATE TABLE t (id INT, a INT, b INT)");
    Exec(&h, std::string("ALTER TABLE t ") + c.alter);
    EXPECT_EQ(Names(h, "shop", "t"), c.columns) << c.alter;
  }
}

TEST(SchemaHistory, CharsetsFollowTableDatabaseAndConvert) {
  SchemaHistory h(nullptr, "latin1");
  Exec(&h, "CREATE DATABASE d DEFAULT CHARACTER SET gbk");
  Exec(&h, "CREATE TABLE d.t (a VARCHAR(5), b TEXT, c CHAR(2) CHARACTER SET big5, e BLOB, f INT, "
          "g VARCHAR(3) COLLATE cp1251_bin, h TEXT(70000))");
  const TableSchema* t = h.Find("d", "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->columns[0].charset, "gbk");
  EXPECT_EQ(t->columns[2].charset, "big5");
  EXPECT_EQ(t->columns[3].charset, "binary");
  EXPECT_EQ(t->columns[4].charset, "");
  EXPECT_EQ(t->columns[5].charset, "cp1251");
  EXPECT_EQ(t->columns[6].type, "mediumtext");
  Exec(&h, "ALTER TABLE d.t CONVERT TO CHARACTER SET utf8mb4");
  t = h.Find("d", "t");
  EXPECT_EQ(t->columns[0].charset, "utf8mb4");
  EXPECT_EQ(t->columns[1].type, "mediumtext");  // TEXT grows to keep its characters
  EXPECT_EQ(t->columns[3].charset, "binary");
  Exec(&h, "ALTER TABLE d.t DEFAULT CHARSET = sjis");
  Exec(&h, "ALTER TABLE d.t ADD z CHAR(1)");
  EXPECT_EQ(h.Find("d", "t")->columns.back().charset, "sjis");
}

TEST(SchemaHistory, RenameDropLikeAndDatabases) {
  SchemaHistory h;
  Exec(&h, "CREATE TABLE a (x INT)");
  Exec(&h, "CREATE TABLE b (y INT)");
  Exec(&h, "RENAME TABLE a TO tmp, b TO a, tmp TO b");
  EXPECT_EQ(Names(h, "shop", "a"), "y");
  EXPECT_EQ(Names(h, "shop", "b"), "x");
  Exec(&h, "CREATE TABLE IF NOT EXISTS a (other INT)");
  EXPECT_EQ(Names(h, "shop", "a"), "y");
  Exec(&h, "CREATE TABLE other.c LIKE a");
  EXPECT_EQ(Names(h, "other", "c"), "y");
  Exec(&h, "RENAME TABLE other.c TO shop.c");
  EXPECT_EQ(Names(h, "shop", "c"), "y");
  EXPECT_EQ(Names(h, "other", "c"), "<none>");
  Exec(&h, "ALTER TABLE c RENAME TO d, ADD z INT");
  EXPECT_EQ(Names(h, "shop", "d"), "y,z");
  Exec(&h, "DROP TABLE IF EXISTS a, `d` /* generated by server */");
  EXPECT_EQ(Names(h, "shop", "a"), "<none>");
  EXPECT_EQ(Names(h, "shop", "d"), "<none>");
  Exec(&h, "TRUNCATE b");
  EXPECT_EQ(Names(h, "shop", "b"), "x");
  Exec(&h, "DROP DATABASE shop");
  EXPECT_TRUE(h.tables().empty());
}

TEST(SchemaHistory, TablesOutsideTheScopeAreTrackedAndNeverFail) {
  SchemaHistory h([](std::string_view db, std::string_view table) { return db == "shop" && table == "t"; });
  Exec(&h, "CREATE TABLE t (id INT)");
  Exec(&h, "ALTER TABLE other ADD c INT");  // never seen, out of scope: unknown
  EXPECT_EQ(h.Find("shop", "other"), nullptr);
  EXPECT_NE(h.Unknown("shop", "other"), "");
  Exec(&h, "CREATE TABLE other (a INT)");
  EXPECT_EQ(Names(h, "shop", "other"), "a");
  EXPECT_EQ(h.Unknown("shop", "other"), "");
  Exec(&h, "ALTER TABLE other DROP nope");  // contradicts its history: unknown, no error
  EXPECT_EQ(h.Find("shop", "other"), nullptr);
  Exec(&h, "RENAME TABLE t TO t2");  // leaves the scope, still tracked
  EXPECT_EQ(Names(h, "shop", "t2"), "id");
  EXPECT_TRUE(h.ApplySql("ALTER TABLE t2 DROP nope", "shop").ok());
  EXPECT_EQ(h.Find("shop", "t2"), nullptr);
}

// gh-ost and pt-online-schema-change build the new table outside the filter
// and swap it in with one RENAME (docs/schema-history.md).
TEST(SchemaHistory, OnlineSchemaChangeShadowTableRenamedIntoTheScope) {
  SchemaHistory h([](std::string_view db, std::string_view table) { return db == "shop" && table == "t"; });
  Exec(&h, "CREATE TABLE t (id INT PRIMARY KEY, a INT, z CHAR(3))");
  Exec(&h, "CREATE TABLE _t_ghc (id BIGINT, hint VARCHAR(64), value VARCHAR(255))");
  Exec(&h, "CREATE TABLE shop._t_gho LIKE shop.t");
  Exec(&h, "ALTER TABLE _t_gho ADD COLUMN b INT AFTER id, DROP COLUMN z, ADD COLUMN z2 VARCHAR(5)");
  Exec(&h, "RENAME TABLE shop.t TO shop._t_del, shop._t_gho TO shop.t");
  EXPECT_EQ(Names(h, "shop", "t"), "id,b,a,z2");
  EXPECT_EQ(Names(h, "shop", "_t_del"), "id,a,z");
  Exec(&h, "DROP TABLE IF EXISTS `_t_del`");
  Exec(&h, "DROP TABLE IF EXISTS `_t_ghc`");
  // pt-osc: another database's shadow, ALTER ... RENAME TO, then back.
  Exec(&h, "CREATE TABLE other._t_new (id INT, c DATE)");
  Exec(&h, "ALTER TABLE other._t_new ADD d INT, RENAME TO shop._t_new");
  Exec(&h, "RENAME TABLE t TO _t_old, _t_new TO t");
  EXPECT_EQ(Names(h, "shop", "t"), "id,c,d");
  EXPECT_TRUE(h.TakeNotes().empty());
}

TEST(SchemaHistory, RenameOfATableTheHistoryLacksLeavesTheDestinationUnknownWithTheReason) {
  SchemaHistory h([](std::string_view db, std::string_view table) { return db == "shop" && table == "t"; });
  Exec(&h, "CREATE TABLE t (id INT)");
  Exec(&h, "RENAME TABLE t TO _t_del, _t_gho TO t");  // a history written when only t was tracked
  EXPECT_EQ(h.Find("shop", "t"), nullptr);
  EXPECT_NE(h.Unknown("shop", "t").find("renamed from `shop`.`_t_gho`, which the history does not hold"),
            std::string::npos) << h.Unknown("shop", "t");
  EXPECT_EQ(h.TakeNotes().size(), 1u);
  Exec(&h, "ALTER TABLE t ADD c INT");  // still unknown, keeps its reason
  EXPECT_NE(h.Unknown("shop", "t").find("_t_gho"), std::string::npos);
  Exec(&h, "CREATE TABLE u LIKE t");
  EXPECT_NE(h.Unknown("shop", "u").find("created LIKE `shop`.`t`"), std::string::npos) << h.Unknown("shop", "u");
  Exec(&h, "DROP TABLE t");
  EXPECT_EQ(h.Unknown("shop", "t"), "");
  Exec(&h, "CREATE TABLE t (x INT)");
  EXPECT_EQ(Names(h, "shop", "t"), "x");
}

TEST(SchemaHistory, SwapOfTwoTablesKeepsEachOnesColumns) {
  SchemaHistory h;
  Exec(&h, "CREATE TABLE a (a1 INT, a2 INT)");
  Exec(&h, "CREATE TABLE b (b1 INT)");
  Exec(&h, "RENAME TABLE a TO tmp, b TO a, tmp TO b");
  EXPECT_EQ(Names(h, "shop", "a"), "b1");
  EXPECT_EQ(Names(h, "shop", "b"), "a1,a2");
  EXPECT_EQ(h.Find("shop", "tmp"), nullptr);
}

TEST(SchemaHistory, ExchangePartitionMovesRowsNotDefinitions) {
  SchemaHistory h;
  Exec(&h, "CREATE TABLE p (id INT, v INT) PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10))");
  Exec(&h, "CREATE TABLE q (id INT, v INT)");
  Exec(&h, "ALTER TABLE p EXCHANGE PARTITION p0 WITH TABLE q");
  EXPECT_EQ(Names(h, "shop", "p"), "id,v");
  EXPECT_EQ(Names(h, "shop", "q"), "id,v");
  EXPECT_TRUE(h.TakeNotes().empty());
}

TEST(SchemaHistory, DdlNotUnderstoodLeavesItsTableUnknownInsteadOfFailing) {
  SchemaHistory h;
  Exec(&h, "CREATE TABLE v (id INT)");
  Exec(&h, "ALTER TABLE v ADD SYSTEM VERSIONING");  // hidden row_start/row_end
  EXPECT_EQ(h.Find("shop", "v"), nullptr);
  EXPECT_NE(h.Unknown("shop", "v").find("not understood"), std::string::npos) << h.Unknown("shop", "v");
  Exec(&h, "CREATE TABLE w (id INT) WITH SYSTEM VERSIONING");
  EXPECT_EQ(h.Find("shop", "w"), nullptr);
  Exec(&h, "CREATE TABLE s SELECT * FROM v");  // statement-format CREATE ... SELECT
  EXPECT_EQ(h.Find("shop", "s"), nullptr);
  EXPECT_NE(h.Unknown("shop", "s"), "");
  // Row-format binlogs log CREATE ... SELECT with its columns spelled out.
  Exec(&h, "CREATE TABLE `s2` (\n  `b` int(11) DEFAULT NULL,\n  `id` int(11) NOT NULL\n)");
  EXPECT_EQ(Names(h, "shop", "s2"), "b,id");
}

TEST(SchemaHistory, ContradictionsAndGapsAreErrorsThatChangeNothing) {
  SchemaHistory h;
  Exec(&h, "CREATE TABLE t (id INT, x INT)");
  EXPECT_TRUE(h.ApplySql("ALTER TABLE t ADD y INT, DROP nope", "shop").code() == Status::Code::kInvalidArgument);
  EXPECT_EQ(Names(h, "shop", "t"), "id,x");  // the ADD before the failing clause is not kept
  EXPECT_TRUE(h.ApplySql("ALTER TABLE t ADD z INT AFTER nope", "shop").code() == Status::Code::kInvalidArgument);
  // A table the history lacks is not an error: it stays unknown (never guessed).
  EXPECT_TRUE(h.ApplySql("ALTER TABLE unknown ADD z INT", "shop").ok());
  EXPECT_EQ(h.Find("shop", "unknown"), nullptr);
  EXPECT_TRUE(h.ApplySql("CREATE TABLE u LIKE unknown", "shop").ok());
  EXPECT_EQ(h.Find("shop", "u"), nullptr);
  Exec(&h, "ALTER TABLE t DROP COLUMN IF EXISTS nope, ADD COLUMN IF NOT EXISTS x INT");
  EXPECT_EQ(Names(h, "shop", "t"), "id,x");
}

}  // namespace
}  // namespace canal::schema
