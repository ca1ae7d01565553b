// ApplySchemaProvider refuses a schema whose column types cannot be what the
// binlog's TABLE_MAP says (the table changed since the event was written), and
// accepts changes within a type family (lengths, precisions, text vs blob).
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/binlog/table_map_decoder.h"

namespace canal::binlog {
namespace {

class FakeProvider : public TableSchemaProvider {
 public:
  Status GetColumns(std::string_view, std::string_view, std::vector<SchemaColumn>* columns) override {
    *columns = columns_;
    return Status::OK();
  }
  void Invalidate(std::string_view, std::string_view) override {}

  void Add(std::string name, std::string data_type, bool key = false) {
    SchemaColumn c;
    c.name = std::move(name);
    c.data_type = std::move(data_type);
    c.is_key = key;
    columns_.push_back(std::move(c));
  }

 private:
  std::vector<SchemaColumn> columns_;
};

ColumnInfo Column(ColumnType type, ColumnType real_type = ColumnType::kNull) {
  ColumnInfo c;
  c.type = type;
  c.real_type = real_type == ColumnType::kNull ? type : real_type;
  return c;
}

TableMap Table(std::vector<ColumnInfo> columns) {
  TableMap t;
  t.table_id = 7;
  t.db = "shop";
  t.table = "orders";
  t.columns = std::move(columns);
  for (size_t i = 0; i < t.columns.size(); ++i) t.columns[i].name = "@" + std::to_string(i + 1);
  return t;
}

// Applies a one-column schema of `data_type` to a one-column binlog table.
Status ApplyOne(const std::string& data_type, ColumnInfo binlog_column) {
  FakeProvider p;
  p.Add("c", data_type);
  TableMap t = Table({binlog_column});
  return ApplySchemaProvider(&p, &t);
}

TEST(SchemaMismatch, MatchingTypesAreLabelled) {
  FakeProvider p;
  p.Add("id", "bigint", true);
  p.Add("name", "varchar");
  p.Add("status", "enum");
  p.Add("at", "datetime");
  p.Add("price", "decimal");
  TableMap t = Table({Column(ColumnType::kLongLong), Column(ColumnType::kVarchar),
                      Column(ColumnType::kString, ColumnType::kEnum), Column(ColumnType::kDateTime2),
                      Column(ColumnType::kNewDecimal)});
  Status s = ApplySchemaProvider(&p, &t);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(t.names_known);
  EXPECT_EQ(t.columns[0].name, "id");
  EXPECT_TRUE(t.columns[0].is_key);
  EXPECT_EQ(t.columns[4].name, "price");
}

TEST(SchemaMismatch, VarcharInTheSchemaButLongInTheBinlogIsRefusedNamingEverything) {
  FakeProvider p;
  p.Add("id", "int", true);
  p.Add("name", "varchar");
  TableMap t = Table({Column(ColumnType::kLong), Column(ColumnType::kLong)});
  Status s = ApplySchemaProvider(&p, &t);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  const std::string m(s.message());
  EXPECT_NE(m.find("`shop`.`orders`"), std::string::npos) << m;
  EXPECT_NE(m.find("column 2 `name` is varchar"), std::string::npos) << m;
  EXPECT_NE(m.find("TABLE_MAP has type LONG"), std::string::npos) << m;
  EXPECT_NE(m.find("refusing to label values with the wrong columns"), std::string::npos) << m;
  EXPECT_EQ(s.subcode(), kErrorSchemaMismatch) << "the kind the parser adds the fix to";
}

TEST(SchemaMismatch, ARefusedSchemaLeavesThePositionalNamesAlone) {
  FakeProvider p;
  p.Add("id", "int", true);
  p.Add("name", "varchar");
  TableMap t = Table({Column(ColumnType::kLong), Column(ColumnType::kLong)});
  ASSERT_FALSE(ApplySchemaProvider(&p, &t).ok());
  EXPECT_FALSE(t.names_known);
  EXPECT_EQ(t.columns[0].name, "@1");
  EXPECT_FALSE(t.columns[0].is_key);
}

TEST(SchemaMismatch, IntegerWidthsMustMatchExactly) {
  const std::pair<const char*, ColumnType> widths[] = {{"tinyint", ColumnType::kTiny},
                                                       {"smallint", ColumnType::kShort},
                                                       {"mediumint", ColumnType::kInt24},
                                                       {"int", ColumnType::kLong},
                                                       {"bigint", ColumnType::kLongLong}};
  for (const auto& [name, type] : widths) {
    for (const auto& [other_name, other_type] : widths) {
      Status s = ApplyOne(name, Column(other_type));
      EXPECT_EQ(s.ok(), type == other_type) << name << " vs binlog " << other_name << ": " << s.ToString();
    }
  }
}

TEST(SchemaMismatch, TinyintAfterAnAlterToIntIsStillAMismatch) {
  Status s = ApplyOne("int", Column(ColumnType::kTiny));
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(std::string(s.message()).find("is int but the binlog's TABLE_MAP has type TINY"), std::string::npos)
      << s.ToString();
}

TEST(SchemaMismatch, ChangesWithinAFamilyAreAccepted) {
  EXPECT_TRUE(ApplyOne("varchar", Column(ColumnType::kString)).ok());     // CHAR -> VARCHAR
  EXPECT_TRUE(ApplyOne("text", Column(ColumnType::kVarchar)).ok());       // VARCHAR -> TEXT
  EXPECT_TRUE(ApplyOne("mediumblob", Column(ColumnType::kBlob)).ok());
  EXPECT_TRUE(ApplyOne("varbinary", Column(ColumnType::kVarchar)).ok());
  EXPECT_TRUE(ApplyOne("double", Column(ColumnType::kFloat)).ok());
  EXPECT_TRUE(ApplyOne("timestamp", Column(ColumnType::kDateTime2)).ok());
  EXPECT_TRUE(ApplyOne("datetime", Column(ColumnType::kDateTime)).ok());   // pre-5.6 format
  EXPECT_TRUE(ApplyOne("time", Column(ColumnType::kTime2)).ok());
  EXPECT_TRUE(ApplyOne("date", Column(ColumnType::kNewDate)).ok());
  EXPECT_TRUE(ApplyOne("set", Column(ColumnType::kString, ColumnType::kEnum)).ok());
  EXPECT_TRUE(ApplyOne("numeric", Column(ColumnType::kNewDecimal)).ok());
}

TEST(SchemaMismatch, ChangesAcrossFamiliesAreRefused) {
  EXPECT_TRUE(ApplyOne("varchar", Column(ColumnType::kString, ColumnType::kEnum)).IsCorruption());
  EXPECT_TRUE(ApplyOne("enum", Column(ColumnType::kVarchar)).IsCorruption());
  EXPECT_TRUE(ApplyOne("enum", Column(ColumnType::kString)).IsCorruption());
  EXPECT_TRUE(ApplyOne("decimal", Column(ColumnType::kDouble)).IsCorruption());
  EXPECT_TRUE(ApplyOne("double", Column(ColumnType::kNewDecimal)).IsCorruption());
  EXPECT_TRUE(ApplyOne("datetime", Column(ColumnType::kLongLong)).IsCorruption());
  EXPECT_TRUE(ApplyOne("year", Column(ColumnType::kShort)).IsCorruption());
  EXPECT_TRUE(ApplyOne("smallint", Column(ColumnType::kYear)).IsCorruption());
  EXPECT_TRUE(ApplyOne("bit", Column(ColumnType::kTiny)).IsCorruption());
  EXPECT_TRUE(ApplyOne("json", Column(ColumnType::kVarchar)).IsCorruption());
  EXPECT_TRUE(ApplyOne("point", Column(ColumnType::kBlob)).IsCorruption());
  EXPECT_TRUE(ApplyOne("blob", Column(ColumnType::kGeometry)).IsCorruption());
  EXPECT_TRUE(ApplyOne("varchar", Column(ColumnType::kJson)).IsCorruption());
  EXPECT_TRUE(ApplyOne("int", Column(ColumnType::kVarchar)).IsCorruption());
}

TEST(SchemaMismatch, FlavourSpecificSpellingsAreRecognised) {
  EXPECT_TRUE(ApplyOne("json", Column(ColumnType::kJson)).ok());           // MySQL
  EXPECT_TRUE(ApplyOne("longtext", Column(ColumnType::kBlob)).ok());       // MariaDB JSON
  EXPECT_TRUE(ApplyOne("uuid", Column(ColumnType::kString)).ok());         // MariaDB 10.7+
  EXPECT_TRUE(ApplyOne("inet6", Column(ColumnType::kString)).ok());
  EXPECT_TRUE(ApplyOne("geomcollection", Column(ColumnType::kGeometry)).ok());  // MySQL 8
  EXPECT_TRUE(ApplyOne("geometrycollection", Column(ColumnType::kGeometry)).ok());
  EXPECT_TRUE(ApplyOne("INT", Column(ColumnType::kLong)).ok());           // case does not matter
  EXPECT_TRUE(ApplyOne("INT", Column(ColumnType::kTiny)).IsCorruption());
}

TEST(SchemaMismatch, AnUnknownOrMissingDataTypeIsNotJudged) {
  // A provider without types (or a type newer than this code) cannot be checked.
  EXPECT_TRUE(ApplyOne("", Column(ColumnType::kLong)).ok());
  EXPECT_TRUE(ApplyOne("some_future_type", Column(ColumnType::kBlob)).ok());
}

TEST(SchemaMismatch, TheFirstMismatchingColumnIsTheOneNamed) {
  FakeProvider p;
  p.Add("a", "int");
  p.Add("b", "tinyint");
  p.Add("c", "varchar");
  TableMap t = Table({Column(ColumnType::kLong), Column(ColumnType::kShort), Column(ColumnType::kLong)});
  Status s = ApplySchemaProvider(&p, &t);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(std::string(s.message()).find("column 2 `b` is tinyint"), std::string::npos) << s.ToString();
}

TEST(SchemaMismatch, ColumnCountIsStillCheckedFirst) {
  FakeProvider p;
  p.Add("a", "varchar");
  TableMap t = Table({Column(ColumnType::kLong), Column(ColumnType::kLong)});
  Status s = ApplySchemaProvider(&p, &t);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(std::string(s.message()).find("has 1 columns but the binlog's TABLE_MAP has 2"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(s.subcode(), kErrorSchemaMismatch);
}

}  // namespace
}  // namespace canal::binlog
