// Our replica connection streaming the MySQL 8.x fixtures from the replay
// primary: by file and position (from the start and from the middle of a file)
// and by GTID set, every event of the file received byte for byte and the rows
// decoded from the stream equal to those decoded from the file; start positions
// the primary does not have are refused with ERROR 1236 and a readable message.
#include <gtest/gtest.h>

#include "canal/parser/mysql/dump_connection.h"
#include "replay_test_util.h"
#include "support/fixtures.h"

namespace canal::testing {
namespace {

constexpr uint32_t kReplicaId = 4242;
constexpr int64_t kHeartbeatNs = 50'000'000;  // 50 ms: the end of the stream shows quickly

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

uint64_t Le(std::string_view s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

class ReplayDump : public ::testing::Test {
 protected:
  void SetUp() override { CANAL_REQUIRE_FIXTURES(); }

  // Starts a primary on `fixture` and a replica connection ready to dump.
  void Open(const std::string& fixture) {
    o_ = ReplayPrimaryOptions{};
    o_.binlog_files = {FixturePath(fixture)};
    o_.sha2_cached = true;
    primary_ = StartPrimary(o_);
    ASSERT_TRUE(primary_);
    conn_ = std::make_unique<mysql::DumpConnection>(ReplicaOptions(*primary_, o_));
    Status s = conn_->Connect();
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(conn_->Execute("SET @master_binlog_checksum = @@global.binlog_checksum").ok());
    ASSERT_TRUE(conn_->Execute("SET @master_heartbeat_period = " + std::to_string(kHeartbeatNs)).ok());
    s = conn_->RegisterSlave(kReplicaId);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // The fake ROTATE and the FDE that open every dump.
  static void ExpectPreamble(const StreamDecode& got, const std::string& file, uint64_t position) {
    ASSERT_GE(got.events.size(), 2u);
    const std::string& rotate = got.events[0];
    ASSERT_GE(rotate.size(), 19u + 8 + 4);
    EXPECT_EQ(static_cast<uint8_t>(rotate[4]), 4);     // ROTATE
    EXPECT_EQ(Le(rotate, 13, 4), 0u);                  // log_pos 0: artificial
    EXPECT_NE(Le(rotate, 17, 2) & 0x20, 0u);           // LOG_EVENT_ARTIFICIAL_F
    EXPECT_EQ(Le(rotate, 19, 8), position);
    EXPECT_EQ(rotate.substr(27, rotate.size() - 27 - 4), file);
    const std::string& fde = got.events[1];
    EXPECT_EQ(static_cast<uint8_t>(fde[4]), 15);       // FORMAT_DESCRIPTION
    EXPECT_EQ(Le(fde, 13, 4), position > 4 ? 0u : Le(fde, 9, 4) + 4);
  }

  ReplayPrimaryOptions o_;
  std::unique_ptr<ReplayPrimary> primary_;
  std::unique_ptr<mysql::DumpConnection> conn_;
};

TEST_F(ReplayDump, FilePositionDumpOfEachMysql8Fixture) {
  size_t total_rows = 0;
  for (const std::string& fixture : Mysql8Fixtures()) {
    SCOPED_TRACE(fixture);
    FileDecode file;
    Status s = DecodeFixtureFile(FixturePath(fixture), &file);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Open(fixture);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(conn_->DumpFromPosition(BaseName(fixture), 4, kReplicaId).ok());
    StreamDecode got;
    s = ReadStream(conn_.get(), &got);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(got.heartbeat);
    ExpectPreamble(got, BaseName(fixture), 4);
    ASSERT_EQ(got.events.size(), file.events.size() + 2);
    for (size_t i = 0; i < file.events.size(); ++i) {
      EXPECT_EQ(got.events[i + 2], file.events[i]) << "event " << i << " at offset " << file.offsets[i];
    }
    std::vector<std::string> expected;
    for (const auto& row : file.rows) expected.push_back(row.second);
    EXPECT_EQ(got.rows, expected);
    total_rows += expected.size();
    const ReplayPrimaryStats st = primary_->stats();
    EXPECT_EQ(st.dumps, 1u);
    EXPECT_EQ(st.last_slave_server_id, kReplicaId);
    EXPECT_EQ(st.events_sent, file.events.size());
  }
  EXPECT_GT(total_rows, 20u);  // the fixtures above do carry rows
}

TEST_F(ReplayDump, HeartbeatsKeepComingWhenIdle) {
  const std::string fixture = "rust_mysql_common/mysql_type_bit.000001";
  Open(fixture);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(conn_->DumpFromPosition(BaseName(fixture), 4, kReplicaId).ok());
  StreamDecode got;
  ASSERT_TRUE(ReadStream(conn_.get(), &got).ok());
  ASSERT_TRUE(got.heartbeat);
  for (int i = 0; i < 3; ++i) {
    std::string_view ev;
    Status s = conn_->ReadEvent(&ev);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_GT(ev.size(), 19u);
    EXPECT_EQ(static_cast<uint8_t>(ev[4]), 27);  // HEARTBEAT
    EXPECT_NE(ev.find(BaseName(fixture)), std::string_view::npos);
  }
  EXPECT_GE(primary_->stats().heartbeats, 4u);
}

TEST_F(ReplayDump, StartInTheMiddleOfAFile) {
  const std::string fixture = "mysql-cdc-rs/8.0/02_query_bigger/binlog.000733";
  FileDecode file;
  ASSERT_TRUE(DecodeFixtureFile(FixturePath(fixture), &file).ok());
  ASSERT_GT(file.events.size(), 20u);
  const size_t k = file.events.size() / 2;
  const uint64_t from = file.offsets[k];
  Open(fixture);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(conn_->DumpFromPosition(BaseName(fixture), static_cast<uint32_t>(from), kReplicaId).ok());
  StreamDecode got;
  Status s = ReadStream(conn_.get(), &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectPreamble(got, BaseName(fixture), from);
  ASSERT_EQ(got.events.size(), file.events.size() - k + 2);
  for (size_t i = k; i < file.events.size(); ++i) EXPECT_EQ(got.events[i - k + 2], file.events[i]) << i;
  std::vector<std::string> expected;
  for (size_t i = 0; i < file.rows.size(); ++i) {
    if (file.row_offsets[i] >= from) expected.push_back(file.rows[i].second);
  }
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(got.rows, expected);
}

TEST_F(ReplayDump, GtidDumpSkipsTheExecutedTransactions) {
  for (const std::string& fixture : Mysql8GtidFixtures()) {
    FileDecode file;
    ASSERT_TRUE(DecodeFixtureFile(FixturePath(fixture), &file).ok());
    ASSERT_GE(file.gtids.size(), 2u) << fixture;
    for (size_t skip : {size_t{0}, size_t{1}, file.gtids.size() - 1, file.gtids.size()}) {
      SCOPED_TRACE(fixture + ", first " + std::to_string(skip) + " GTIDs executed");
      std::string executed;
      for (size_t i = 0; i < skip; ++i) executed += (i ? "," : "") + file.gtids[i];
      Open(fixture);
      if (HasFatalFailure()) return;
      Status s = conn_->DumpFromGtidSet(executed, kReplicaId);
      ASSERT_TRUE(s.ok()) << s.ToString();
      StreamDecode got;
      s = ReadStream(conn_.get(), &got);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_TRUE(got.heartbeat);
      EXPECT_EQ(got.rows, RowsAfterGtids(file, skip));
      size_t gtid_events = 0;
      for (const std::string& ev : got.events) gtid_events += static_cast<uint8_t>(ev[4]) == 33;
      EXPECT_EQ(gtid_events, file.gtids.size() - skip);
      EXPECT_EQ(primary_->stats().transactions_skipped, skip);
      EXPECT_EQ(primary_->stats().gtid_dumps, 1u);
    }
  }
}

// ---- start positions the primary does not have: ERROR 1236, never a hang ----

void ExpectRefused(mysql::DumpConnection* conn, std::string_view message_part) {
  std::string_view ev;
  Status s = conn->ReadEvent(&ev);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(conn->last_server_error().code, mysql::kErMasterFatalReadingBinlog) << s.ToString();
  EXPECT_NE(s.message().find(message_part), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("SHOW BINARY LOGS"), std::string::npos) << s.ToString();  // the hint: what to do
}

TEST_F(ReplayDump, UnknownFileIsRefused) {
  Open("rust_mysql_common/mysql_type_bit.000001");
  if (HasFatalFailure()) return;
  ASSERT_TRUE(conn_->DumpFromPosition("mysql-bin.000099", 4, kReplicaId).ok());
  ExpectRefused(conn_.get(), "Could not find first log file");
}

TEST_F(ReplayDump, PurgedBinlogIsRefused) {
  Open("rust_mysql_common/mysql_type_bit.000001");
  if (HasFatalFailure()) return;
  primary_->SetBinlogPurged(true);
  ASSERT_TRUE(conn_->DumpFromGtidSet("", kReplicaId).ok());
  ExpectRefused(conn_.get(), "purged");
}

TEST_F(ReplayDump, PositionInsideAnEventIsRefused) {
  Open("rust_mysql_common/mysql_type_bit.000001");
  if (HasFatalFailure()) return;
  ASSERT_TRUE(conn_->DumpFromPosition("mysql_type_bit.000001", 130, kReplicaId).ok());
  ExpectRefused(conn_.get(), "not the start of an event");
}

TEST_F(ReplayDump, ReplicaWithoutChecksumsIsRefused) {
  o_ = ReplayPrimaryOptions{};
  o_.binlog_files = {FixturePath("rust_mysql_common/mysql_type_bit.000001")};
  primary_ = StartPrimary(o_);
  ASSERT_TRUE(primary_);
  mysql::DumpConnection conn(ReplicaOptions(*primary_, o_));
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("mysql_type_bit.000001", 4, kReplicaId).ok());
  ExpectRefused(&conn, "checksum");
}

}  // namespace
}  // namespace canal::testing
