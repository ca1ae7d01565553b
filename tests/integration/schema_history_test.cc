// The schema history against a MariaDB with binlog_row_metadata=MINIMAL (issue
// 10): rows carry the names their table had when they were written, in
// catch-up across ALTERs that swap or add columns, live, and when a table
// outside the filter changes; a history that disagrees with the binlog stops
// the destination with the command that fixes it.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/event_parser.h"
#include "canal/schema/history_log.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/row_lines.h"
#include "support/sandbox_parser.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using parser::EventParser;
using parser::EventParserOptions;

constexpr uint16_t kPort = TestPort("schema_history");

class SchemaHistoryLive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = StartMinimalSuiteSandbox(kPort, &setup_error_);
  }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    db_ = "sh_" + std::to_string(++counter_);
    dir_ = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/schema-history-" + name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(sandbox_->Sql("DROP DATABASE IF EXISTS " + db_ + "; CREATE DATABASE " + db_ + "; USE " + db_ +
                              "; CREATE TABLE t (id INT PRIMARY KEY, x INT, c INT); CREATE TABLE other (a INT)"))
        << sandbox_->error();
  }

  EventParserOptions Options() {
    EventParserOptions o = SandboxParserOptions("test", kPort);
    o.schema_history_file = dir_ + "/schema_history.json";
    const std::string db = db_;
    // canal.instance.filter.regex = <db>\.t
    o.schema_scope = [db](std::string_view d, std::string_view t) { return d == db && t == "t"; };
    const auto [file, pos] = MasterStatus();
    o.start.journal_name = file;
    o.start.position = pos;
    return o;
  }

  static std::pair<std::string, uint64_t> MasterStatus() {
    std::pair<std::string, uint64_t> end{"", 4};
    EXPECT_TRUE(PrimaryEnd(*sandbox_, &end.first, &end.second)) << sandbox_->error();
    return end;
  }
  bool Sql(const std::string& sql) {
    const bool ok = sandbox_->Sql("USE " + (db_.empty() ? std::string("mysql") : db_) + "; " + sql);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }

  // A first start and stop: the parser takes and stores the snapshot.
  static void TakeSnapshot(const EventParserOptions& o) {
    RowLines first;
    EventParser p(o, &first);
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
    p.Stop();
    ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  }

  // The three cases of the issue, one statement list.
  void WriteAcrossDdl() {
    ASSERT_TRUE(Sql("INSERT INTO t (id, x, c) VALUES (1, 100, 1000)"));
    ASSERT_TRUE(Sql("/* swap */ ALTER TABLE t MODIFY c INT AFTER id"));
    ASSERT_TRUE(Sql("INSERT INTO t (id, x, c) VALUES (2, 200, 2000)"));
    ASSERT_TRUE(Sql("ALTER TABLE t ADD COLUMN n VARCHAR(5) DEFAULT 'z' FIRST"));
    ASSERT_TRUE(Sql("INSERT INTO t (id, x, c, n) VALUES (3, 300, 3000, 'q')"));
    ASSERT_TRUE(Sql("ALTER TABLE other ADD COLUMN b INT, ADD COLUMN d VARCHAR(3)"));
    ASSERT_TRUE(Sql("INSERT INTO other VALUES (7, 8, 'x')"));
    ASSERT_TRUE(Sql("INSERT INTO t (id, x, c) VALUES (4, 400, 4000)"));
  }

  void ExpectRightNames(RowLines* rec) {
    const std::vector<std::string> expected = {
        db_ + ".t INSERT after: id=1 x=100 c=1000",
        db_ + ".t INSERT after: id=2 c=2000 x=200",
        db_ + ".t INSERT after: n=q id=3 c=3000 x=300",
        db_ + ".t INSERT after: n=z id=4 c=4000 x=400",
    };
    EXPECT_EQ(rec->Of(db_ + ".t"), expected);
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
  static inline int counter_ = 0;
  std::string db_, dir_;
};

