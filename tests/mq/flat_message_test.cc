// The flat JSON against Canal's FlatMessage, field by field: member names and
// order, sqlType as ints, mysqlType as strings, es/ts as ms numbers, values as
// strings, NULL as null, `old` only with the changed columns of an UPDATE.
#include "canal/mq/flat_message.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "mq/entry_maker.h"

namespace canal::mq {
namespace {

using testing::Col;
using testing::Row;

std::string Json(const std::string& entry, int64_t id = 5, int64_t ts = 1700000009999) {
  FlatMessage m;
  bool change = false;
  Status s = BuildFlatMessage(entry, id, ts, &m, &change);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(change);
  std::string out;
  AppendFlatMessageJson(m, nullptr, &out);
  return out;
}

Col Id(const std::string& v, bool updated = false) {
  return {"id", v, false, true, updated, 4, "int(11)"};
}
Col Name(const std::string& v, bool updated = false, bool is_null = false) {
  return {"name", v, is_null, false, updated, 12, "varchar(32)"};
}
Col Score(const std::string& v, bool updated = false, bool is_null = false) {
  return {"score", v, is_null, false, updated, 3, "decimal(10,2)"};
}

TEST(FlatMessageTest, GoldenUpdate) {
  std::string entry = testing::RowEntry(
      "shop", "users", canal::entry::UPDATE,
      {Row{{Id("1"), Name("ann"), Score("1.50")}, {Id("1"), Name("anne", true), Score("1.50")}},
       Row{{Id("2"), Name("bob"), Score("", false, true)}, {Id("2"), Name("bob"), Score("2.00", true)}}});
  // The updated set accumulates across the rows of an entry, as in Canal.
  const std::string expected =
            R"j({"data":[{"id":"1","name":"anne","score":"1.50"},{"id":"2","name":"bob","score":"2.00"}],)j"
            R"j("database":"shop","es":1700000000123,"gtid":"","id":5,"isDdl":false,)j"
            R"j("mysqlType":{"id":"int(11)","name":"varchar(32)","score":"decimal(10,2)"},)j"
            R"j("old":[{"name":"ann"},{"name":"bob","score":null}],"pkNames":["id"],"sql":"",)j"
            R"j("sqlType":{"id":4,"name":12,"score":3},"table":"users","ts":1700000009999,"type":"UPDATE"})j";
  EXPECT_EQ(Json(entry), expected);
}

TEST(FlatMessageTest, FieldTypes) {
  std::string entry = testing::RowEntry("shop", "users", canal::entry::INSERT,
                                        {Row{{}, {Id("7"), Name("", false, true), Score("3.25")}}});
  nlohmann::json j = nlohmann::json::parse(Json(entry, 9, 1700000001000));
  EXPECT_TRUE(j["id"].is_number_integer());
  EXPECT_EQ(j["id"], 9);
  EXPECT_EQ(j["database"], "shop");
  EXPECT_EQ(j["table"], "users");
  EXPECT_EQ(j["type"], "INSERT");
  EXPECT_EQ(j["isDdl"], false);
  EXPECT_TRUE(j["es"].is_number_integer());
  EXPECT_EQ(j["es"], 1700000000123);
  EXPECT_EQ(j["ts"], 1700000001000);
  EXPECT_EQ(j["pkNames"], nlohmann::json::array({"id"}));
  EXPECT_TRUE(j["sqlType"]["id"].is_number_integer());
  EXPECT_EQ(j["sqlType"]["score"], 3);
  EXPECT_TRUE(j["mysqlType"]["id"].is_string());
  EXPECT_EQ(j["mysqlType"]["score"], "decimal(10,2)");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "7");  // values are strings, numbers included
  EXPECT_TRUE(j["data"][0]["name"].is_null());
  EXPECT_EQ(j["data"][0]["score"], "3.25");
  EXPECT_TRUE(j["old"].is_null());  // INSERT: no old
  EXPECT_EQ(j["sql"], "");
  EXPECT_EQ(j["gtid"], "");
}

TEST(FlatMessageTest, DeleteUsesTheBeforeImage) {
  std::string entry =
      testing::RowEntry("shop", "users", canal::entry::DELETE, {Row{{Id("3"), Name("cy"), Score("0.00")}, {}}});
  nlohmann::json j = nlohmann::json::parse(Json(entry));
  EXPECT_EQ(j["type"], "DELETE");
  EXPECT_EQ(j["data"][0]["name"], "cy");
  EXPECT_TRUE(j["old"].is_null());
}

TEST(FlatMessageTest, DdlHasNoRowMembers) {
  EXPECT_EQ(Json(testing::DdlEntry("shop", "users", "ALTER TABLE users ADD c INT"), 11, 1700000002000),
            R"j({"data":null,"database":"shop","es":1700000000456,"gtid":"","id":11,"isDdl":true,)j"
            R"j("mysqlType":null,"old":null,"pkNames":null,"sql":"ALTER TABLE users ADD c INT",)j"
            R"j("sqlType":null,"table":"users","ts":1700000002000,"type":"ALTER"})j");
}

TEST(FlatMessageTest, EscapesAndUnicode) {
  std::string entry = testing::RowEntry("shop", "users", canal::entry::INSERT,
                                        {Row{{}, {Id("1"), Name("q\"uo\\te\n\x01 \xE4\xB8\xAD")}}});
  std::string json = Json(entry);
  EXPECT_NE(json.find(R"j("name":"q\"uo\\te\n\u0001 中")j"), std::string::npos) << json;
  EXPECT_TRUE(nlohmann::json::accept(json));
}

TEST(FlatMessageTest, TransactionBoundariesMakeNoMessage) {
  for (auto type : {canal::entry::TRANSACTIONBEGIN, canal::entry::TRANSACTIONEND}) {
    FlatMessage m;
    bool change = true;
    ASSERT_TRUE(BuildFlatMessage(testing::BoundaryEntry(type), 1, 1, &m, &change).ok());
    EXPECT_FALSE(change);
  }
}

TEST(FlatMessageTest, SubsetWritesOnlyThoseRows) {
  std::string entry = testing::RowEntry(
      "shop", "users", canal::entry::UPDATE,
      {Row{{Id("1"), Name("a")}, {Id("1"), Name("b", true)}}, Row{{Id("2"), Name("c")}, {Id("2"), Name("d", true)}}});
  FlatMessage m;
  bool change = false;
  ASSERT_TRUE(BuildFlatMessage(entry, 1, 1, &m, &change).ok());
  std::vector<uint32_t> second{1};
  std::string out;
  AppendFlatMessageJson(m, &second, &out);
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "2");
  ASSERT_EQ(j["old"].size(), 1u);
  EXPECT_EQ(j["old"][0]["name"], "c");
}

// A snapshot chunk's rows (header prop snapshot=true) carry "isSnapshot":true
// right after isDdl; every other member as for a stream INSERT.
TEST(FlatMessageTest, SnapshotEntryIsMarked) {
  const std::string stream = testing::RowEntry("shop", "users", canal::entry::INSERT,
                                               {Row{{}, {Id("7"), Name("eve"), Score("3.25")}}});
  const std::string snapshot = testing::WithHeaderProp(stream, "snapshot", "true");
  const std::string plain = Json(stream);
  const std::string marked = Json(snapshot);
  EXPECT_EQ(marked, R"j({"data":[{"id":"7","name":"eve","score":"3.25"}],"database":"shop","es":1700000000123,)j"
                    R"j("gtid":"","id":5,"isDdl":false,"isSnapshot":true,)j"
                    R"j("mysqlType":{"id":"int(11)","name":"varchar(32)","score":"decimal(10,2)"},"old":null,)j"
                    R"j("pkNames":["id"],"sql":"","sqlType":{"id":4,"name":12,"score":3},"table":"users",)j"
                    R"j("ts":1700000009999,"type":"INSERT"})j");
  std::string unmarked = marked;
  unmarked.erase(unmarked.find(",\"isSnapshot\":true"), std::string_view(",\"isSnapshot\":true").size());
  EXPECT_EQ(unmarked, plain);
  EXPECT_EQ(nlohmann::json::parse(marked)["isSnapshot"], true);
}

// Without the prop (or with another prop, or another value) the member is
// absent: stream messages stay Canal's JSON byte for byte.
TEST(FlatMessageTest, OtherEntriesHaveNoMarker) {
  const std::string stream =
      testing::RowEntry("shop", "users", canal::entry::INSERT, {Row{{}, {Id("7"), Name("eve")}}});
  for (const std::string& entry :
       {stream, testing::WithHeaderProp(stream, "snapshot", "false"), testing::WithHeaderProp(stream, "Snapshot", "true"),
        testing::WithHeaderProp(stream, "rowsCount", "1"),
        testing::DdlEntry("shop", "users", "ALTER TABLE users ADD c INT")}) {
    const std::string json = Json(entry);
    EXPECT_EQ(json.find("isSnapshot"), std::string::npos) << json;
    EXPECT_FALSE(nlohmann::json::parse(json).contains("isSnapshot"));
  }
  // One FlatMessage reused: a snapshot entry's marker does not stick to the next entry.
  FlatMessage m;
  bool change = false;
  ASSERT_TRUE(BuildFlatMessage(testing::WithHeaderProp(stream, "snapshot", "true"), 1, 1, &m, &change).ok());
  EXPECT_TRUE(m.is_snapshot);
  ASSERT_TRUE(BuildFlatMessage(stream, 1, 1, &m, &change).ok());
  EXPECT_FALSE(m.is_snapshot);
}

// Bad input: every truncation of a valid entry is an error or a message,
// never a crash or a read past the bytes.
TEST(FlatMessageTest, TruncatedAndGarbageBytes) {
  std::string entry = testing::RowEntry("shop", "users", canal::entry::UPDATE,
                                        {Row{{Id("1"), Name("a")}, {Id("1"), Name("b", true)}}});
  FlatMessage m;
  bool change = false;
  int errors = 0;
  for (size_t n = 0; n < entry.size(); ++n) {
    std::string cut = entry.substr(0, n);  // its own allocation: ASan sees overreads
    if (!BuildFlatMessage(cut, 1, 1, &m, &change).ok()) ++errors;
  }
  EXPECT_GT(errors, 0);
  Status s = BuildFlatMessage(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11), 1, 1, &m, &change);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
}

}  // namespace
}  // namespace canal::mq
