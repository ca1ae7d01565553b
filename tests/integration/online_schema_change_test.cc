// Online schema changes: gh-ost's and pt-online-schema-change's
// flows, issued statement by statement on a MariaDB while a writer keeps
// writing to `t`: a shadow table beside `t` (gh-ost also its changelog table
// `_t_ghc`), the row copy, the changes followed (gh-ost applies them from its
// reading of the binlog, pt-osc by triggers), the cut-over RENAME that swaps
// the shadow into `t`, the old table dropped. The shadow lives outside a
// narrow filter; the schema history must carry its definition into `t` so
// that every row of `t`, before, during and after, has the names and values
// MariaDB's own SELECT gave at write time. FULL, MINIMAL and NO_LOG row
// metadata, live and in catch-up (EventParser), and end to end through
// canal-server and the SDK, where no shadow-table row may reach the client.
//
// Ports: MariaDB 14810, canal-server 14811-14813, ZooKeeper 14814.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/coord/zk_client.h"
#include "canal/meta/zk_history_store.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/schema/history_log.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/row_lines.h"
#include "support/sandbox_parser.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using parser::EventParser;
using parser::EventParserOptions;

constexpr uint16_t kDbPort = TestPort("osc");
constexpr uint16_t kServerPortBase = TestPort("osc", 1);
constexpr uint16_t kZkPort = TestPort("osc", 4);
constexpr int kInitialRows = 40;

enum class Tool { kGhost, kPtOsc };

// A root session over TCP (the writer, the tool's connections).
class Session {
 public:
  Session() {
    mysql::ConnectionOptions o;
    o.host = "127.0.0.1";
    o.port = kDbPort;
    o.user = "root";
    o.connect_timeout_ms = 5000;
    conn_ = std::make_unique<mysql::QueryConnection>(o);
  }
  Status Connect() { return conn_->Connect(); }
  Status Exec(const std::string& sql) { return conn_->Execute(sql).WithContext(sql); }
  // The row of `db.table` with this id as " name=value ..." (NULL as NULL), "" when absent.
  Status Image(const std::string& sql, std::string* image) {
    mysql::ResultSet rs;
    CANAL_RETURN_IF_ERROR(conn_->Query(sql, &rs).WithContext(sql));
    image->clear();
    if (rs.rows.empty()) return Status::OK();
    for (size_t i = 0; i < rs.column_names.size(); ++i) {
      const auto& v = rs.rows[0][i];
      *image += " " + rs.column_names[i] + "=" + (v ? *v : std::string("NULL"));
    }
    return Status::OK();
  }
  Status MasterPoint(schema::BinlogPoint* at) {
    mysql::MasterStatus st;
    CANAL_RETURN_IF_ERROR(conn_->ShowMasterStatus(&st));
    *at = schema::BinlogPoint{st.file, st.position};
    return Status::OK();
  }
  Status Value(const std::string& sql, std::string* out) {
    mysql::ResultSet rs;
    CANAL_RETURN_IF_ERROR(conn_->Query(sql, &rs).WithContext(sql));
    *out = rs.rows.empty() || rs.rows[0].empty() || !rs.rows[0][0] ? "" : *rs.rows[0][0];
    return Status::OK();
  }

 private:
  std::unique_ptr<mysql::QueryConnection> conn_;
};

// What the writer wrote to `db.t`, each change as the line RowLines renders,
// with the images MariaDB's SELECT showed inside the writing transaction.
struct Ledger {
  std::mutex mu;
  std::vector<std::string> lines;
  std::set<int> touched;  // ids changed since the shadow last caught up (gh-ost's binlog reading)
  schema::BinlogPoint shadow_ready;  // just after the shadow's CREATE and ALTER
  void Add(std::string line, int id) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(std::move(line));
    touched.insert(id);
  }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu);
    return lines;
  }
  std::set<int> TakeTouched() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(touched, {});
  }
};

// One change to db.t in its own transaction; the image read in it, so it is
// the table `t` is at that moment (a cut-over RENAME waits for the commit).
// A deadlock with the tool's copy (LOCK IN SHARE MODE, triggers) rolls the
// transaction back; it is retried, as an application would.
Status WriteOne(Session* s, const std::string& db, char op, int id, Ledger* ledger) {
  const std::string t = db + ".t";
  const std::string row = "SELECT * FROM " + t + " WHERE id = " + std::to_string(id);
  Status st;
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::string before, after, line;
    st = s->Exec("BEGIN");
    if (st.ok() && op == 'I') {
      st = s->Exec("INSERT IGNORE INTO " + t + " (id, a) VALUES (" + std::to_string(id) + ", " +
                   std::to_string(id * 10) + ")");
      if (st.ok()) st = s->Image(row, &after);
      if (st.ok() && !after.empty()) line = t + " INSERT after:" + after;
    } else if (st.ok()) {
      st = s->Image(row + " FOR UPDATE", &before);
      if (st.ok() && !before.empty() && op == 'U') {
        st = s->Exec("UPDATE " + t + " SET a = a + 1 WHERE id = " + std::to_string(id));
        if (st.ok()) st = s->Image(row, &after);
        if (st.ok()) line = t + " UPDATE before:" + before + " after:" + after;
      } else if (st.ok() && !before.empty()) {
        st = s->Exec("DELETE FROM " + t + " WHERE id = " + std::to_string(id));
        if (st.ok()) line = t + " DELETE before:" + before;
      }
    }
    if (st.ok()) st = s->Exec("COMMIT");
    if (st.ok()) {
      if (!line.empty()) ledger->Add(std::move(line), id);
      return st;
    }
    if (st.ToString().find("Deadlock found") == std::string::npos) return st;
    CANAL_RETURN_IF_ERROR(s->Exec("ROLLBACK"));
  }
  return st;
}

