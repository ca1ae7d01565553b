// Acceptance tests of HA: two canal-server processes (two install roots, the
// same destination) coordinated through a real ZooKeeper, a real MariaDB, and
// the SDK's ClusterConnector (or canal-cli --zk processes) as the client.
// A SIGKILLed or frozen active server, a restarted ZooKeeper and a killed
// client lose nothing and repeat nothing beyond the one batch acked without an
// answer; the nodes in ZooKeeper are Canal's. Each test prints a "[ ha ]" line
// with its figures (docs/ha.md, "Acceptance and failover figures").
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
#include "canal/coord/zk_client.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/delivery_ledger.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

extern char** environ;

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
namespace entry = canal::entry;
using namespace std::chrono_literals;
using client::ClusterConnector;
using client::ClusterConnectorOptions;
using client::Connector;
using client::ConnectorOptions;
using client::Message;
using client::TimeUnit;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kSandboxPort = 13521;
constexpr uint16_t kZkPort = 12191;
// canal-server ports: a pair per test, so that a socket one test left in
// TIME_WAIT never meets the next test's servers.
constexpr uint16_t kFailoverPorts[2] = {13531, 13532};
constexpr uint16_t kPartitionPorts[2] = {13533, 13534};
constexpr uint16_t kZkRestartPorts[2] = {13535, 13536};
constexpr uint16_t kClientFailoverPorts[2] = {13537, 13538};
constexpr uint16_t kLayoutPorts[2] = {13539, 13532};  // 13532: test 1's servers are long gone
constexpr uint16_t kAckNotAppliedPorts[2] = {14371, 14372};

