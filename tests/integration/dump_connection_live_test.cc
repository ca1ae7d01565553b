// DumpConnection against a real MariaDB (a throwaway sandbox started here): log
// in as the replication user, stream the binlog from a file position and from a
// GTID state, and get the server's errors (wrong password, missing privilege,
// missing start file, KILL) as readable Statuses. Needs Debian's mariadb-server;
// skips with a message where it is not installed.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/mysql/dump_connection.h"
#include "support/mariadb_sandbox.h"
#include "support/test_ports.h"

using canal::testing::TestPort;

namespace canal::mysql {
namespace {

using binlog::EventType;

constexpr int kPort = TestPort("dump_query_live");

class DumpConnectionLive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = testing::StartSuiteSandbox(kPort, &setup_error_, std::string(CANAL_BINARY_DIR) + "/test-sandboxes/dump");
    if (sandbox_ == nullptr) return;
    std::string err;
    if (!RootSql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20));"
                 "CREATE USER 'norepl'@'127.0.0.1' IDENTIFIED BY 'norepl';"
                 "GRANT SELECT ON *.* TO 'norepl'@'127.0.0.1';",
                 &err)) {
      setup_error_ = "setup SQL failed: " + err;
      sandbox_.reset();
    }
  }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override { CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_); }

  // SQL as root over the socket; *out gets the batch output (or the error).
  static bool RootSql(const std::string& sql, std::string* out) {
    const bool ok = sandbox_->Sql(sql, out);
    if (!ok) *out = sandbox_->error();
    while (!out->empty() && out->back() == '\n') out->pop_back();
    return ok;
  }
  static std::string RootValue(const std::string& sql) {
    std::string out;
    EXPECT_TRUE(RootSql(sql, &out)) << out;
    return out;
  }

  static ConnectionOptions Options(std::string user = "canal", std::string password = "canal") {
    ConnectionOptions o;
    o.host = "127.0.0.1";
    o.port = kPort;
    o.user = std::move(user);
    o.password = std::move(password);
    o.read_timeout_ms = 15'000;
    return o;
  }

  // What a replica says before COM_BINLOG_DUMP: checksums as the server writes
  // them, and MariaDB GTID events instead of the old-style fallbacks.
  static Status PrepareReplica(DumpConnection* conn, uint32_t server_id) {
    CANAL_RETURN_IF_ERROR(conn->Execute("SET @master_binlog_checksum = @@global.binlog_checksum"));
    CANAL_RETURN_IF_ERROR(conn->Execute("SET @mariadb_slave_capability = 4"));
    return conn->RegisterSlave(server_id);
  }

  static std::string FirstBinlog(DumpConnection* conn) {
    ResultSet rs;
    Status s = conn->Query("SHOW BINARY LOGS", &rs);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (rs.rows.empty() || !rs.rows[0][0]) return "";
    return *rs.rows[0][0];
  }

  static inline std::unique_ptr<testing::MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
};

TEST_F(DumpConnectionLive, StreamsFormatDescriptionAndTheRowEventsOfNewWrites) {
  DumpConnection conn(Options());
  Status s = conn.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(conn.is_mariadb()) << conn.server_version();
  EXPECT_EQ(conn.auth_plugin(), "mysql_native_password");
  EXPECT_GT(conn.connection_id(), 0u);
  const std::string first = FirstBinlog(&conn);
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(PrepareReplica(&conn, 1001).ok());
  ASSERT_TRUE(conn.DumpFromPosition(first, 4, 1001).ok());

  std::string out;
  ASSERT_TRUE(RootSql("INSERT INTO d.t VALUES (1, 'one'), (2, 'two'); INSERT INTO d.t VALUES (3, 'three');", &out))
      << out;

  binlog::EventDecoder decoder;
  decoder.set_source_name("stream from 127.0.0.1:" + std::to_string(kPort));
  std::set<EventType> seen;
  const std::set<EventType> wanted = {EventType::kFormatDescription, EventType::kMariaGtid, EventType::kTableMap,
                                      EventType::kWriteRowsV1, EventType::kXid};
  int write_rows_events = 0;  // one per INSERT statement
  for (int i = 0; i < 10'000 &&
                  (!std::includes(seen.begin(), seen.end(), wanted.begin(), wanted.end()) || write_rows_events < 2);
       ++i) {
    std::string_view ev;
    s = conn.ReadEvent(&ev);
    ASSERT_TRUE(s.ok()) << s.ToString();
    binlog::Event decoded;
    s = decoder.Decode(reinterpret_cast<const uint8_t*>(ev.data()), ev.size(), 0, &decoded);
    ASSERT_TRUE(s.ok()) << s.ToString();
    seen.insert(decoded.type());
    if (decoded.type() == EventType::kWriteRowsV1) ++write_rows_events;
  }
  for (EventType t : wanted) EXPECT_TRUE(seen.count(t)) << "no " << binlog::EventTypeName(t) << " event streamed";
  EXPECT_EQ(write_rows_events, 2);
  EXPECT_GT(conn.bytes_received(), 0u);
}