// Keeps writing to db.t (inserts of new ids, updates and deletes of old ones)
// until told to stop, and at least `min_ops` changes.
class Writer {
 public:
  Writer(std::string db, Ledger* ledger) : db_(std::move(db)), ledger_(ledger) {}
  ~Writer() { Stop(); }
  void Start() {
    thread_ = std::thread([this] {
      Session s;
      Status st = s.Connect();
      for (int i = 0; st.ok() && (!stop_ || i < 30); ++i) {
        const char op = "IUUIDU"[i % 6];
        const int id = op == 'I' ? 1000 + i : (op == 'D' ? 1000 + i - 4 : 1 + (i * 7) % kInitialRows);
        st = WriteOne(&s, db_, op, id, ledger_);
        ops_ = i + 1;
      }
      std::lock_guard<std::mutex> lock(mu_);
      error_ = st;
    });
  }
  // Waits until the writer made `n` more changes (so that it is writing during a phase).
  bool WaitOps(int n) {
    const int target = ops_ + n;
    return WaitFor([&] { return ops_ >= target || !running(); }, 60s);
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool running() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_.ok();
  }
  Status error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  std::string db_;
  Ledger* ledger_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ops_{0};
  std::mutex mu_;
  Status error_;
};

#define OSC_OK(expr)                          \
  do {                                        \
    const Status _s = (expr);                 \
    ASSERT_TRUE(_s.ok()) << _s.ToString();    \
  } while (0)

// The shadow's new shape: a column added in the middle, one dropped, one added.
constexpr const char* kShadowAlter = " ADD COLUMN b INT AFTER id, DROP COLUMN z, ADD COLUMN z2 VARCHAR(5)";

// gh-ost, as it issues its statements (go/logic/applier.go's order): the
// changelog table, the ghost table created LIKE and altered, chunked row copy,
// the binlog's changes applied to the ghost, and the atomic cut-over (sentry
// `_t_del`, LOCK TABLES, a RENAME waiting on the lock, the sentry dropped,
// UNLOCK), then the old table dropped.
void RunGhost(const std::string& db, Writer* writer, Ledger* ledger) {
  Session tool, locker, renamer;
  OSC_OK(tool.Connect());
  OSC_OK(locker.Connect());
  OSC_OK(renamer.Connect());
  const std::string q = db + ".";
  OSC_OK(tool.Exec("CREATE TABLE " + q + "_t_ghc (id BIGINT UNSIGNED AUTO_INCREMENT, last_update TIMESTAMP NOT NULL "
                   "DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, hint VARCHAR(64) CHARSET ascii NOT NULL, "
                   "value VARCHAR(4096) CHARSET ascii NOT NULL, PRIMARY KEY(id), UNIQUE KEY hint_uidx(hint)) "
                   "AUTO_INCREMENT=256"));
  OSC_OK(tool.Exec("INSERT /* gh-ost */ INTO " + q + "_t_ghc (id, hint, value) VALUES (2, 'state', 'GhostTableMigrated') "
                   "ON DUPLICATE KEY UPDATE last_update=NOW(), value=VALUES(value)"));
  OSC_OK(tool.Exec("CREATE /* gh-ost */ TABLE " + q + "_t_gho LIKE " + q + "t"));
  OSC_OK(tool.Exec("ALTER /* gh-ost */ TABLE " + q + "_t_gho" + kShadowAlter));
  OSC_OK(tool.MasterPoint(&ledger->shadow_ready));
  ledger->TakeTouched();  // from here on the "binlog reader" follows t
  ASSERT_TRUE(writer->WaitOps(5));
  for (int lo = 1; lo <= 1200; lo += 100) {
    OSC_OK(tool.Exec("INSERT /* gh-ost */ IGNORE INTO " + q + "_t_gho (id, a, z2) (SELECT id, a, z FROM " + q +
                     "t FORCE INDEX (PRIMARY) WHERE id BETWEEN " + std::to_string(lo) + " AND " +
                     std::to_string(lo + 99) + " LOCK IN SHARE MODE)"));
    OSC_OK(tool.Exec("INSERT /* gh-ost */ INTO " + q + "_t_ghc (id, hint, value) VALUES (1, 'heartbeat', NOW(6)) "
                     "ON DUPLICATE KEY UPDATE last_update=NOW(), value=VALUES(value)"));
  }
  // Changes to t the binlog reader saw, applied to the ghost (REPLACE/DELETE).
  auto apply = [&](Session* s) -> Status {
    for (int id : ledger->TakeTouched()) {
      const std::string n = std::to_string(id);
      CANAL_RETURN_IF_ERROR(s->Exec("DELETE /* gh-ost */ FROM " + q + "_t_gho WHERE id = " + n));
      CANAL_RETURN_IF_ERROR(s->Exec("REPLACE /* gh-ost */ INTO " + q + "_t_gho (id, a, z2) SELECT id, a, z FROM " +
                                    q + "t WHERE id = " + n));
    }
    return Status::OK();
  };
  OSC_OK(apply(&tool));
  ASSERT_TRUE(writer->WaitOps(5));
  OSC_OK(apply(&tool));
  // The cut-over, with the writer still writing (it waits on the lock).
  OSC_OK(tool.Exec("CREATE /* gh-ost */ TABLE " + q + "_t_del (id INT AUTO_INCREMENT PRIMARY KEY) "
                   "COMMENT='ghost-cut-over-sentry'"));
  OSC_OK(locker.Exec("LOCK TABLES " + q + "t WRITE, " + q + "_t_del WRITE, " + q + "_t_gho WRITE"));
  OSC_OK(apply(&locker));
  Status renamed;
  std::thread rename([&] {
    renamed = renamer.Exec("RENAME /* gh-ost */ TABLE " + q + "t TO " + q + "_t_del, " + q + "_t_gho TO " + q + "t");
  });
  std::string waiting;
  ASSERT_TRUE(WaitFor([&] {
    return tool.Value("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'RENAME /* gh-ost */%'",
                      &waiting).ok() && waiting == "1";
  }, 30s));
  OSC_OK(locker.Exec("DROP /* gh-ost */ TABLE IF EXISTS " + q + "_t_del"));
  OSC_OK(locker.Exec("UNLOCK TABLES"));
  rename.join();
  OSC_OK(renamed);
  ASSERT_TRUE(writer->WaitOps(5));
  OSC_OK(tool.Exec("DROP /* gh-ost */ TABLE IF EXISTS " + q + "_t_del"));
  OSC_OK(tool.Exec("DROP /* gh-ost */ TABLE IF EXISTS " + q + "_t_ghc"));
}

