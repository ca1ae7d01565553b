// Canal's meta.dat and cursor-node JSON: exact shape, tolerance, corruption.
#include "canal/meta/meta_json.h"

#include <string>

#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace canal::meta {
namespace {

using testing::CanalIdentity;
using testing::CanalPosition;
using testing::kCanalCursor;

// Byte for byte what Canal's FileMixedMetaManager writes (fastjson defaults:
// sorted keys, compact, no "@type").
constexpr char kGoldenMetaDat[] =
    R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"example","filter":".*\\..*"},)"
    R"("cursor":{"identity":{"slaveId":-1,"sourceAddress":{"address":"127.0.0.1","port":3306}},)"
    R"("postion":{"gtid":"","included":false,"journalName":"mysql-bin.000004","position":13885,)"
    R"("serverId":1,"timestamp":1591600659000}}},{"clientIdentity":{"clientId":1002,"destination":"example",)"
    R"("filter":""}}],"destination":"example"})";

DestinationMeta GoldenMeta() {
  DestinationMeta meta;
  meta.destination = "example";
  ClientMeta a;
  a.client = ClientIdentity{"example", 1001, ".*\\..*"};
  a.cursor = CanalPosition();
  a.cursor_identity = CanalIdentity();
  ClientMeta b;
  b.client = ClientIdentity{"example", 1002, ""};
  meta.clients = {a, b};
  return meta;
}

TEST(MetaJsonTest, MetaFileMatchesCanalByteForByte) { EXPECT_EQ(EncodeMetaFile(GoldenMeta()), kGoldenMetaDat); }

TEST(MetaJsonTest, EmptyDestinationIsAnEmptyClientList) {
  DestinationMeta meta;
  meta.destination = "example";
  EXPECT_EQ(EncodeMetaFile(meta), R"({"clientDatas":[],"destination":"example"})");
}

TEST(MetaJsonTest, MetaFileRoundTrips) {
  DestinationMeta decoded;
  ASSERT_TRUE(DecodeMetaFile(kGoldenMetaDat, &decoded).ok());
  EXPECT_EQ(decoded.destination, "example");
  ASSERT_EQ(decoded.clients.size(), 2u);
  EXPECT_EQ(decoded.clients[0], GoldenMeta().clients[0]);
  EXPECT_EQ(decoded.clients[1], GoldenMeta().clients[1]);
  EXPECT_EQ(EncodeMetaFile(decoded), kGoldenMetaDat);
}

TEST(MetaJsonTest, CursorNodeMatchesCanalByteForByte) {
  EXPECT_EQ(EncodeCursor(CanalPosition(), CanalIdentity()), kCanalCursor);
  LogPosition p;
  LogIdentity id;
  ASSERT_TRUE(DecodeCursor(kCanalCursor, &p, &id).ok());
  EXPECT_EQ(p, CanalPosition());
  EXPECT_EQ(id, CanalIdentity());
}

TEST(MetaJsonTest, OlderCanalFilesWithoutGtidOrServerIdLoad) {
  // Canal before 1.1 left out gtid and, with no server id known, serverId.
  const std::string old =
      R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"example","filter":""},)"
      R"("cursor":{"identity":{"slaveId":-1,"sourceAddress":{"address":"10.10.161.84","port":3306}},)"
      R"("postion":{"included":false,"journalName":"mysql-bin.000033","position":5988,)"
      R"("timestamp":1429621093000}}}],"destination":"example"})";
  DestinationMeta meta;
  ASSERT_TRUE(DecodeMetaFile(old, &meta).ok());
  ASSERT_EQ(meta.clients.size(), 1u);
  ASSERT_TRUE(meta.clients[0].cursor.has_value());
  EXPECT_EQ(meta.clients[0].cursor->journal_name, "mysql-bin.000033");
  EXPECT_EQ(meta.clients[0].cursor->position, 5988u);
  EXPECT_EQ(meta.clients[0].cursor->server_id, 0u);
  EXPECT_EQ(meta.clients[0].cursor->gtid, "");
  EXPECT_EQ(meta.clients[0].cursor_identity.address, "10.10.161.84");
}