constexpr int kSessionTimeoutMs = 6000;
// The stated takeover bound for a crashed or frozen active server: its
// session must expire (6 s), the standby waits canal.zookeeper.takeover.delay
// (1 s) and starts the instance; a client then finds it through the running node.
constexpr double kTakeoverBoundS = 10.0;
constexpr const char* kDestination = "example";
constexpr const char* kRunningPath = "/otter/canal/destinations/example/running";

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string Address(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// Whether every thread of `pid` is in the stopped state (SIGSTOP has taken
// effect), from /proc/<pid>/task/*/stat.
bool AllThreadsStopped(int pid) {
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

ClusterConnectorOptions ConsumerOptions(const std::string& zk_servers) {
  ClusterConnectorOptions o;
  o.zk_servers = zk_servers;
  o.destination = kDestination;
  o.zk_session_timeout_ms = kSessionTimeoutMs;
  // A frozen server accepts TCP connections (the kernel does) but never
  // answers: short timeouts let the connector give up on it quickly (all
  // servers here are local, so a healthy one answers in milliseconds).
  o.connect_timeout = 1s;
  o.read_timeout = 2s;
  o.retry.max_attempts = 200;
  o.retry.initial_backoff = 100ms;
  o.retry.max_backoff = 500ms;
  o.retry.give_up_after = 60s;
  return o;
}

// Consumes and acks every batch until `stop`. A batch acked with no answer
// since may come once more: the ledger hears of a reconnect when the next call
// failed, or failed over inside the connector (reconnects() moved), or the ack
// itself was refused (NotFound: "delivered again").
void RunClusterConsumer(std::stop_token stop, ClusterConnector& c, DeliveryLedger& ledger, ConsumeLog& log) {
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
std::vector<int64_t> CliRows(const fs::path& file, const DeliveryLedger& ledger, int* unparsable) {
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

size_t CountLines(const fs::path& file) {
  const std::string text = ReadAll(file);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// ---- The suite -----------------------------------------------------------------

class Ha : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = StartSuiteSandbox(kSandboxPort, &setup_error_);
    zk_sandbox_ = StartSuiteZk(kZkPort, &zk_setup_error_);
  }
  static void TearDownTestSuite() {
    zk_sandbox_.reset();
    sandbox_.reset();
  }

  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    CANAL_REQUIRE_ZK(zk_sandbox_, zk_setup_error_);
    ASSERT_TRUE(fs::exists(CanalInstall::ServerProgram()))
        << CanalInstall::ServerProgram() << " is missing: build the canal-server target first";
    coord::ZkOptions o;
    o.servers = zk_sandbox_->servers();
    o.session_timeout_ms = 30'000;  // the test's own view must outlive the restarts of test 3
    ASSERT_TRUE(coord::ZkClient::Create(o, &zk_).ok());
    Status s = zk_->WaitConnected(10s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // Every test starts from an empty layout: no cursor or running node of an earlier one.
    ASSERT_TRUE((s = zk_->Delete("/otter", /*recursive=*/true)).ok()) << s.ToString();
  }
  void TearDown() override {
    for (auto& install : installs_) {
      if (install) install->Thaw();
    }
    installs_[0].reset();
    installs_[1].reset();
    if (zk_) zk_->Close();
    // Test 3 stops ZooKeeper; a failure half-way must not leave it down.
    if (zk_sandbox_) zk_sandbox_->Start();
  }

  static bool Sql(const std::string& sql) {
    const bool ok = sandbox_->Sql(sql);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }
  // instance.properties lines that start at the primary's end as it is now.
  static std::string StartHere() { return StartAtPrimaryEnd(*sandbox_); }
  static bool CreateLoadTable(const std::string& table) { return Sql(LoadTableSql(table)); }
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
    if (!zk_->Get(kRunningPath, &body).ok()) return "";
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("address") || !j["address"].is_string()) return "";
    return j["address"].get<std::string>();
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

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::unique_ptr<ZkSandbox> zk_sandbox_;
  static inline std::string setup_error_, zk_setup_error_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<CanalInstall> installs_[2];
};

// 1. SIGKILL of the active server while 2,000 transactions (200,000 rows)
// stream to a ClusterConnector client: the standby takes over within the
// bound, and the client receives every row in order, once (only the batch it
// acked just before the kill, with no answer since, may come once more).
TEST_F(Ha, SigkillOfTheActiveServerFailsOverWithinTheBoundLosingAndRepeatingNothing) {
  constexpr int kTxns = 2000, kRowsPerTxn = 100, kChunks = 20;
  const std::string table = "ha_db.failover";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("failover", kFailoverPorts, table));
  const std::vector<std::string> chunks = LoadChunks("failover", table, kTxns, kRowsPerTxn, kChunks);
  const auto start = Clock::now();

  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  ConsumeLog log;
  ClusterConnector c(ConsumerOptions(zk_sandbox_->servers()));
  std::jthread consumer([&](std::stop_token stop) { RunClusterConsumer(stop, c, ledger, log); });
  std::jthread writer([&] { WriteFiles(chunks, 0, chunks.size()); });

  EXPECT_TRUE(WaitFor([&] { return ledger.transactions_complete() >= 600; }, 60s))
      << ledger.transactions_complete() << " transactions; " << log.last_error();
  const std::string killed = RunningAddress(), standby = Address(kFailoverPorts[1]);
  ASSERT_EQ(killed, Address(kFailoverPorts[0]));
  const int64_t at_kill = ledger.transactions_complete();
  const auto killed_at = Clock::now();
  ASSERT_TRUE(install(0).Kill9());
  std::optional<Clock::time_point> node_moved;
  if (WaitFor([&] { return RunningAddress() == standby; }, 20s)) node_moved = Clock::now();
  ASSERT_TRUE(node_moved) << "the running node still says \"" << RunningAddress() << "\" 20 s after the kill\n"
                          << ReadAll(install(1).server_log());

  writer.join();
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 90s)) << ledger.distinct() << " rows; " << log.last_error();
  std::this_thread::sleep_for(1500ms);  // room for a late duplicate
  consumer.request_stop();
  consumer.join();

  const auto first_batch = log.FirstBatchAfter(killed_at, standby);
  const double node_s = SecondsBetween(killed_at, *node_moved);
  const double serving_s = first_batch ? SecondsBetween(killed_at, *first_batch) : -1;
  std::printf("[ ha ] failover: SIGKILL of the active server at %lld of %d transactions; running node moved after "
              "%.2f s, first batch from the new active after %.2f s (bound %.0f s, session timeout %d ms); %lld of %d "
              "rows in %.1f s, %zu batches, %lld reconnects, %lld errors returned to the client, %s\n",
              static_cast<long long>(at_kill), kTxns, node_s, serving_s, kTakeoverBoundS, kSessionTimeoutMs,
              static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn, SecondsSince(start),
              log.batches().size(), static_cast<long long>(log.reconnects.load()),
              static_cast<long long>(log.errors()), ledger.Tally().c_str());
  std::printf("%s", log.first_errors().c_str());
  ASSERT_TRUE(first_batch) << "no batch from " << standby << " after the kill";
  EXPECT_LT(serving_s, kTakeoverBoundS);
  EXPECT_LT(node_s, kTakeoverBoundS);
  EXPECT_EQ(ledger.Faults(), "");
}

