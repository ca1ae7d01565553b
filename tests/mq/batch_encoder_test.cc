// BatchEncoder: which messages a batch becomes, in both forms, with dynamic
// topics and partition hashing; all rows of a key land in one partition.
#include "canal/mq/batch_encoder.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "canal/packet.pb.h"
#include "mq/entry_maker.h"

namespace canal::mq {
namespace {

using testing::Col;
using testing::Row;

Col Id(const std::string& v) { return {"id", v, false, true, false, 4, "int(11)"}; }
Col Val(const std::string& v) { return {"v", v, false, false, true, 12, "varchar(8)"}; }

struct Fixture {
  std::unique_ptr<Router> router;
  std::unique_ptr<BatchEncoder> encoder;
  std::vector<std::string> entries;
  std::vector<std::string_view> views;

  Fixture(RoutingConfig c, bool flat) {
    if (c.topic.empty()) c.topic = "example";
    Status s = Router::Create(c, &router);
    EXPECT_TRUE(s.ok()) << s.ToString();
    encoder = std::make_unique<BatchEncoder>(router.get(), EncoderOptions{flat, false});
  }
  std::span<const EncodedMessage> Encode(int64_t id = 3) {
    views.assign(entries.begin(), entries.end());
    Status s = encoder->Encode(views, id, 1700000000000);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return encoder->messages();
  }
};

std::vector<Row> Inserts(int from, int to) {
  std::vector<Row> rows;
  for (int i = from; i < to; ++i) rows.push_back(Row{{}, {Id(std::to_string(i)), Val("x")}});
  return rows;
}

TEST(BatchEncoderTest, FlatOneMessagePerChangeSkippingBoundaries) {
  Fixture f({}, true);
  f.entries = {testing::BoundaryEntry(canal::entry::TRANSACTIONBEGIN),
               testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 3)),
               testing::RowEntry("db", "u", canal::entry::DELETE, {Row{{Id("9"), Val("y")}, {}}}),
               testing::BoundaryEntry(canal::entry::TRANSACTIONEND), testing::DdlEntry("db", "t", "TRUNCATE t")};
  auto msgs = f.Encode();
  ASSERT_EQ(msgs.size(), 3u);
  for (const auto& m : msgs) {
    EXPECT_EQ(m.topic, "example");
    EXPECT_EQ(m.partition, 0);
  }
  EXPECT_EQ(nlohmann::json::parse(msgs[0].payload)["data"].size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(msgs[1].payload)["table"], "u");
  EXPECT_EQ(nlohmann::json::parse(msgs[2].payload)["isDdl"], true);
  EXPECT_EQ(msgs[0].origin, "db.t at mysql-bin.000001:4");
}

TEST(BatchEncoderTest, FlatFixedPartition) {
  RoutingConfig c;
  c.partition = 2;
  Fixture f(c, true);
  f.entries = {testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 1))};
  auto msgs = f.Encode();
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].partition, 2);
}

TEST(BatchEncoderTest, FlatPkHashKeepsEveryKeyInOnePartition) {
  RoutingConfig c;
  c.partitions_num = 3;
  c.partition_hash = ".*\\..*:$pk$";
  Fixture f(c, true);
  f.entries = {testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 30)),
               testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 30)),
               testing::DdlEntry("db", "t", "ALTER TABLE t ADD c INT")};
  auto msgs = f.Encode();
  std::map<std::string, std::set<int>> partitions_of_key;
  size_t rows = 0;
  for (const auto& m : msgs) {
    auto j = nlohmann::json::parse(m.payload);
    if (j["isDdl"] == true) {
      EXPECT_EQ(m.partition, 0);
      continue;
    }
    for (const auto& row : j["data"]) {
      const std::string id = row["id"];
      partitions_of_key[id].insert(m.partition);
      // Canal's rule: |hash(db) ^ hash(id)| % 3.
      EXPECT_EQ(m.partition, JavaPartition(JavaStringHash("db") ^ JavaStringHash(id), 3)) << id;
      ++rows;
    }
  }
  EXPECT_EQ(rows, 60u);
  std::set<int> used;
  for (const auto& [id, ps] : partitions_of_key) {
    EXPECT_EQ(ps.size(), 1u) << id;
    used.insert(*ps.begin());
  }
  EXPECT_EQ(used.size(), 3u);  // 30 keys spread over all three partitions
}

