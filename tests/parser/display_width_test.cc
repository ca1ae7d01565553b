// WithDefaultDisplayWidth: a schema history's type text for integers and YEAR
// declared without a width gets the width MariaDB's COLUMN_TYPE shows, which
// is what Canal sends as mysqlType (found by the value oracle on MINIMAL
// metadata: `int` where the database says `int(11)`).
#include <gtest/gtest.h>

#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {
namespace {

TEST(WithDefaultDisplayWidth, IntegersAndYearGetTheServersWidth) {
  EXPECT_EQ(WithDefaultDisplayWidth("tinyint"), "tinyint(4)");
  EXPECT_EQ(WithDefaultDisplayWidth("tinyint unsigned"), "tinyint(3) unsigned");
  EXPECT_EQ(WithDefaultDisplayWidth("smallint"), "smallint(6)");
  EXPECT_EQ(WithDefaultDisplayWidth("smallint unsigned"), "smallint(5) unsigned");
  EXPECT_EQ(WithDefaultDisplayWidth("mediumint"), "mediumint(9)");
  EXPECT_EQ(WithDefaultDisplayWidth("mediumint unsigned"), "mediumint(8) unsigned");
  EXPECT_EQ(WithDefaultDisplayWidth("int"), "int(11)");
  EXPECT_EQ(WithDefaultDisplayWidth("int unsigned zerofill"), "int(10) unsigned zerofill");
  EXPECT_EQ(WithDefaultDisplayWidth("bigint"), "bigint(20)");
  EXPECT_EQ(WithDefaultDisplayWidth("bigint unsigned"), "bigint(20) unsigned");
  EXPECT_EQ(WithDefaultDisplayWidth("year"), "year(4)");
}

TEST(WithDefaultDisplayWidth, DeclaredWidthsAndOtherTypesStayAsTheyAre) {
  EXPECT_EQ(WithDefaultDisplayWidth("tinyint(1)"), "tinyint(1)");
  EXPECT_EQ(WithDefaultDisplayWidth("int(5) unsigned"), "int(5) unsigned");
  EXPECT_EQ(WithDefaultDisplayWidth("year(4)"), "year(4)");
  EXPECT_EQ(WithDefaultDisplayWidth("integer"), "integer");  // not a COLUMN_TYPE spelling: left alone
  EXPECT_EQ(WithDefaultDisplayWidth("inet6"), "inet6");
  EXPECT_EQ(WithDefaultDisplayWidth("varchar(10)"), "varchar(10)");
  EXPECT_EQ(WithDefaultDisplayWidth("decimal(10,2) unsigned"), "decimal(10,2) unsigned");
  EXPECT_EQ(WithDefaultDisplayWidth(""), "");
}

}  // namespace
}  // namespace canal::binlog
