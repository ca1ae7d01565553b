// The daemon as an operator runs it, against a MariaDB sandbox: an install
// layout (bin/ with startup.sh, stop.sh and canal-server; conf/ pointing at
// the sandbox) where startup.sh starts canal-server in the background, the
// server and instance logs appear, a second startup.sh refuses, a destination
// folder added while it runs starts by auto scan, and stop.sh stops it
// cleanly. A bad key value in either file makes canal-server exit 2 naming
// file, key and value; SIGTERM ends it with 0.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "support/canal_install.h"
#include "support/mariadb_sandbox.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint16_t kPort = TestPort("daemon");

class ServerDaemonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sandbox_ = StartSuiteSandbox(kPort, &setup_error_); }
  static void TearDownTestSuite() { sandbox_.reset(); }

  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    server_bin_ = CanalInstall::ServerProgram();
    ASSERT_TRUE(fs::exists(server_bin_)) << server_bin_ << " is missing: build the canal-server target first";
    install_ = std::make_unique<CanalInstall>(
        "server-daemon-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()), kPort);
    // Port 0: any free port, so parallel runs never collide.
    install_->WriteServerProperties(CanalInstall::ServerProperties(0));
    WriteInstance("example");
  }

  // Whatever happened, the install's destructor leaves no server behind.
  void TearDown() override { install_.reset(); }

  void WriteInstance(const std::string& dest, const std::string& extra = "") { install_->WriteInstance(dest, extra); }
  fs::path ServerLog() const { return install_->server_log(); }
  std::string Startup(int* rc) const { std::string out; *rc = install_->Startup(&out); return out; }
  std::string Stop(int* rc) const { std::string out; *rc = install_->Stop(&out); return out; }
  std::string ServerCommand() const { return install_->ServerCommand(); }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
  std::unique_ptr<CanalInstall> install_;
  fs::path server_bin_;
};

TEST_F(ServerDaemonTest, StartupRunsTheServerInTheBackgroundAndStopStopsIt) {
  int rc = -1;
  std::string out = Startup(&rc);
  ASSERT_EQ(rc, 0) << out << "\n" << ReadAll(ServerLog());
  EXPECT_NE(out.find("canal-server started (pid"), std::string::npos) << out;
  EXPECT_NE(out.find(ServerLog().string()), std::string::npos) << out;  // says where the logs are
  ASSERT_TRUE(fs::exists(install_->pid_file()));
  const std::string pid = ReadAll(install_->pid_file());

  // The server's log and the instance's own log, with the replica streaming.
  EXPECT_NE(ReadAll(ServerLog()).find("destination example started"), std::string::npos) << ReadAll(ServerLog());
  const fs::path instance_log = install_->instance_log("example");
  EXPECT_TRUE(WaitForText(instance_log, "[example] starting from", 15s)) << ReadAll(instance_log);
  sandbox_->Sql("CREATE DATABASE IF NOT EXISTS daemon_test; CREATE TABLE IF NOT EXISTS daemon_test.t (id INT "
                "PRIMARY KEY); INSERT INTO daemon_test.t VALUES (1)");

  // A second start is refused while the first runs; the pid file stays.
  out = Startup(&rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("already running (pid " + pid.substr(0, pid.find('\n'))), std::string::npos) << out;
  EXPECT_EQ(ReadAll(install_->pid_file()), pid);

  // Auto scan: a destination folder added now starts with its own log.
  WriteInstance("second");
  EXPECT_TRUE(WaitForText(ServerLog(), "destination second started", 10s)) << ReadAll(ServerLog());
  EXPECT_TRUE(WaitForText(install_->instance_log("second"), "[second] starting", 10s));

  // The periodic status line (every 10 s).
  EXPECT_TRUE(WaitForText(instance_log, "[example] status: streaming at ", 15s)) << ReadAll(instance_log);

  out = Stop(&rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("canal-server stopped"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(install_->pid_file()));
  const std::string log = ReadAll(ServerLog());
  EXPECT_NE(log.find("canal-server stopping on SIGTERM"), std::string::npos) << log;
  EXPECT_NE(log.find("canal-server stopped"), std::string::npos) << log;

  out = Stop(&rc);
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
  WriteFile(install_->meta_file("example"),
            "{\"clientDatas\":[" + client(1001, 900000) + "," + client(1002, 4) + "],\"destination\":\"example\"}");
  int rc = -1;
  std::string out = Startup(&rc);
  ASSERT_EQ(rc, 0) << out;
  const fs::path instance_log = install_->instance_log("example");
  EXPECT_TRUE(WaitForText(instance_log, "[example] starting from " + file + ":4 (stored cursor)", 15s))
      << ReadAll(instance_log);
  out = Stop(&rc);
  EXPECT_EQ(rc, 0) << out;
  // Both cursors are still there after the stop wrote the file.
  const std::string meta = ReadAll(install_->meta_file("example"));
  EXPECT_NE(meta.find("\"position\":900000"), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"position\":4"), std::string::npos) << meta;
}

TEST_F(ServerDaemonTest, SigtermEndsTheServerWithExitCodeZero) {
  int rc = -1;
  const std::string script =
      ServerCommand() +
      " >/dev/null 2>&1 & pid=$!; for i in $(seq 1 100); do grep -q 'canal-server started' " + ShellQuoted(ServerLog()) +
      " 2>/dev/null && break; sleep 0.1; done; kill -TERM $pid; wait $pid; echo exit=$?";
  std::string out = RunShell(script, &rc);
  EXPECT_NE(out.find("exit=0"), std::string::npos) << out << ReadAll(ServerLog());
  EXPECT_NE(ReadAll(ServerLog()).find("canal-server stopped"), std::string::npos);
}

TEST_F(ServerDaemonTest, ABadServerKeyValueExitsTwoNamingFileKeyAndValue) {
  install_->WriteServerProperties("canal.port = 11111\ncanal.auto.scan = sometimes\n");
  int rc = -1;
  std::string out = RunShell(ServerCommand(), &rc);
  EXPECT_EQ(rc, 2) << out;
  const std::string where = (install_->conf_dir() / "canal.properties").string() + ":2";
  EXPECT_NE(out.find(where + ": canal.auto.scan = 'sometimes'"), std::string::npos) << out;
  EXPECT_NE(ReadAll(ServerLog()).find("canal.auto.scan = 'sometimes'"), std::string::npos);  // logged too

  // startup.sh reports the failure with the message.
  out = Startup(&rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("failed to start (exit code 2"), std::string::npos) << out;
  EXPECT_NE(out.find("canal.auto.scan = 'sometimes'"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(install_->pid_file()));
}

TEST_F(ServerDaemonTest, ABadInstanceKeyValueExitsTwoNamingFileKeyAndValue) {
  WriteInstance("example", "canal.instance.memory.batch.mode = BYTES\n");
  int rc = -1;
  std::string out = RunShell(ServerCommand(), &rc);
  EXPECT_EQ(rc, 2) << out;
  const std::string where = (install_->conf_dir() / "example" / "instance.properties").string() + ":4";
  EXPECT_NE(out.find(where + ": canal.instance.memory.batch.mode = 'BYTES'"), std::string::npos) << out;
}

TEST_F(ServerDaemonTest, AnUnknownOptionIsABadCommandLine) {
  int rc = -1;
  std::string out = RunShell(ShellQuoted(server_bin_) + " --no-such-option", &rc);
  EXPECT_EQ(rc, 2) << out;
}

}  // namespace
}  // namespace canal::testing
