// Snapshots end to end, judged by the mirror oracle (support/table_mirror.h, table_compare.h):
// tables loaded before canal-server starts reach a consumer through canal.instance.snapshot.mode
// = initial while a writer inserts, updates (keys too) and deletes rows across the chunks being
// read; the consumer applies everything it receives to a second MariaDB and, at the end, every
// table there equals the source row by row. Key shapes: INT, composite (INT, VARCHAR), VARCHAR,
// DATETIME(3), a unique index only (BIGINT UNSIGNED near its top), no key at all, an empty
// table; many column types. The kill -9 case crashes the server twice mid-snapshot: the copy is
// still equal, and only chunks that were not acked come again (their rows are counted).
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "canal/client/cluster_connector.h"
#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_test_names.h"
#include "support/cluster_client_options.h"
#include "support/mariadb_sandbox.h"
#include "support/mirror_suite.h"
#include "support/server_suite.h"
#include "support/table_compare.h"
#include "support/table_mirror.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

namespace canal::testing {
namespace {

constexpr uint16_t kSourcePort = TestPort("snapshot_e2e");
constexpr uint16_t kMirrorPort = TestPort("snapshot_e2e", 1);
constexpr uint16_t kServerPort = TestPort("snapshot_e2e", 2);
constexpr uint16_t kHaSourcePort = TestPort("snapshot_ha");
constexpr uint16_t kHaMirrorPort = TestPort("snapshot_ha", 1);
constexpr uint16_t kHaZkPort = TestPort("snapshot_ha", 2);
constexpr uint16_t kHaServerPorts[2] = {TestPort("snapshot_ha", 3), TestPort("snapshot_ha", 4)};
constexpr const char* kSchema = "snap_db";

// The running suite's source and mirror (each suite's SetUp sets them), for the helpers below.
MariadbSandbox* g_source = nullptr;
MariadbSandbox* g_mirror = nullptr;

// Rows in all: `fallback` unless CANAL_SNAPSHOT_E2E_ROWS says otherwise. The initial-mode test
// runs at the acceptance scale (1,000,000); the crash and request tests at a fifth of it, where
// a crash still lands mid-snapshot.
uint64_t TotalRows(uint64_t fallback = 200'000) {
  const char* env = std::getenv("CANAL_SNAPSHOT_E2E_ROWS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : fallback;
}

// A table whose rows are numbered by a slot n: its key columns are SQL expressions of n (so
// the bulk load, INSERT ... SELECT over seq_0_to_N, and the writer's statements name the same
// rows), its other columns are random literals or, in the load, expressions of n.
struct TableSpec {
  std::string name;
  std::string ddl;                        // CREATE TABLE
  std::vector<std::string> key_cols;      // empty: no key
  std::function<std::vector<std::string>(const std::string& n)> key_exprs;
  std::vector<std::string> cols;          // the other columns
  std::vector<std::string> load_exprs;    // their values in the load, of `seq`
  std::function<std::vector<std::string>(std::mt19937_64&)> row_values;  // the other columns' literals
  uint64_t share = 0;                     // of the rows in all, per mille
};

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<TableSpec> Tables() {
  const auto text = [](std::mt19937_64& r, int n) {
    static const char* kPieces[] = {"a", "Z", "ü", "日本", "😀", " ", "''", "%", "0"};
    std::string s = "'";
    const int len = static_cast<int>(r() % n);
    for (int i = 0; i < len; ++i) s += kPieces[r() % 9];
    return s + "'";
  };
  std::vector<TableSpec> t;
  t.push_back({"t_int",
               "CREATE TABLE t_int (id INT NOT NULL PRIMARY KEY, v VARCHAR(40), n BIGINT, d DECIMAL(20,6), "
               "f DOUBLE, ts TIMESTAMP(6) NULL) DEFAULT CHARSET utf8mb4",
               {"id"},
               [](const std::string& n) { return std::vector<std::string>{n}; },
               {"v", "n", "d", "f", "ts"},
               {"CONCAT('v', seq)", "seq * -7919", "seq / 7", "seq * 1.25e-3", "FROM_UNIXTIME(1600000000 + seq)"},
               [text](std::mt19937_64& r) {
                 return std::vector<std::string>{
                     text(r, 10), std::to_string(static_cast<int64_t>(r())),
                     std::to_string(static_cast<int>(r() % 100000) - 50000) + ".123456",
                     std::to_string(static_cast<double>(r() % 1000000) / 3),
                     r() % 5 == 0 ? std::string("NULL")
                                  : "FROM_UNIXTIME(" + std::to_string(1'000'000'000 + r() % 100'000'000) + ".5)"};
               },
               300});
  t.push_back({"t_comp",
               "CREATE TABLE t_comp (a INT NOT NULL, b VARCHAR(20) NOT NULL, c DATETIME(6), v TEXT, "
               "PRIMARY KEY (a, b)) DEFAULT CHARSET utf8mb4",
               {"a", "b"},
               [](const std::string& n) {
                 return std::vector<std::string>{"(" + n + ") % 1000", "CONCAT('k', (" + n + ") DIV 1000)"};
               },
               {"c", "v"},
               {"'2024-02-29 12:00:00.000001' + INTERVAL seq SECOND", "REPEAT('x', seq % 50)"},
               [text](std::mt19937_64& r) {
                 return std::vector<std::string>{"'1999-12-31 23:59:59." + std::to_string(r() % 999999) + "'",
                                                 text(r, 40)};
               },
               150});
  t.push_back({"t_vkey",
               "CREATE TABLE t_vkey (k VARCHAR(64) NOT NULL PRIMARY KEY, payload BLOB, e ENUM('x','y','z'), "
               "s SET('p','q','r')) DEFAULT CHARSET utf8mb4",
               {"k"},
               [](const std::string& n) { return std::vector<std::string>{"CONCAT('key-', " + n + ")"}; },
               {"payload", "e", "s"},
               {"UNHEX(SHA2(seq, 256))", "1 + seq % 3", "seq % 8"},
               [](std::mt19937_64& r) {
                 std::string hex;
                 for (int i = 0; i < 20; ++i) hex += "0123456789ABCDEF"[r() % 16];
                 return std::vector<std::string>{"X'" + hex + "'", std::to_string(1 + r() % 3), std::to_string(r() % 8)};
               },
               150});
  t.push_back({"t_dtkey",
               "CREATE TABLE t_dtkey (ts DATETIME(3) NOT NULL PRIMARY KEY, j JSON, bt BIT(12), y YEAR) "
               "DEFAULT CHARSET utf8mb4",
               {"ts"},
               [](const std::string& n) {
                 return std::vector<std::string>{"'2000-01-01 00:00:00' + INTERVAL (" + n + ") * 1001000 MICROSECOND"};
               },
               {"j", "bt", "y"},
               {"JSON_OBJECT('n', seq, 's', CONCAT('x', seq))", "seq % 4096", "1901 + seq % 255"},
               [](std::mt19937_64& r) {
                 return std::vector<std::string>{"'{\"r\": " + std::to_string(r() % 1000) + "}'",
                                                 std::to_string(r() % 4096), std::to_string(1901 + r() % 255)};
               },
               100});
  t.push_back({"t_uniq",
               "CREATE TABLE t_uniq (u BIGINT UNSIGNED NOT NULL, v VARCHAR(20), tm TIME(6), UNIQUE KEY uk (u)) "
               "DEFAULT CHARSET utf8mb4",
               {"u"},
               [](const std::string& n) { return std::vector<std::string>{"18446744073700000000 + (" + n + ")"}; },
               {"v", "tm"},
               {"CONCAT('u', seq)", "SEC_TO_TIME(seq % 3000000 - 1500000)"},
               [text](std::mt19937_64& r) {
                 return std::vector<std::string>{text(r, 8), "'-" + std::to_string(r() % 838) + ":01:02.5'"};
               },
               100});
  t.push_back({"t_latin",
               "CREATE TABLE t_latin (id INT NOT NULL PRIMARY KEY, l VARCHAR(50) CHARACTER SET latin1, bn BINARY(4), "
               "fl FLOAT, dt DATE)",
               {"id"},
               [](const std::string& n) { return std::vector<std::string>{n}; },
               {"l", "bn", "fl", "dt"},
               {"CONCAT('é', seq)", "UNHEX(LPAD(HEX(seq), 8, '0'))", "seq / 3", "'1000-01-01' + INTERVAL seq DAY"},
               [](std::mt19937_64& r) {
                 return std::vector<std::string>{"_latin1 X'E9FF41'", "X'00FF0A0B'",
                                                 std::to_string(static_cast<float>(r() % 100000) / 7), "'0000-00-00'"};
               },
               100});
  t.push_back({"t_small",
               "CREATE TABLE t_small (id SMALLINT UNSIGNED NOT NULL PRIMARY KEY, tiny TINYINT UNSIGNED)",
               {"id"},
               [](const std::string& n) { return std::vector<std::string>{"(" + n + ") % 65536"}; },
               {"tiny"},
               {"seq % 256"},
               [](std::mt19937_64& r) { return std::vector<std::string>{std::to_string(r() % 256)}; },
               10});
  t.push_back({"t_keyless", "CREATE TABLE t_keyless (a INT, b VARCHAR(20)) DEFAULT CHARSET utf8mb4", {}, nullptr,
               {"a", "b"}, {"seq % 100", "CONCAT('b', seq)"},
               // b unique: the mirror counts a snapshot row seen twice as a repeat, and with no key
               // a row is its values (a duplicate row in the source would count).
               [](std::mt19937_64& r) {
                 return std::vector<std::string>{std::to_string(r() % 100), "'w" + std::to_string(r() % 1000000000000) + "'"};
               },
               20});
  t.push_back({"t_empty", "CREATE TABLE t_empty (id INT NOT NULL PRIMARY KEY, v INT)", {"id"},
               [](const std::string& n) { return std::vector<std::string>{n}; }, {"v"}, {"seq"},
               [](std::mt19937_64& r) { return std::vector<std::string>{std::to_string(r() % 10)}; }, 0});
  t.push_back({"t_wide",
               "CREATE TABLE t_wide (id BIGINT NOT NULL PRIMARY KEY, big MEDIUMBLOB, note VARCHAR(200)) "
               "DEFAULT CHARSET utf8mb4",
               {"id"},
               [](const std::string& n) { return std::vector<std::string>{"(" + n + ") * 1000000007"}; },
               {"big", "note"},
               {"REPEAT(CHAR(seq % 256), 300 + seq % 3000)", "CONCAT('w', seq)"},
               [](std::mt19937_64& r) {
                 return std::vector<std::string>{"REPEAT('q', " + std::to_string(r() % 5000) + ")", "NULL"};
               },
               70});
  return t;
}

// Random changes to the tables' rows, aimed everywhere in each key range (so they meet the
// chunks being read): inserts of new and deleted slots, updates, key updates, deletes.
class Writer {
 public:
  Writer(std::vector<TableSpec> tables, std::vector<uint64_t> rows, uint64_t seed)
      : tables_(std::move(tables)), rng_(seed) {
    for (size_t i = 0; i < tables_.size(); ++i) {
      live_.emplace_back();
      next_.push_back(rows[i]);
      for (uint64_t n = 0; n < rows[i]; ++n) live_.back().push_back(n);
    }
  }

  // One transaction of 1-3 statements.
  std::string Transaction() {
    std::string sql = "BEGIN;";
    const int n = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < n; ++i) sql += Statement() + ";";
    return sql + "COMMIT;";
  }
  uint64_t statements() const { return statements_; }

 private:
  std::string Where(const TableSpec& t, uint64_t slot) {
    std::vector<std::string> parts;
    const auto exprs = t.key_exprs(std::to_string(slot));
    for (size_t k = 0; k < t.key_cols.size(); ++k) parts.push_back(t.key_cols[k] + " = " + exprs[k]);
    return Join(parts, " AND ");
  }
  std::string Statement() {
    ++statements_;
    const size_t ti = rng_() % tables_.size();
    const TableSpec& t = tables_[ti];
    std::vector<uint64_t>& live = live_[ti];
    const int op = static_cast<int>(rng_() % 10);
    if (t.key_cols.empty()) {
      if (op < 5) return "INSERT INTO " + t.name + " (a, b) VALUES (" + Join(t.row_values(rng_)) + ")";
      if (op < 8) return "UPDATE " + t.name + " SET b = 'up" + std::to_string(rng_() % 1000000000000) + "' WHERE a = " +
                         std::to_string(rng_() % 100) + " LIMIT 1";
      return "DELETE FROM " + t.name + " WHERE a = " + std::to_string(rng_() % 100) + " LIMIT 1";
    }
    const std::string cols = Join(t.key_cols) + ", " + Join(t.cols);
    if (op < 3 || live.empty()) {
      const uint64_t slot = next_[ti]++;
      live.push_back(slot);
      return "INSERT INTO " + t.name + " (" + cols + ") VALUES (" + Join(t.key_exprs(std::to_string(slot))) + ", " +
             Join(t.row_values(rng_)) + ")";
    }
    const size_t at = rng_() % live.size();
    const uint64_t slot = live[at];
    if (op < 6) {
      const std::vector<std::string> values = t.row_values(rng_);
      std::vector<std::string> sets;
      for (size_t i = 0; i < t.cols.size(); ++i) sets.push_back(t.cols[i] + " = " + values[i]);
      return "UPDATE " + t.name + " SET " + Join(sets) + " WHERE " + Where(t, slot);
    }
    if (op < 8 && t.name != "t_small") {
      const uint64_t moved = next_[ti]++;
      live[at] = moved;
      std::vector<std::string> sets;
      const auto exprs = t.key_exprs(std::to_string(moved));
      for (size_t k = 0; k < t.key_cols.size(); ++k) sets.push_back(t.key_cols[k] + " = " + exprs[k]);
      return "UPDATE " + t.name + " SET " + Join(sets) + " WHERE " + Where(t, slot);
    }
    live[at] = live.back();
    live.pop_back();
    return "DELETE FROM " + t.name + " WHERE " + Where(t, slot);
  }
  std::vector<TableSpec> tables_;
  std::mt19937_64 rng_;
  std::vector<std::vector<uint64_t>> live_;
  std::vector<uint64_t> next_;
  uint64_t statements_ = 0;
};

// The tables on both servers; their rows on the source only (before the server starts, so
// only a snapshot can deliver them). Returns each table's row count.
std::vector<uint64_t> Load(const std::vector<TableSpec>& tables, uint64_t total) {
  std::string both = std::string("DROP DATABASE IF EXISTS ") + kSchema + "; CREATE DATABASE " + kSchema +
                     "; USE " + kSchema + ";";
  for (const TableSpec& t : tables) both += t.ddl + ";";
  EXPECT_TRUE(g_source->Sql(both)) << g_source->error();
  EXPECT_TRUE(g_mirror->Sql(both)) << g_mirror->error();
  std::vector<uint64_t> rows;
  std::string load = std::string("SET time_zone = '+00:00'; USE ") + kSchema + ";";
  for (const TableSpec& t : tables) {
    const uint64_t n = total * t.share / 1000;
    rows.push_back(n);
    if (n == 0) continue;
    std::vector<std::string> exprs = t.key_cols.empty() ? std::vector<std::string>{} : t.key_exprs("seq");
    for (const std::string& e : t.load_exprs) exprs.push_back(e);
    const std::string cols = t.key_cols.empty() ? Join(t.cols) : Join(t.key_cols) + ", " + Join(t.cols);
    // seq is unsigned: signed arithmetic on it needs a signed copy.
    load += "INSERT INTO " + t.name + " (" + cols + ") SELECT " + Join(exprs) +
            " FROM (SELECT CAST(seq AS SIGNED) AS seq FROM seq_0_to_" + std::to_string(n - 1) + ") AS s;";
  }
  EXPECT_TRUE(g_source->Sql(load)) << g_source->error();
  return rows;
}


class SnapshotE2e : public MirrorSuite<kSourcePort, kMirrorPort> {
 protected:
  void SetUp() override {
    MirrorSuite::SetUp();
    g_source = sandbox_.get();
    g_mirror = mirror_.get();
  }

  static std::string InstanceProperties(std::string_view extra = "") {
    return StartHere() + "canal.instance.filter.regex = " + kSchema +
           "\\\\..*\n"
           "canal.instance.snapshot.mode = initial\n"
           "canal.instance.snapshot.threads = 2\n"
           "canal.instance.snapshot.chunk.rows = 2000\n" +
           std::string(extra);
  }

};

// A consumer that applies every batch to the mirror, then acks it; reconnects while the server
// is down (the kill test), and notes the marker row that ends a run.
class Consumer {
 public:
  Consumer(TableMirror* mirror, FirstError* error) : mirror_(mirror), error_(error) {}
  void Start() {
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  }
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  // A paused consumer takes no batch: the ring fills and a snapshot waits (its tables stay
  // "being read").
  void Pause(bool paused) { paused_ = paused; }
  bool marker() const { return marker_; }
  uint64_t batches() const { return batches_; }
  uint64_t reconnects() const { return reconnects_; }

 private:
  void Run(std::stop_token stop) {
    while (!stop.stop_requested() && !marker_) {
      Connector c(ServerClientOptions(kServerPort));
      Status st = ConnectAndSubscribe(c, 60s);
      if (!st.ok()) return error_->Set("connect: " + st.ToString());
      Message m;
      while (!stop.stop_requested() && !marker_) {
        if (paused_) {
          std::this_thread::sleep_for(20ms);  // a test's pause, not a wait on a condition
          continue;
        }
        st = c.GetWithoutAck(1000, 200, TimeUnit::kMilliseconds, &m);
        if (!st.ok()) break;  // the server went away: connect again
        if (m.batch_id() == -1) continue;
        st = mirror_->Apply(m);
        if (!st.ok()) return error_->Set("apply: " + st.ToString());
        ++batches_;
        for (const entry::Entry& e : m.entries()) {
          // The marker is a change; a snapshot's row of the table is not (a resnapshot reads it).
          if (e.header().tablename() == "done" && client::EventTypeOf(e.header()) == entry::INSERT &&
              !IsSnapshot(e.header())) {
            marker_ = true;
          }
        }
        st = c.Ack(m.batch_id());
        if (!st.ok()) break;
      }
      ++reconnects_;
    }
  }

  TableMirror* const mirror_;
  FirstError* const error_;
  std::atomic<bool> marker_{false}, paused_{false};
  std::atomic<uint64_t> batches_{0}, reconnects_{0};
  std::jthread thread_;
};

// The instance log's line for the snapshot's end, once it is there.
bool SnapshotComplete(const CanalInstall& install) {
  static const std::regex kComplete("snapshot initial-[0-9]+ complete");
  return std::regex_search(ReadAll(install.instance_log("example")), kComplete);
}

// Runs a writer against the source until `until` says stop, then the marker row.
void RunWriter(Writer* w, const std::function<bool()>& until, FirstError* error, uint64_t* transactions) {
  std::string batch;
  while (!until() && !error->failed()) {
    batch.clear();
    for (int i = 0; i < 20; ++i) batch += w->Transaction();
    if (!(*g_source).Sql(std::string("USE ") + kSchema + "; SET time_zone = '+00:00';" + batch)) {
      return error->Set("writer: " + (*g_source).error());
    }
    *transactions += 20;
  }
}

void Finish(const CanalInstall& install, Consumer* consumer, FirstError* error, const std::vector<TableSpec>& tables,
            const TableMirror& mirror, double seconds, uint64_t writer_transactions) {
  ASSERT_TRUE((*g_source).Sql(std::string("USE ") + kSchema + "; CREATE TABLE done (id INT PRIMARY KEY); INSERT INTO done VALUES (1);"))
      << (*g_source).error();
  ASSERT_TRUE(WaitFor([&] { return consumer->marker() || error->failed(); }, 180s))
      << "no marker row after " << consumer->batches() << " batches; " << mirror.counts().ToString() << "\n"
      << ReadAll(install.instance_log("example"));
  consumer->Stop();
  ASSERT_FALSE(error->failed()) << error->Get();
  std::vector<std::string> names;
  for (const TableSpec& t : tables) names.push_back(t.name);
  std::string report;
  Status s = CompareTables((*g_source), (*g_mirror), kSchema, names, &report);
  const MirrorCounts& n = mirror.counts();
  std::printf("[ snapshot ] %.1f s, %" PRIu64 " writer transactions, %" PRIu64 " batches, %" PRIu64
              " reconnects; %s\n%s",
              seconds, writer_transactions, consumer->batches(), consumer->reconnects(), n.ToString().c_str(),
              report.c_str());
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;
}

TEST_F(SnapshotE2e, InitialSnapshotUnderConcurrentWritesRebuildsEqualTables) {
  const auto start = Clock::now();
  const std::vector<TableSpec> tables = Tables();
  const std::vector<uint64_t> rows = Load(tables, TotalRows(1'000'000));
  ASSERT_FALSE(HasFailure());
  CanalInstall install("snapshot-e2e", kSourcePort);
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort));
  install.WriteInstance("example", InstanceProperties());

  TableMirror mirror(mirror_->socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  FirstError error;
  Consumer consumer(&mirror, &error);
  Writer writer(tables, rows, 20261206);
  uint64_t transactions = 0;
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
  consumer.Start();
  // The writer runs for the whole snapshot, and a little after it.
  RunWriter(&writer, [&] { return SnapshotComplete(install); }, &error, &transactions);
  ASSERT_FALSE(error.failed()) << error.Get();
  RunWriter(&writer, [n = 0]() mutable { return ++n > 5; }, &error, &transactions);
  Finish(install, &consumer, &error, tables, mirror, SecondsSince(start), transactions);
  const MirrorCounts& n = mirror.counts();
  uint64_t loaded = 0;
  for (uint64_t r : rows) loaded += r;
  EXPECT_GE(n.snapshot_rows, loaded / 2) << "most loaded rows come by the snapshot (the writer deletes some first)";
  EXPECT_EQ(n.snapshot_repeats, 0u) << "no chunk twice without a crash";
  EXPECT_GT(n.updates + n.deletes + n.inserts, 1000u);
  EXPECT_EQ(install.Stop(&out), 0) << out;
  const std::string log = ReadAll(install.instance_log("example"));
  EXPECT_NE(log.find("no key: one read"), std::string::npos) << log;
  // The biggest table, paged by one INT, is read by both readers at once in two key ranges.
  EXPECT_NE(log.find("t_int is read in 2 ranges of `id` at once"), std::string::npos) << log;
}

TEST_F(SnapshotE2e, KillNineTwiceMidSnapshotLosesNothingAndRepeatsOnlyUnackedChunks) {
  const auto start = Clock::now();
  // No keyless table here: a crash in the middle of its one read sends it whole again, and a
  // consumer that applies per batch (not per transaction) keeps the rows it had (docs/snapshot.md).
  std::vector<TableSpec> tables = Tables();
  tables.erase(std::remove_if(tables.begin(), tables.end(), [](const TableSpec& t) { return t.key_cols.empty(); }),
               tables.end());
  const std::vector<uint64_t> rows = Load(tables, TotalRows());
  ASSERT_FALSE(HasFailure());
  CanalInstall install("snapshot-e2e-kill", kSourcePort);
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort, "canal.file.flush.period = 100\n"));
  install.WriteInstance("example", InstanceProperties("canal.instance.snapshot.threads = 1\n"));