TEST(MetaJsonTest, TypeTagsUnknownKeysNullsAndOldBatchFieldAreAccepted) {
  const std::string text =
      R"({"@type":"x","destination":"example","future":[1,2],"clientDatas":[{"batch":{"anything":1},)"
      R"("clientIdentity":{"clientId":7,"destination":"example","filter":null},)"
      R"("cursor":{"@type":"com.alibaba.otter.canal.protocol.position.LogPosition","identity":null,)"
      R"("postion":{"journalName":"mysql-bin.000001","position":4,"gtid":null,"serverId":null}}},)"
      R"({"clientIdentity":{"clientId":8,"destination":"example"},"cursor":null}]})";
  DestinationMeta meta;
  Status s = DecodeMetaFile(text, &meta);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(meta.clients.size(), 2u);
  EXPECT_EQ(meta.clients[0].client.client_id, 7);
  EXPECT_EQ(meta.clients[0].client.filter, "");
  ASSERT_TRUE(meta.clients[0].cursor.has_value());
  EXPECT_EQ(meta.clients[0].cursor->position, 4u);
  EXPECT_EQ(meta.clients[0].cursor_identity, LogIdentity());
  EXPECT_FALSE(meta.clients[1].cursor.has_value());
}

TEST(MetaJsonTest, MissingClientListMeansNoClients) {
  DestinationMeta meta;
  ASSERT_TRUE(DecodeMetaFile(R"({"destination":"example"})", &meta).ok());
  EXPECT_TRUE(meta.clients.empty());
}

TEST(MetaJsonTest, EveryTruncationOfAValidFileIsCorruption) {
  const std::string full = kGoldenMetaDat;
  for (size_t n = 0; n < full.size(); ++n) {
    DestinationMeta meta;
    Status s = DecodeMetaFile(full.substr(0, n), &meta);
    EXPECT_TRUE(s.IsCorruption()) << "prefix of " << n << " bytes: " << s.ToString();
  }
}

struct BadCase {
  const char* name;
  const char* json;
  const char* expected_in_message;
};

class MetaJsonBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(MetaJsonBadInputTest, IsCorruptionNamingTheField) {
  DestinationMeta meta;
  Status s = DecodeMetaFile(GetParam().json, &meta);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(GetParam().expected_in_message), std::string::npos) << s.ToString();
}

#define CLIENT_WITH(identity) R"({"destination":"example","clientDatas":[{"clientIdentity":)" identity "}]}"
#define CURSOR_WITH(postion)                                                                           \
  R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"},)" \
  R"("cursor":{"postion":)" postion "}}]}"