// pt-online-schema-change: the new table, its ALTER, three triggers copying
// every change, the chunked copy, `RENAME TABLE t TO _t_old, _t_new TO t`,
// the old table and the triggers dropped.
void RunPtOsc(const std::string& db, Writer* writer, Ledger* ledger) {
  Session tool;
  OSC_OK(tool.Connect());
  const std::string q = db + ".";
  OSC_OK(tool.Exec("CREATE TABLE " + q + "_t_new LIKE " + q + "t"));
  OSC_OK(tool.Exec("ALTER TABLE " + q + "_t_new" + kShadowAlter));
  OSC_OK(tool.MasterPoint(&ledger->shadow_ready));
  OSC_OK(tool.Exec("CREATE TRIGGER " + q + "pt_osc_t_del AFTER DELETE ON " + q + "t FOR EACH ROW DELETE IGNORE FROM " +
                   q + "_t_new WHERE " + q + "_t_new.id <=> OLD.id"));
  OSC_OK(tool.Exec("CREATE TRIGGER " + q + "pt_osc_t_upd AFTER UPDATE ON " + q + "t FOR EACH ROW BEGIN DELETE IGNORE "
                   "FROM " + q + "_t_new WHERE !(OLD.id <=> NEW.id) AND " + q + "_t_new.id <=> OLD.id; REPLACE INTO " +
                   q + "_t_new (id, a, z2) VALUES (NEW.id, NEW.a, NEW.z); END"));
  OSC_OK(tool.Exec("CREATE TRIGGER " + q + "pt_osc_t_ins AFTER INSERT ON " + q + "t FOR EACH ROW REPLACE INTO " + q +
                   "_t_new (id, a, z2) VALUES (NEW.id, NEW.a, NEW.z)"));
  ASSERT_TRUE(writer->WaitOps(5));
  for (int lo = 1; lo <= 1200; lo += 100) {
    OSC_OK(tool.Exec("INSERT LOW_PRIORITY IGNORE INTO " + q + "_t_new (id, a, z2) SELECT id, a, z FROM " + q +
                     "t FORCE INDEX(PRIMARY) WHERE id >= " + std::to_string(lo) + " AND id <= " +
                     std::to_string(lo + 99) + " LOCK IN SHARE MODE /*pt-online-schema-change*/"));
  }
  ASSERT_TRUE(writer->WaitOps(5));
  OSC_OK(tool.Exec("RENAME TABLE " + q + "t TO " + q + "_t_old, " + q + "_t_new TO " + q + "t"));
  ASSERT_TRUE(writer->WaitOps(5));
  OSC_OK(tool.Exec("DROP TABLE IF EXISTS " + q + "_t_old"));
  OSC_OK(tool.Exec("DROP TRIGGER IF EXISTS " + q + "pt_osc_t_del"));
  OSC_OK(tool.Exec("DROP TRIGGER IF EXISTS " + q + "pt_osc_t_upd"));
  OSC_OK(tool.Exec("DROP TRIGGER IF EXISTS " + q + "pt_osc_t_ins"));
}

