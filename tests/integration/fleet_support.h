// The fleet suites' helpers (fleet_fixture.h, fleet_*_test.cc): the ports and constants, the
// destinations (one load table each), a writer per primary, one ClusterConnector client per
// destination judged by the DeliveryLedger rule, and a watch of every running node's owner over
// time. The suite itself (sandboxes, installs, ZooKeeper's view) is fleet_fixture.h.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "canal/coord/canal_layout.h"
#include "canal/coord/placement_layout.h"
#include "canal/coord/zk_client.h"
#include "integration/ha_fixture.h"  // ConsumeLog, RunClusterConsumer, AllThreadsStopped
#include "support/sql_session.h"

namespace canal::testing::fleet {

namespace layout = coord::layout;
using client::ClusterConnector;
using ha::ConsumeLog;
using ha::SecondsBetween;

inline constexpr int kPrimaries = 3;
inline constexpr uint16_t kPrimaryPorts[kPrimaries] = {TestPort("fleet"), TestPort("fleet", 1),
                                                       TestPort("fleet", 2)};
inline constexpr uint16_t kZkPort = TestPort("fleet", 3);
inline constexpr int kMaxServers = 10;
inline constexpr uint16_t kServerPorts[kMaxServers] = {
    TestPort("fleet", 10), TestPort("fleet", 11), TestPort("fleet", 12), TestPort("fleet", 13),
    TestPort("fleet", 14), TestPort("fleet", 15), TestPort("fleet", 16), TestPort("fleet", 17),
    TestPort("fleet", 18), TestPort("fleet", 19)};
inline constexpr int kSessionTimeoutMs = 6000;
// A crashed or frozen server's destinations run elsewhere within this: its sessions expire
// (6 s), the leader reassigns them (coalesced 200 ms), the new servers start them at once.
inline constexpr double kMoveBoundS = 10.0;
inline constexpr int kRowsPerTxn = 5;
inline constexpr int kMaxTxns = 4000;  // per table: the ledgers' size; a writer stops there

inline std::string Address(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }
inline std::string ServerAddress(int i) { return Address(kServerPorts[i]); }

struct Dest {
  std::string name;
  int primary = 0;
  std::string table;  // "fleet_db.<name>"
};

// `count` destinations "<prefix>00".., round robin over primaries 0..primaries-1.
inline std::vector<Dest> Dests(const std::string& prefix, int count, int primaries = 1) {
  std::vector<Dest> out;
  for (int i = 0; i < count; ++i) {
    char n[16];
    std::snprintf(n, sizeof(n), "%02d", i);
    const std::string name = prefix + n;
    out.push_back(Dest{name, i % primaries, "fleet_db." + name});
  }
  return out;
}

inline std::vector<std::string> Names(const std::vector<Dest>& dests) {
  std::vector<std::string> names;
  for (const Dest& d : dests) names.push_back(d.name);
  return names;
}

inline std::string Join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// "server: count" for every server of `servers` (0 included), then any other owner.
inline std::string CountsText(const std::map<std::string, int>& counts, const std::vector<std::string>& servers) {
  std::string out;
  std::set<std::string> shown;
  for (const std::string& s : servers) {
    auto it = counts.find(s);
    out += (out.empty() ? "" : ", ") + s + ": " + std::to_string(it == counts.end() ? 0 : it->second);
    shown.insert(s);
  }
  for (const auto& [s, n] : counts) {
    if (shown.count(s) == 0) out += (out.empty() ? "" : ", ") + (s.empty() ? std::string("(none)") : s) + ": " +
                                    std::to_string(n);
  }
  return out;
}

// ---- Writers -------------------------------------------------------------------

// Inserts transaction t (kRowsPerTxn rows, one autocommit INSERT) into each of its tables, t =
// 1, 2, ..., pausing `pause` after each round, until Stop(); Start() again goes on from there.
class Writer {
 public:
  Writer(std::string socket, std::vector<Dest> dests, std::chrono::milliseconds pause)
      : socket_(std::move(socket)), dests_(std::move(dests)), pause_(pause), written_(dests_.size()) {}
  ~Writer() { Stop(); }

