// The fleet acceptance suites' fixture (fleet_*_test.cc): a balanced cluster of canal-servers
// (canal.cluster.placement = balanced, canal.zkServers set) sharing many destinations through one
// real ZooKeeper, on up to three real MariaDB primaries, each destination's filter on a table of
// its own. An elected leader spreads the destinations evenly over the servers; each server
// contends (the running node in Canal's layout) only for what the assignment gives it.
//
// What a test here has at hand (the helpers are in fleet_support.h):
//   - Dests("d", 30, 3): destinations d00..d29, round robin over primaries 0..2, each with the
//     load table fleet_db.<name> (load_table.h: txn, seq, pad);
//   - MakeServer(i, dests): an install (CanalInstall) of server i on kServerPorts[i] listing
//     `dests` in its conf folder, StartServer(i), install(i) (Kill9, Freeze, Thaw, Stop);
//     StartPlaced(name, n, dests, &servers): servers 0..n-1 made, started and placed;
//   - Writer: one per primary, inserting a transaction of kRowsPerTxn rows into each of its
//     tables every pause, until stopped (and again from where it stopped);
//   - Clients: one ClusterConnector consumer per destination (RunClusterConsumer of the Ha
//     suite, its DeliveryLedger rule: every row once, in order; only the rows of a batch acked
//     with no answer since may come once more);
//   - OwnerWatch: every destination's running-node owner over time, polled, for "how often did
//     it move";
//   - ZooKeeper readers: the assignment node, the running nodes, per-server counts.
// Each test prints "[ fleet ]" lines with its figures.
//
// The suite "Fleet*" spans files by concern, as the Ha suite does: placement and failover under
// load (fleet_balance_test.cc), fencing (fleet_fencing_test.cc), bad input and faults
// (fleet_faults_test.cc) and Canal's layout (fleet_layout_test.cc). Ports: the block "fleet"
// only (test_ports.h); the ctest group "fleet" runs them one at a time.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/coord/canal_layout.h"
#include "canal/coord/placement_layout.h"
#include "canal/coord/zk_client.h"
#include "integration/fleet_support.h"