// Catch-up: everything is written while no parser runs, then read at once.
TEST_F(SchemaHistoryLive, CatchUpAcrossSwapAddAndAnExcludedTable) {
  EventParserOptions o = Options();
  ASSERT_NO_FATAL_FAILURE(TakeSnapshot(o));
  ASSERT_TRUE(std::filesystem::exists(o.schema_history_file));
  WriteAcrossDdl();
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  WaitFor([&] { return rec.Of(db_ + ".t").size() >= 4 || !p.running(); }, 60s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  ExpectRightNames(&rec);

  // The stored history holds every DDL (the excluded table's too: every
  // table is tracked), each at its position.
  schema::HistoryLog log;
  ASSERT_TRUE(schema::LoadHistoryFile(o.schema_history_file, &log).ok());
  ASSERT_EQ(log.records.size(), 3u);
  EXPECT_NE(log.records[0].sql.find("MODIFY c INT AFTER id"), std::string::npos);

  // A restart from the same start position rebuilds the history as of there.
  RowLines again;
  EventParser p2(o, &again);
  p2.Start();
  WaitFor([&] { return again.Of(db_ + ".t").size() >= 4 || !p2.running(); }, 60s);
  p2.Stop();
  ASSERT_TRUE(p2.fatal_error().ok()) << p2.fatal_error().ToString();
  ExpectRightNames(&again);

  // Compaction: a start after everything, with compaction due and no expiry,
  // folds both records into the snapshot; names stay right.
  EventParserOptions later = o;
  std::tie(later.start.journal_name, later.start.position) = MasterStatus();
  later.schema_compact_interval_s = 1;
  later.schema_compact_expire_s = 0;
  ASSERT_TRUE(Sql("INSERT INTO t (id, x, c) VALUES (5, 500, 5000)"));
  const std::string history_copy = o.schema_history_file + ".before-compaction";
  std::filesystem::copy_file(o.schema_history_file, history_copy);
  std::this_thread::sleep_for(1100ms);  // the records' timestamps must be in the past
  RowLines after;
  EventParser p3(later, &after);
  p3.Start();
  WaitFor([&] { return !after.Of(db_ + ".t").empty() || !p3.running(); }, 60s);
  p3.Stop();
  ASSERT_TRUE(p3.fatal_error().ok()) << p3.fatal_error().ToString();
  EXPECT_EQ(after.Of(db_ + ".t"), (std::vector<std::string>{db_ + ".t INSERT after: n=z id=5 c=5000 x=500"}));
  schema::HistoryLog compacted;
  ASSERT_TRUE(schema::LoadHistoryFile(o.schema_history_file, &compacted).ok());
  EXPECT_TRUE(compacted.records.empty());
  EXPECT_GT(compacted.compacted_at_ms, 0);
  std::filesystem::rename(history_copy, o.schema_history_file);  // for the tool below

  // canal-binlog decode --schema names the same binlog's columns offline.
  const std::string tool = std::string(CANAL_BINARY_DIR) + "/bin/canal-binlog";
  int rc = 0;
  const std::string out = RunShell(tool + " decode --threads 0 --schema " + o.schema_history_file + " " +
                                       sandbox_->binlog_dir() + "/" + o.start.journal_name + " 2>&1",
                                   &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"after\":{\"id\":\"2\",\"c\":\"2000\",\"x\":\"200\"}"), std::string::npos) << out;
  EXPECT_NE(out.find("\"after\":{\"n\":\"q\",\"id\":\"3\""), std::string::npos) << out;
  // Without it the same rows have positional names only.
  const std::string bare =
      RunShell(tool + " decode --threads 0 " + sandbox_->binlog_dir() + "/" + o.start.journal_name + " 2>&1", &rc);
  EXPECT_EQ(bare.find("\"c\":\"2000\""), std::string::npos);
}

