// The failover suites' fixture (failover_test.cc): a ReplicationPair, a writer of
// single-row transactions that can be pointed at the new primary, a client counting every
// inserted row by id, and the checks against the primary's own table.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/cluster_connector.h"
#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/loopback_http.h"
#include "support/client_rows.h"
#include "support/cluster_client_options.h"
#include "support/mariadb_sandbox.h"
#include "support/replication_pair.h"
#include "support/server_suite.h"
#include "support/sql_session.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

namespace canal::testing {
namespace failover {

using namespace std::chrono_literals;
using client::Connector;
using client::Message;
using client::TimeUnit;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kPortA = TestPort("failover", 2);
constexpr uint16_t kPortB = TestPort("failover", 3);
constexpr uint16_t kServerPort = TestPort("failover", 4);
constexpr uint16_t kMetricsPort = TestPort("failover", 5);
constexpr uint16_t kZkPort = TestPort("failover", 6);
constexpr uint16_t kPairServerPorts[2] = {TestPort("failover", 7), TestPort("failover", 8)};

// Single-row INSERTs into fo.t, ids counting up, on whichever server it is pointed at.
class Writer {
 public:
  void Start(const std::string& socket) {
    Point(socket);
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  }
  // Writes go to this server from the next one on (after a failover).
  void Point(const std::string& socket) {
    std::lock_guard<std::mutex> lock(mu_);
    socket_ = socket;
    ++generation_;
  }
  // Pausing returns once no statement is in flight.
  void Pause(bool paused) {
    idle_ = false;
    paused_ = paused;
    if (paused) WaitFor([&] { return idle_.load(); }, 10s);
  }
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  int64_t next_id() const { return next_id_.load(); }
  uint64_t committed() const { return committed_.load(); }

 private:
  void Run(std::stop_token stop) {
    SqlSession session;
    uint64_t connected_generation = 0;
    while (!stop.stop_requested()) {
      if (paused_) {
        idle_ = true;
        std::this_thread::sleep_for(5ms);  // a test's pause, not a wait on a condition
        continue;
      }
      std::string socket;
      uint64_t generation;
      {
        std::lock_guard<std::mutex> lock(mu_);
        socket = socket_;
        generation = generation_;
      }
      if (!session.connected() || generation != connected_generation) {
        session.Close();
        if (!session.Connect(socket).ok()) {
          std::this_thread::sleep_for(20ms);  // the server is down: the test points us elsewhere
          continue;
        }
        connected_generation = generation;
      }
      const int64_t id = next_id_.load();
      if (session.Execute("INSERT INTO fo.t (id, v) VALUES (" + std::to_string(id) + ", " + std::to_string(id % 97) +
                          ")")
              .ok()) {
        next_id_.store(id + 1);
        committed_.fetch_add(1);
      } else {
        // Killed mid-commit: the id may be committed there (and replicated, or not); never reuse it.
        next_id_.store(id + 1);
        session.Close();  // the test points us elsewhere
        std::this_thread::sleep_for(20ms);
      }
    }
  }

  std::mutex mu_;
  std::string socket_;
  uint64_t generation_ = 0;
  std::atomic<bool> paused_{false};
  std::atomic<bool> idle_{false};
  std::atomic<int64_t> next_id_{1};
  std::atomic<uint64_t> committed_{0};
  std::jthread thread_;
};

// Counts every inserted fo.t row it receives, by id; acks each batch.
class Counter {
 public:
  void Start() {
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  }
  // Through ZooKeeper, to whichever server of an HA pair is active.
  void StartCluster(const std::string& zk_servers) {
    thread_ = std::jthread([this, zk_servers](std::stop_token stop) { RunCluster(stop, zk_servers); });
  }
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  std::map<int64_t, int> counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }
  bool Has(int64_t id) const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_.count(id) != 0;
  }
  std::string error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  void Count(Message& m) {
    Status s = ForEachRow(m, [&](const entry::Header&, entry::EventType type, const entry::RowData& row) {
      if (type != entry::INSERT) return;
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_[std::stoll(ColumnText(row, "id"))];
    });
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = s.ToString();
    }
  }
  void RunCluster(std::stop_token stop, const std::string& zk_servers) {
    client::ClusterConnector c(LocalClusterClientOptions(zk_servers, 6000, 400));
    bool connected = false;
    while (!stop.stop_requested()) {
      if (!connected) {
        Status st = c.Connect();
        if (st.ok()) st = c.Subscribe();
        if (!st.ok()) {
          std::this_thread::sleep_for(100ms);  // the pair is between actives
          continue;
        }
        connected = true;
      }
      Message m;
      Status st = c.GetWithoutAck(1000, 200, TimeUnit::kMilliseconds, &m);
      if (!st.ok()) {
        if (client::IsNotActiveClient(st)) connected = false;
        std::this_thread::sleep_for(50ms);
        continue;
      }
      if (m.batch_id() == -1) continue;
      Count(m);
      (void)c.Ack(m.batch_id());  // a refused ack: the batch comes again from the new active
    }
  }
  void Run(std::stop_token stop) {
    while (!stop.stop_requested()) {
      Connector c(ServerClientOptions(kServerPort));
      if (!ConnectAndSubscribe(c, 30s).ok()) continue;
      Message m;
      while (!stop.stop_requested()) {
        if (!c.GetWithoutAck(1000, 200, TimeUnit::kMilliseconds, &m).ok()) break;
        if (m.batch_id() == -1) continue;
        Count(m);
        if (!c.Ack(m.batch_id()).ok()) break;
      }
    }
  }

  mutable std::mutex mu_;
  std::map<int64_t, int> counts_;
  std::string error_;
  std::jthread thread_;
};

inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

class FailoverE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!MariadbSandbox::Available()) GTEST_SKIP() << MariadbSandbox::SkipReason();
    if (!std::filesystem::exists(CanalInstall::ServerProgram())) GTEST_SKIP() << "canal-server is not built";
    pair_ = std::make_unique<ReplicationPair>(kPortA, kPortB);
    std::string error;
    ASSERT_TRUE(pair_->Start(&error)) << error;
    ASSERT_TRUE(pair_->primary().Sql("CREATE DATABASE fo; CREATE TABLE fo.t (id BIGINT PRIMARY KEY, v INT)"))
        << pair_->primary().error();
    ASSERT_TRUE(pair_->WaitReplicaCaughtUp(30s, &error)) << error;
    // The replica's binlog files start elsewhere than the primary's (as they do once either
    // has rotated on its own): a file and offset of one mean nothing on the other.
    ASSERT_TRUE(pair_->replica().Sql("FLUSH BINARY LOGS")) << pair_->replica().error();
  }
  void TearDown() override {
    writer_.Stop();
    counter_.Stop();
    if (install_) install_->Stop();
    if (pair_) pair_->Stop();
  }

  void StartServer(const std::string& diverged) {
    install_ = std::make_unique<CanalInstall>("failover-e2e", kPortA);
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        kServerPort, "canal.metrics.pull.port = " + std::to_string(kMetricsPort) + "\n"));
    ConfigureInstance(diverged);
    std::string out;
    ASSERT_EQ(install_->Startup(&out), 0) << out;
  }
  void ConfigureInstance(const std::string& diverged) {
    install_->WriteInstance("example", "canal.instance.master.address = 127.0.0.1:" + std::to_string(kPortA) +
                                           ",127.0.0.1:" + std::to_string(kPortB) +
                                           "\ncanal.instance.filter.regex = fo\\\\..*\n"
                                           "canal.instance.detecting.interval.time = 1\n"
                                           "canal.instance.failover.diverged = " +
                                           diverged + "\n");
  }

  // Once the roles changed: the writer goes on on the new primary (*first_on_new: the first id
  // written there), and the client must receive rows written there within `limit`.
  ::testing::AssertionResult FollowToNewPrimary(const CanalInstall& server, const std::string& what,
                                                int64_t* first_on_new, std::chrono::milliseconds limit = 30s) {
    *first_on_new = writer_.next_id();
    writer_.Point(pair_->primary().socket());
    writer_.Pause(false);
    const int64_t wanted = *first_on_new + 10;
    if (WaitFor([&] { return counter_.Has(wanted); }, limit)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << ": the stream did not follow to the new primary; log:\n"
                                         << ReadFile(server.instance_log("example"));
  }

  // The ids the current primary's table has.
  std::vector<int64_t> PrimaryIds() {
    SqlSession s;
    SqlResult r;
    EXPECT_TRUE(s.Connect(pair_->primary().socket()).ok());
    EXPECT_TRUE(s.Query("SELECT id FROM fo.t ORDER BY id", &r).ok());
    std::vector<int64_t> ids;
    for (const SqlRow& row : r.rows) ids.push_back(std::stoll(*row[0]));
    return ids;
  }

  // Every row the primary has arrived exactly once; rows that arrived but are not there
  // are exactly the ones the server reported lost. Returns how many those were.
  uint64_t ExpectExactlyThePrimarysRows(uint64_t repeats_allowed = 0) {
    const std::vector<int64_t> ids = PrimaryIds();
    EXPECT_TRUE(WaitFor([&] { return counter_.Has(ids.back()); }, 60s))
        << "the client never received id " << ids.back() << "; log:\n" << ReadFile(install_->instance_log("example"));
    // (The last id arrived; everything before it was delivered before it.)
    const std::map<int64_t, int> got = counter_.counts();
    std::set<int64_t> on_primary(ids.begin(), ids.end());
    uint64_t missing = 0, repeated = 0, extra = 0;
    for (int64_t id : ids) {
      auto it = got.find(id);
      if (it == got.end()) {
        ++missing;
      } else if (it->second != 1) {
        ++repeated;
      }
    }
    for (const auto& [id, n] : got) extra += on_primary.count(id) == 0 ? n : 0;
    std::printf("[ FAILOVER ] %zu rows on the primary: %llu missing, %llu received more than once, %llu received "
                "but not on it (lost to the failover)\n",
                ids.size(), static_cast<unsigned long long>(missing), static_cast<unsigned long long>(repeated),
                static_cast<unsigned long long>(extra));
    EXPECT_EQ(missing, 0u);
    EXPECT_LE(repeated, repeats_allowed);
    EXPECT_EQ(counter_.error(), "");
    return extra;
  }

  // The lost transactions the server's log reported going on past, summed.
  uint64_t ReportedLost() {
    const std::string log = ReadFile(install_->instance_log("example"));
    static const std::regex lacks("lacks ([0-9]+) transaction[^\n]*diverged=continue says");
    uint64_t n = 0;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), lacks); it != std::sregex_iterator(); ++it) {
      n += std::stoull((*it)[1]);
    }
    return n;
  }

  std::unique_ptr<ReplicationPair> pair_;
  std::unique_ptr<CanalInstall> install_;
  Writer writer_;
  Counter counter_;
};

}  // namespace failover
}  // namespace canal::testing
