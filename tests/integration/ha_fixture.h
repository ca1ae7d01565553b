// The HA acceptance suite's fixture (ha_*_test.cc): two canal-server processes
// (two install roots, the same destination) coordinated through a real
// ZooKeeper, a real MariaDB, and the SDK's ClusterConnector (or canal-cli --zk
// processes) as the client. Each test prints a "[ ha ]" line with its figures
// (docs/cluster.md, "Acceptance and failover figures").
//
// The suite "Ha" spans three files, by concern: the active server failing
// (ha_server_failover_test.cc), ZooKeeper itself (ha_zookeeper_test.cc) and the
// active client failing (ha_client_failover_test.cc). Every test uses its own
// pair of canal-server ports, so a socket one left in TIME_WAIT never meets
// the next one's servers.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "canal/client/cluster_connector.h"
#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "canal/coord/canal_layout.h"
#include "canal/coord/zk_client.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/client_test_names.h"
#include "support/cluster_client_options.h"
#include "support/delivery_ledger.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

extern char** environ;

namespace canal::testing::ha {

using client::ClusterConnector;
using client::ClusterConnectorOptions;

constexpr uint16_t kSandboxPort = canal::testing::TestPort("ha_mariadb");
constexpr uint16_t kZkPort = canal::testing::TestPort("ha_zk");
constexpr int kSessionTimeoutMs = 6000;
// The stated takeover bound for a crashed or frozen active server: its
// session must expire (6 s), the standby waits canal.zookeeper.takeover.delay
// (1 s) and starts the instance; a client then finds it through the running node.
constexpr double kTakeoverBoundS = 10.0;
constexpr const char* kDestination = "example";
constexpr const char* kRunningPath = "/otter/canal/destinations/example/running";

inline double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

inline std::string Address(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// Whether every thread of `pid` is in the stopped state (SIGSTOP has taken
// effect), from /proc/<pid>/task/*/stat.
inline bool AllThreadsStopped(int pid) {
  std::error_code ec;
  int threads = 0;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::ifstream in(it->path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'T') return false;
    ++threads;
  }
  return !ec && threads > 0;
}

// ---- A ClusterConnector consumer on its own thread ---------------------------

// What the consumer saw, for the figures: when each non-empty batch came and
// from which server; errors the connector returned (it is meant to hide
// server failovers); elections won.
class ConsumeLog {
 public:
  struct Batch {
    Clock::time_point at;
    std::string server;
  };
  void AddBatch(std::string server) {
    std::lock_guard<std::mutex> lock(mu_);
    batches_.push_back({Clock::now(), std::move(server)});
  }
  void AddError(const Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    ++errors_;
    last_error_ = s.ToString();
    if (first_errors_.size() < 4) first_errors_.push_back(last_error_);
  }
  std::vector<Batch> batches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  // The first batch at or after `since` from `server` ("" = any server).
  std::optional<Clock::time_point> FirstBatchAfter(Clock::time_point since, const std::string& server = "") const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Batch& b : batches_) {
      if (b.at >= since && (server.empty() || b.server == server)) return b.at;
    }
    return std::nullopt;
  }
  // The longest time without a batch between `from` and the first batch after `to`.
  double LongestPause(Clock::time_point from, Clock::time_point to) const {
    std::lock_guard<std::mutex> lock(mu_);
    double longest = 0;
    Clock::time_point prev = from;
    for (const Batch& b : batches_) {
      if (b.at < from) continue;
      longest = std::max(longest, SecondsBetween(prev, b.at));
      prev = b.at;
      if (b.at > to) break;
    }
    return longest;
  }
  int64_t errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  // The first few errors, one "[ ha ]" line each.
  std::string first_errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const auto& e : first_errors_) out += "[ ha ]   error returned to the client: " + e + "\n";
    return out;
  }
  std::string last_error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }
  std::atomic<int64_t> elections{0};
  std::atomic<int64_t> reconnects{0};
  std::atomic<int64_t> failed_acks{0};

 private:
  mutable std::mutex mu_;
  std::vector<Batch> batches_;
  int64_t errors_ = 0;
  std::vector<std::string> first_errors_;
  std::string last_error_;
};

