// The low-latency GET end to end: single-row transactions at about
// 100 a second, MEMSIZE batches (a batch of 1000 units is ~1 MB, never full),
// a get timeout of one second. Canal's rule holds every row until the get's
// timeout; with the client's option (ConnectorOptions::low_latency_get) or the
// server's key (canal.get.low.latency, for clients that cannot ask, such as
// Canal's own) each row arrives within milliseconds of its commit. The modes
// are compared with each other, with generous bounds, so a loaded machine does
// not fail the test; the figures are printed ("[ low-latency ]").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/client_test_names.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

constexpr uint16_t kCanalRulePort = TestPort("canal_wire", 11);  // canal.get.low.latency off (the default)
constexpr uint16_t kServerKeyPort = TestPort("canal_wire", 12);  // canal.get.low.latency = true
constexpr int kRows = 200;
constexpr int64_t kGetTimeoutMs = 1000;

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Figures {
  std::vector<double> latency_ms;  // commit (the row's own NOW(6)) to arrival, per row
  int batches = 0;
  double Percentile(double p) const {
    if (latency_ms.empty()) return -1;
    std::vector<double> v = latency_ms;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
  }
  std::string Text() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu rows in %d batches, latency p50 %.1f ms, p90 %.1f ms, max %.1f ms",
                  latency_ms.size(), batches, Percentile(0.5), Percentile(0.9), Percentile(1.0));
    return buf;
  }
};

class LowLatencyGet : public ServerSuite<TestPort("canal_wire", 10)> {
 protected:
  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(sandbox_->Sql("CREATE DATABASE IF NOT EXISTS ll; DROP TABLE IF EXISTS ll.t; "
                              "CREATE TABLE ll.t (id INT PRIMARY KEY, us BIGINT)"))
        << sandbox_->error();
  }

  // A server on `port` (MEMSIZE batches, the default), from the primary's end.
  std::unique_ptr<CanalInstall> StartServer(const std::string& name, uint16_t port, const std::string& extra) {
    auto install = std::make_unique<CanalInstall>("low-latency-" + name, kSandboxPort);
    install->WriteServerProperties(CanalInstall::ServerProperties(port, extra));
    install->WriteInstance("example", StartAtPrimaryEnd(*sandbox_) +
                                          "canal.instance.memory.batch.mode = MEMSIZE\n"
                                          "canal.instance.filter.regex = ll\\\\.t\n");
    std::string out;
    const int rc = install->Startup(&out);
    EXPECT_EQ(rc, 0) << out << ReadAll(install->server_log());
    return rc == 0 ? std::move(install) : nullptr;
  }

  // Rows first..first+kRows-1, one transaction each, about 100 a second; each
  // row holds the time of its own insert (a moment before its commit).
  std::string WriteSql(int first) const {
    const std::string path = sandbox_->dir() + "/low-latency-" + std::to_string(first) + ".sql";
    std::ofstream out(path);
    for (int i = first; i < first + kRows; ++i) {
      out << "INSERT INTO ll.t VALUES (" << i << ", CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED));\n"
          << "DO SLEEP(0.01);\n";
    }
    return path;
  }

  // Subscribes (retrying while the server starts or a previous client's
  // session ends), writes rows first.., and receives them all with gets of
  // 1000 MEMSIZE units and a one-second timeout.
  Figures Run(uint16_t port, bool low_latency_get, int first) {
    Figures f;
    ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(port);
    o.destination = "example";
    o.read_timeout = 20s;
    o.low_latency_get = low_latency_get;
    Connector c(o);
    Status s = ConnectAndSubscribe(c, 30s);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return f;
    const std::string sql = WriteSql(first);
    std::thread writer([&] { EXPECT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error(); });
    const auto deadline = Clock::now() + 60s;
    while (static_cast<int>(f.latency_ms.size()) < kRows && Clock::now() < deadline) {
      Message m;
      s = c.GetWithoutAck(1000, kGetTimeoutMs, TimeUnit::kMilliseconds, &m);
      if (!s.ok()) break;
      if (m.batch_id() == -1) continue;
      const int64_t now = NowMicros();
      ++f.batches;
      s = ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
        const std::string us = ColumnText(row, "us");
        f.latency_ms.push_back(static_cast<double>(now - std::stoll(us.empty() ? "0" : us)) / 1000.0);
      });
      if (!s.ok()) break;
      s = c.Ack(m.batch_id());
      if (!s.ok()) break;
    }
    writer.join();
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(static_cast<int>(f.latency_ms.size()), kRows);
    c.Disconnect();
    return f;
  }
};

TEST_F(LowLatencyGet, EachRowArrivesAtOnceWithTheOptionOrTheServerKeyAndAfterTheTimeoutWithout) {
  std::unique_ptr<CanalInstall> canal_rule = StartServer("canal-rule", kCanalRulePort, "");
  ASSERT_TRUE(canal_rule);
  const Figures with_option = Run(kCanalRulePort, /*low_latency_get=*/true, 1);
  const Figures without = Run(kCanalRulePort, /*low_latency_get=*/false, 1001);
  canal_rule.reset();
  std::unique_ptr<CanalInstall> server_key =
      StartServer("server-key", kServerKeyPort, "canal.get.low.latency = true\n");
  ASSERT_TRUE(server_key);
  const Figures by_key = Run(kServerKeyPort, /*low_latency_get=*/false, 2001);

  std::printf("[ low-latency ] %d single-row transactions at ~100/s, MEMSIZE gets of 1000 units, timeout %lld ms:\n"
              "[ low-latency ]   client option:              %s\n"
              "[ low-latency ]   Canal's rule (no option):   %s\n"
              "[ low-latency ]   server key, client without: %s\n",
              kRows, static_cast<long long>(kGetTimeoutMs), with_option.Text().c_str(), without.Text().c_str(),
              by_key.Text().c_str());
  // With the option or the key a row does not wait for others: within 50 ms
  // of its commit (the median; a loaded machine may delay a few), and most
  // batches hold a single transaction.
  for (const Figures* f : {&with_option, &by_key}) {
    EXPECT_LT(f->Percentile(0.5), 50.0) << f->Text();
    EXPECT_LT(f->Percentile(0.9), 500.0) << f->Text();
    EXPECT_GT(f->batches, kRows / 4) << f->Text();
  }
  // Without, rows wait for the get's timeout: a few large batches, and rows
  // that waited most of a second.
  EXPECT_LT(without.batches, kRows / 10) << without.Text();
  EXPECT_GT(without.Percentile(0.5), 200.0) << without.Text();
  EXPECT_GT(without.Percentile(0.9), 4 * with_option.Percentile(0.9)) << without.Text();
}

}  // namespace
}  // namespace canal::testing
