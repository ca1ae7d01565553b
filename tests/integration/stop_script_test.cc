// bin/stop.sh's exit status, against a stand-in canal-server (a
// shell script of that name, so no database is needed): it exits 0 and says
// "stopped" only when the server logged "canal-server stopped" after the
// SIGTERM; a server that exits after logging that it could not write the
// cursors makes stop.sh exit 1 and show that error.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/canal_install.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Runs `command`; its exit code, and what it printed in *out.
int RunShellCommand(const std::string& command, std::string* out) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class StopScript : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(CANAL_BINARY_DIR) / "test-sandboxes" /
            ("stop-script-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "bin");
    fs::create_directories(root_ / "logs" / "canal");
    for (const char* script : {"stop.sh", "canal-common.sh"}) {
      fs::copy_file(fs::path(CANAL_SOURCE_DIR) / "bin" / script, root_ / "bin" / script);
    }
  }

  // Starts the stand-in: it logs as canal-server does, and on SIGTERM logs
  // `on_term` (lines) and exits with `code`.
  void StartStandIn(const std::string& on_term, int code) {
    const fs::path server = root_ / "bin" / "canal-server";
    WriteFile(server,
              "#!/usr/bin/env bash\n"
              "log=\"$4/canal/canal.log\"\n"
              "line() { echo \"2026-01-01 00:00:00.000 $1  [$$] $2\" >>\"$log\"; }\n"
              "line info 'canal-server starting'\n"
              "trap 'line info \"canal-server stopping on SIGTERM\"; " +
                  on_term + " exit " + std::to_string(code) +
                  "' TERM\n"
                  "while :; do sleep 0.05; done\n");
    fs::permissions(server, fs::perms::owner_all, fs::perm_options::add);
    std::string out;
    ASSERT_EQ(RunShellCommand("cd " + ShellQuoted(root_) + " && { nohup bin/canal-server --conf conf --logs " +
                      ShellQuoted(root_ / "logs") + " >/dev/null 2>&1 </dev/null & echo $! > bin/canal.pid; }",
                  &out),
              0)
        << out;
    ASSERT_TRUE(WaitForText(root_ / "logs" / "canal" / "canal.log", "canal-server starting", 10s));
  }

  int Stop(std::string* out) { return RunShellCommand(ShellQuoted(root_ / "bin" / "stop.sh"), out); }

  fs::path root_;
};

TEST_F(StopScript, ACleanStopExitsZero) {
  StartStandIn("line info \"canal-server stopped\";", 0);
  std::string out;
  EXPECT_EQ(Stop(&out), 0) << out;
  EXPECT_NE(out.find("canal-server stopped (pid"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(root_ / "bin" / "canal.pid"));
}

TEST_F(StopScript, AStopThatCouldNotWriteTheCursorsExitsOneAndSaysWhy) {
  StartStandIn("line error \"writing the cursors at stop failed: IO error: /data/example/meta.dat: No space left\";",
               1);
  std::string out;
  EXPECT_EQ(Stop(&out), 1) << out;
  EXPECT_NE(out.find("exited, but not cleanly"), std::string::npos) << out;
  EXPECT_NE(out.find("writing the cursors at stop failed"), std::string::npos) << out;
  EXPECT_EQ(out.find("canal-server stopped (pid"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(root_ / "bin" / "canal.pid"));  // it is gone all the same
}

TEST_F(StopScript, AServerThatDiesWithoutAWordExitsOne) {
  StartStandIn("", 137);
  std::string out;
  EXPECT_EQ(Stop(&out), 1) << out;
  EXPECT_NE(out.find("exited, but not cleanly"), std::string::npos) << out;
}

TEST_F(StopScript, AStoppedLineFromAnEarlierRunDoesNotCount) {
  WriteFile(root_ / "logs" / "canal" / "canal.log", "2025-01-01 00:00:00.000 info  [1] canal-server stopped\n");
  StartStandIn("", 1);
  std::string out;
  EXPECT_EQ(Stop(&out), 1) << out;
}

}  // namespace
}  // namespace canal::testing
