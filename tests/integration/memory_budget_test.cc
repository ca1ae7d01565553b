// One memory budget per server (canal.memory.budget) against a real
// canal-server: many destinations, each behind one large transaction no
// client reads yet. The server's resident memory stays under the budget
// (without it each ring fills its own 16 MiB and each parser holds an 8 MiB
// piece: several times more), and it still does while clients then read the
// destinations one after another, each ring cycling through its slots (with
// all 16384 slots in use, 200 destinations of 300,000 rows reached 1.28 GiB
// of a 1 GiB budget that way), and every destination delivers every row.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/loopback_http.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using client::Connector;
using client::Message;
using client::TimeUnit;
using nlohmann::json;

constexpr uint16_t kSandboxPort = TestPort("memory_budget");
constexpr uint16_t kServerPort = TestPort("memory_budget", 1);
constexpr uint16_t kMetricsPort = TestPort("memory_budget", 2);
// CI's size; the (200 destinations, 300,000 rows, 1 GiB) through the
// environment: CANAL_BUDGET_DESTINATIONS, CANAL_BUDGET_ROWS, CANAL_BUDGET_MIB.
int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}
const int kDestinations = EnvInt("CANAL_BUDGET_DESTINATIONS", 30);
const int kRows = EnvInt("CANAL_BUDGET_ROWS", 60000);
const uint64_t kBudgetMiB = static_cast<uint64_t>(EnvInt("CANAL_BUDGET_MIB", 192));

// A value of /proc/PID/status ("VmRSS", "Threads"): its number (kB for sizes).
uint64_t ProcStatus(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1));
  }
  return 0;
}

std::string Dest(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "dest%03d", i);
  return name;
}

class MemoryBudgetE2e : public InstalledServerSuite<kSandboxPort> {
 protected:
  MemoryBudgetE2e() : InstalledServerSuite("memory-budget") {}
};