namespace canal::testing::fleet {

// ---- The suite ---------------------------------------------------------------------

class Fleet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    zk_sandbox_ = StartSuiteZk(kZkPort, &zk_setup_error_);
    if (MariadbSandbox::Available()) primaries_[0] = StartSuiteSandbox(kPrimaryPorts[0], &primary_setup_error_);
  }
  static void TearDownTestSuite() {
    zk_sandbox_.reset();
    for (auto& p : primaries_) p.reset();
  }

  void SetUp() override {
    if (!MariadbSandbox::Available()) GTEST_SKIP() << MariadbSandbox::SkipReason();
    CANAL_REQUIRE_ZK(zk_sandbox_, zk_setup_error_);
    ASSERT_TRUE(primaries_[0] != nullptr) << primary_setup_error_;
    ASSERT_TRUE(fs::exists(CanalInstall::ServerProgram()))
        << CanalInstall::ServerProgram() << " is missing: build the canal-server target first";
    // A test that stopped it and failed half-way must not break the next.
    ASSERT_TRUE(zk_sandbox_->Start()) << zk_sandbox_->error();
    const Status s = ConnectToEmptyLayout(*zk_sandbox_, &zk_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void TearDown() override {
    for (auto& install : installs_) {
      if (install) install->Thaw();
    }
    StopServers();
    if (zk_) zk_->Close();
    if (zk_sandbox_) zk_sandbox_->Start();
  }

  // Stops every server still running, all at once (each a clean leave), and drops the installs.
  void StopServers() {
    std::vector<std::jthread> stops;
    for (auto& install : installs_) {
      if (install) stops.emplace_back([&install] { install.reset(); });
    }
  }

  // Primaries 0..n-1 running (the first is the suite's; the others start here, side by side).
  static bool UsePrimaries(int n) {
    std::vector<std::jthread> starts;
    std::string errors[kPrimaries];
    for (int i = 1; i < n && i < kPrimaries; ++i) {
      if (primaries_[i] == nullptr) {
        starts.emplace_back([i, &errors] { primaries_[i] = StartSuiteSandbox(kPrimaryPorts[i], &errors[i]); });
      }
    }
    starts.clear();
    bool ok = true;
    for (int i = 0; i < n && i < kPrimaries; ++i) {
      if (primaries_[i] == nullptr) {
        ADD_FAILURE() << "MariaDB primary " << i << " on port " << kPrimaryPorts[i] << ": " << errors[i];
        ok = false;
      }
    }
    return ok;
  }
  static MariadbSandbox& primary(int i) { return *primaries_[i]; }

  // (Re)creates the destinations' load tables, then notes each primary's end: the destinations
  // start there.
  bool CreateTables(const std::vector<Dest>& dests) {
    std::map<int, std::string> sql;
    for (const Dest& d : dests) sql[d.primary] += LoadTableSql(d.table) + ";\n";
    for (const auto& [p, text] : sql) {
      if (!primary(p).Sql(text)) {
        ADD_FAILURE() << "primary " << p << ": " << primary(p).error();
        return false;
      }
      start_[p] = StartAtPrimaryEnd(primary(p));
      if (start_[p].empty()) return false;
    }
    return true;
  }

  // conf/<dest>/instance.properties: its primary, from where it was when the tables were made,
  // its own table only.
  void WriteDest(const CanalInstall& install, const Dest& d) const {
    WriteFile(install.conf_dir() / d.name / "instance.properties",
              "canal.instance.master.address = 127.0.0.1:" + std::to_string(kPrimaryPorts[d.primary]) +
                  "\ncanal.instance.dbUsername = " + MariadbSandbox::kUser +
                  "\ncanal.instance.dbPassword = " + MariadbSandbox::kPassword + "\n" + start_.at(d.primary) +
                  // A regex's backslash is written twice in a .properties file.
                  "canal.instance.filter.regex = fleet_db\\\\." + d.name + "\n");
  }

  // Server i (kServerPorts[i]) in <build>/test-sandboxes/fleet-<name>-<i>, listing `dests` in its
  // conf folder (auto scan every second), balanced placement; `extra` canal.properties lines.
  CanalInstall& MakeServer(const std::string& name, int i, const std::vector<Dest>& dests,
                           const std::string& extra = "") {
    installs_[i] = std::make_unique<CanalInstall>("fleet-" + name + "-" + std::to_string(i), kPrimaryPorts[0]);
    installs_[i]->WriteServerProperties(CanalInstall::ServerProperties(
        kServerPorts[i], "canal.destinations =\ncanal.zkServers = " + zk_sandbox_->servers() +
                             "\ncanal.zookeeper.session.timeout = " + std::to_string(kSessionTimeoutMs) +
                             "\ncanal.cluster.placement = balanced\n" + extra));
    for (const Dest& d : dests) WriteDest(*installs_[i], d);
    return *installs_[i];
  }
  ::testing::AssertionResult StartServer(int i) {
    std::string out;
    if (const int rc = installs_[i]->Startup(&out); rc != 0) {
      return ::testing::AssertionFailure() << "startup.sh of " << installs_[i]->root() << " exit " << rc << ":\n"
                                           << out << "\n" << ReadAll(installs_[i]->server_log());
    }
    return ::testing::AssertionSuccess();
  }
  CanalInstall& install(int i) { return *installs_[i]; }

  // Servers 0..n-1 running and placed: those not made yet are made (MakeServer(name, i, dests,
  // extra)) and started, then the placement must settle on all n (WaitPlaced, 30 s). *servers:
  // their addresses.
  ::testing::AssertionResult StartPlaced(const std::string& name, int n, const std::vector<Dest>& dests,
                                         std::vector<std::string>* servers, const std::string& extra = "") {
    servers->clear();
    std::vector<int> made;
    for (int i = 0; i < n; ++i) {
      if (!installs_[i]) {
        MakeServer(name, i, dests, extra);
        made.push_back(i);
      }
      servers->push_back(ServerAddress(i));
    }
    for (int i : made) {
      if (::testing::AssertionResult started = StartServer(i); !started) return started;
    }
    const std::string what = n == 1 ? "server 0 alone" : std::to_string(n) + " servers";
    if (WaitPlaced(dests, *servers, Clock::now(), 30s, what) < 0) {
      return ::testing::AssertionFailure() << "not placed on " << n << " servers";
    }
    return ::testing::AssertionSuccess();
  }

  // ---- ZooKeeper's view ----

  // The assignment node (generation 0 when there is none or it does not parse).
  layout::Assignment ReadAssignment() const {
    layout::Assignment a;
    std::string body;
    const std::string path = layout::PlacementAssignmentPath();
    if (zk_->Get(path, &body).ok()) (void)layout::ParseAssignment(path, body, &a);
    return a;
  }
  // The address in a destination's running node, "" when none.
  std::string Owner(const std::string& dest) const {
    std::string body;
    layout::RunningNode node;
    if (!zk_->Get(layout::ServerRunningPath(dest), &body).ok() || !layout::ParseRunningNode(body, &node).ok()) {
      return "";
    }
    return node.address;
  }
  std::map<std::string, std::string> Owners(const std::vector<Dest>& dests) const {
    std::map<std::string, std::string> out;
    for (const Dest& d : dests) out[d.name] = Owner(d.name);
    return out;
  }
  static std::map<std::string, int> PerServer(const std::map<std::string, std::string>& owners) {
    std::map<std::string, int> counts;
    for (const auto& [d, s] : owners) ++counts[s];
    return counts;
  }
  std::vector<std::string> Children(const std::string& path) const {
    std::vector<std::string> names;
    (void)zk_->Children(path, &names);
    return names;
  }
  // The destinations of `dests` the assignment gives `server`.
  std::vector<std::string> AssignedTo(const layout::Assignment& a, const std::string& server,
                                      const std::vector<Dest>& dests) const {
    std::vector<std::string> out;
    for (const Dest& d : dests) {
      auto it = a.assignment.find(d.name);
      if (it != a.assignment.end() && it->second == server) out.push_back(d.name);
    }
    return out;
  }

  // The binlog bytes/s the servers report per destination (their placement nodes): "min-max
  // B/s over N destinations".
  std::string LoadText() const {
    double lo = 0, hi = 0;
    size_t n = 0;
    for (const std::string& server : Children(layout::PlacementServersPath())) {
      std::string body;
      layout::ServerNode node;
      const std::string path = layout::PlacementServerPath(server);
      if (!zk_->Get(path, &body).ok() || !layout::ParseServerNode(path, body, &node).ok()) continue;
      for (const auto& [d, rate] : node.load) {
        lo = n == 0 ? rate : std::min(lo, rate);
        hi = n == 0 ? rate : std::max(hi, rate);
        ++n;
      }
    }
    char text[96];
    std::snprintf(text, sizeof(text), "%.0f-%.0f B/s over %zu destinations", lo, hi, n);
    return text;
  }

  // The placement settled on `servers`: every destination assigned to one of them and running
  // there (its running node names it), each server with the floor or ceiling of the average.
  bool Placed(const std::vector<Dest>& dests, const std::vector<std::string>& servers) const {
    const layout::Assignment a = ReadAssignment();
    std::map<std::string, int> counts;
    for (const Dest& d : dests) {
      auto it = a.assignment.find(d.name);
      if (it == a.assignment.end()) return false;
      if (std::find(servers.begin(), servers.end(), it->second) == servers.end()) return false;
      if (Owner(d.name) != it->second) return false;
      ++counts[it->second];
    }
    const size_t lo = dests.size() / servers.size(), hi = (dests.size() + servers.size() - 1) / servers.size();
    for (const std::string& s : servers) {
      const size_t n = static_cast<size_t>(counts[s]);
      if (n < lo || n > hi) return false;
    }
    return true;
  }
  // For failure messages and figures: the assignment's generation and counts, and the running
  // nodes' counts.
  std::string Describe(const std::vector<Dest>& dests, const std::vector<std::string>& servers) const {
    const layout::Assignment a = ReadAssignment();
    std::map<std::string, int> assigned;
    for (const Dest& d : dests) {
      auto it = a.assignment.find(d.name);
      ++assigned[it == a.assignment.end() ? std::string() : it->second];
    }
    return "assignment generation " + std::to_string(a.generation) + " (leader " + a.leader + "): " +
           CountsText(assigned, servers) + "; running nodes: " + CountsText(PerServer(Owners(dests)), servers);
  }
  // Waits until Placed(dests, servers); the seconds it took, or -1 (a test failure with the
  // view and the servers' logs' last lines).
  double WaitPlaced(const std::vector<Dest>& dests, const std::vector<std::string>& servers, Clock::time_point since,
                    std::chrono::milliseconds limit, const std::string& what) {
    if (WaitFor([&] { return Placed(dests, servers); }, limit, 50ms)) return SecondsBetween(since, Clock::now());
    std::string logs;
    for (const auto& install : installs_) {
      if (!install) continue;
      const std::string log = ReadAll(install->server_log());
      logs += "--- " + install->root().string() + " (last 3000 bytes):\n" +
              log.substr(log.size() > 3000 ? log.size() - 3000 : 0) + "\n";
    }
    ADD_FAILURE() << what << ": not placed on [" << Join(servers) << "] within "
                  << std::chrono::duration<double>(limit).count() << " s: " << Describe(dests, servers) << "\n"
                  << logs;
    return -1;
  }

  static inline std::unique_ptr<ZkSandbox> zk_sandbox_;
  static inline std::string zk_setup_error_;
  static inline std::unique_ptr<MariadbSandbox> primaries_[kPrimaries];
  static inline std::string primary_setup_error_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<CanalInstall> installs_[kMaxServers];
  std::map<int, std::string> start_;  // primary -> instance.properties lines of its start position
};

}  // namespace canal::testing::fleet