inline ClusterConnectorOptions ConsumerOptions(const std::string& zk_servers) {
  return LocalClusterClientOptions(zk_servers, kSessionTimeoutMs, 200, kDestination);
}

// Consumes and acks every batch until `stop`. A batch acked with no answer
// since may come once more: the ledger hears of a reconnect when the next call
// failed, or failed over inside the connector (reconnects() moved), or the ack
// itself was refused (NotFound: "delivered again").
inline void RunClusterConsumer(std::stop_token stop, ClusterConnector& c, DeliveryLedger& ledger, ConsumeLog& log) {
  bool need_connect = true;
  while (!stop.stop_requested()) {
    if (need_connect) {
      Status s = c.Connect();
      if (s.ok()) s = c.Subscribe();
      if (!s.ok()) {
        log.AddError(s);
        std::this_thread::sleep_for(100ms);
        continue;
      }
      need_connect = false;
      ++log.elections;
    }
    const int64_t reconnects_before = c.reconnects();
    Message m;
    Status s = c.GetWithoutAck(256, 100, TimeUnit::kMilliseconds, &m);
    if (!s.ok() || c.reconnects() != reconnects_before) {
      ledger.Reconnected();
    } else {
      ledger.Answered();
    }
    log.reconnects = c.reconnects();
    if (!s.ok()) {
      log.AddError(s);
      if (client::IsNotActiveClient(s)) need_connect = true;
      std::this_thread::sleep_for(50ms);
      continue;
    }
    if (m.batch_id() == -1) continue;
    log.AddBatch(c.current_address());
    std::vector<int64_t> rows;
    s = AppendLoadRows(m, ledger, &rows);
    ledger.Received(rows);
    if (!s.ok()) {
      log.AddError(s);
      return;
    }
    ledger.Acked();
    s = c.Ack(m.batch_id());
    if (!s.ok()) {
      ++log.failed_acks;
      ledger.Reconnected();
    }
  }
}

// ---- canal-cli processes -------------------------------------------------------

class ChildProcess {
 public:
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Wait(5s);
    }
  }
  // Runs argv[0] with stdout and stderr to files.
  bool Spawn(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pid_ = -1;
    return rc == 0;
  }
  bool Signal(int sig) const { return pid_ > 0 && ::kill(pid_, sig) == 0; }
  // The exit status (as waitpid reports it), or -1 when it did not end in time.
  int Wait(std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (pid_ > 0) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || r < 0) {
        pid_ = -1;
        return status;
      }
      if (Clock::now() > deadline) return -1;
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

// The load rows of canal-cli --json output (one object per row change), in
// order; an unparsable line (the last one, cut by SIGKILL) is skipped.
inline std::vector<int64_t> CliRows(const fs::path& file, const DeliveryLedger& ledger, int* unparsable) {
  std::vector<int64_t> rows;
  std::istringstream in(ReadAll(file));
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      ++*unparsable;
      continue;
    }
    if (j.value("type", "") != "INSERT" || !j.contains("after") || !j["after"].is_object()) continue;
    const auto& after = j["after"];
    rows.push_back(ledger.RowNumber(after.value("txn", ""), after.value("seq", "")));
  }
  return rows;
}