TEST_F(MemoryBudgetE2e, ManyDestinationsBehindALargeTransactionStayInsideTheBudgetAndDeliverEverything) {
  // Each destination holds two connections (its dump and its queries): more than MariaDB's default 151.
  ASSERT_TRUE(Sql("SET GLOBAL max_connections = " + std::to_string(2 * kDestinations + 100)));
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS budget_db; DROP TABLE IF EXISTS budget_db.t; "
                  "CREATE TABLE budget_db.t (id INT PRIMARY KEY, pad VARCHAR(500))"));
  std::string names;
  for (int i = 0; i < kDestinations; ++i) {
    names += (i ? "," : "") + Dest(i);
    install_->WriteInstance(Dest(i), StartHere() + "canal.instance.filter.regex = budget_db\\\\.t\n");
  }
  install_->WriteServerProperties(CanalInstall::ServerProperties(
      kServerPort, "canal.destinations = " + names + "\ncanal.metrics.pull.port = " + std::to_string(kMetricsPort) +
                       "\ncanal.memory.budget = " + std::to_string(kBudgetMiB) + "m\n"));
  ASSERT_TRUE(Startup());
  const int pid = install_->Pid();
  ASSERT_GT(pid, 0);
  const auto destinations_streaming = [&] {
    const json j = json::parse(HttpGet(kMetricsPort, "/status.json").body, nullptr, false);
    if (!j.is_object() || !j.contains("destinations")) return false;
    int streaming = 0;
    for (const json& d : j["destinations"]) streaming += d.value("state", std::string()) == "streaming";
    return streaming == kDestinations;
  };
  ASSERT_TRUE(WaitFor(destinations_streaming, 60s)) << HttpGet(kMetricsPort, "/status.json").body;
  EXPECT_TRUE(WaitForText(install_->server_log(), "memory budget " + std::to_string(kBudgetMiB) + " MiB", 5s));
  const uint64_t idle_kb = ProcStatus(pid, "VmRSS");
  const uint64_t threads = ProcStatus(pid, "Threads");

  // One transaction of kRows rows of ~500 bytes: ~30 MiB of entries for each destination.
  ASSERT_TRUE(Sql("INSERT INTO budget_db.t SELECT seq, REPEAT('x', 500) FROM budget_db.seq_1_to_" + std::to_string(kRows)));
  // Every ring fills to its share and its parser waits.
  const auto rings_full = [&] {
    const json j = json::parse(HttpGet(kMetricsPort, "/status.json").body, nullptr, false);
    if (!j.is_object()) return false;
    int full = 0;
    for (const json& d : j["destinations"]) {
      const json& ring = d["ring"];
      if (!ring.is_object() || ring["byte_bound"].get<uint64_t>() == 0) return false;
      full += ring["bytes"].get<uint64_t>() * 2 >= ring["byte_bound"].get<uint64_t>();
    }
    return full == kDestinations;
  };
  uint64_t peak_kb = 0;
  ASSERT_TRUE(WaitFor([&] {
    peak_kb = std::max(peak_kb, ProcStatus(pid, "VmRSS"));
    return rings_full();
  }, 120s)) << HttpGet(kMetricsPort, "/status.json").body;
  // Held there: a few more looks while the parsers wait.
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    peak_kb = std::max(peak_kb, ProcStatus(pid, "VmRSS"));
    std::this_thread::sleep_for(100ms);  // sampling, not waiting for a condition
  }
  const uint64_t growth_mib = (peak_kb > idle_kb ? peak_kb - idle_kb : 0) / 1024;
  std::printf("[ budget ] %d destinations: idle RSS %llu MiB (%.1f MiB and %.1f threads per destination), %llu "
              "threads; behind a %d-row transaction RSS peaked at %llu MiB (+%llu MiB; budget %llu MiB)\n",
              kDestinations, static_cast<unsigned long long>(idle_kb / 1024),
              static_cast<double>(idle_kb) / 1024 / kDestinations, static_cast<double>(threads) / kDestinations,
              static_cast<unsigned long long>(threads), kRows, static_cast<unsigned long long>(peak_kb / 1024),
              static_cast<unsigned long long>(growth_mib), static_cast<unsigned long long>(kBudgetMiB));
  EXPECT_LT(peak_kb / 1024, kBudgetMiB) << "the burst took the server past the budget";

  // Clients read: every destination delivers every row, once, and the server
  // stays under the budget meanwhile: each ring cycles through the slots its
  // share pays for (not all its buffer.size), the acked entries' heap goes
  // back to the system, and a session's reply copies at most a share's batch.
  std::atomic<bool> reading{true};
  std::atomic<uint64_t> reading_peak_kb{0};
  std::thread sampler([&] {
    while (reading) {
      reading_peak_kb = std::max<uint64_t>(reading_peak_kb, ProcStatus(pid, "VmRSS"));
      std::this_thread::sleep_for(200ms);  // sampling
    }
  });
  for (int i = 0; i < kDestinations; ++i) {
    Connector c(ServerClientOptions(kServerPort, Dest(i)));
    ASSERT_TRUE(ConnectAndSubscribe(c, 10s).ok()) << Dest(i);
    std::set<int64_t> ids;
    int64_t rows = 0;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (static_cast<int>(ids.size()) < kRows && std::chrono::steady_clock::now() < deadline) {
      Message m;
      ASSERT_TRUE(c.GetWithoutAck(4096, 500, TimeUnit::kMilliseconds, &m).ok()) << Dest(i);
      if (m.batch_id() == -1) continue;
      ASSERT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
                    ++rows;
                    ids.insert(std::stoll(ColumnText(row, "id")));
                  }).ok());
      ASSERT_TRUE(c.Ack(m.batch_id()).ok());
    }
    EXPECT_EQ(static_cast<int>(ids.size()), kRows) << Dest(i);
    EXPECT_EQ(rows, kRows) << Dest(i) << ": rows repeated";
    c.Disconnect();
  }
  reading = false;
  sampler.join();
  std::printf("[ budget ] while clients read every destination in turn: RSS peaked at %llu MiB (budget %llu MiB)\n",
              static_cast<unsigned long long>(reading_peak_kb / 1024), static_cast<unsigned long long>(kBudgetMiB));
  EXPECT_GT(reading_peak_kb.load(), 0u);
  EXPECT_LT(reading_peak_kb / 1024, kBudgetMiB) << "reading the destinations took the server past the budget";
}

}  // namespace
}  // namespace canal::testing