// 2. The active server is frozen (SIGSTOP) past its session timeout: the
// standby takes over and the client keeps consuming without loss or repeat;
// resumed (SIGCONT), the old server never delivers data for the destination
// to a connection made before the freeze or after, and does not take the
// running node back.
TEST_F(Ha, AFrozenActiveServerIsReplacedAndAfterResumingNeverDeliversData) {
  constexpr int kTxns = 600, kRowsPerTxn = 20, kChunks = 30;
  const std::string table = "ha_db.partition";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("partition", kPartitionPorts, table));
  const std::string frozen = Address(kPartitionPorts[0]), standby = Address(kPartitionPorts[1]);
  const std::vector<std::string> chunks = LoadChunks("partition", table, kTxns, kRowsPerTxn, kChunks);

  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  ConsumeLog log;
  ClusterConnector c(ConsumerOptions(zk_sandbox_->servers()));
  std::jthread consumer([&](std::stop_token stop) { RunClusterConsumer(stop, c, ledger, log); });
  // A plain connection to the old active server, authenticated before the freeze.
  ConnectorOptions direct_options;
  direct_options.address = frozen;
  direct_options.destination = kDestination;
  direct_options.connect_timeout = 3s;
  direct_options.read_timeout = 5s;
  Connector before(direct_options);
  Status s = before.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();

  // A third of the stream through the active server, a third while it is
  // frozen, the rest after it resumed.
  WriteFiles(chunks, 0, kChunks / 3);
  EXPECT_TRUE(WaitFor([&] { return ledger.transactions_complete() >= kTxns / 3; }, 30s)) << log.last_error();
  const auto frozen_at = Clock::now();
  ASSERT_TRUE(install(0).Freeze());
  std::jthread writer([&] { WriteFiles(chunks, kChunks / 3, 2 * kChunks / 3, 200ms); });
  std::optional<Clock::time_point> node_moved;
  if (WaitFor([&] { return RunningAddress() == standby; }, 20s)) node_moved = Clock::now();
  EXPECT_TRUE(node_moved) << "the running node still says \"" << RunningAddress() << "\" 20 s after the freeze";
  EXPECT_TRUE(WaitFor([&] { return log.FirstBatchAfter(frozen_at, standby).has_value(); }, 20s));
  // Frozen well past its session timeout (and its fencing bound).
  std::this_thread::sleep_until(frozen_at + std::chrono::milliseconds(kSessionTimeoutMs) + 3s);
  writer.join();

  // Resumed: its first answers, to a connection from before and one from after.
  const auto thawed_at = Clock::now();
  ASSERT_TRUE(install(0).Thaw());
  int refusals = 0, data = 0;
  std::vector<std::string> answers;
  auto expect_no_data = [&](const char* what, const Status& st, const Message* m) {
    if (m != nullptr && st.ok() && m->batch_id() != -1) {
      ++data;
      ADD_FAILURE() << what << ": the resumed server delivered batch " << m->batch_id();
    }
    if (!st.ok()) ++refusals;
    answers.push_back(std::string(what) + ": " + (st.ok() ? "OK" : st.ToString()));
  };
  s = before.Subscribe();
  expect_no_data("subscribe on the connection from before the freeze", s, nullptr);
  Message m1;
  s = before.GetWithoutAck(64, 500, TimeUnit::kMilliseconds, &m1);
  expect_no_data("get on it", s, &m1);
  Connector after(direct_options);
  s = after.Connect();
  if (s.ok()) s = after.Subscribe();
  expect_no_data("connect and subscribe after resuming", s, nullptr);
  Message m2;
  s = after.GetWithoutAck(64, 500, TimeUnit::kMilliseconds, &m2);
  expect_no_data("get on it", s, &m2);

  // It must not take the running node back while the new active server holds it.
  std::string held_by = standby;
  WaitFor([&] {
    const std::string a = RunningAddress();
    if (a != standby) held_by = a;
    return a != standby;
  }, 4s);
  WriteFiles(chunks, 2 * kChunks / 3, kChunks);
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 60s)) << ledger.distinct() << " rows; " << log.last_error();
  std::this_thread::sleep_for(1s);  // room for a late duplicate
  consumer.request_stop();
  consumer.join();
  const bool fence_logged = ReadAll(install(0).server_log()).find("fencing") != std::string::npos;

  const auto first_batch = log.FirstBatchAfter(frozen_at, standby);
  std::printf("[ ha ] partition: active server frozen (SIGSTOP) for %.1f s; running node moved after %.2f s, first "
              "batch from the new active after %.2f s; after SIGCONT the old server answered %d of 4 requests with an error or a closed connection and "
              "delivered %d batches, running node held by %s for 4 s after, fencing logged: %s; client: %lld of %d "
              "rows, %lld reconnects, %lld errors returned, %s\n",
              SecondsBetween(frozen_at, thawed_at), node_moved ? SecondsBetween(frozen_at, *node_moved) : -1.0,
              first_batch ? SecondsBetween(frozen_at, *first_batch) : -1.0, refusals, data,
              held_by == standby ? "the new active" : held_by.c_str(), fence_logged ? "yes" : "no",
              static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn,
              static_cast<long long>(log.reconnects.load()), static_cast<long long>(log.errors()),
              ledger.Tally().c_str());
  for (const auto& a : answers) std::printf("[ ha ]   %s\n", a.c_str());
  std::printf("%s", log.first_errors().c_str());
  EXPECT_EQ(data, 0);
  EXPECT_GE(refusals, 2) << "the subscribe from before and the one from after must both be refused";
  EXPECT_EQ(held_by, standby) << "the resumed server took the running node back";
  ASSERT_TRUE(first_batch) << "no batch from " << standby << " after the freeze";
  EXPECT_LT(SecondsBetween(frozen_at, *first_batch), kTakeoverBoundS);
  EXPECT_EQ(ledger.Faults(), "");
}