inline size_t CountLines(const fs::path& file) {
  const std::string text = ReadAll(file);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// ---- The suite -----------------------------------------------------------------

class Ha : public ServerSuite<kSandboxPort> {
 protected:
  static void SetUpTestSuite() {
    ServerSuite::SetUpTestSuite();
    zk_sandbox_ = StartSuiteZk(kZkPort, &zk_setup_error_);
  }
  static void TearDownTestSuite() {
    zk_sandbox_.reset();
    ServerSuite::TearDownTestSuite();
  }

  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CANAL_REQUIRE_ZK(zk_sandbox_, zk_setup_error_);
    // (Its session outlives ZooKeeper's restarts, ha_zookeeper_test.cc.)
    const Status s = ConnectToEmptyLayout(*zk_sandbox_, &zk_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void TearDown() override {
    for (auto& install : installs_) {
      if (install) install->Thaw();
    }
    installs_[0].reset();
    installs_[1].reset();
    if (zk_) zk_->Close();
    // The ZooKeeper-restart test stops it; a failure half-way must not leave it down.
    if (zk_sandbox_) zk_sandbox_->Start();
  }

  // SQL files of `chunks` equal parts of transactions 1..txns.
  static std::vector<std::string> LoadChunks(const std::string& name, const std::string& table, int txns,
                                             int rows_per_txn, int chunks) {
    return WriteLoadChunks(sandbox_->dir() + "/ha-" + name + "-", table, txns, rows_per_txn, chunks);
  }
  static void WriteFiles(const std::vector<std::string>& files, size_t from, size_t to,
                         std::chrono::milliseconds pause = 0ms) {
    for (size_t i = from; i < to && i < files.size(); ++i) {
      if (!sandbox_->SqlFile(files[i])) {
        ADD_FAILURE() << files[i] << ": " << sandbox_->error();
        return;
      }
      std::this_thread::sleep_for(pause);
    }
  }

  // The address in the running node, "" when there is none (or ZooKeeper does not answer).
  std::string RunningAddress() const {
    std::string body;
    coord::layout::RunningNode node;
    if (!zk_->Get(kRunningPath, &body).ok() || !coord::layout::ParseRunningNode(body, &node).ok()) return "";
    return node.address;
  }
  std::vector<std::string> Children(const std::string& path) const {
    std::vector<std::string> names;
    (void)zk_->Children(path, &names);
    return names;
  }

  // Two servers of destination "example" on ports[0] and ports[1], cursors in
  // ZooKeeper; ports[0] is started first and is the active one. The instance
  // starts at the primary's current end and sees only `table`.
  ::testing::AssertionResult StartPair(const std::string& name, const uint16_t (&ports)[2], const std::string& table,
                                       bool start_second = true) {
    const std::string start = StartHere();
    for (int i = 0; i < 2; ++i) {
      installs_[i] = std::make_unique<CanalInstall>("ha-" + name + "-" + std::string(1, "ab"[i]), kSandboxPort);
      installs_[i]->WriteServerProperties(CanalInstall::ServerProperties(
          ports[i], "canal.zkServers = " + zk_sandbox_->servers() +
                        "\ncanal.zookeeper.session.timeout = " + std::to_string(kSessionTimeoutMs) + "\n"));
      // A regex's backslash is written twice in a .properties file.
      std::string regex = table;
      regex.replace(regex.find('.'), 1, "\\\\.");
      installs_[i]->WriteInstance(kDestination, start + "canal.instance.filter.regex = " + regex + "\n");
    }
    for (int i = 0; i < (start_second ? 2 : 1); ++i) {
      std::string out;
      if (const int rc = installs_[i]->Startup(&out); rc != 0) {
        return ::testing::AssertionFailure() << "startup.sh of " << installs_[i]->root() << " exit " << rc << ":\n"
                                             << out << "\n" << ReadAll(installs_[i]->server_log());
      }
      if (i == 0 && !WaitFor([&] { return RunningAddress() == Address(ports[0]); }, 20s)) {
        return ::testing::AssertionFailure() << "server " << Address(ports[0]) << " did not take " << kRunningPath
                                             << " within 20 s (it holds \"" << RunningAddress() << "\"):\n"
                                             << ReadAll(installs_[0]->server_log());
      }
    }
    if (start_second && !WaitFor([&] {
          return Children("/otter/canal/destinations/example/cluster").size() == 2;
        }, 20s)) {
      return ::testing::AssertionFailure() << "the standby " << Address(ports[1]) << " did not register within 20 s:\n"
                                           << ReadAll(installs_[1]->server_log());
    }
    return ::testing::AssertionSuccess();
  }
  CanalInstall& install(int i) { return *installs_[i]; }

  static inline std::unique_ptr<ZkSandbox> zk_sandbox_;
  static inline std::string zk_setup_error_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<CanalInstall> installs_[2];
};

}  // namespace canal::testing::ha