// Live: the parser streams while the DDL happens.
TEST_F(SchemaHistoryLive, LiveAcrossSwapAddAndAnExcludedTable) {
  EventParserOptions o = Options();
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
  WriteAcrossDdl();
  WaitFor([&] { return rec.Of(db_ + ".t").size() >= 4 || !p.running(); }, 60s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  ExpectRightNames(&rec);
}

// Non-UTF-8 text in MINIMAL binlogs: the history knows each column's charset,
// so values reach clients as UTF-8.
TEST_F(SchemaHistoryLive, TextInEveryCharsetArrivesAsUtf8) {
  ASSERT_TRUE(Sql("CREATE TABLE cs (id INT PRIMARY KEY, g VARCHAR(10) CHARACTER SET gbk, "
                  "b VARCHAR(10) CHARACTER SET big5, s VARCHAR(10) CHARACTER SET sjis, "
                  "r VARCHAR(10) CHARACTER SET cp1251, l VARCHAR(10) CHARACTER SET latin1, "
                  "e ENUM('été','hiver') CHARACTER SET latin1)"));
  EventParserOptions o = Options();
  const std::string db = db_;
  o.schema_scope = [db](std::string_view d, std::string_view) { return d == db; };
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
  ASSERT_TRUE(Sql("SET NAMES utf8mb4; INSERT INTO cs VALUES (1, '你好', '你好', 'あい', 'Привет', 'café', 'été')"));
  WaitFor([&] { return rec.Of(db_ + ".cs").size() >= 1 || !p.running(); }, 60s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  EXPECT_EQ(rec.Of(db_ + ".cs"),
            (std::vector<std::string>{db_ + ".cs INSERT after: id=1 g=你好 b=你好 s=あい r=Привет l=café e=1"}));
}

// A history that disagrees with the binlog stops with table, position, both
// sides and the command that fixes it.
TEST_F(SchemaHistoryLive, MismatchStopsWithTheFix) {
  EventParserOptions o = Options();
  ASSERT_NO_FATAL_FAILURE(TakeSnapshot(o));
  // Damage the stored snapshot: drop a column of t.
  schema::HistoryLog log;
  ASSERT_TRUE(schema::LoadHistoryFile(o.schema_history_file, &log).ok());
  for (auto& t : log.tables) {
    if (t.name == "t") t.columns.pop_back();
  }
  ASSERT_TRUE(schema::SaveHistoryFile(o.schema_history_file, log).ok());
  ASSERT_TRUE(Sql("INSERT INTO t (id, x, c) VALUES (1, 100, 1000)"));
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  WaitFor([&] { return !p.running(); }, 60s);
  p.Stop();
  const std::string err = p.fatal_error().ToString();
  std::printf("[ stop error ] %s\n", err.c_str());
  EXPECT_TRUE(rec.Of(db_ + ".t").empty());
  EXPECT_NE(err.find("`" + db_ + "`.`t`"), std::string::npos) << err;
  EXPECT_NE(err.find("TABLE_MAP has 3"), std::string::npos) << err;
  EXPECT_NE(err.find("rebuild-schema-history test"), std::string::npos) << err;
}

// With FULL metadata a table in scope that the history lacks (the snapshot
// could not see it) is learned from the TABLE_MAP, not a reason to stop; later
// MINIMAL rows of it are named from what was learned.
TEST_F(SchemaHistoryLive, FullMetadataTeachesATableTheSnapshotMissed) {
  EventParserOptions o = Options();
  ASSERT_NO_FATAL_FAILURE(TakeSnapshot(o));
  schema::HistoryLog log;
  ASSERT_TRUE(schema::LoadHistoryFile(o.schema_history_file, &log).ok());
  std::erase_if(log.tables, [](const schema::TableSchema& t) { return t.name == "t"; });
  ASSERT_TRUE(schema::SaveHistoryFile(o.schema_history_file, log).ok());
  ASSERT_TRUE(sandbox_->Sql("SET GLOBAL binlog_row_metadata = FULL")) << sandbox_->error();
  const bool full_row = Sql("INSERT INTO t (id, x, c) VALUES (1, 100, 1000)");
  ASSERT_TRUE(sandbox_->Sql("SET GLOBAL binlog_row_metadata = MINIMAL")) << sandbox_->error();
  ASSERT_TRUE(full_row);
  ASSERT_TRUE(Sql("INSERT INTO t (id, x, c) VALUES (2, 200, 2000)"));
  RowLines rec;
  EventParser p(o, &rec);
  p.Start();
  WaitFor([&] { return rec.Of(db_ + ".t").size() >= 2 || !p.running(); }, 60s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  EXPECT_EQ(rec.Of(db_ + ".t"), (std::vector<std::string>{db_ + ".t INSERT after: id=1 x=100 c=1000",
                                                          db_ + ".t INSERT after: id=2 x=200 c=2000"}));
}

}  // namespace
}  // namespace canal::testing