// 2b. The ack a frozen active server received just before the freeze: once
// resumed (fenced: the standby is active), it refuses the ack with error 409
// ("not applied, the batch comes again"), and the ClusterConnector, whose get
// reads that answer, fails over, rolls back and gets the same batch from the
// new active server, with no error returned to the caller.
TEST_F(Ha, AnAckAFrozenServerReadsAfterResumingIs409AndTheClusterConnectorGetsTheBatchAgain) {
  const std::string table = "ha_db.ack409";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("ack409", kAckNotAppliedPorts, table));
  const std::string frozen = Address(kAckNotAppliedPorts[0]), standby = Address(kAckNotAppliedPorts[1]);
  // The fixed address list: through ZooKeeper the connector would see the
  // running node move and leave the frozen server before reading its answer.
  ClusterConnectorOptions o = ConsumerOptions("");
  o.zk_servers.clear();
  o.addresses = {frozen, standby};
  o.read_timeout = 60s;  // still waiting on the frozen server when it resumes
  ClusterConnector c(o);
  Status s = c.Connect();
  if (s.ok()) s = c.Subscribe();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(Sql("INSERT INTO " + table + " (txn, seq, pad) VALUES (1, 0, 'a'), (1, 1, 'b')"));
  auto rows_of = [](Message& m) {
    std::vector<std::string> rows;
    EXPECT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
                  rows.push_back(ColumnText(row, "pad"));
                }).ok());
    return rows;
  };
  Message first;
  for (const auto deadline = Clock::now() + 20s; first.batch_id() == -1 && Clock::now() < deadline;) {
    s = c.GetWithoutAck(256, 200, TimeUnit::kMilliseconds, &first);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_NE(first.batch_id(), -1) << "no batch from " << frozen;
  ASSERT_EQ(c.current_address(), frozen);
  const std::vector<std::string> rows = rows_of(first);
  ASSERT_EQ(rows, (std::vector<std::string>{"a", "b"}));

  const auto frozen_at = Clock::now();
  ASSERT_TRUE(install(0).Freeze());
  // Every thread stopped before the ack leaves: it must wait in the socket.
  ASSERT_TRUE(WaitFor([&] { return AllThreadsStopped(install(0).Pid()); }, 5s));
  s = c.Ack(first.batch_id());  // sent (no answer is expected): it waits in the frozen server's socket
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(WaitFor([&] { return RunningAddress() == standby; }, 20s)) << RunningAddress();
  std::this_thread::sleep_until(frozen_at + std::chrono::milliseconds(kSessionTimeoutMs) + 3s);
  ASSERT_TRUE(install(0).Thaw());

  Message again;
  s = c.GetWithoutAck(256, 500, TimeUnit::kMilliseconds, &again);
  for (const auto deadline = Clock::now() + 20s; s.ok() && again.batch_id() == -1 && Clock::now() < deadline;) {
    s = c.GetWithoutAck(256, 500, TimeUnit::kMilliseconds, &again);
  }
  const std::string log = ReadAll(install(0).server_log());
  std::printf("[ ha ] ack not applied: frozen %.1f s; the get after resuming: %s, batch %lld from %s; acks the "
              "connector saw refused with 409: %lld, reconnects %lld\n",
              SecondsBetween(frozen_at, Clock::now()), s.ToString().c_str(), static_cast<long long>(again.batch_id()),
              c.current_address().c_str(), static_cast<long long>(c.acks_not_applied()),
              static_cast<long long>(c.reconnects()));
  ASSERT_TRUE(s.ok()) << "the connector returned the failure instead of getting again: " << s.ToString();
  EXPECT_EQ(c.current_address(), standby);
  EXPECT_EQ(rows_of(again), rows) << "the batch whose ack was not applied comes again";
  EXPECT_EQ(c.acks_not_applied(), 1) << "the resumed server did not answer the ack with 409:\n" << log;
  EXPECT_NE(log.find("error 409"), std::string::npos) << log;
  EXPECT_TRUE(c.Ack(again.batch_id()).ok());
}

