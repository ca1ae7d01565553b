#include "canal/snapshot/chunk_key.h"

#include <gtest/gtest.h>

namespace canal::snapshot {
namespace {

TableShape Shape(std::vector<TableColumn> columns, std::vector<TableIndex> indexes) {
  TableShape s;
  s.schema = "shop";
  s.table = "customer";
  s.columns = std::move(columns);
  s.indexes = std::move(indexes);
  return s;
}

TEST(ChunkKeyTest, PrimaryKeyWinsOverAnyUniqueIndex) {
  auto shape = Shape({{"email", "varchar", false}, {"id", "bigint", false}},
                     {{"uk_email", true, {"email"}}, {"PRIMARY", true, {"id"}}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kPrimary);
  EXPECT_EQ(key.columns, std::vector<size_t>{1});
  EXPECT_EQ(DescribeChunkKey(shape, key), "PRIMARY (id)");
}

TEST(ChunkKeyTest, CompositePrimaryKeyKeepsIndexOrderNotTableOrder) {
  auto shape = Shape({{"a", "int", false}, {"b", "datetime", false}, {"c", "varchar", false}},
                     {{"PRIMARY", true, {"c", "b"}}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.columns, (std::vector<size_t>{2, 1}));
  EXPECT_EQ(DescribeChunkKey(shape, key), "PRIMARY (c, b)");
}

TEST(ChunkKeyTest, IndexColumnNamesMatchCaseInsensitively) {
  auto shape = Shape({{"Id", "int", false}}, {{"PRIMARY", true, {"ID"}}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.columns, std::vector<size_t>{0});
}

TEST(ChunkKeyTest, WithoutPrimaryKeyTakesAUniqueIndexOverNotNullColumnsOnly) {
  auto shape = Shape({{"code", "varchar", true}, {"serial", "varchar", false}},
                     {{"uk_code", true, {"code"}}, {"uk_serial", true, {"serial"}}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kUniqueNotNull);
  EXPECT_EQ(key.index, "uk_serial") << "a nullable unique index can hold many NULLs";
  EXPECT_EQ(DescribeChunkKey(shape, key), "UNIQUE uk_serial (serial)");
}

TEST(ChunkKeyTest, PrefersFewerColumnsThenIntegersThenName) {
  auto shape = Shape({{"a", "varchar", false}, {"b", "int", false}, {"c", "varchar", false}, {"d", "int", false}},
                     {{"uk_ac", true, {"a", "c"}}, {"uk_c", true, {"c"}}, {"uk_b", true, {"b"}},
                      {"uk_a", true, {"a"}}, {"uk_d", true, {"d"}}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.index, "uk_b") << "one column, an integer, and before uk_d by name";
  // Shuffling the index order changes nothing: the choice is stable across starts.
  std::swap(shape.indexes[2], shape.indexes[4]);
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.index, "uk_b");
}

TEST(ChunkKeyTest, NonUniqueIndexesAreNeverAKey) {
  auto shape = Shape({{"a", "int", false}, {"b", "int", true}}, {{"ix_a", false, {"a"}}, {"uk_b", true, {"b"}}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kNone);
  EXPECT_TRUE(key.columns.empty());
  EXPECT_EQ(DescribeChunkKey(shape, key), "none (one consistent read)");
}

TEST(ChunkKeyTest, ATableWithoutIndexesIsReadWhole) {
  auto shape = Shape({{"payload", "blob", true}}, {});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kNone);
}

TEST(ChunkKeyTest, RefusesAnIndexNamingAMissingColumn) {
  auto shape = Shape({{"id", "int", false}}, {{"PRIMARY", true, {"gone"}}});
  ChunkKey key;
  Status s = ChooseChunkKey(shape, &key);
  ASSERT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("`shop`.`customer`"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("gone"), std::string_view::npos);
}

TEST(ChunkKeyTest, RefusesATableWithoutColumnsAndAnEmptyIndex) {
  ChunkKey key;
  EXPECT_FALSE(ChooseChunkKey(Shape({}, {}), &key).ok());
  EXPECT_FALSE(ChooseChunkKey(Shape({{"id", "int", false}}, {{"uk", true, {}}}), &key).ok());
}

TEST(ChunkKeyTest, EnumSetAndBitColumnsNeverCarryAKey) {
  // ENUM sorts by index but compares with a bound string by text: paging on it would skip rows.
  auto shape = Shape({{"kind", "enum", false}, {"id", "int", false}, {"flags", "bit", false}},
                     {{"PRIMARY", true, {"kind", "id"}}, {"uk_flags", true, {"flags"}}, {"uk_id", true, {"id"}}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kUniqueNotNull);
  EXPECT_EQ(key.index, "uk_id");
  shape.indexes.pop_back();
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kNone) << "no pageable index left: one consistent read";
  for (const char* t : {"ENUM", "set", "bit"}) EXPECT_FALSE(IsPageableKeyType(t)) << t;
  for (const char* t : {"int", "varchar", "datetime", "decimal", "varbinary"}) EXPECT_TRUE(IsPageableKeyType(t)) << t;
}

TEST(ChunkKeyTest, WholeColumnIndexesComeBeforePrefixOnes) {
  // PRIMARY KEY (url(100)) cannot be read in url order; the whole-column unique index can.
  auto shape = Shape({{"url", "text", false}, {"hash", "binary", false}},
                     {{"PRIMARY", true, {"url"}, true}, {"uk_hash", true, {"hash"}, false}});
  ChunkKey key;
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kUniqueNotNull);
  EXPECT_EQ(key.index, "uk_hash");
  shape.indexes.pop_back();
  ASSERT_TRUE(ChooseChunkKey(shape, &key).ok());
  EXPECT_EQ(key.kind, ChunkKey::Kind::kPrimary) << "a prefix primary key still pages exactly, only slower";
}

TEST(ChunkKeyTest, IntegerTypes) {
  for (const char* t : {"tinyint", "SMALLINT", "mediumint", "int", "bigint", "year"}) EXPECT_TRUE(IsIntegerType(t)) << t;
  for (const char* t : {"bit", "decimal", "varchar", "datetime", "double", "int2"}) EXPECT_FALSE(IsIntegerType(t)) << t;
}

}  // namespace
}  // namespace canal::snapshot