// A snapshot chunk (BEGIN, INSERT entries marked snapshot=true, END) goes as
// the stream's inserts go: rows spread by the same pk hash, a key in the
// partition of its stream changes; every part of a chunk's entry keeps
// "isSnapshot":true, and the stream's messages in the same batch have none.
TEST(BatchEncoderTest, FlatSnapshotChunkSplitAcrossPartitionsKeepsTheMarker) {
  RoutingConfig c;
  c.partitions_num = 3;
  c.partition_hash = ".*\\..*:$pk$";
  Fixture f(c, true);
  const auto marked = [](const std::string& e) { return testing::WithHeaderProp(e, "snapshot", "true"); };
  f.entries = {marked(testing::BoundaryEntry(canal::entry::TRANSACTIONBEGIN)),
               marked(testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 20))),
               marked(testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(20, 30))),
               marked(testing::BoundaryEntry(canal::entry::TRANSACTIONEND)),
               testing::RowEntry("db", "t", canal::entry::UPDATE, {Row{{Id("5"), Val("x")}, {Id("5"), Val("y")}}})};
  auto msgs = f.Encode();
  size_t snapshot_rows = 0, stream_rows = 0;
  std::set<int> snapshot_partitions;
  for (const auto& m : msgs) {
    auto j = nlohmann::json::parse(m.payload);
    for (const auto& row : j["data"]) {
      const std::string id = row["id"];
      EXPECT_EQ(m.partition, JavaPartition(JavaStringHash("db") ^ JavaStringHash(id), 3)) << id;
    }
    if (j["type"] == "UPDATE") {
      EXPECT_FALSE(j.contains("isSnapshot")) << m.payload;
      stream_rows += j["data"].size();
      continue;
    }
    EXPECT_EQ(j["isSnapshot"], true) << m.payload;
    EXPECT_EQ(j["type"], "INSERT");
    snapshot_rows += j["data"].size();
    snapshot_partitions.insert(m.partition);
  }
  EXPECT_EQ(snapshot_rows, 30u);
  EXPECT_EQ(stream_rows, 1u);
  EXPECT_EQ(snapshot_partitions.size(), 3u);  // the chunk's rows were split
}

TEST(BatchEncoderTest, FlatTableHashAndDatabaseHashOff) {
  RoutingConfig c;
  c.partitions_num = 5;
  c.partition_hash = "db\\.t.*,other.x:v";
  c.database_hash = false;
  Fixture f(c, true);
  f.entries = {testing::RowEntry("db", "tab", canal::entry::INSERT, Inserts(0, 4)),
               testing::RowEntry("other", "x", canal::entry::INSERT, Inserts(0, 1)),
               testing::RowEntry("nomatch", "x", canal::entry::INSERT, Inserts(0, 1))};
  auto msgs = f.Encode();
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(msgs[0].partition, JavaPartition(JavaStringHash("tab"), 5));
  EXPECT_EQ(nlohmann::json::parse(msgs[0].payload)["data"].size(), 4u);  // a table hash keeps the message whole
  EXPECT_EQ(msgs[1].partition, JavaPartition(JavaStringHash("x"), 5));   // column v = "x", no database hash
  EXPECT_EQ(msgs[2].partition, 0);
}

TEST(BatchEncoderTest, FlatDynamicTopics) {
  RoutingConfig c;
  c.dynamic_topic = "db\\..*";
  Fixture f(c, true);
  f.entries = {testing::RowEntry("db", "a", canal::entry::INSERT, Inserts(0, 1)),
               testing::RowEntry("db", "b", canal::entry::INSERT, Inserts(0, 1)),
               testing::RowEntry("zz", "a", canal::entry::INSERT, Inserts(0, 1))};
  auto msgs = f.Encode();
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(msgs[0].topic, "db.a");
  EXPECT_EQ(msgs[1].topic, "db.b");
  EXPECT_EQ(msgs[2].topic, "example");
}

canal::protocol::Messages ParsePacket(const std::string& payload) {
  canal::protocol::Packet p;
  EXPECT_TRUE(p.ParseFromString(payload));
  EXPECT_EQ(p.type(), canal::protocol::MESSAGES);
  EXPECT_EQ(p.version(), 1);
  canal::protocol::Messages m;
  EXPECT_TRUE(m.ParseFromString(p.body()));
  return m;
}