  TableMirror mirror(mirror_->socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  FirstError error;
  Consumer consumer(&mirror, &error);
  Writer writer(tables, rows, 7);
  uint64_t transactions = 0;
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
  consumer.Start();
  uint64_t loaded = 0;
  for (uint64_t r : rows) loaded += r;
  for (int kill = 1; kill <= 2; ++kill) {
    // Mid-snapshot: a share of the rows has reached the mirror.
    const uint64_t seen = mirror.counts().snapshot_rows;
    RunWriter(&writer, [&] { return mirror.counts().snapshot_rows >= seen + loaded / 4 || SnapshotComplete(install); },
              &error, &transactions);
    ASSERT_FALSE(error.failed()) << error.Get();
    ASSERT_FALSE(SnapshotComplete(install)) << "the snapshot ended before kill " << kill << "; use more rows";
    ASSERT_TRUE(install.Kill9());
    ASSERT_TRUE(WaitFor([&] { return !install.Running(); }, 20s));
    RunWriter(&writer, [n = 0]() mutable { return ++n > 3; }, &error, &transactions);  // writes while it is down
    ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
  }
  RunWriter(&writer, [&] { return SnapshotComplete(install); }, &error, &transactions);
  ASSERT_FALSE(error.failed()) << error.Get();
  Finish(install, &consumer, &error, tables, mirror, SecondsSince(start), transactions);
  const MirrorCounts& n = mirror.counts();
  std::printf("[ snapshot ] after two kill -9: %" PRIu64 " snapshot rows for %" PRIu64 " loaded, %" PRIu64
              " repeated\n",
              n.snapshot_rows, loaded, n.snapshot_repeats);
  // Each crash repeats at most what was sent and not acked: the ring and the consumer's batch in
  // flight, a few chunks of 2,000 rows.
  EXPECT_LE(n.snapshot_repeats, 2u * 8 * 2000) << n.ToString();
  EXPECT_EQ(install.Stop(&out), 0) << out;
}

// bin/canal-admin.sh snapshot against the install's running server; *answer gets its output.
int AdminSnapshot(const CanalInstall& install, const std::string& args, std::string* answer) {
  const std::string command = (install.bin_dir() / "canal-admin.sh").string() + " snapshot example " + args + " 2>&1";
  answer->clear();
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) *answer += buf;
  const int rc = pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

bool RequestComplete(const CanalInstall& install) {
  static const std::regex kComplete("snapshot request-[0-9]+ complete");
  return std::regex_search(ReadAll(install.instance_log("example")), kComplete);
}

TEST_F(SnapshotE2e, RequestedWhileStreamingWithAWriterAndAnAlterRebuildsEqualTables) {
  const auto start = Clock::now();
  std::vector<TableSpec> tables = Tables();
  tables.erase(std::remove_if(tables.begin(), tables.end(),
                              [](const TableSpec& t) { return t.name != "t_int" && t.name != "t_comp" && t.name != "t_vkey"; }),
               tables.end());
  const std::vector<uint64_t> rows = Load(tables, TotalRows() / 2);
  ASSERT_FALSE(HasFailure());
  CanalInstall install("snapshot-e2e-request", kSourcePort);
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort));
  install.WriteInstance("example", StartHere() + "canal.instance.filter.regex = " + kSchema +
                                       "\\\\..*\ncanal.instance.snapshot.chunk.rows = 1000\n"
                                       // A small ring: while the consumer pauses, the snapshot waits
                                       // mid-table (a second request for the table is refused).
                                       "canal.instance.memory.buffer.size = 32\n");
  TableMirror mirror(Mirror().socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  FirstError error;
  Consumer consumer(&mirror, &error);
  Writer writer(tables, rows, 99);
  uint64_t transactions = 0;
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
  consumer.Start();
  RunWriter(&writer, [n = 0]() mutable { return ++n > 20; }, &error, &transactions);  // streaming, no snapshot
  ASSERT_FALSE(error.failed()) << error.Get();

  std::string answer;
  consumer.Pause(true);
  ASSERT_EQ(AdminSnapshot(install, std::string(kSchema) + ".t_int " + kSchema + ".t_comp " + kSchema + ".t_vkey", &answer), 0)
      << answer << ReadAll(install.instance_log("example"));
  EXPECT_NE(answer.find("accepted: snapshot request-"), std::string::npos) << answer;
  // Bad requests while it reads: each refused with what is wrong and the fix; the stream goes on.
  const struct {
    std::string args, expected;
  } refused[] = {
      {std::string(kSchema) + ".t_int", "already being read"},
      {"mysql.user", "outside destination example's filter"},
      {std::string(kSchema) + ".no_such_table", "does not exist"},
      {std::string(kSchema) + ".t_wide --where \"1 = 1; DROP TABLE t_int\"", "--where"},
      {"not_a_table_name", "is not schema.table"},
  };
  for (const auto& r : refused) {
    EXPECT_EQ(AdminSnapshot(install, r.args, &answer), 1) << r.args << ": " << answer;
    EXPECT_NE(answer.find(r.expected), std::string::npos) << r.args << ": " << answer;
    EXPECT_NE(answer.find("refused"), std::string::npos) << r.args << ": " << answer;
  }
  consumer.Pause(false);
  // An ALTER during the snapshot: the chunks after it carry the new column.
  RunWriter(&writer, [n = 0]() mutable { return ++n > 5; }, &error, &transactions);
  ASSERT_TRUE(Source().Sql(std::string("USE ") + kSchema +
                           "; ALTER TABLE t_int ADD COLUMN extra VARCHAR(10) NOT NULL DEFAULT 'x' AFTER id"))
      << Source().error();
  RunWriter(&writer, [&] { return RequestComplete(install); }, &error, &transactions);
  ASSERT_FALSE(error.failed()) << error.Get();
  Finish(install, &consumer, &error, tables, mirror, SecondsSince(start), transactions);
  const MirrorCounts& n = mirror.counts();
  EXPECT_GT(n.snapshot_rows, 0u);
  EXPECT_EQ(n.snapshot_repeats, 0u);
  EXPECT_EQ(install.Stop(&out), 0) << out;
}

// The number of "snapshot <id> complete" lines in the instance log.
size_t SnapshotsCompleted(const CanalInstall& install) {
  static const std::regex kComplete("snapshot (initial|resnapshot)-[0-9]+ complete");
  const std::string log = ReadAll(install.instance_log("example"));
  return static_cast<size_t>(
      std::distance(std::sregex_iterator(log.begin(), log.end(), kComplete), std::sregex_iterator()));
}

// when_needed: a start whose cursor names a binlog the primary purged while the server was down
// takes a new snapshot of every table (the changes in the purged binlog are gone), then streams
// from the primary's end (not from canal.instance.master.*, purged too); the copy equals the
// source again. The changes made while the server was down only insert and update: a row deleted
// then stays in a copy that had it, which a snapshot cannot undo (docs/snapshot.md).
TEST_F(SnapshotE2e, WhenNeededTakesANewSnapshotWhenTheCursorsBinlogWasPurged) {
  std::vector<TableSpec> tables = Tables();
  const std::vector<uint64_t> rows = Load(tables, TotalRows(20'000));
  ASSERT_FALSE(HasFailure());
  CanalInstall install("snapshot-e2e-purged", kSourcePort);
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort, "canal.file.flush.period = 100\n"));
  install.WriteInstance("example", StartHere() + "canal.instance.filter.regex = " + kSchema +
                                       "\\\\..*\ncanal.instance.snapshot.mode = when_needed\n");
  TableMirror mirror(Mirror().socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  FirstError error;
  std::string out;
  const std::string use = std::string("USE ") + kSchema + "; ";
  {
    // No cursor yet: when_needed snapshots as initial does.
    Consumer first(&mirror, &error);
    ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
    first.Start();
    ASSERT_TRUE(WaitFor([&] { return SnapshotsCompleted(install) == 1 || error.failed(); }, 180s))
        << ReadAll(install.instance_log("example"));
    ASSERT_TRUE(Source().Sql(use + "CREATE TABLE done (id INT PRIMARY KEY); INSERT INTO done VALUES (1);"))
        << Source().error();
    ASSERT_TRUE(WaitFor([&] { return first.marker() || error.failed(); }, 60s));
    first.Stop();
    ASSERT_FALSE(error.failed()) << error.Get();
    ASSERT_EQ(install.Stop(&out), 0) << out;
  }
  const std::string cursor_file = Source().SqlValue("SHOW MASTER STATUS");  // the acked cursor's
  ASSERT_FALSE(cursor_file.empty());
  ASSERT_TRUE(Source().Sql(use +
                           "UPDATE t_int SET n = n + 1, v = 'while down' WHERE id % 11 = 0;"
                           "INSERT INTO t_int (id, v) SELECT id + 100000000, 'inserted while down' FROM t_int "
                           "WHERE id % 13 = 0;"
                           "UPDATE t_comp SET v = CONCAT(v, '+') WHERE a % 7 = 0;"
                           "FLUSH BINARY LOGS; FLUSH BINARY LOGS;"))
      << Source().error();
  // MariaDB keeps a binlog its crash recovery may still need (the binlog checkpoint moves on in
  // the background after a FLUSH): purge until the cursor's file is gone.
  ASSERT_TRUE(WaitFor(
      [&] {
        Source().Sql("PURGE BINARY LOGS BEFORE NOW() + INTERVAL 1 DAY");
        std::string logs;
        return Source().Sql("SHOW BINARY LOGS", &logs) && logs.find(cursor_file) == std::string::npos;
      },
      30s))
      << "the primary kept " << cursor_file;

  Consumer second(&mirror, &error);
  ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
  second.Start();
  ASSERT_TRUE(WaitFor([&] { return SnapshotsCompleted(install) == 2 || error.failed(); }, 180s))
      << ReadAll(install.instance_log("example"));
  ASSERT_TRUE(Source().Sql(use + "UPDATE t_int SET v = 'after' WHERE id % 17 = 0; INSERT INTO done VALUES (2);"))
      << Source().error();
  ASSERT_TRUE(WaitFor([&] { return second.marker() || error.failed(); }, 60s));
  second.Stop();
  ASSERT_FALSE(error.failed()) << error.Get();
  const std::string log = ReadAll(install.instance_log("example"));
  EXPECT_NE(log.find("no longer has (purged)"), std::string::npos) << log;
  // A keyless table's rows come twice (a copy cannot upsert them: docs/snapshot.md).
  std::vector<std::string> names;
  for (const TableSpec& t : tables) {
    if (!t.key_cols.empty()) names.push_back(t.name);
  }
  std::string report;
  s = CompareTables(Source(), Mirror(), kSchema, names, &report);
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;
  EXPECT_EQ(install.Stop(&out), 0) << out;
}

// The primary is down when the server starts: the snapshot plan (which lists the tables on the
// primary) waits for it, as the stream would, instead of the destination not starting; once the
// primary is back the snapshot runs and the copy equals the source.
TEST_F(SnapshotE2e, AnInitialSnapshotWaitsForAPrimaryThatIsDownAtStart) {
  std::vector<TableSpec> tables = Tables();
  const std::vector<uint64_t> rows = Load(tables, TotalRows(20'000));
  ASSERT_FALSE(HasFailure());
  CanalInstall install("snapshot-e2e-down", kSourcePort);
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort));
  install.WriteInstance("example", InstanceProperties());
  TableMirror mirror(Mirror().socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(Source().Stop());
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
  ASSERT_TRUE(WaitFor(
      [&] { return ReadAll(install.instance_log("example")).find("the stream waits for it") != std::string::npos; },
      30s))
      << ReadAll(install.instance_log("example")) << ReadAll(install.server_log());
  ASSERT_TRUE(Source().Start());
  FirstError error;
  Consumer consumer(&mirror, &error);
  consumer.Start();
  ASSERT_TRUE(WaitFor([&] { return SnapshotComplete(install) || error.failed(); }, 120s))
      << ReadAll(install.instance_log("example"));
  EXPECT_NE(ReadAll(install.instance_log("example")).find("the snapshot plan is made and the stream starts"),
            std::string::npos);
  Finish(install, &consumer, &error, tables, mirror, 0, 0);
  EXPECT_EQ(mirror.counts().snapshot_repeats, 0u);
  EXPECT_EQ(install.Stop(&out), 0) << out;
}

// (d) A ZooKeeper pair: the active server dies (kill -9) mid-snapshot, the standby takes the
// destination over and goes on with the snapshot from the cursor in ZooKeeper.
class SnapshotHa : public MirrorSuite<kHaSourcePort, kHaMirrorPort> {
 protected:
  static void SetUpTestSuite() {
    MirrorSuite::SetUpTestSuite();
    zk_ = StartSuiteZk(kHaZkPort, &zk_error_);
  }
  static void TearDownTestSuite() {
    zk_.reset();
    MirrorSuite::TearDownTestSuite();
  }
  void SetUp() override {
    MirrorSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CANAL_REQUIRE_ZK(zk_, zk_error_);
    g_source = sandbox_.get();
    g_mirror = mirror_.get();
  }
  static inline std::unique_ptr<ZkSandbox> zk_;
  static inline std::string zk_error_;
};

TEST_F(SnapshotHa, TheStandbyGoesOnWithTheSnapshotAfterTheActiveDies) {
  const auto start = Clock::now();
  std::vector<TableSpec> tables = Tables();
  tables.erase(std::remove_if(tables.begin(), tables.end(), [](const TableSpec& t) { return t.key_cols.empty(); }),
               tables.end());
  const std::vector<uint64_t> rows = Load(tables, TotalRows());
  ASSERT_FALSE(HasFailure());
  uint64_t loaded = 0;
  for (uint64_t r : rows) loaded += r;
  // The destination's cursor (and the snapshot's progress with it) lives in ZooKeeper, written
  // at each ack (flush.period 0); the suite's ZooKeeper is fresh, so no earlier cursor is there.
  std::unique_ptr<CanalInstall> installs[2];
  const std::string start_here = StartHere();
  for (int i = 0; i < 2; ++i) {
    installs[i] = std::make_unique<CanalInstall>(std::string("snapshot-ha-") + "ab"[i], kHaSourcePort);
    installs[i]->WriteServerProperties(CanalInstall::ServerProperties(
        kHaServerPorts[i], "canal.zkServers = " + zk_->servers() +
                               "\ncanal.zookeeper.session.timeout = 6000\ncanal.zookeeper.flush.period = 0\n"));
    installs[i]->WriteInstance("example", start_here + "canal.instance.filter.regex = " + kSchema +
                                              "\\\\..*\ncanal.instance.snapshot.mode = initial\n"
                                              "canal.instance.snapshot.threads = 1\n"
                                              "canal.instance.snapshot.chunk.rows = 1000\n");
  }
  TableMirror mirror(Mirror().socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  FirstError error;
  std::atomic<bool> marker{false};
  std::atomic<uint64_t> elections{0};
  std::string out;
  ASSERT_EQ(installs[0]->Startup(&out), 0) << out;
  ASSERT_TRUE(WaitFor([&] { return ReadAll(installs[0]->instance_log("example")).find("snapshot initial-") !=
                                   std::string::npos; }, 30s))
      << ReadAll(installs[0]->server_log());
  ASSERT_EQ(installs[1]->Startup(&out), 0) << out;
  std::jthread consumer([&](std::stop_token stop) {
    client::ClusterConnector c(LocalClusterClientOptions(zk_->servers(), 6000, 400));
    bool connected = false;
    while (!stop.stop_requested() && !marker) {
      if (!connected) {
        Status st = c.Connect();
        if (st.ok()) st = c.Subscribe();
        if (!st.ok()) {
          std::this_thread::sleep_for(100ms);  // the pair is between actives
          continue;
        }
        connected = true;
        ++elections;
      }
      Message m;
      Status st = c.GetWithoutAck(1000, 200, TimeUnit::kMilliseconds, &m);
      if (!st.ok()) {
        if (client::IsNotActiveClient(st)) connected = false;
        std::this_thread::sleep_for(50ms);
        continue;
      }
      if (m.batch_id() == -1) continue;
      st = mirror.Apply(m);
      if (!st.ok()) return error.Set("apply: " + st.ToString());
      for (const entry::Entry& e : m.entries()) {
        if (e.header().tablename() == "done" && client::EventTypeOf(e.header()) == entry::INSERT) marker = true;
      }
      (void)c.Ack(m.batch_id());  // a refused ack: the batch comes again from the new active
    }
  });
  Writer writer(tables, rows, 4242);
  uint64_t transactions = 0;
  const uint64_t seen = mirror.counts().snapshot_rows;
  RunWriter(&writer, [&] { return mirror.counts().snapshot_rows >= seen + loaded / 3; }, &error, &transactions);
  ASSERT_FALSE(error.failed()) << error.Get();
  ASSERT_EQ(ReadAll(installs[0]->instance_log("example")).find(" complete:"), std::string::npos)
      << "the snapshot ended before the active died; use more rows";
  ASSERT_TRUE(installs[0]->Kill9());
  static const std::regex kComplete("snapshot initial-[0-9]+ complete");
  RunWriter(&writer, [&] { return std::regex_search(ReadAll(installs[1]->instance_log("example")), kComplete); },
            &error, &transactions);
  ASSERT_FALSE(error.failed()) << error.Get();
  const std::string standby_log = ReadAll(installs[1]->instance_log("example"));
  EXPECT_NE(standby_log.find("resumes at the cursor"), std::string::npos) << standby_log;
  ASSERT_TRUE(Source().Sql(std::string("USE ") + kSchema + "; CREATE TABLE done (id INT PRIMARY KEY); INSERT INTO done VALUES (1);"))
      << Source().error();
  ASSERT_TRUE(WaitFor([&] { return marker || error.failed(); }, 120s)) << mirror.counts().ToString();
  consumer.request_stop();
  consumer.join();
  ASSERT_FALSE(error.failed()) << error.Get();
  // A keyless table's rows come twice (a copy cannot upsert them: docs/snapshot.md).
  std::vector<std::string> names;
  for (const TableSpec& t : tables) {
    if (!t.key_cols.empty()) names.push_back(t.name);
  }
  std::string report;
  s = CompareTables(Source(), Mirror(), kSchema, names, &report);
  const MirrorCounts& n = mirror.counts();
  std::printf("[ snapshot ] ZooKeeper pair, active killed mid-snapshot: %.1f s, %" PRIu64 " writer transactions, %" PRIu64
              " consumer elections; %s\n%s",
              SecondsSince(start), transactions, elections.load(), n.ToString().c_str(), report.c_str());
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;
  EXPECT_LE(n.snapshot_repeats, 8u * 1000) << "only chunks not yet acked come again";
  EXPECT_EQ(installs[1]->Stop(&out), 0) << out;
}

}  // namespace
}  // namespace canal::testing
