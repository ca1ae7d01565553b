#include "canal/schema/history_log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace canal::schema {
namespace {

HistoryRecord Rec(std::string file, uint64_t position, std::string sql) {
  HistoryRecord r;
  r.at.file = std::move(file);
  r.at.position = position;
  r.db = "shop";
  r.sql = std::move(sql);
  r.ts = 1000 + static_cast<uint32_t>(position % 7);
  return r;
}

HistoryLog Sample() {
  SchemaHistory h;
  EXPECT_TRUE(h.ApplySql("CREATE TABLE t (id INT PRIMARY KEY, x INT, e ENUM('a','b''c'), s VARCHAR(3) CHARSET gbk)",
                         "shop")
                  .ok());
  HistoryLog log;
  log.SetSnapshot({"mysql-bin.000009", 400}, h);
  EXPECT_TRUE(log.Append(Rec("mysql-bin.000009", 500, "ALTER TABLE t ADD y INT FIRST")));
  EXPECT_TRUE(log.Append(Rec("mysql-bin.000010", 120, "ALTER TABLE t DROP x")));
  return log;
}

std::string Names(const SchemaHistory& h) {
  std::string s;
  for (const Column& c : h.Find("shop", "t")->columns) s += c.name + ",";
  return s;
}

TEST(HistoryLog, RebuildsAsOfAnyPositionAfterTheSnapshot) {
  const HistoryLog log = Sample();
  SchemaHistory a, b, c, d;
  ASSERT_TRUE(log.Rebuild({"mysql-bin.000009", 450}, &a).ok());
  EXPECT_EQ(Names(a), "id,x,e,s,");
  ASSERT_TRUE(log.Rebuild({"mysql-bin.000009", 501}, &b).ok());
  EXPECT_EQ(Names(b), "y,id,x,e,s,");
  ASSERT_TRUE(log.Rebuild({"mysql-bin.000010", 120}, &c).ok());  // the record at the start is not applied yet
  EXPECT_EQ(Names(c), "y,id,x,e,s,");
  ASSERT_TRUE(log.Rebuild({}, &d).ok());
  EXPECT_EQ(Names(d), "y,id,e,s,");
}

TEST(HistoryLog, AppendKeepsBinlogOrderAndSkipsWhatItHas) {
  HistoryLog log = Sample();
  EXPECT_FALSE(log.Append(Rec("mysql-bin.000009", 500, "ALTER TABLE t ADD y INT FIRST")));  // read again
  EXPECT_FALSE(log.Append(Rec("mysql-bin.000008", 9, "ALTER TABLE t ADD z INT")));        // before
  EXPECT_TRUE(log.Append(Rec("mysql-bin.000100", 4, "ALTER TABLE t ADD z INT")));  // 100 > 010 by number
  EXPECT_TRUE(PointBefore({"mysql-bin.999999", 9}, {"mysql-bin.1000000", 4}));
}

// The tables are written by hand (thousands of them, rewritten after each
// DDL): names that need escaping, UTF-8, labels and every optional field
// come back equal.
TEST(HistoryLog, TablesNeedingEscapesRoundTrip) {
  HistoryLog log;
  log.snapshot_at = {"mysql-bin.000001", 4};
  TableSchema t;
  t.db = "we\"ird\\db";
  t.name = "t\tab\u00e9\xe4\xb8\xad";
  t.charset = "utf8mb4";
  Column a;
  a.name = "quote\"d";
  a.type = "enum";
  a.labels = {"x", "it's", "back\\slash", "\xc3\xa9t\xc3\xa9", ""};
  a.is_key = true;
  a.nullable = false;
  a.charset = "utf8mb4";
  a.collation = "utf8mb4_bin";
  Column b;
  b.name = "d";
  b.type = "decimal";
  b.is_unsigned = true;
  b.precision = 12;
  b.scale = 2;
  Column c;
  c.name = "v";
  c.type = "varchar";
  c.length = 20;
  t.columns = {a, b, c};
  log.tables = {t, TableSchema{}};
  HistoryLog back;
  ASSERT_TRUE(HistoryLog::FromJson(log.ToJson(), &back).ok()) << log.ToJson();
  ASSERT_EQ(back.tables.size(), 2u);
  EXPECT_EQ(back.tables[0], log.tables[0]);
  EXPECT_EQ(back.tables[1], log.tables[1]);
}

TEST(HistoryLog, JsonRoundTripAndCompaction) {
  HistoryLog log = Sample();
  HistoryLog back;
  ASSERT_TRUE(HistoryLog::FromJson(log.ToJson(), &back).ok());
  EXPECT_EQ(back.snapshot_at, log.snapshot_at);
  EXPECT_EQ(back.records, log.records);
  ASSERT_EQ(back.tables.size(), 1u);
  EXPECT_EQ(back.tables[0], log.tables[0]);
  EXPECT_EQ(back.records[0].ts, 1003u);
  size_t folded = 9;
  ASSERT_TRUE(back.Compact({"mysql-bin.000010", 0}, /*older_than=*/1000, nullptr, {}, &folded).ok());
  EXPECT_EQ(folded, 0u);  // not old enough yet
  ASSERT_TRUE(back.Compact({"mysql-bin.000010", 0}, /*older_than=*/5000, nullptr, {}, &folded).ok());
  EXPECT_EQ(folded, 1u);  // the second record is after the start position
  EXPECT_EQ(back.records.size(), 1u);
  EXPECT_EQ(back.snapshot_at.ToString(), "mysql-bin.000009:501");
  SchemaHistory before_start;
  ASSERT_TRUE(back.Rebuild({"mysql-bin.000010", 0}, &before_start).ok());
  EXPECT_EQ(Names(before_start), "y,id,x,e,s,");
  SchemaHistory h;
  ASSERT_TRUE(back.Rebuild({}, &h).ok());
  EXPECT_EQ(Names(h), "y,id,e,s,");
}

TEST(HistoryLog, FilesAreReplacedWholeAndBadOnesAreErrors) {
  const std::string dir = std::filesystem::temp_directory_path() / ("canal-history-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/schema_history.json";
  HistoryLog none;
  EXPECT_TRUE(LoadHistoryFile(path, &none).IsNotFound());
  ASSERT_TRUE(SaveHistoryFile(path, Sample()).ok());
  HistoryLog back;
  ASSERT_TRUE(LoadHistoryFile(path, &back).ok());
  EXPECT_EQ(back.records.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  for (const char* bad : {"", "{", "[]", "{\"format\":\"other\"}",
                          "{\"format\":\"canal-schema-history/1\",\"snapshot_at\":{\"file\":1}}"}) {
    std::ofstream(path, std::ios::trunc) << bad;
    const Status s = LoadHistoryFile(path, &back);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << bad;
    EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
  }
  ASSERT_TRUE(SaveHistoryFile(dir + "/made/on/demand/h.json", Sample()).ok());
  const Status s = SaveHistoryFile(path + "/under-a-file.json", Sample());  // a file is no folder
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.ToString().find("under-a-file.json"), std::string::npos) << s.ToString();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace canal::schema
