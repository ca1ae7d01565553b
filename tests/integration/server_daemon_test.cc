// The daemon as an operator runs it, against a MariaDB sandbox: an install
// layout (bin/ with startup.sh, stop.sh and canal-server; conf/ pointing at
// the sandbox) where startup.sh starts canal-server in the background, the
// server and instance logs appear, a second startup.sh refuses, a destination
// folder added while it runs starts by auto scan, and stop.sh stops it
// cleanly. A bad key value in either file makes canal-server exit 2 naming
// file, key and value; SIGTERM ends it with 0.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/mariadb_sandbox.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint16_t kPort = 13451;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Polls `file` until it contains `text` or `limit` passes.
bool WaitForText(const fs::path& file, const std::string& text, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  do {
    if (ReadAll(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(100ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

std::string Quote(const fs::path& p) { return "'" + p.string() + "'"; }

class ServerDaemonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sandbox_ = StartSuiteSandbox(kPort, &setup_error_); }
  static void TearDownTestSuite() { sandbox_.reset(); }

  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    server_bin_ = fs::path(CANAL_BINARY_DIR) / "bin" / "canal-server";
    ASSERT_TRUE(fs::exists(server_bin_)) << server_bin_ << " is missing: build the canal-server target first";
    root_ = fs::path(CANAL_BINARY_DIR) / "test-sandboxes" /
            ("server-daemon-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    // The install layout: scripts and the program side by side in bin/.
    fs::create_directories(root_ / "bin");
    for (const char* script : {"startup.sh", "stop.sh", "canal-common.sh"}) {
      fs::copy_file(fs::path(CANAL_SOURCE_DIR) / "bin" / script, root_ / "bin" / script);
    }
    fs::create_symlink(server_bin_, root_ / "bin" / "canal-server");
    // Port 0: any free port, so parallel runs never collide.
    WriteFile(root_ / "conf" / "canal.properties",
              "canal.ip = 127.0.0.1\ncanal.port = 0\ncanal.destinations = example\n"
              "canal.auto.scan = true\ncanal.auto.scan.interval = 1\n");
    WriteInstance("example");
  }

  void TearDown() override {
    // Whatever happened, leave no server behind.
    if (fs::exists(root_ / "bin" / "canal.pid")) {
      int rc = 0;
      RunShell(Quote(root_ / "bin" / "stop.sh"), &rc);
    }
  }

  void WriteInstance(const std::string& dest, const std::string& extra = "") {
    WriteFile(root_ / "conf" / dest / "instance.properties",
              "canal.instance.master.address = 127.0.0.1:" + std::to_string(kPort) +
                  "\ncanal.instance.dbUsername = canal\ncanal.instance.dbPassword = canal\n" + extra);
  }

  fs::path ServerLog() const { return root_ / "logs" / "canal" / "canal.log"; }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
  fs::path server_bin_, root_;
};

TEST_F(ServerDaemonTest, StartupRunsTheServerInTheBackgroundAndStopStopsIt) {
  int rc = -1;
  std::string out = RunShell(Quote(root_ / "bin" / "startup.sh"), &rc);
  ASSERT_EQ(rc, 0) << out << "\n" << ReadAll(ServerLog());
  EXPECT_NE(out.find("canal-server started (pid"), std::string::npos) << out;
  EXPECT_NE(out.find(ServerLog().string()), std::string::npos) << out;  // says where the logs are
  ASSERT_TRUE(fs::exists(root_ / "bin" / "canal.pid"));
  const std::string pid = ReadAll(root_ / "bin" / "canal.pid");

  // The server's log and the instance's own log, with the replica streaming.
  EXPECT_NE(ReadAll(ServerLog()).find("destination example started"), std::string::npos) << ReadAll(ServerLog());
  const fs::path instance_log = root_ / "logs" / "example" / "example.log";
  EXPECT_TRUE(WaitForText(instance_log, "[example] starting from", 15s)) << ReadAll(instance_log);
  sandbox_->Sql("CREATE DATABASE IF NOT EXISTS daemon_test; CREATE TABLE IF NOT EXISTS daemon_test.t (id INT "
                "PRIMARY KEY); INSERT INTO daemon_test.t VALUES (1)");

  // A second start is refused while the first runs; the pid file stays.
  out = RunShell(Quote(root_ / "bin" / "startup.sh"), &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("already running (pid " + pid.substr(0, pid.find('\n'))), std::string::npos) << out;
  EXPECT_EQ(ReadAll(root_ / "bin" / "canal.pid"), pid);

  // Auto scan: a destination folder added now starts with its own log.
  WriteInstance("second");
  EXPECT_TRUE(WaitForText(ServerLog(), "destination second started", 10s)) << ReadAll(ServerLog());
  EXPECT_TRUE(WaitForText(root_ / "logs" / "second" / "second.log", "[second] starting", 10s));

  // The periodic status line (every 10 s).
  EXPECT_TRUE(WaitForText(instance_log, "[example] status: streaming at ", 15s)) << ReadAll(instance_log);

  out = RunShell(Quote(root_ / "bin" / "stop.sh"), &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("canal-server stopped"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(root_ / "bin" / "canal.pid"));
  const std::string log = ReadAll(ServerLog());
  EXPECT_NE(log.find("canal-server stopping on SIGTERM"), std::string::npos) << log;
  EXPECT_NE(log.find("canal-server stopped"), std::string::npos) << log;

  out = RunShell(Quote(root_ / "bin" / "stop.sh"), &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("not running"), std::string::npos) << out;
}

// The replica starts at the slowest subscribed client's stored cursor
// (meta.dat, in Canal's JSON), not at the primary's end.
TEST_F(ServerDaemonTest, TheReplicaStartsAtTheSlowestStoredCursor) {
  const std::string file = sandbox_->SqlValue("SHOW MASTER STATUS");
  ASSERT_FALSE(file.empty()) << sandbox_->error();
  auto client = [&](int id, int position) {
    return "{\"clientIdentity\":{\"clientId\":" + std::to_string(id) +
           ",\"destination\":\"example\",\"filter\":\"\"},\"cursor\":{\"identity\":{\"slaveId\":-1,"
           "\"sourceAddress\":{\"address\":\"127.0.0.1\",\"port\":" + std::to_string(kPort) +
           "}},\"postion\":{\"gtid\":\"\",\"included\":false,\"journalName\":\"" + file +
           "\",\"position\":" + std::to_string(position) + ",\"serverId\":1,\"timestamp\":0}}}";
  };
  WriteFile(root_ / "conf" / "example" / "meta.dat",
            "{\"clientDatas\":[" + client(1001, 900000) + "," + client(1002, 4) + "],\"destination\":\"example\"}");
  int rc = -1;
  std::string out = RunShell(Quote(root_ / "bin" / "startup.sh"), &rc);
  ASSERT_EQ(rc, 0) << out;
  const fs::path instance_log = root_ / "logs" / "example" / "example.log";
  EXPECT_TRUE(WaitForText(instance_log, "[example] starting from " + file + ":4 (stored cursor)", 15s))
      << ReadAll(instance_log);
  out = RunShell(Quote(root_ / "bin" / "stop.sh"), &rc);
  EXPECT_EQ(rc, 0) << out;
  // Both cursors are still there after the stop wrote the file.
  const std::string meta = ReadAll(root_ / "conf" / "example" / "meta.dat");
  EXPECT_NE(meta.find("\"position\":900000"), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"position\":4"), std::string::npos) << meta;
}

TEST_F(ServerDaemonTest, SigtermEndsTheServerWithExitCodeZero) {
  int rc = -1;
  const std::string script =
      Quote(server_bin_) + " --conf " + Quote(root_ / "conf") + " --logs " + Quote(root_ / "logs") +
      " >/dev/null 2>&1 & pid=$!; for i in $(seq 1 100); do grep -q 'canal-server started' " + Quote(ServerLog()) +
      " 2>/dev/null && break; sleep 0.1; done; kill -TERM $pid; wait $pid; echo exit=$?";
  std::string out = RunShell(script, &rc);
  EXPECT_NE(out.find("exit=0"), std::string::npos) << out << ReadAll(ServerLog());
  EXPECT_NE(ReadAll(ServerLog()).find("canal-server stopped"), std::string::npos);
}

TEST_F(ServerDaemonTest, ABadServerKeyValueExitsTwoNamingFileKeyAndValue) {
  WriteFile(root_ / "conf" / "canal.properties", "canal.port = 11111\ncanal.auto.scan = sometimes\n");
  int rc = -1;
  std::string out = RunShell(Quote(server_bin_) + " --conf " + Quote(root_ / "conf") + " --logs " +
                                 Quote(root_ / "logs"),
                             &rc);
  EXPECT_EQ(rc, 2) << out;
  const std::string where = (root_ / "conf" / "canal.properties").string() + ":2";
  EXPECT_NE(out.find(where + ": canal.auto.scan = 'sometimes'"), std::string::npos) << out;
  EXPECT_NE(ReadAll(ServerLog()).find("canal.auto.scan = 'sometimes'"), std::string::npos);  // logged too

  // startup.sh reports the failure with the message.
  out = RunShell(Quote(root_ / "bin" / "startup.sh"), &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("failed to start (exit code 2"), std::string::npos) << out;
  EXPECT_NE(out.find("canal.auto.scan = 'sometimes'"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(root_ / "bin" / "canal.pid"));
}

TEST_F(ServerDaemonTest, ABadInstanceKeyValueExitsTwoNamingFileKeyAndValue) {
  WriteInstance("example", "canal.instance.memory.batch.mode = BYTES\n");
  int rc = -1;
  std::string out = RunShell(Quote(server_bin_) + " --conf " + Quote(root_ / "conf") + " --logs " +
                                 Quote(root_ / "logs"),
                             &rc);
  EXPECT_EQ(rc, 2) << out;
  const std::string where = (root_ / "conf" / "example" / "instance.properties").string() + ":4";
  EXPECT_NE(out.find(where + ": canal.instance.memory.batch.mode = 'BYTES'"), std::string::npos) << out;
}

TEST_F(ServerDaemonTest, AnUnknownOptionIsABadCommandLine) {
  int rc = -1;
  std::string out = RunShell(Quote(server_bin_) + " --no-such-option", &rc);
  EXPECT_EQ(rc, 2) << out;
}

}  // namespace
}  // namespace canal::testing