TEST_F(DumpConnectionLive, WrongPasswordGivesTheServersError1045) {
  DumpConnection conn(Options("canal", "not-the-password"));
  Status s = conn.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(conn.last_server_error().code, kErAccessDenied);
  EXPECT_NE(s.message().find("Access denied for user 'canal'"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("127.0.0.1:" + std::to_string(kPort)), std::string_view::npos) << s.ToString();
}

TEST_F(DumpConnectionLive, UserWithoutReplicationSlaveGetsAReadableErrorAtDumpTime) {
  DumpConnection conn(Options("norepl", "norepl"));
  Status s = conn.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = PrepareReplica(&conn, 1002);
  if (s.ok()) {
    ASSERT_TRUE(conn.DumpFromPosition("", 4, 1002).ok());
    std::string_view ev;
    s = conn.ReadEvent(&ev);
  }
  ASSERT_FALSE(s.ok());
  // MariaDB says 1045 here, MySQL 1227; either way the fix is a grant, not a password.
  const uint16_t code = conn.last_server_error().code;
  EXPECT_TRUE(code == kErAccessDenied || code == kErSpecificAccessDenied) << s.ToString();
  EXPECT_NE(s.message().find("GRANT REPLICATION SLAVE"), std::string_view::npos) << s.ToString();
  EXPECT_EQ(s.message().find("dbPassword"), std::string_view::npos) << "not a password problem: " << s.ToString();
  std::printf("[ live ] %s\n", s.ToString().c_str());
}

TEST_F(DumpConnectionLive, MissingStartFileGivesError1236) {
  DumpConnection conn(Options());
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(PrepareReplica(&conn, 1003).ok());
  ASSERT_TRUE(conn.DumpFromPosition("mariadb-bin.999999", 4, 1003).ok());
  std::string_view ev;
  Status s = conn.ReadEvent(&ev);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(conn.last_server_error().code, kErMasterFatalReadingBinlog) << s.ToString();
  EXPECT_NE(s.message().find("ERROR 1236"), std::string_view::npos) << s.ToString();
  std::printf("[ live ] %s\n", s.ToString().c_str());
}

TEST_F(DumpConnectionLive, KillFromRootEndsABlockedReadPromptly) {
  DumpConnection conn(Options());
  ASSERT_TRUE(conn.Connect().ok());
  const std::string first = FirstBinlog(&conn);
  ASSERT_TRUE(PrepareReplica(&conn, 1004).ok());
  ASSERT_TRUE(conn.DumpFromPosition(first, 4, 1004).ok());
  const uint32_t id = conn.connection_id();
  std::string kill_output;
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    RootSql("KILL " + std::to_string(id), &kill_output);
  });
  // Drain what exists; the read that blocks at the end must be ended by the KILL
  // (the 15 s read timeout is far away).
  auto start = std::chrono::steady_clock::now();
  Status s;
  std::string_view ev;
  int events = 0;
  while ((s = conn.ReadEvent(&ev)).ok()) ++events;
  auto elapsed = std::chrono::steady_clock::now() - start;
  killer.join();
  EXPECT_GT(events, 0);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_LT(elapsed, std::chrono::seconds(5)) << s.ToString();
  EXPECT_FALSE(conn.connected());
  std::printf("[ live ] after KILL: %s\n", s.ToString().c_str());
}

TEST_F(DumpConnectionLive, MariadbGtidStartBeginsAfterTheGivenGtid) {
  std::string out;
  ASSERT_TRUE(RootSql("INSERT INTO d.t VALUES (100, 'before')", &out)) << out;
  const std::string state = RootValue("SELECT @@gtid_binlog_pos");  // "0-1-N"
  ASSERT_FALSE(state.empty());
  ASSERT_TRUE(RootSql("INSERT INTO d.t VALUES (101, 'after')", &out)) << out;
  const uint64_t last_seq = std::stoull(state.substr(state.rfind('-') + 1));

  DumpConnection conn(Options());
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.Execute("SET @slave_connect_state = '" + state + "'").ok());
  ASSERT_TRUE(PrepareReplica(&conn, 1005).ok());
  ASSERT_TRUE(conn.DumpFromPosition("", 4, 1005).ok());
  binlog::EventDecoder decoder;
  std::vector<uint64_t> gtids;
  for (int i = 0; i < 1000 && gtids.empty(); ++i) {
    std::string_view ev;
    Status s = conn.ReadEvent(&ev);
    ASSERT_TRUE(s.ok()) << s.ToString();
    binlog::Event decoded;
    s = decoder.Decode(reinterpret_cast<const uint8_t*>(ev.data()), ev.size(), 0, &decoded);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (const auto* g = decoded.As<binlog::MariaGtidEvent>()) gtids.push_back(g->seq_no);
  }
  ASSERT_FALSE(gtids.empty());
  EXPECT_EQ(gtids.front(), last_seq + 1) << "started from " << state;
}

}  // namespace
}  // namespace canal::mysql