  void Start() {
    Stop();
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  }
  void Stop() {
    if (!thread_.joinable()) return;
    thread_.request_stop();
    thread_.join();
  }
  // Transactions written to `dest`'s table.
  int written(const std::string& dest) const {
    for (size_t i = 0; i < dests_.size(); ++i) {
      if (dests_[i].name == dest) return written_[i].load();
    }
    return 0;
  }
  std::string error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  void Run(std::stop_token stop) {
    SqlSession sql;
    if (Status s = sql.Connect(socket_); !s.ok()) {
      SetError(s.ToString());
      return;
    }
    while (!stop.stop_requested() && next_txn_ <= kMaxTxns) {
      for (size_t i = 0; i < dests_.size(); ++i) {
        std::string insert = "INSERT INTO " + dests_[i].table + " (txn, seq, pad) VALUES ";
        for (int r = 0; r < kRowsPerTxn; ++r) {
          insert += (r ? "," : "") + std::string("(") + std::to_string(next_txn_) + "," + std::to_string(r) +
                    ",'row-" + std::to_string(next_txn_) + "-" + std::to_string(r) + "')";
        }
        // A failed statement is retried: the numbering must stay gapless.
        for (;;) {
          Status s = sql.Execute(insert);
          if (s.ok()) break;
          SetError(s.ToString());
          if (stop.stop_requested()) return;
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          sql.Close();
          (void)sql.Connect(socket_);
        }
        written_[i].store(next_txn_);
      }
      ++next_txn_;
      std::this_thread::sleep_for(pause_);  // pacing by design: a steady stream
    }
  }
  void SetError(std::string e) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::move(e);
  }

  const std::string socket_;
  const std::vector<Dest> dests_;
  const std::chrono::milliseconds pause_;
  std::vector<std::atomic<int>> written_;
  int next_txn_ = 1;  // the writer thread's
  mutable std::mutex mu_;
  std::string error_;
  std::jthread thread_;
};

// ---- Clients ---------------------------------------------------------------------

// One ClusterConnector consumer of one destination on its own thread.
struct Client {
  Client(const std::string& zk_servers, Dest d)
      : dest(std::move(d)),
        ledger(kMaxTxns, kRowsPerTxn),
        connector(LocalClusterClientOptions(zk_servers, kSessionTimeoutMs, 200, dest.name)) {}
  void Start() {
    thread = std::jthread([this](std::stop_token stop) { ha::RunClusterConsumer(stop, connector, ledger, log); });
  }
  Dest dest;
  DeliveryLedger ledger;
  ConsumeLog log;
  ClusterConnector connector;
  std::jthread thread;
};

// What the clients received against what the writers wrote, summed.
struct Delivery {
  int64_t written = 0, received = 0, missing = 0, duplicates = 0, repeated = 0, out_of_order = 0, foreign = 0;
  int64_t batches = 0, reconnects = 0, errors = 0;
  std::vector<std::string> faults;  // "d07: 3 duplicates"
  std::string Text() const {
    return std::to_string(received) + " of " + std::to_string(written) + " rows, " + std::to_string(batches) +
           " batches, " + std::to_string(repeated) + " unanswered-ack rows came again; " +
           std::to_string(duplicates) + " duplicates, " + std::to_string(missing) + " missing, " +
           std::to_string(out_of_order) + " out of order, " + std::to_string(foreign) + " foreign; " +
           std::to_string(reconnects) + " reconnects, " + std::to_string(errors) + " errors returned to the clients";
  }
};

class Clients {
 public:
  Clients(const std::string& zk_servers, const std::vector<Dest>& dests) {
    for (const Dest& d : dests) all_.push_back(std::make_unique<Client>(zk_servers, d));
  }
  ~Clients() { Stop(); }
  void Start() {
    for (auto& c : all_) c->Start();
  }
  // Stops every consumer (all asked at once, then joined).
  void Stop() {
    for (auto& c : all_) c->thread.request_stop();
    for (auto& c : all_) {
      if (c->thread.joinable()) c->thread.join();
    }
    for (auto& c : all_) c->connector.Disconnect();
  }
  Client& of(const std::string& dest) {
    for (auto& c : all_) {
      if (c->dest.name == dest) return *c;
    }
    throw std::runtime_error("no client of " + dest);
  }
  // Every client received every row `written` says its table holds.
  template <typename Written>
  bool Complete(Written&& written) const {
    for (const auto& c : all_) {
      if (c->ledger.distinct() < int64_t{written(c->dest.name)} * kRowsPerTxn) return false;
    }
    return true;
  }
  // Each destination has received at least `rows` rows.
  bool EachReceived(int64_t rows) const {
    for (const auto& c : all_) {
      if (c->ledger.distinct() < rows) return false;
    }
    return true;
  }
  template <typename Written>
  Delivery Judge(Written&& written) const {
    Delivery d;
    for (const auto& c : all_) {
      const DeliveryLedger& l = c->ledger;
      const int64_t want = int64_t{written(c->dest.name)} * kRowsPerTxn;
      const int64_t missing = std::max<int64_t>(0, want - l.distinct());
      d.written += want;
      d.received += l.distinct();
      d.missing += missing;
      d.duplicates += l.duplicates();
      d.repeated += l.repeated_unconfirmed();
      d.out_of_order += l.out_of_order();
      d.foreign += l.foreign();
      d.batches += static_cast<int64_t>(c->log.batches().size());
      d.reconnects += c->connector.reconnects();
      d.errors += c->log.errors();
      std::string f;
      auto add = [&](int64_t n, const char* what) {
        if (n != 0) f += (f.empty() ? "" : ", ") + std::to_string(n) + " " + what;
      };
      add(l.duplicates(), "duplicates");
      add(missing, "missing");
      add(l.out_of_order(), "out of order");
      add(l.foreign(), "foreign");
      if (l.distinct() > want) add(l.distinct() - want, "rows beyond those written");
      if (!f.empty()) d.faults.push_back(c->dest.name + ": " + f + " (last error: " + c->log.last_error() + ")");
    }
    return d;
  }
  const std::vector<std::unique_ptr<Client>>& all() const { return all_; }

