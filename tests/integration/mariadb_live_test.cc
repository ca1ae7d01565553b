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
#include "support/vv_compare.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kPort = 13421;

std::string Sh(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    *rc = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

bool HaveMariadb() {
  return (fs::exists("/usr/sbin/mariadbd") || fs::exists("/usr/bin/mariadbd")) &&
         std::system("command -v mariadb-binlog >/dev/null 2>&1") == 0;
}

class MariadbLive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!HaveMariadb()) return;
    dir_ = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/mariadb-live";
    sandbox_ = "bash " + std::string(CANAL_SOURCE_DIR) + "/scripts/mariadb-sandbox.sh";
    int rc = 0;
    Sh(sandbox_ + " stop --port " + std::to_string(kPort) + " --dir " + dir_ + " --wipe 2>&1", &rc);
    std::string out = Sh(sandbox_ + " start --port " + std::to_string(kPort) + " --dir " + dir_ + " 2>&1", &rc);
    if (rc != 0) {
      setup_error_ = "sandbox did not start: " + out;
      return;
    }
    const std::string sql = std::string(CANAL_SOURCE_DIR) + "/tests/integration/sql/workload.sql";
    out = Sh("mariadb --no-defaults --socket=" + dir_ + "/mariadbd.sock -uroot --default-character-set=utf8mb4 < " +
                 sql + " 2>&1",
             &rc);
    if (rc != 0) {
      setup_error_ = "workload failed: " + out;
      return;
    }
    // A clean shutdown closes the last binlog with a STOP event.
    Sh(sandbox_ + " stop --port " + std::to_string(kPort) + " --dir " + dir_ + " 2>&1", &rc);
    ready_ = true;
  }
  static void TearDownTestSuite() {
    if (!sandbox_.empty()) {
      int rc = 0;
      Sh(sandbox_ + " stop --port " + std::to_string(kPort) + " --dir " + dir_ + " 2>&1", &rc);
    }
  }
  void SetUp() override {
    if (!HaveMariadb()) GTEST_SKIP() << "mariadb-server is not installed (scripts/install-deps.sh installs it)";
    ASSERT_TRUE(ready_) << setup_error_;
  }
  static std::vector<std::string> Binlogs() {
    std::vector<std::string> files;
    Status s = binlog::ExpandBinlogPaths({dir_ + "/binlog"}, &files);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return files;
  }

  static inline std::string dir_, sandbox_, setup_error_;
  static inline bool ready_ = false;
};

TEST_F(MariadbLive, EveryRowAndValueMatchesMariadbBinlogVv) {
  auto files = Binlogs();
  ASSERT_GE(files.size(), 2u);
  uint64_t rows = 0, values = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    int rc = 0;
    const std::string vv = f + ".vv.txt";
    std::string err = Sh("mariadb-binlog -vv --base64-output=decode-rows " + f + " > " + vv + " 2>&1", &rc);
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