TEST(BatchEncoderTest, ProtobufWholeBatchInOnePacket) {
  Fixture f({}, false);
  f.entries = {testing::BoundaryEntry(canal::entry::TRANSACTIONBEGIN),
               testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 3)),
               testing::BoundaryEntry(canal::entry::TRANSACTIONEND)};
  auto msgs = f.Encode(77);
  ASSERT_EQ(msgs.size(), 1u);
  auto m = ParsePacket(msgs[0].payload);
  EXPECT_EQ(m.batch_id(), 77);
  ASSERT_EQ(m.messages_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(m.messages(i), f.entries[i]);  // the entries' bytes, untouched
}

TEST(BatchEncoderTest, ProtobufPkHashSplitsRowsIntoEntries) {
  RoutingConfig c;
  c.partitions_num = 3;
  c.partition_hash = "db.t:id";
  Fixture f(c, false);
  f.entries = {testing::BoundaryEntry(canal::entry::TRANSACTIONBEGIN),
               testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 12)),
               testing::BoundaryEntry(canal::entry::TRANSACTIONEND)};
  auto msgs = f.Encode();
  size_t rows = 0;
  for (const auto& msg : msgs) {
    auto m = ParsePacket(msg.payload);
    for (const auto& bytes : m.messages()) {
      canal::entry::Entry e;
      ASSERT_TRUE(e.ParseFromString(bytes));
      ASSERT_EQ(e.entrytype(), canal::entry::ROWDATA);  // begin/end left out when partitioned
      EXPECT_EQ(e.header().tablename(), "t");
      canal::entry::RowChange rc;
      ASSERT_TRUE(rc.ParseFromString(e.storevalue()));
      ASSERT_EQ(rc.rowdatas_size(), 1);
      EXPECT_EQ(rc.tableid(), 7);
      const std::string id = rc.rowdatas(0).aftercolumns(0).value();
      EXPECT_EQ(msg.partition, JavaPartition(JavaStringHash("db") ^ JavaStringHash(id), 3));
      ++rows;
    }
  }
  EXPECT_EQ(rows, 12u);
}

// The protobuf form is written by hand: its bytes are the ones protobuf writes
// for the same Packet, and each one-row entry of a hashed batch the bytes of
// the entry with only that row.
TEST(BatchEncoderTest, ProtobufBytesAreProtobufsOwn) {
  RoutingConfig c;
  c.partitions_num = 2;
  c.partition_hash = "db.t:id";
  Fixture f(c, false);
  f.entries = {testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 4))};
  canal::entry::Entry whole;
  ASSERT_TRUE(whole.ParseFromString(f.entries[0]));
  canal::entry::RowChange rows;
  ASSERT_TRUE(rows.ParseFromString(whole.storevalue()));
  auto msgs = f.Encode(-5);
  ASSERT_FALSE(msgs.empty());
  size_t seen = 0;
  for (const auto& msg : msgs) {
    canal::protocol::Messages body;
    body.set_batch_id(-5);
    auto m = ParsePacket(msg.payload);
    for (const auto& bytes : m.messages()) {
      canal::entry::Entry e;
      ASSERT_TRUE(e.ParseFromString(bytes));
      canal::entry::RowChange one;
      ASSERT_TRUE(one.ParseFromString(e.storevalue()));
      ASSERT_EQ(one.rowdatas_size(), 1);
      canal::entry::RowChange expected_rows = rows;
      expected_rows.clear_rowdatas();
      *expected_rows.add_rowdatas() = one.rowdatas(0);
      canal::entry::Entry expected = whole;
      expected.set_storevalue(expected_rows.SerializeAsString());
      EXPECT_EQ(bytes, expected.SerializeAsString());
      body.add_messages(bytes);
      ++seen;
    }
    canal::protocol::Packet packet;
    packet.set_version(1);
    packet.set_type(canal::protocol::MESSAGES);
    packet.set_body(body.SerializeAsString());
    EXPECT_EQ(msg.payload, packet.SerializeAsString());
  }
  EXPECT_EQ(seen, 4u);
}