 private:
  std::vector<std::unique_ptr<Client>> all_;
};

// ---- Running-node owners over time ----------------------------------------------

// Polls every destination's running node (every 100 ms) and keeps each change of its owner
// ("" while there is none). A failed read (ZooKeeper down) records nothing.
class OwnerWatch {
 public:
  struct Change {
    Clock::time_point at;
    std::string owner;
  };
  OwnerWatch(coord::ZkClient* zk, std::vector<std::string> dests) : zk_(zk), dests_(std::move(dests)) {
    Poll();
    thread_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        Poll();
      }
    });
  }
  ~OwnerWatch() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }

  // Moves of `dest` in [from, to]: its owner changing from one server to another (with or
  // without a time of no owner between).
  int Moves(const std::string& dest, Clock::time_point from, Clock::time_point to) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = history_.find(dest);
    if (it == history_.end()) return 0;
    std::string last;
    int moves = 0;
    for (const Change& c : it->second) {
      if (c.at > to) break;
      if (c.owner.empty()) continue;
      if (c.at >= from && !last.empty() && c.owner != last) ++moves;
      last = c.owner;
    }
    return moves;
  }
  // The most moves of any destination in [from, to] (*which: one that moved that often), and
  // how many destinations moved at all.
  int MostMoves(Clock::time_point from, Clock::time_point to, std::string* which, int* moved) const {
    int most = 0;
    *moved = 0;
    for (const std::string& d : dests_) {
      const int m = Moves(d, from, to);
      if (m > 0) ++*moved;
      if (m > most) {
        most = m;
        *which = d;
      }
    }
    return most;
  }
  // Whether `server` owned any destination at any time in [from, to].
  bool EverOwnedBy(const std::string& server, Clock::time_point from, Clock::time_point to) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [d, changes] : history_) {
      for (size_t i = 0; i < changes.size(); ++i) {
        const Clock::time_point until = i + 1 < changes.size() ? changes[i + 1].at : Clock::time_point::max();
        if (changes[i].owner == server && changes[i].at <= to && until >= from) return true;
      }
    }
    return false;
  }
  std::string History(const std::string& dest, Clock::time_point origin) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    auto it = history_.find(dest);
    if (it == history_.end()) return out;
    char t[32];
    for (const Change& c : it->second) {
      std::snprintf(t, sizeof(t), "%+.2f s ", SecondsBetween(origin, c.at));
      out += (out.empty() ? "" : ", ") + std::string(t) + (c.owner.empty() ? std::string("(none)") : c.owner);
    }
    return out;
  }

 private:
  void Poll() {
    for (const std::string& d : dests_) {
      std::string body, owner;
      Status s = zk_->Get(layout::ServerRunningPath(d), &body);
      if (!s.ok() && !s.IsNotFound()) continue;
      layout::RunningNode node;
      if (s.ok()) owner = layout::ParseRunningNode(body, &node).ok() ? node.address : "(unreadable)";
      std::lock_guard<std::mutex> lock(mu_);
      auto& h = history_[d];
      if (h.empty() || h.back().owner != owner) h.push_back(Change{Clock::now(), owner});
    }
  }

  coord::ZkClient* const zk_;
  const std::vector<std::string> dests_;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<Change>> history_;
  std::jthread thread_;
};

}  // namespace canal::testing::fleet