INSTANTIATE_TEST_SUITE_P(
    Cases, MetaJsonBadInputTest,
    ::testing::Values(
        BadCase{"Empty", "", "not valid JSON"}, BadCase{"Garbage", "\x01\x02zz", "not valid JSON"},
        BadCase{"TopLevelArray", "[]", "not a JSON object"},
        BadCase{"TrailingGarbage", R"({"destination":"example"}x)", "not valid JSON"},
        BadCase{"NoDestination", R"({"clientDatas":[]})", "destination: missing"},
        BadCase{"DestinationNumber", R"({"destination":5})", "destination: not a string"},
        BadCase{"ClientsNotArray", R"({"destination":"example","clientDatas":{}})", "clientDatas: not an array"},
        BadCase{"ClientNotObject", R"({"destination":"example","clientDatas":[3]})", "clientDatas[0]: not an object"},
        BadCase{"NoIdentity", R"({"destination":"example","clientDatas":[{}]})", "clientDatas[0].clientIdentity: missing"},
        BadCase{"ClientIdMissing", CLIENT_WITH(R"({"destination":"example"})"), "clientId: missing"},
        BadCase{"ClientIdString", CLIENT_WITH(R"({"clientId":"1001","destination":"example"})"), "clientId: not an integer"},
        BadCase{"ClientIdFraction", CLIENT_WITH(R"({"clientId":1.5,"destination":"example"})"), "clientId: not an integer"},
        BadCase{"ClientIdTooBig", CLIENT_WITH(R"({"clientId":32768,"destination":"example"})"), "clientId: out of range"},
        BadCase{"ClientIdTooSmall", CLIENT_WITH(R"({"clientId":-32769,"destination":"example"})"), "clientId: out of range"},
        BadCase{"ClientIdHuge", CLIENT_WITH(R"({"clientId":18446744073709551615,"destination":"example"})"), "clientId: out of range"},
        BadCase{"OtherDestination", CLIENT_WITH(R"({"clientId":1,"destination":"other"})"), "differs from the file's"},
        BadCase{"FilterNumber", CLIENT_WITH(R"({"clientId":1,"destination":"example","filter":3})"), "filter: not a string"},
        BadCase{"RepeatedClient",
                R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"}},)"
                R"({"clientIdentity":{"clientId":1,"destination":"example"}}]})",
                "repeated"},
        BadCase{"CursorWithoutPostion",
                R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"},)"
                R"("cursor":{"position":{"journalName":"a","position":4}}}]})",
                "cursor.postion: missing"},
        BadCase{"CursorNotObject",
                R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"},)"
                R"("cursor":"mysql-bin.000001:4"}]})",
                "cursor: not an object"},
        BadCase{"NoJournal", CURSOR_WITH(R"({"position":4})"), "journalName: missing"},
        BadCase{"EmptyJournal", CURSOR_WITH(R"({"journalName":"","position":4})"), "journalName: empty"},
        BadCase{"NoPosition", CURSOR_WITH(R"({"journalName":"a"})"), "position: missing"},
        BadCase{"NegativePosition", CURSOR_WITH(R"({"journalName":"a","position":-1})"), "position: out of range"},
        BadCase{"PositionTooBig", CURSOR_WITH(R"({"journalName":"a","position":9223372036854775808})"), "position: out of range"},
        BadCase{"PositionString", CURSOR_WITH(R"({"journalName":"a","position":"4"})"), "position: not an integer"},
        BadCase{"ServerIdTooBig", CURSOR_WITH(R"({"journalName":"a","position":4,"serverId":4294967296})"), "serverId: out of range"},
        BadCase{"IncludedString", CURSOR_WITH(R"({"journalName":"a","position":4,"included":"false"})"), "included: not a boolean"},
        BadCase{"TimestampFloat", CURSOR_WITH(R"({"journalName":"a","position":4,"timestamp":1e3})"), "timestamp: not an integer"},
        BadCase{"GtidNumber", CURSOR_WITH(R"({"journalName":"a","position":4,"gtid":1})"), "gtid: not a string"},
        BadCase{"PortTooBig",
                R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"},)"
                R"("cursor":{"identity":{"sourceAddress":{"address":"h","port":65536}},"postion":{"journalName":"a","position":4}}}]})",
                "port: out of range"},
        BadCase{"IdentityNotObject",
                R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"},)"
                R"("cursor":{"identity":[],"postion":{"journalName":"a","position":4}}}]})",
                "identity: not an object"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(MetaJsonTest, BadCursorNodesAreCorruption) {
  LogPosition p;
  LogIdentity id;
  EXPECT_TRUE(DecodeCursor("", &p, &id).IsCorruption());
  EXPECT_TRUE(DecodeCursor("{}", &p, &id).IsCorruption());
  EXPECT_TRUE(DecodeCursor(R"({"postion":{"journalName":"a"}})", &p, &id).IsCorruption());
  EXPECT_TRUE(DecodeCursor(R"({"postion":{"journalName":"a","position":4},"identity":{"slaveId":"x"}})", &p, &id)
                  .IsCorruption());
}

TEST(MetaJsonTest, InvalidUtf8InAFilterIsWrittenWithoutThrowing) {
  DestinationMeta meta;
  meta.destination = "example";
  ClientMeta c;
  c.client = ClientIdentity{"example", 1, std::string("bad\xff\xfe", 5)};
  meta.clients.push_back(c);
  std::string text = EncodeMetaFile(meta);
  DestinationMeta back;
  ASSERT_TRUE(DecodeMetaFile(text, &back).ok()) << text;
  ASSERT_EQ(back.clients.size(), 1u);
  EXPECT_EQ(back.clients[0].client.filter.substr(0, 3), "bad");
}

TEST(MetaJsonTest, ControlCharactersAndQuotesAreEscaped) {
  DestinationMeta meta;
  meta.destination = "example";
  ClientMeta c;
  c.client = ClientIdentity{"example", -2, "a\"b\\c\n"};
  c.cursor = CanalPosition();
  c.cursor->position = UINT64_C(9223372036854775807);
  c.cursor->timestamp_ms = -1;
  c.cursor->included = true;
  c.cursor->gtid = "3E11FA47-71CA-11E1-9E33-C80AA9429562:23";
  meta.clients.push_back(c);
  DestinationMeta back;
  ASSERT_TRUE(DecodeMetaFile(EncodeMetaFile(meta), &back).ok());
  ASSERT_EQ(back.clients.size(), 1u);
  EXPECT_EQ(back.clients[0], c);
}

}  // namespace
}  // namespace canal::meta
