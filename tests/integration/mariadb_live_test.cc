// Decodes binlogs that a real MariaDB (a throwaway sandbox started here) wrote
// for our own workload of every column type, and checks every row and value
// against `mariadb-binlog -vv` on the same files. Needs Debian's mariadb-server;
// skips with a message where it is not installed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "support/binlog_walk.h"
#include "support/mariadb_sandbox.h"
#include "support/test_ports.h"
#include "support/vv_compare.h"

namespace canal::testing {
namespace {


constexpr int kPort = TestPort("mariadb_live");

class MariadbLive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = StartSuiteSandbox(kPort, &setup_error_, std::string(CANAL_BINARY_DIR) + "/test-sandboxes/mariadb-live");
    if (sandbox_ == nullptr) return;
    const std::string sql = std::string(CANAL_SOURCE_DIR) + "/tests/integration/sql/workload.sql";
    if (!sandbox_->SqlFile(sql)) {
      setup_error_ = "workload failed: " + sandbox_->error();
      sandbox_.reset();
      return;
    }
    // A clean shutdown closes the last binlog with a STOP event.
    sandbox_->Stop();
  }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    if (std::system("command -v mariadb-binlog >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "mariadb-binlog is not installed (scripts/install-deps.sh installs mariadb-client)";
    }
  }
  static std::vector<std::string> Binlogs() {
    std::vector<std::string> files;
    Status s = binlog::ExpandBinlogPaths({sandbox_->binlog_dir()}, &files);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return files;
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
};

TEST_F(MariadbLive, EveryRowAndValueMatchesMariadbBinlogVv) {
  auto files = Binlogs();
  ASSERT_GE(files.size(), 2u);
  uint64_t rows = 0, values = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    int rc = 0;
    const std::string vv = f + ".vv.txt";
    std::string err = RunShell("mariadb-binlog -vv --base64-output=decode-rows " + f + " > " + vv, &rc);
    ASSERT_EQ(rc, 0) << err;
    VvComparison c = CompareWithMariadbBinlogVv(f, vv);
    EXPECT_TRUE(c.ok) << c.failure;
    rows += c.rows;
    values += c.values;
  }
  std::printf("[ live ] %zu binlog files, %llu rows, %llu values compared with mariadb-binlog -vv\n", files.size(),
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(values));
  EXPECT_GT(rows, 2000u);
}

TEST_F(MariadbLive, WorkloadProducedTheEventKindsItIsMeantToCover) {
  std::map<uint8_t, uint64_t> counts;
  for (const auto& f : Binlogs()) {
    WalkResult r = WalkBinlog(f);
    ASSERT_TRUE(r.error.ok()) << r.error.ToString();
    for (const auto& [k, v] : r.outer_counts) counts[k] += v;
  }
  for (uint8_t t : {2, 3, 4, 15, 16, 19, 23, 24, 25, 160, 161, 162, 163, 165, 166, 167, 168}) {
    EXPECT_GT(counts[t], 0u) << "no " << binlog::EventTypeLabel(t) << " event in the workload's binlogs";
  }
}

}  // namespace
}  // namespace canal::testing