// The table and its first rows, then the flow with the writer running; the
// writer's last changes land after the old table is dropped.
void RunFlow(Tool tool, const std::string& db, Ledger* ledger) {
  Session s;
  OSC_OK(s.Connect());
  for (int id = 1; id <= kInitialRows; ++id) {
    OSC_OK(s.Exec("BEGIN"));
    OSC_OK(s.Exec("INSERT INTO " + db + ".t (id, a, z) VALUES (" + std::to_string(id) + ", " + std::to_string(id) +
                  ", 'z" + std::to_string(id % 10) + "')"));
    std::string after;
    OSC_OK(s.Image("SELECT * FROM " + db + ".t WHERE id = " + std::to_string(id), &after));
    ledger->Add(db + ".t INSERT after:" + after, id);
    OSC_OK(s.Exec("COMMIT"));
  }
  Writer writer(db, ledger);
  writer.Start();
  if (tool == Tool::kGhost) {
    RunGhost(db, &writer, ledger);
  } else {
    RunPtOsc(db, &writer, ledger);
  }
  writer.Stop();
  OSC_OK(writer.error());
  // The table after the flow: the shadow's shape under t's name.
  std::string cols;
  OSC_OK(s.Value("SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS "
                 "WHERE TABLE_SCHEMA = '" + db + "' AND TABLE_NAME = 't'", &cols));
  ASSERT_EQ(cols, "id,b,a,z2");
}

struct FlowCase {
  Tool tool;
  std::string metadata;  // binlog_row_metadata
  std::string filter;    // narrow, black (broad minus the shadows), broad
  bool later_ddl = false;  // upgrade: an ALTER of t after the flow
};

void PrintTo(const FlowCase& c, std::ostream* os) {
  *os << (c.tool == Tool::kGhost ? "gh-ost" : "pt-osc") << ", " << c.metadata << ", " << c.filter << " filter";
}

std::string CaseName(const ::testing::TestParamInfo<FlowCase>& info) {
  return std::string(info.param.tool == Tool::kGhost ? "Ghost" : "PtOsc") + "_" + info.param.metadata + "_" +
         info.param.filter + (info.param.later_ddl ? "_LaterDdl" : "");
}

class OnlineSchemaChangeSuite {
 public:
  static MariadbSandbox* Sandbox(std::string* error) {
    static std::unique_ptr<MariadbSandbox> sandbox;
    static std::string setup_error;
    static bool tried = false;
    if (!tried) {
      tried = true;
      SandboxOptions o;
      o.port = kDbPort;
      o.binlog_row_metadata = "FULL";
      sandbox = StartSuiteSandboxOf<MariadbSandbox>(std::move(o), "online schema change sandbox", &setup_error);
    }
    *error = setup_error;
    return sandbox.get();
  }
};

// A parser of the sandbox's binlog from its current end, its history in `history_file`.
EventParserOptions ParserOptions(MariadbSandbox* sandbox, const std::string& history_file,
                                 std::function<bool(std::string_view, std::string_view)> scope) {
  EventParserOptions o = SandboxParserOptions("osc", kDbPort);
  o.schema_history_file = history_file;
  o.schema_scope = std::move(scope);
  std::string file;
  uint64_t pos = 4;
  EXPECT_TRUE(PrimaryEnd(*sandbox, &file, &pos)) << sandbox->error();
  o.start.journal_name = file;
  o.start.position = pos;
  return o;
}

// A destination's first start and stop: it takes and stores its snapshot.
void FirstStart(const EventParserOptions& o) {
  RowLines first;
  EventParser p(o, &first);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 60s));
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
}

// The scope the server derives from its filter, for the EventParser.
std::function<bool(std::string_view, std::string_view)> ScopeOf(const std::string& filter, const std::string& db) {
  if (filter == "narrow") return [db](std::string_view d, std::string_view t) { return d == db && t == "t"; };
  if (filter == "black") {
    return [db](std::string_view d, std::string_view t) { return d == db && !t.starts_with("_t_"); };
  }
  return [db](std::string_view d, std::string_view) { return d == db; };
}

class OnlineSchemaChange : public ::testing::TestWithParam<FlowCase> {
 protected:
  void SetUp() override {
    std::string error;
    sandbox_ = OnlineSchemaChangeSuite::Sandbox(&error);
    if (sandbox_ == nullptr) GTEST_SKIP() << error;
    static int counter = 0;
    db_ = "osc_" + std::to_string(++counter);
    dir_ = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/online-schema-change-" + std::to_string(counter);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(sandbox_->Sql("SET GLOBAL binlog_row_metadata = '" + GetParam().metadata + "'; DROP DATABASE IF EXISTS " +
                              db_ + "; CREATE DATABASE " + db_ + "; USE " + db_ +
                              "; CREATE TABLE t (id INT PRIMARY KEY, a INT, z CHAR(3)); CREATE TABLE other (x INT)"))
        << sandbox_->error();
  }

  EventParserOptions Options(const std::string& history) {
    return ParserOptions(sandbox_, dir_ + "/" + history, ScopeOf(GetParam().filter, db_));
  }

  MariadbSandbox* sandbox_ = nullptr;
  std::string db_, dir_;
};