// 3. ZooKeeper stopped under a running pair, once for ~2 s (within the session
// timeout) and once for 9 s (beyond it), while a stream is written: the
// service pauses at most and resumes, losing and repeating nothing.
TEST_F(Ha, ZooKeeperRestartedUnderARunningPairPausesServiceWithoutLoss) {
  constexpr int kTxns = 1200, kRowsPerTxn = 20, kChunks = 60;
  const std::string table = "ha_db.zkrestart";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("zkrestart", kZkRestartPorts, table));
  const std::vector<std::string> chunks = LoadChunks("zkrestart", table, kTxns, kRowsPerTxn, kChunks);

  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  ConsumeLog log;
  ClusterConnector c(ConsumerOptions(zk_sandbox_->servers()));
  std::jthread consumer([&](std::stop_token stop) { RunClusterConsumer(stop, c, ledger, log); });
  // ~30 s of writes, spanning both outages.
  std::jthread writer([&] { WriteFiles(chunks, 0, chunks.size(), 450ms); });

  struct Outage {
    double down_s = 0, pause_s = 0, resumed_after_s = -1;
    std::string active_after;
  };
  auto outage = [&](std::chrono::milliseconds down) {
    Outage o;
    const auto stopped = Clock::now();
    EXPECT_TRUE(zk_sandbox_->Stop()) << zk_sandbox_->error();
    std::this_thread::sleep_until(stopped + down);
    EXPECT_TRUE(zk_sandbox_->Start()) << zk_sandbox_->error();
    const auto started = Clock::now();
    o.down_s = SecondsBetween(stopped, started);
    EXPECT_TRUE(WaitFor([&] { return log.FirstBatchAfter(started).has_value(); }, 30s))
        << "no batch within 30 s of ZooKeeper's return; " << log.last_error();
    if (auto b = log.FirstBatchAfter(started)) o.resumed_after_s = SecondsBetween(started, *b);
    o.pause_s = log.LongestPause(stopped, started);
    WaitFor([&] { return !RunningAddress().empty(); }, 15s);
    o.active_after = RunningAddress();
    return o;
  };
  EXPECT_TRUE(WaitFor([&] { return ledger.transactions_complete() >= 100; }, 30s)) << log.last_error();
  const Outage shortly = outage(2s);
  std::this_thread::sleep_for(3s);
  const Outage long_one = outage(9s);
  writer.join();
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 60s)) << ledger.distinct() << " rows; " << log.last_error();
  std::this_thread::sleep_for(1s);
  consumer.request_stop();
  consumer.join();

  std::printf("[ ha ] ZooKeeper restarts: unavailable %.1f s (stop, ~2 s, start) -> longest pause %.2f s, first batch %.2f s after it came "
              "back, active then %s; unavailable %.1f s (beyond the %d ms session) -> longest pause %.2f s, first batch "
              "%.2f s after, active then %s; client: %lld of %d rows, %lld reconnects, %lld elections, %lld errors "
              "returned, %s\n",
              shortly.down_s, shortly.pause_s, shortly.resumed_after_s, shortly.active_after.c_str(), long_one.down_s,
              kSessionTimeoutMs, long_one.pause_s, long_one.resumed_after_s, long_one.active_after.c_str(),
              static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn,
              static_cast<long long>(log.reconnects.load()), static_cast<long long>(log.elections.load()),
              static_cast<long long>(log.errors()), ledger.Tally().c_str());
  std::printf("%s", log.first_errors().c_str());
  EXPECT_FALSE(shortly.active_after.empty());
  EXPECT_FALSE(long_one.active_after.empty());
  EXPECT_EQ(ledger.Faults(), "");
}

