// The schema history live with a lagging client, end to end through
// canal-server and the SDK on a MariaDB with binlog_row_metadata=MINIMAL: a
// slow client (small batches, a pause after each) is seconds behind a burst of
// transactions when `ALTER TABLE t MODIFY c INT AFTER id` (two INT columns swap
// places) and an ADD COLUMN land, and a table outside the filter is altered.
// The destination's ring is small, so the server's own reading of the binlog is
// held back behind the client too: it decodes the ALTERed table's rows long
// after information_schema changed. Every row must carry the names its table
// had when it was written. MariaDB on port 14905, canal-server on 14906.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kDbPort = TestPort("schema_lag");
constexpr uint16_t kServerPort = TestPort("schema_lag", 1);
constexpr int kBurst = 300;  // one-row transactions before the DDL: 3 entries each

class SchemaHistoryLag : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = StartMinimalSuiteSandbox(kDbPort, &setup_error_);
  }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    ASSERT_TRUE(std::filesystem::exists(CanalInstall::ServerProgram()))
        << CanalInstall::ServerProgram() << " is missing: build the canal-server target first";
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
};

TEST_F(SchemaHistoryLag, ASlowClientSecondsBehindGetsWriteTimeNamesAcrossSwapAndAdd) {
  ASSERT_TRUE(sandbox_->Sql("DROP DATABASE IF EXISTS lag; CREATE DATABASE lag; USE lag;"
                            "CREATE TABLE t (id INT PRIMARY KEY, x INT, c INT);"
                            "CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(100));"
                            "CREATE TABLE other (a INT)"))
      << sandbox_->error();
  CanalInstall install("schema-history-lag", kDbPort);
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort));
  // A 16-entry ring: the server reads the binlog only as fast as the client acks.
  install.WriteInstance("example", StartAtPrimaryEnd(*sandbox_) +
                                       "canal.instance.filter.regex = lag\\\\.t,lag\\\\.big\n"
                                       "canal.instance.memory.buffer.size = 16\n"
                                       "canal.instance.memory.batch.mode = ITEMSIZE\n");
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << "\n" << ReadAll(install.server_log());

  client::Connector c(ServerClientOptions(kServerPort));
  Status s = ConnectAndSubscribe(c, 30s);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << ReadAll(install.server_log());

  // The slow client: 3 entries a get, 25 ms of "work" after each.
  std::mutex mu;
  std::vector<std::string> t_rows;
  std::atomic<int> big_rows{0}, t_count{0};
  std::atomic<bool> stop{false};
  Status client_error;
  Clock::time_point first_t_row_at{};
  std::thread reader([&] {
    while (!stop) {
      client::Message m;
      Status g = c.GetWithoutAck(3, 200, client::TimeUnit::kMilliseconds, &m);
      if (g.ok()) {
        g = ForEachRow(m, [&](const entry::Header& h, entry::EventType, const entry::RowData& row) {
          if (h.tablename() == "big") {
            ++big_rows;
            return;
          }
          std::string line = h.tablename() + ":";
          for (const entry::Column& col : row.aftercolumns()) line += " " + col.name() + "=" + col.value();
          std::lock_guard<std::mutex> lock(mu);
          if (t_rows.empty()) first_t_row_at = Clock::now();
          t_rows.push_back(line);
          ++t_count;
        });
      }
      if (g.ok() && m.batch_id() > 0) g = c.Ack(m.batch_id());
      if (!g.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        client_error = g;
        return;
      }
      std::this_thread::sleep_for(25ms);
    }
  });

  std::string burst = "USE lag;";
  for (int i = 1; i <= kBurst; ++i) burst += "INSERT INTO big VALUES (" + std::to_string(i) + ", REPEAT('p', 100));";
  ASSERT_TRUE(sandbox_->Sql(burst)) << sandbox_->error();
  ASSERT_TRUE(sandbox_->Sql("USE lag; INSERT INTO t (id, x, c) VALUES (1, 100, 1000);"
                            "ALTER TABLE t MODIFY c INT AFTER id;"
                            "INSERT INTO t (id, x, c) VALUES (2, 200, 2000);"
                            "ALTER TABLE t ADD COLUMN n VARCHAR(5) DEFAULT 'z' AFTER id;"
                            "INSERT INTO t (id, x, c, n) VALUES (3, 300, 3000, 'q');"
                            "ALTER TABLE other ADD COLUMN b INT, ADD COLUMN d VARCHAR(3);"
                            "INSERT INTO other VALUES (7, 8, 'x');"
                            "INSERT INTO t (id, x, c) VALUES (4, 400, 4000)"))
      << sandbox_->error();
  const Clock::time_point ddl_done = Clock::now();
  const int big_at_ddl = big_rows, t_at_ddl = t_count;

  const bool all = WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return t_rows.size() >= 4 || !client_error.ok();
  }, 120s);
  stop = true;
  reader.join();
  ASSERT_TRUE(client_error.ok()) << client_error.ToString() << "\n" << ReadAll(install.server_log());
  ASSERT_TRUE(all) << t_rows.size() << " rows of t, " << big_rows << " of big\n" << ReadAll(install.server_log());

  // The client was behind when the DDL landed: it had none of t's rows and
  // not all of the burst (kBurst gets of 25 ms at least: seconds).
  EXPECT_EQ(t_at_ddl, 0);
  EXPECT_LT(big_at_ddl, kBurst);
  EXPECT_EQ(big_rows, kBurst);
  const double behind_s = std::chrono::duration<double>(first_t_row_at - ddl_done).count();
  std::printf("[ lag ] when the DDL was committed the client had %d of %d burst rows; it got t's first row %.1f s "
              "later\n",
              big_at_ddl, kBurst, behind_s);
  EXPECT_EQ(t_rows, (std::vector<std::string>{"t: id=1 x=100 c=1000", "t: id=2 c=2000 x=200",
                                              "t: id=3 n=q c=3000 x=300", "t: id=4 n=z c=4000 x=400"}));
  c.Disconnect();
  EXPECT_EQ(install.Stop(&out), 0) << out;
}

}  // namespace
}  // namespace canal::testing