// The protobuf form splits a snapshot entry into one-row entries like any
// other: each keeps the header, and so the snapshot=true prop.
TEST(BatchEncoderTest, ProtobufSnapshotRowsKeepTheHeaderProp) {
  RoutingConfig c;
  c.partitions_num = 3;
  c.partition_hash = ".*\\..*:$pk$";
  Fixture f(c, false);
  f.entries = {testing::WithHeaderProp(testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 12)), "snapshot",
                                       "true")};
  size_t rows = 0;
  for (const auto& msg : f.Encode()) {
    const canal::protocol::Messages m = ParsePacket(msg.payload);
    for (const auto& bytes : m.messages()) {
      canal::entry::Entry e;
      ASSERT_TRUE(e.ParseFromString(bytes));
      ASSERT_EQ(e.header().props_size(), 1);
      EXPECT_EQ(e.header().props(0).key(), "snapshot");
      EXPECT_EQ(e.header().props(0).value(), "true");
      ++rows;
    }
  }
  EXPECT_EQ(rows, 12u);
}

// A batch whose Packet would pass max_message_bytes goes as several Packets for the same topic
// and partition, in order, with the batch's id, each under the limit; an entry larger than the
// limit goes alone. Under the limit nothing changes (one Packet).
TEST(BatchEncoderTest, ProtobufPacketOverTheLimitIsSplitInOrder) {
  std::vector<std::string> entries = {testing::BoundaryEntry(canal::entry::TRANSACTIONBEGIN)};
  for (int i = 0; i < 12; ++i) {
    std::vector<Row> rows;
    for (int r = 0; r < (i == 5 ? 400 : 40); ++r) {
      rows.push_back(Row{{}, {Id(std::to_string(i * 1000 + r)), Val(std::string(20, 'a' + i))}});
    }
    entries.push_back(
        testing::RowEntry("db", "t", canal::entry::INSERT, rows, 1700000000123, "mysql-bin.000001", 100 + i));
  }
  entries.push_back(testing::BoundaryEntry(canal::entry::TRANSACTIONEND));
  constexpr size_t kLimit = 8000;
  ASSERT_GT(entries[6].size(), kLimit);  // the entry of 400 rows
  RoutingConfig c;
  c.partition = 1;
  c.topic = "example";
  std::unique_ptr<Router> router;
  ASSERT_TRUE(Router::Create(c, &router).ok());
  for (size_t limit : {size_t{0}, kLimit}) {
    BatchEncoder encoder(router.get(), EncoderOptions{false, false, limit});
    std::vector<std::string_view> views(entries.begin(), entries.end());
    ASSERT_TRUE(encoder.Encode(views, 42, 1).ok());
    auto msgs = encoder.messages();
    std::vector<std::string> got;
    for (const auto& msg : msgs) {
      EXPECT_EQ(msg.topic, "example");
      EXPECT_EQ(msg.partition, 1);
      auto m = ParsePacket(msg.payload);
      EXPECT_EQ(m.batch_id(), 42);
      ASSERT_GT(m.messages_size(), 0);
      if (limit != 0 && m.messages_size() > 1) {
        EXPECT_LE(msg.payload.size(), limit);
      }
      if (m.messages_size() == 1 && m.messages(0) == entries[6]) {
        EXPECT_EQ(msg.origin, "db.t at mysql-bin.000001:105");  // a later Packet names its own first entry
      }
      for (const auto& e : m.messages()) got.push_back(e);
    }
    EXPECT_EQ(got, entries) << "limit " << limit;
    if (limit == 0) {
      EXPECT_EQ(msgs.size(), 1u);
      EXPECT_EQ(msgs[0].origin, "db.t at mysql-bin.000001:100");  // the first change, not the BEGIN
    } else {
      EXPECT_GE(msgs.size(), 4u);
    }
  }
}

TEST(BatchEncoderTest, CorruptEntryIsAnErrorNamingIt) {
  for (bool flat : {true, false}) {
    Fixture f({}, flat);
    std::string good = testing::RowEntry("db", "t", canal::entry::INSERT, Inserts(0, 1));
    f.entries = {good, good.substr(0, good.size() / 2)};
    f.views.assign(f.entries.begin(), f.entries.end());
    Status s = f.encoder->Encode(f.views, 4, 1);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.ToString().find("entry 1 of batch 4"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace canal::mq