// 4. Two canal-cli --zk processes with the same client id: the elected one
// prints and acks part of the stream and is SIGKILLed; the other takes over
// from the acked cursor: no row missing, and only rows of the killed one's
// last batch (printed, acked without an answer, or not acked) printed twice.
TEST_F(Ha, ASigkilledActiveClientIsReplacedByTheStandbyFromTheAckedCursor) {
  constexpr int kTxns = 2000, kRowsPerTxn = 10, kChunks = 20, kBatch = 50;
  const fs::path cli = fs::path(CANAL_BINARY_DIR) / "bin" / "canal-cli";
  ASSERT_TRUE(fs::exists(cli)) << cli << " is missing: build the canal-cli target first";
  const std::string table = "ha_db.clients";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("clients", kClientFailoverPorts, table));
  const std::vector<std::string> chunks = LoadChunks("clients", table, kTxns, kRowsPerTxn, kChunks);
  const fs::path dir = install(0).root();
  const std::vector<std::string> args = {cli.string(), "--zk", zk_sandbox_->servers(), "--destination", kDestination,
                                         "--client-id", "1001", "--json", "--batch", std::to_string(kBatch),
                                         "--timeout-ms", "200"};
  const std::string client_running = client::ClientRunningPath(kDestination, "1001");

  ChildProcess first, second;
  ASSERT_TRUE(first.Spawn(args, dir / "cli-a.out", dir / "cli-a.err"));
  bool exists = false;
  ASSERT_TRUE(WaitFor([&] { return zk_->Exists(client_running, &exists).ok() && exists; }, 15s))
      << ReadAll(dir / "cli-a.err");
  ASSERT_TRUE(second.Spawn(args, dir / "cli-b.out", dir / "cli-b.err"));
  ASSERT_TRUE(WaitForText(dir / "cli-b.err", "standby", 15s)) << ReadAll(dir / "cli-b.err");

  // Written as fast as it goes, so that the kill lands while the client is busy.
  std::jthread writer([&] { WriteFiles(chunks, 0, chunks.size()); });
  ASSERT_TRUE(WaitFor([&] { return CountLines(dir / "cli-a.out") >= 5000; }, 60s)) << ReadAll(dir / "cli-a.err");
  const auto killed_at = Clock::now();
  ASSERT_TRUE(first.Signal(SIGKILL));
  first.Wait(5s);
  // The cursor the killed client left (its last ack reaches ZooKeeper within
  // the flush period, and no later: the standby waits for its session to expire).
  std::this_thread::sleep_for(1500ms);
  std::string cursor;
  EXPECT_TRUE(zk_->Get("/otter/canal/destinations/example/1001/cursor", &cursor).ok());
  EXPECT_TRUE(WaitFor([&] { return CountLines(dir / "cli-b.out") > 0; }, 20s)) << ReadAll(dir / "cli-b.err");
  const double took_over_s = SecondsSince(killed_at);  // within 20 ms of the standby's first line
  writer.join();

  DeliveryLedger total(kTxns, kRowsPerTxn);
  int unparsable = 0;
  EXPECT_TRUE(WaitFor([&] { return static_cast<int64_t>(CliRows(dir / "cli-b.out", total, &unparsable).size()) +
                                       static_cast<int64_t>(CliRows(dir / "cli-a.out", total, &unparsable).size()) >=
                                   total.size(); }, 60s));
  std::this_thread::sleep_for(1s);
  second.Signal(SIGTERM);
  EXPECT_EQ(second.Wait(10s), 0) << ReadAll(dir / "cli-b.err");
  unparsable = 0;
  const std::vector<int64_t> a = CliRows(dir / "cli-a.out", total, &unparsable);
  const std::vector<int64_t> b = CliRows(dir / "cli-b.out", total, &unparsable);

  // Each process alone: in order, no repeats.
  DeliveryLedger la(kTxns, kRowsPerTxn), lb(kTxns, kRowsPerTxn);
  la.Received(a);
  lb.Received(b);
  // Together: the rows printed by both are a tail of the killed one's output,
  // the standby starts inside it, and nothing is missing.
  std::vector<uint8_t> in_a(static_cast<size_t>(total.size()), 0);
  for (int64_t n : a) {
    if (n >= 0 && n < total.size()) in_a[n] = 1;
  }
  int64_t both = 0;
  for (int64_t n : b) both += n >= 0 && n < total.size() && in_a[n];
  const int64_t b_first = b.empty() ? -1 : b.front();
  const int64_t a_last = a.empty() ? -1 : a.back();
  int64_t tail_from_b_first = 0;  // rows of a at or after b's first row
  for (int64_t n : a) tail_from_b_first += n >= b_first;
  total.Received(a);
  total.Received(b);
  const int64_t missing = total.gaps();
  // A batch of kBatch entries holds at most kBatch row entries of kRowsPerTxn rows.
  const int64_t one_batch = int64_t{kBatch} * kRowsPerTxn;

  std::printf("[ ha ] client failover: canal-cli A printed %zu rows (last txn %lld) and was SIGKILLed; canal-cli B "
              "(standby, same client id) printed its first row %.2f s later (session timeout %d ms), starting at txn "
              "%lld; %lld rows printed by both (the killed client's unfinished last batch, bound %lld), %lld missing, "
              "%lld out of order, %lld repeats within one process\n",
              a.size(), static_cast<long long>(a_last / kRowsPerTxn + 1), took_over_s, kSessionTimeoutMs,
              static_cast<long long>(b_first / kRowsPerTxn + 1), static_cast<long long>(both),
              static_cast<long long>(one_batch), static_cast<long long>(missing),
              static_cast<long long>(la.out_of_order() + lb.out_of_order()),
              static_cast<long long>(la.duplicates() + lb.duplicates()));
  std::printf("[ ha ]   cursor after the kill: %s\n", cursor.c_str());
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(la.duplicates() + lb.duplicates(), 0);
  EXPECT_EQ(la.out_of_order() + lb.out_of_order(), 0);
  EXPECT_EQ(la.foreign() + lb.foreign(), 0);
  EXPECT_LE(b_first, a_last + 1) << "the standby skipped rows after the killed client's last one";
  EXPECT_EQ(both, tail_from_b_first) << "rows printed twice are not exactly the killed client's tail";
  EXPECT_LE(both, one_batch);
  EXPECT_LT(took_over_s, kTakeoverBoundS);
}