// Live (a parser streaming through the flow) and catch-up (a parser whose
// snapshot was taken before the flow, started after it): every row of t as
// the database showed it when it was written.
TEST_P(OnlineSchemaChange, EveryRowOfTKeepsItsWriteTimeNamesAcrossTheCutOver) {
  EventParserOptions live_o = Options("live.json");
  EventParserOptions catchup_o = Options("catchup.json");
  ASSERT_NO_FATAL_FAILURE(FirstStart(catchup_o));  // the catch-up destination's snapshot, before the flow
  RowLines live;
  EventParser lp(live_o, &live);
  lp.Start();
  ASSERT_TRUE(WaitFor([&] { return lp.status().state == "streaming" || !lp.running(); }, 30s));
  Ledger ledger;
  ASSERT_NO_FATAL_FAILURE(RunFlow(GetParam().tool, db_, &ledger));
  const std::vector<std::string> expected = ledger.Lines();
  const std::string t = db_ + ".t";
  WaitFor([&] { return live.Of(t).size() >= expected.size() || !lp.running(); }, 60s);
  lp.Stop();
  ASSERT_TRUE(lp.fatal_error().ok()) << lp.fatal_error().ToString();
  EXPECT_EQ(live.Of(t), expected);

  const auto started = std::chrono::steady_clock::now();
  RowLines catchup;
  EventParser cp(catchup_o, &catchup);
  cp.Start();
  WaitFor([&] { return catchup.Of(t).size() >= expected.size() || !cp.running(); }, 60s);
  cp.Stop();
  ASSERT_TRUE(cp.fatal_error().ok()) << cp.fatal_error().ToString();
  EXPECT_EQ(catchup.Of(t), expected);
  std::printf("[ osc ] %zu rows of t, catch-up in %.2f s\n", expected.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

std::vector<FlowCase> AllCases() {
  std::vector<FlowCase> out;
  for (Tool tool : {Tool::kGhost, Tool::kPtOsc}) {
    for (const char* md : {"FULL", "MINIMAL", "NO_LOG"}) {
      for (const char* f : {"narrow", "black", "broad"}) out.push_back({tool, md, f});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Flows, OnlineSchemaChange, ::testing::ValuesIn(AllCases()), CaseName);

// A history written by the version that tracked only the filter's tables
// (an upgrade): it lacks the shadow, so the cut-over's RENAME leaves t
// unknown. With FULL metadata t's first TABLE_MAP names it exactly; without,
// the primary's information_schema does, since no DDL on t follows in the
// binlog. When one does (an ALTER after the flow), the destination stops at
// t's first row after the cut-over, naming why and the fix; never a guess.
class OnlineSchemaChangeUpgrade : public OnlineSchemaChange {};

TEST_P(OnlineSchemaChangeUpgrade, AScopedHistoryLackingTheShadowNeverGuesses) {
  EventParserOptions o = Options("scoped.json");
  ASSERT_NO_FATAL_FAILURE(FirstStart(o));
  Ledger ledger;
  ASSERT_NO_FATAL_FAILURE(RunFlow(GetParam().tool, db_, &ledger));
  if (GetParam().later_ddl) {
    ASSERT_TRUE(sandbox_->Sql("ALTER TABLE " + db_ + ".t ADD COLUMN late INT")) << sandbox_->error();
  }
  // What the older version stored, had it read past the shadow's CREATE and
  // ALTER: only the tables in scope, as of a point after them (t unchanged).
  schema::HistoryLog log;
  ASSERT_TRUE(schema::LoadHistoryFile(o.schema_history_file, &log).ok());
  std::vector<schema::TableSchema> kept;
  for (const auto& tab : log.tables) {
    if (o.schema_scope(tab.db, tab.name)) kept.push_back(tab);
  }
  ASSERT_EQ(kept.size(), 1u);
  log.tables = kept;
  log.snapshot_at = ledger.shadow_ready;
  ASSERT_TRUE(schema::SaveHistoryFile(o.schema_history_file, log).ok());
  const std::vector<std::string> expected = ledger.Lines();
  const std::string t = db_ + ".t";
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  WaitFor([&] { return rec.Of(t).size() >= expected.size() || !p.running(); }, 60s);
  p.Stop();
  if (!GetParam().later_ddl) {
    ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
    EXPECT_EQ(rec.Of(t), expected);
    return;
  }
  const std::string err = p.fatal_error().ToString();
  std::printf("[ stop error ] %s\n", err.c_str());
  EXPECT_NE(err.find("holds no table `" + db_ + "`.`t`"), std::string::npos) << err;
  EXPECT_NE(err.find("which the history does not hold"), std::string::npos) << err;
  EXPECT_NE(err.find("binlog_row_metadata=FULL"), std::string::npos) << err;
  EXPECT_NE(err.find("ADD COLUMN late INT"), std::string::npos) << err;
  EXPECT_NE(err.find("rebuild-schema-history osc"), std::string::npos) << err;
  // Every row before the cut-over arrived, with its names.
  const std::vector<std::string> got = rec.Of(t);
  ASSERT_LE(got.size(), expected.size());
  EXPECT_GT(got.size(), static_cast<size_t>(kInitialRows));
  EXPECT_EQ(got, std::vector<std::string>(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(got.size())));
}

INSTANTIATE_TEST_SUITE_P(Upgrade, OnlineSchemaChangeUpgrade,
                         ::testing::Values(FlowCase{Tool::kGhost, "FULL", "narrow"},
                                           FlowCase{Tool::kGhost, "MINIMAL", "narrow"},
                                           FlowCase{Tool::kPtOsc, "NO_LOG", "narrow"},
                                           FlowCase{Tool::kGhost, "MINIMAL", "narrow", true}),
                         CaseName);

// A failover pair sharing the history in ZooKeeper: the active parser reads
// through the whole flow, live, and dies; the standby, with no local files,
// starts at the clients' cursor before the flow and, from the history the
// active one stored, names every row of t right across the cut-over.
class OnlineSchemaChangeZk : public OnlineSchemaChange {};

TEST_P(OnlineSchemaChangeZk, TheStandbyTakingOverAfterTheCutOverNamesEveryRow) {
  std::string zk_error;
  std::unique_ptr<ZkSandbox> zk_sandbox = StartSuiteZk(kZkPort, &zk_error);
  CANAL_REQUIRE_ZK(zk_sandbox, zk_error);
  coord::ZkOptions zo;
  zo.servers = zk_sandbox->servers();
  std::unique_ptr<coord::ZkClient> zk;
  ASSERT_TRUE(coord::ZkClient::Create(zo, &zk).ok());
  Status s = zk->WaitConnected(10s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE((s = zk->Delete("/otter", /*recursive=*/true)).ok()) << s.ToString();
  auto options = [&](const std::string& server) {
    EventParserOptions o = Options(server + "/schema_history.json");  // never written: ZooKeeper is
    o.schema_history_store = std::make_shared<meta::ZkHistoryStore>(zk.get(), "osc");
    return o;
  };
  EventParserOptions active = options("active");
  EventParserOptions standby = options("standby");
  standby.start = active.start;  // the clients' cursor: before the flow
  Ledger ledger;
  const std::string t = db_ + ".t";
  {
    RowLines rec;
    EventParser p(active, &rec);
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
    ASSERT_NO_FATAL_FAILURE(RunFlow(GetParam().tool, db_, &ledger));
    WaitFor([&] { return rec.Of(t).size() >= ledger.Lines().size() || !p.running(); }, 60s);
    p.Stop();
    ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  }
  RowLines rec;
  EventParser p(standby, &rec);
  p.Start();
  const std::vector<std::string> expected = ledger.Lines();
  WaitFor([&] { return rec.Of(t).size() >= expected.size() || !p.running(); }, 60s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  EXPECT_EQ(rec.Of(t), expected);
  EXPECT_FALSE(std::filesystem::exists(standby.schema_history_file));
  zk.reset();
}

INSTANTIATE_TEST_SUITE_P(Zk, OnlineSchemaChangeZk,
                         ::testing::Values(FlowCase{Tool::kGhost, "MINIMAL", "narrow"},
                                           FlowCase{Tool::kPtOsc, "NO_LOG", "narrow"}),
                         CaseName);

// The two forms the schema history used to stop on, in a filter naming the
// whole database: CREATE TABLE ... SELECT (row format logs it with its
// columns spelled out) is applied; a system-versioned table (hidden
// row_start/row_end columns) is named by FULL metadata, and with MINIMAL its
// first row stops the destination with the fix, rows before it delivered.
class OnlineSchemaChangeForms : public OnlineSchemaChange {};

TEST_P(OnlineSchemaChangeForms, CreateSelectIsAppliedAndSystemVersioningNeverGuessed) {
  EventParserOptions o = Options("forms.json");
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
  ASSERT_TRUE(sandbox_->Sql("USE " + db_ + "; INSERT INTO t VALUES (1, 10, 'x'), (2, 20, NULL);"
                            "CREATE TABLE s (n INT) SELECT id, a, z FROM t;"
                            "INSERT INTO s VALUES (7, 3, 30, 'y');"
                            "CREATE TABLE v (id INT, x INT) WITH SYSTEM VERSIONING;"
                            "INSERT INTO v VALUES (1, 2); INSERT INTO t VALUES (3, 30, 'w')"))
      << sandbox_->error();
  const std::string s = db_ + ".s", v = db_ + ".v", t = db_ + ".t";
  const bool full = GetParam().metadata == "FULL";
  WaitFor([&] { return (rec.Of(t).size() >= 3 && full) || !p.running(); }, 30s);
  p.Stop();
  EXPECT_EQ(rec.Of(s), (std::vector<std::string>{s + " INSERT after: n=NULL id=1 a=10 z=x",
                                                 s + " INSERT after: n=NULL id=2 a=20 z=NULL",
                                                 s + " INSERT after: n=7 id=3 a=30 z=y"}));
  if (full) {
    ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
    ASSERT_EQ(rec.Of(v).size(), 1u);
    EXPECT_EQ(rec.Of(v)[0].rfind(v + " INSERT after: id=1 x=2 row_start=", 0), 0u) << rec.Of(v)[0];
    EXPECT_NE(rec.Of(v)[0].find(" row_end="), std::string::npos) << rec.Of(v)[0];
    EXPECT_EQ(rec.Of(t).size(), 3u);
    return;
  }
  const std::string err = p.fatal_error().ToString();
  std::printf("[ stop error ] %s\n", err.c_str());
  EXPECT_NE(err.find("holds no table `" + db_ + "`.`v`"), std::string::npos) << err;
  EXPECT_NE(err.find("not understood"), std::string::npos) << err;
  EXPECT_NE(err.find("binlog_row_metadata=FULL"), std::string::npos) << err;
  EXPECT_TRUE(rec.Of(v).empty());
}

// RENAME TABLE a TO tmp, b TO a, tmp TO b swaps two tables in scope: the
// rows written after it carry each table's own columns.
TEST_P(OnlineSchemaChangeForms, ASwapOfTwoTablesInScopeKeepsEachOnesColumns) {
  ASSERT_TRUE(sandbox_->Sql("USE " + db_ + "; CREATE TABLE a (a1 INT, a2 VARCHAR(3)); CREATE TABLE b (b1 INT)"))
      << sandbox_->error();
  EventParserOptions o = Options("swap.json");
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
  ASSERT_TRUE(sandbox_->Sql("USE " + db_ + "; INSERT INTO a VALUES (1, 'x'); INSERT INTO b VALUES (2);"
                            "RENAME TABLE a TO tmp, b TO a, tmp TO b;"
                            "INSERT INTO a VALUES (3); INSERT INTO b VALUES (4, 'y')"))
      << sandbox_->error();
  const std::string a = db_ + ".a", b = db_ + ".b";
  WaitFor([&] { return rec.Of(a).size() + rec.Of(b).size() >= 4 || !p.running(); }, 30s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  EXPECT_EQ(rec.Of(a), (std::vector<std::string>{a + " INSERT after: a1=1 a2=x", a + " INSERT after: b1=3"}));
  EXPECT_EQ(rec.Of(b), (std::vector<std::string>{b + " INSERT after: b1=2", b + " INSERT after: a1=4 a2=y"}));
}

// With FULL metadata a table outside the filter whose stored history is
// wrong is relearned from its TABLE_MAP instead of stopping anything, so a
// later RENAME into the filter carries its real columns.
TEST_P(OnlineSchemaChangeForms, AWrongHistoryOutsideTheFilterHealsFromFullTableMaps) {
  if (GetParam().metadata != "FULL") GTEST_SKIP() << "FULL metadata only";
  EventParserOptions o = Options("heal.json");
  o.schema_scope = ScopeOf("narrow", db_);
  ASSERT_NO_FATAL_FAILURE(FirstStart(o));
  schema::HistoryLog log;
  ASSERT_TRUE(schema::LoadHistoryFile(o.schema_history_file, &log).ok());
  for (auto& tab : log.tables) {
    if (tab.name == "other") tab.columns[0].name = "wrong";
  }
  ASSERT_TRUE(schema::SaveHistoryFile(o.schema_history_file, log).ok());
  ASSERT_TRUE(sandbox_->Sql("USE " + db_ + "; INSERT INTO other VALUES (1); RENAME TABLE t TO t_old, other TO t;"
                            "INSERT INTO t VALUES (2)"))
      << sandbox_->error();
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  const std::string t = db_ + ".t";
  WaitFor([&] { return !rec.Of(t).empty() || !p.running(); }, 30s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  EXPECT_EQ(rec.Of(t), (std::vector<std::string>{t + " INSERT after: x=2"}));
}

INSTANTIATE_TEST_SUITE_P(Forms, OnlineSchemaChangeForms,
                         ::testing::Values(FlowCase{Tool::kGhost, "FULL", "broad"},
                                           FlowCase{Tool::kGhost, "MINIMAL", "broad"}),
                         CaseName);

// End to end: canal-server with the filter in its instance.properties and an
// SDK client; every row of t as the database showed it, and with the shadow
// outside the filter no row of it, nor of the changelog table.
class OnlineSchemaChangeServer : public OnlineSchemaChange {};

TEST_P(OnlineSchemaChangeServer, TheClientGetsEveryRowOfTAndNoShadowRow) {
  ASSERT_TRUE(std::filesystem::exists(CanalInstall::ServerProgram()))
      << CanalInstall::ServerProgram() << " is missing: build the canal-server target first";
  static int n = 0;
  const uint16_t port = static_cast<uint16_t>(kServerPortBase + (n++ % 3));
  const std::string f = GetParam().filter;
  const std::string regex = f == "narrow" ? db_ + "\\\\.t" : db_ + "\\\\..*";
  std::string extra = "canal.instance.filter.regex = " + regex + "\n";
  if (f == "black") extra += "canal.instance.filter.black.regex = " + db_ + "\\\\._t_.*\n";
  CanalInstall install("online-schema-change-" + db_, kDbPort);
  install.WriteServerProperties(CanalInstall::ServerProperties(port));
  install.WriteInstance("example", StartAtPrimaryEnd(*sandbox_) + extra);
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << "\n" << ReadAll(install.server_log());
  client::Connector c(ServerClientOptions(port));
  Status s = ConnectAndSubscribe(c, 30s);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << ReadAll(install.server_log());

  std::mutex mu;
  std::vector<std::string> t_rows, shadow_rows;
  std::atomic<bool> stop{false};
  Status client_error;
  std::thread reader([&] {
    while (!stop) {
      client::Message m;
      Status g = c.GetWithoutAck(100, 200, client::TimeUnit::kMilliseconds, &m);
      if (g.ok()) {
        g = ForEachRow(m, [&](const entry::Header& h, entry::EventType type, const entry::RowData& row) {
          auto image = [](const google::protobuf::RepeatedPtrField<entry::Column>& cols) {
            std::string text;
            for (const entry::Column& col : cols) text += " " + col.name() + "=" + (col.isnull() ? "NULL" : col.value());
            return text;
          };
          std::string line = h.schemaname() + "." + h.tablename();
          if (type == entry::INSERT) line += " INSERT after:" + image(row.aftercolumns());
          if (type == entry::UPDATE) {
            line += " UPDATE before:" + image(row.beforecolumns()) + " after:" + image(row.aftercolumns());
          }
          if (type == entry::DELETE) line += " DELETE before:" + image(row.beforecolumns());
          std::lock_guard<std::mutex> lock(mu);
          (h.tablename() == "t" ? t_rows : shadow_rows).push_back(line);
        });
      }
      if (g.ok() && m.batch_id() > 0) g = c.Ack(m.batch_id());
      if (!g.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        client_error = g;
        return;
      }
    }
  });
  Ledger ledger;
  RunFlow(GetParam().tool, db_, &ledger);
  const std::vector<std::string> expected = ledger.Lines();
  WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return t_rows.size() >= expected.size() || !client_error.ok();
  }, 60s);
  stop = true;
  reader.join();
  install.Stop(&out);
  ASSERT_TRUE(client_error.ok()) << client_error.ToString() << "\n" << ReadAll(install.server_log());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(t_rows, expected) << ReadAll(install.instance_log("example"));
  if (f == "broad") {
    EXPECT_FALSE(shadow_rows.empty());  // the shadow is in scope: its copy rows are delivered
  } else {
    EXPECT_TRUE(shadow_rows.empty()) << shadow_rows.size() << " rows of other tables, first " << shadow_rows[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Server, OnlineSchemaChangeServer,
                         ::testing::Values(FlowCase{Tool::kGhost, "MINIMAL", "narrow"},
                                           FlowCase{Tool::kPtOsc, "MINIMAL", "black"},
                                           FlowCase{Tool::kGhost, "NO_LOG", "broad"}),
                         CaseName);

// What tracking every table costs (docs/schema-history.md): 2,000 tables
// outside the filter. The first start's snapshot, the stored history's size,
// a restart's rebuild, and one replayed DDL (apply + append + the atomic
// rewrite of the stored history, as the parse thread does before the DDL goes
// on to the sink).
TEST(OnlineSchemaChangeCost, SnapshotAndReplayWith2000TablesOutsideTheScope) {
  std::string error;
  MariadbSandbox* sandbox = OnlineSchemaChangeSuite::Sandbox(&error);
  if (sandbox == nullptr) GTEST_SKIP() << error;
  constexpr int kTables = 2000;
  std::string sql = "SET GLOBAL binlog_row_metadata = 'MINIMAL'; DROP DATABASE IF EXISTS osc_bulk; "
                    "CREATE DATABASE osc_bulk; USE osc_bulk; CREATE TABLE t (id INT PRIMARY KEY, a INT);";
  for (int i = 0; i < kTables; ++i) {
    sql += "CREATE TABLE o" + std::to_string(i) + " (id BIGINT PRIMARY KEY, name VARCHAR(64), price DECIMAL(10,2), "
           "created DATETIME, flags INT UNSIGNED, note TEXT, state ENUM('a','b','c'), v DOUBLE);";
  }
  ASSERT_TRUE(sandbox->Sql(sql)) << sandbox->error();
  const std::string dir = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/online-schema-change-cost";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EventParserOptions o = ParserOptions(sandbox, dir + "/schema_history.json", [](std::string_view d, std::string_view t) {
    return d == "osc_bulk" && t == "t";
  });
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  ASSERT_NO_FATAL_FAILURE(FirstStart(o));
  const double snapshot_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const auto bytes = std::filesystem::file_size(o.schema_history_file);
  schema::HistoryLog log;
  ASSERT_TRUE(schema::LoadHistoryFile(o.schema_history_file, &log).ok());
  ASSERT_GE(log.tables.size(), static_cast<size_t>(kTables) + 1);

  auto t1 = Clock::now();
  schema::SchemaHistory h(o.schema_scope);
  ASSERT_TRUE(log.Rebuild({}, &h).ok());
  const double rebuild_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  constexpr int kDdl = 50;
  t1 = Clock::now();
  for (int i = 0; i < kDdl; ++i) {
    schema::HistoryRecord r;
    r.at = schema::BinlogPoint{o.start.journal_name, o.start.position + 1000 + static_cast<uint64_t>(i)};
    r.db = "osc_bulk";
    r.sql = "ALTER TABLE o" + std::to_string(i) + " ADD COLUMN extra INT";
    ASSERT_TRUE(h.ApplySql(r.sql, r.db).ok());
    ASSERT_TRUE(log.Append(r));
    ASSERT_TRUE(schema::SaveHistoryFile(o.schema_history_file, log).ok());
  }
  const double per_ddl_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count() / kDdl;
  t1 = Clock::now();
  const size_t json_bytes = log.ToJson().size();
  const double to_json_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  std::printf("[ cost ] %d tables outside the scope: first start with snapshot %.2f s, stored history %.1f KiB, "
              "rebuild %.1f ms, one replayed DDL (apply + store) %.2f ms, of which serialising %.2f ms (%zu bytes)\n",
              kTables, snapshot_s, static_cast<double>(bytes) / 1024, rebuild_ms, per_ddl_ms, to_json_ms, json_bytes);
  ASSERT_TRUE(sandbox->Sql("DROP DATABASE osc_bulk")) << sandbox->error();
}

}  // namespace
}  // namespace canal::testing
