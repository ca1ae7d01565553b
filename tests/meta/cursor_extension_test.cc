// LogPosition::transaction_begin in Canal's JSON: an extra "transactionBegin"
// member only when set, read back exactly, and absent for boundary cursors so
// those stay byte for byte what Canal writes.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "canal/meta/file_meta_manager.h"
#include "canal/meta/meta_json.h"
#include "meta_test_util.h"

namespace canal::meta {
namespace {

using testing::Client;
using testing::Pos;
using testing::ScratchDir;

LogPosition InsideLargeTransaction() {
  LogPosition p = Pos("mysql-bin.000004", 90210);
  p.included = true;
  p.transaction_begin = 13885;
  p.gtid = "0-1-42";
  return p;
}

DestinationMeta WithCursor(const LogPosition& p) {
  DestinationMeta meta;
  meta.destination = "example";
  ClientMeta c;
  c.client = Client();
  c.cursor = p;
  c.cursor_identity = LogIdentity{-1, "127.0.0.1", 3306};
  meta.clients = {c};
  return meta;
}

TEST(CursorExtensionTest, TransactionBeginIsWrittenAfterTimestampAndReadBack) {
  const std::string text = EncodeMetaFile(WithCursor(InsideLargeTransaction()));
  EXPECT_NE(text.find(R"("timestamp":1591600659000,"transactionBegin":13885})"), std::string::npos) << text;
  DestinationMeta decoded;
  ASSERT_TRUE(DecodeMetaFile(text, &decoded).ok());
  ASSERT_EQ(decoded.clients.size(), 1u);
  ASSERT_TRUE(decoded.clients[0].cursor.has_value());
  EXPECT_EQ(*decoded.clients[0].cursor, InsideLargeTransaction());
  EXPECT_EQ(decoded.clients[0].cursor->transaction_begin, 13885u);
}

TEST(CursorExtensionTest, CursorNodeCarriesTransactionBeginToo) {
  const std::string text = EncodeCursor(InsideLargeTransaction(), LogIdentity{});
  EXPECT_NE(text.find(R"("transactionBegin":13885)"), std::string::npos) << text;
  LogPosition p;
  LogIdentity id;
  ASSERT_TRUE(DecodeCursor(text, &p, &id).ok());
  EXPECT_EQ(p, InsideLargeTransaction());
}

TEST(CursorExtensionTest, BoundaryCursorHasNoTransactionBeginMember) {
  LogPosition p = Pos("mysql-bin.000004", 13885);
  const std::string text = EncodeMetaFile(WithCursor(p));
  EXPECT_EQ(text.find("transactionBegin"), std::string::npos) << text;
  EXPECT_EQ(EncodeCursor(p, LogIdentity{}).find("transactionBegin"), std::string::npos);
  DestinationMeta decoded;
  ASSERT_TRUE(DecodeMetaFile(text, &decoded).ok());
  EXPECT_EQ(decoded.clients[0].cursor->transaction_begin, 0u);
}

TEST(CursorExtensionTest, CanalFileWithoutTheMemberReadsAsBoundary) {
  const std::string canal = testing::kCanalMetaFile;
  DestinationMeta decoded;
  ASSERT_TRUE(DecodeMetaFile(canal, &decoded).ok());
  EXPECT_EQ(decoded.clients[0].cursor->transaction_begin, 0u);
  EXPECT_EQ(EncodeMetaFile(decoded), canal);
}

// A meta.dat whose one cursor has "transactionBegin": `value` (JSON text).
std::string WithTransactionBegin(const char* value) {
  return std::string(R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"},)"
                     R"("cursor":{"postion":{"journalName":"a","position":40,"transactionBegin":)") +
         value + "}}}]}";
}

TEST(CursorExtensionTest, ExplicitZeroOrNullMeansBoundary) {
  for (const char* value : {"0", "null"}) {
    const std::string text = WithTransactionBegin(value);
    DestinationMeta decoded;
    Status s = DecodeMetaFile(text, &decoded);
    ASSERT_TRUE(s.ok()) << value << ": " << s.ToString();
    EXPECT_EQ(decoded.clients[0].cursor->transaction_begin, 0u) << value;
  }
}

TEST(CursorExtensionTest, BadTransactionBeginIsCorruptionNamingIt) {
  for (const char* value : {"-1", "\"4\"", "1.5", "true", "9223372036854775808"}) {
    const std::string text = WithTransactionBegin(value);
    DestinationMeta decoded;
    Status s = DecodeMetaFile(text, &decoded);
    EXPECT_TRUE(s.IsCorruption()) << value << ": " << s.ToString();
    EXPECT_NE(s.message().find("transactionBegin"), std::string::npos) << s.ToString();
  }
}

TEST(CursorExtensionTest, FileMetaManagerKeepsTransactionBeginAcrossRestart) {
  ScratchDir dir;
  {
    FileMetaManager meta(FileMetaOptions{dir.path(), std::chrono::milliseconds(0)});
    ASSERT_TRUE(meta.Start().ok());
    ASSERT_TRUE(meta.Subscribe(Client()).ok());
    ASSERT_TRUE(meta.UpdateCursor(Client(), InsideLargeTransaction()).ok());
    ASSERT_TRUE(meta.Stop().ok());
  }
  FileMetaManager meta(FileMetaOptions{dir.path(), std::chrono::milliseconds(0)});
  ASSERT_TRUE(meta.Start().ok());
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(meta.GetCursor(Client(), &cursor).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(*cursor, InsideLargeTransaction());
  ASSERT_TRUE(meta.Stop().ok());
}

}  // namespace

// LogPosition::snapshot: a snapshot's progress rides with the cursor as an object member
// "snapshot", only while set, so the ack that moves the cursor makes it durable. Progress text is
// canonical JSON (keys sorted), as the meta writer dumps it.
LogPosition WithSnapshotProgress() {
  LogPosition p = Pos("mysql-bin.000004", 13885);
  p.snapshot = std::make_shared<const std::string>(R"({"id":"s1","tables":[{"after":["42"],"name":"shop.customer"}]})");
  return p;
}

TEST(CursorExtensionTest, SnapshotProgressIsAnObjectMemberReadBackExactly) {
  const std::string text = EncodeMetaFile(WithCursor(WithSnapshotProgress()));
  EXPECT_NE(text.find(R"("snapshot":{"id":"s1",)"), std::string::npos) << text;
  DestinationMeta decoded;
  ASSERT_TRUE(DecodeMetaFile(text, &decoded).ok());
  ASSERT_TRUE(decoded.clients[0].cursor->snapshot != nullptr);
  EXPECT_EQ(*decoded.clients[0].cursor, WithSnapshotProgress());
  LogPosition p;
  LogIdentity id;
  ASSERT_TRUE(DecodeCursor(EncodeCursor(WithSnapshotProgress(), LogIdentity{}), &p, &id).ok());
  EXPECT_EQ(p, WithSnapshotProgress());
}

TEST(CursorExtensionTest, NoSnapshotMemberWithoutProgressAndPositionsWithDifferentProgressDiffer) {
  EXPECT_EQ(EncodeMetaFile(WithCursor(Pos("mysql-bin.000004", 13885))).find("snapshot"), std::string::npos);
  LogPosition other = WithSnapshotProgress();
  other.snapshot = std::make_shared<const std::string>(R"({"id":"s2"})");
  EXPECT_NE(other, WithSnapshotProgress());
  EXPECT_NE(Pos("mysql-bin.000004", 13885), WithSnapshotProgress());
}

TEST(CursorExtensionTest, SnapshotMemberThatIsNotAnObjectIsCorruptionNamingIt) {
  for (const char* value : {"1", "\"x\"", "[]", "true"}) {
    const std::string text =
        std::string(R"({"destination":"example","clientDatas":[{"clientIdentity":{"clientId":1,"destination":"example"},)"
                    R"("cursor":{"postion":{"journalName":"a","position":40,"snapshot":)") +
        value + "}}}]}";
    DestinationMeta decoded;
    Status s = DecodeMetaFile(text, &decoded);
    EXPECT_TRUE(s.IsCorruption()) << value << ": " << s.ToString();
    EXPECT_NE(s.message().find("snapshot"), std::string::npos) << s.ToString();
  }
}

}  // namespace canal::meta

namespace canal::meta {
namespace {

// The stream's GTID state (LogPosition::gtid_set, for a resume on another server after a
// failover) rides in our "gtidSet" member, in meta.dat and in a ZooKeeper cursor node alike.
TEST(CursorExtensionTest, GtidSetIsWrittenAndReadBackInBothForms) {
  LogPosition p = Pos("mariadb-bin.000003", 4711);
  p.gtid = "0-1-12";
  p.gtid_set = std::make_shared<const std::string>("0-1-11,1-2-5");
  const std::string file = EncodeMetaFile(WithCursor(p));
  EXPECT_NE(file.find(R"("gtidSet":"0-1-11,1-2-5")"), std::string::npos) << file;
  DestinationMeta decoded;
  ASSERT_TRUE(DecodeMetaFile(file, &decoded).ok());
  ASSERT_TRUE(decoded.clients[0].cursor.has_value());
  EXPECT_EQ(*decoded.clients[0].cursor, p);
  ASSERT_NE(decoded.clients[0].cursor->gtid_set, nullptr);
  EXPECT_EQ(*decoded.clients[0].cursor->gtid_set, "0-1-11,1-2-5");

  const std::string node = EncodeCursor(p, LogIdentity{});
  LogPosition back;
  LogIdentity id;
  ASSERT_TRUE(DecodeCursor(node, &back, &id).ok());
  EXPECT_EQ(back, p);
  // Without a set (MySQL, or a state not known) there is no member: Canal's bytes.
  p.gtid_set.reset();
  EXPECT_EQ(EncodeCursor(p, LogIdentity{}).find("gtidSet"), std::string::npos);
}

TEST(CursorExtensionTest, AGtidSetThatIsNotTextIsRefusedByName) {
  const std::string bad =
      R"({"identity":{"slaveId":-1,"sourceAddress":{"address":"127.0.0.1","port":3306}},)"
      R"("postion":{"gtid":"","gtidSet":17,"included":false,"journalName":"mariadb-bin.000001","position":4,)"
      R"("serverId":1,"timestamp":0}})";
  LogPosition p;
  LogIdentity id;
  const Status s = DecodeCursor(bad, &p, &id);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("gtidSet"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace canal::meta