// 5. The nodes two servers and a client write are Canal's: paths, ephemeral
// server nodes that go with their server, and the JSON bodies of the running
// nodes and of the cursor.
TEST_F(Ha, ZooKeeperNodesFollowCanalsLayoutAndJson) {
  const std::string table = "ha_db.layout";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("layout", kLayoutPorts, table));
  const std::string active = Address(kLayoutPorts[0]), standby = Address(kLayoutPorts[1]);
  const std::string filter = "ha_db\\.layout";

  ClusterConnectorOptions o = ConsumerOptions(zk_sandbox_->servers());
  o.client_address = "10.1.2.3:4242";
  ClusterConnector c(o);
  Status s = c.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE((s = c.Subscribe(filter)).ok()) << s.ToString();
  ASSERT_TRUE(Sql("INSERT INTO " + table + " (txn, seq, pad) VALUES (1, 0, 'a'), (1, 1, 'b')"));
  size_t rows = 0;
  const auto deadline = Clock::now() + 20s;
  while (rows < 2 && Clock::now() < deadline) {
    Message m;
    ASSERT_TRUE((s = c.GetWithoutAck(100, 200, TimeUnit::kMilliseconds, &m)).ok()) << s.ToString();
    if (m.batch_id() == -1) continue;
    ASSERT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData&) { ++rows; }).ok());
    ASSERT_TRUE((s = c.Ack(m.batch_id())).ok()) << s.ToString();
  }
  ASSERT_EQ(rows, 2u);
  Message after_ack;  // the server writes the acked cursor before it answers this
  ASSERT_TRUE((s = c.GetWithoutAck(100, 100, TimeUnit::kMilliseconds, &after_ack)).ok()) << s.ToString();

  auto get = [&](const std::string& path) {
    std::string body;
    Status st = zk_->Get(path, &body);
    EXPECT_TRUE(st.ok()) << path << ": " << st.ToString();
    return body;
  };
  auto json = [](const std::string& body) { return nlohmann::json::parse(body, nullptr, false); };
  const std::string dest = "/otter/canal/destinations/example";
  int checked = 0;

  // Servers.
  const std::vector<std::string> both = {active, standby};
  std::vector<std::string> servers = Children("/otter/canal/cluster"), dest_servers = Children(dest + "/cluster");
  std::sort(servers.begin(), servers.end());
  std::sort(dest_servers.begin(), dest_servers.end());
  std::vector<std::string> want = both;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(servers, want);
  EXPECT_EQ(dest_servers, want);
  checked += 2;

  // The active server's running node: {"active":true,"address":"ip:port"}.
  const std::string running_body = get(dest + "/running");
  const nlohmann::json running = json(running_body);
  ASSERT_TRUE(running.is_object()) << running_body;
  EXPECT_EQ(running.value("active", false), true) << running_body;
  EXPECT_EQ(running.value("address", ""), active) << running_body;
  ++checked;

  // The cursor: Canal's LogPosition JSON, "postion" as Canal spells it.
  const std::string cursor_body = get(dest + "/1001/cursor");
  const nlohmann::json cursor = json(cursor_body);
  ASSERT_TRUE(cursor.is_object()) << cursor_body;
  EXPECT_EQ(cursor.value("@type", ""), "com.alibaba.otter.canal.protocol.position.LogPosition") << cursor_body;
  ASSERT_TRUE(cursor.contains("identity") && cursor["identity"].is_object()) << cursor_body;
  EXPECT_EQ(cursor["identity"].value("slaveId", 0), -1) << cursor_body;
  ASSERT_TRUE(cursor["identity"].contains("sourceAddress")) << cursor_body;
  EXPECT_EQ(cursor["identity"]["sourceAddress"].value("address", ""), "127.0.0.1") << cursor_body;
  EXPECT_EQ(cursor["identity"]["sourceAddress"].value("port", 0), kSandboxPort) << cursor_body;
  EXPECT_FALSE(cursor.contains("position")) << cursor_body;
  ASSERT_TRUE(cursor.contains("postion") && cursor["postion"].is_object()) << cursor_body;
  const nlohmann::json& pos = cursor["postion"];
  EXPECT_TRUE(pos.contains("gtid") && pos["gtid"].is_string()) << cursor_body;
  EXPECT_TRUE(pos.contains("included") && pos["included"].is_boolean()) << cursor_body;
  std::string status_out;
  ASSERT_TRUE(sandbox_->Sql("SHOW MASTER STATUS", &status_out));
  const std::string master_file = status_out.substr(0, status_out.find('\t'));
  EXPECT_EQ(pos.value("journalName", ""), master_file) << cursor_body;
  EXPECT_TRUE(pos.contains("position") && pos["position"].is_number_integer() && pos["position"].get<int64_t>() > 4)
      << cursor_body;
  EXPECT_TRUE(pos.contains("serverId") && pos["serverId"].is_number_integer()) << cursor_body;
  EXPECT_TRUE(pos.contains("timestamp") && pos["timestamp"].is_number_integer() &&
              pos["timestamp"].get<int64_t>() > 1'500'000'000'000)
      << "timestamp in milliseconds: " << cursor_body;
  ++checked;

  // The client's filter (text) and running node.
  EXPECT_EQ(get(dest + "/1001/filter"), filter);
  const std::string client_body = get(dest + "/1001/running");
  const nlohmann::json client_running = json(client_body);
  ASSERT_TRUE(client_running.is_object()) << client_body;
  EXPECT_EQ(client_running.value("active", false), true) << client_body;
  EXPECT_EQ(client_running.value("address", ""), "10.1.2.3:4242") << client_body;
  EXPECT_TRUE(client_running.contains("clientId") && client_running["clientId"].is_number_integer() &&
              client_running["clientId"].get<int>() == 1001)
      << client_body;
  checked += 2;

  // Ephemeral: the standby's nodes go with it (stop.sh), the client's with its session.
  std::string out;
  EXPECT_EQ(install(1).Stop(&out), 0) << out;
  bool standby_gone = WaitFor([&] {
    bool e1 = true, e2 = true;
    return zk_->Exists("/otter/canal/cluster/" + standby, &e1).ok() && !e1 &&
           zk_->Exists(dest + "/cluster/" + standby, &e2).ok() && !e2;
  }, 5s);
  EXPECT_TRUE(standby_gone);
  c.Disconnect();
  bool client_gone = WaitFor([&] {
    bool e = true;
    return zk_->Exists(dest + "/1001/running", &e).ok() && !e;
  }, 5s);
  EXPECT_TRUE(client_gone);
  bool cursor_kept = false;
  EXPECT_TRUE(zk_->Exists(dest + "/1001/cursor", &cursor_kept).ok());
  checked += 2;

  std::printf("[ ha ] layout: %d checks of the nodes against CANAL_PROTOCOL.md (cluster, destination cluster, "
              "running, cursor with @type and \"postion\", filter, client running); standby's nodes gone after "
              "stop.sh: %s, client running node gone after Disconnect: %s, cursor kept: %s\n",
              checked, standby_gone ? "yes" : "no", client_gone ? "yes" : "no", cursor_kept ? "yes" : "no");
  std::printf("[ ha ]   running: %s\n[ ha ]   client running: %s\n[ ha ]   cursor: %s\n", running_body.c_str(),
              client_body.c_str(), cursor_body.c_str());
  EXPECT_TRUE(cursor_kept);
}

}  // namespace
}  // namespace canal::testing
