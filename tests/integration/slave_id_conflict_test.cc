// Two canal-servers on one MariaDB with the same slave id. The
// primary drops the replica that was there first when the second registers
// (ERROR 4052); the established one takes its id back once, and the one
// knocked off then stops for good, naming canal.instance.mysql.slaveId. The
// result: one streams, the other reports "failed", never a flip-flop where both
// take turns reporting "streaming".
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/canal_install.h"
#include "support/mariadb_sandbox.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint16_t kPort = TestPort("slave_id");
constexpr char kSameId[] = "canal.instance.mysql.slaveId = 4242\n";

class SlaveIdConflict : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sandbox_ = StartSuiteSandbox(kPort, &setup_error_); }
  static void TearDownTestSuite() { sandbox_.reset(); }

  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    ASSERT_TRUE(fs::exists(CanalInstall::ServerProgram())) << "build the canal-server target first";
    for (int i = 0; i < 2; ++i) {
      servers_[i] = std::make_unique<CanalInstall>("slave-id-conflict-" + std::to_string(i), kPort);
      servers_[i]->WriteServerProperties(CanalInstall::ServerProperties(0));
      servers_[i]->WriteInstance("example", kSameId);
    }
  }

  std::string Log(int i) const { return ReadAll(servers_[i]->instance_log("example")); }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
  std::unique_ptr<CanalInstall> servers_[2];
};

TEST_F(SlaveIdConflict, TheReplicaKnockedOffStopsNamingTheKeyAndTheOtherKeepsStreaming) {
  std::string out;
  ASSERT_EQ(servers_[0]->Startup(&out), 0) << out;
  ASSERT_TRUE(WaitForText(servers_[0]->instance_log("example"), "[example] starting from", 20s)) << Log(0);
  // Long enough for the first to count as established (5 s of streaming).
  std::this_thread::sleep_for(7s);
  ASSERT_EQ(servers_[1]->Startup(&out), 0) << out;

  // Exactly one of them stops, saying why and what to change.
  const std::string stopped = "parser stopped: Invalid argument: another replica registered on";
  int failed = -1;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       failed < 0 && std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(200ms)) {
    for (int i = 0; i < 2; ++i) {
      if (Log(i).find(stopped) != std::string::npos) failed = i;
    }
  }
  ASSERT_GE(failed, 0) << "neither stopped:\n" << Log(0) << "\n----\n" << Log(1);
  const int streaming = 1 - failed;
  const std::string failed_log = Log(failed);
  EXPECT_NE(failed_log.find("slave id 4242"), std::string::npos) << failed_log;
  EXPECT_NE(failed_log.find("canal.instance.mysql.slaveId"), std::string::npos) << failed_log;
  EXPECT_NE(failed_log.find("ERROR 4052"), std::string::npos) << failed_log;

  // The other streams on: it reads a change made now, and reports streaming;
  // the stopped one reports failed and never reconnects.
  ASSERT_TRUE(sandbox_->Sql("CREATE DATABASE IF NOT EXISTS conflict; CREATE TABLE IF NOT EXISTS conflict.t "
                            "(id INT PRIMARY KEY); INSERT INTO conflict.t VALUES (1)"));
  EXPECT_TRUE(WaitForText(servers_[streaming]->instance_log("example"), "CREATE TABLE IF NOT EXISTS conflict.t", 15s))
      << Log(streaming);
  EXPECT_TRUE(WaitForText(servers_[failed]->instance_log("example"), "[example] status: failed at", 15s))
      << Log(failed);
  EXPECT_TRUE(WaitForText(servers_[streaming]->instance_log("example"), "[example] status: streaming at", 15s))
      << Log(streaming);
  const std::string after = Log(failed).substr(Log(failed).find(stopped));
  EXPECT_EQ(after.find("resuming from"), std::string::npos) << after;
  EXPECT_EQ(after.find("status: streaming"), std::string::npos) << after;
  EXPECT_EQ(Log(streaming).find(stopped), std::string::npos) << Log(streaming);
  EXPECT_TRUE(servers_[0]->Running());
  EXPECT_TRUE(servers_[1]->Running());
}

}  // namespace
}  // namespace canal::testing
