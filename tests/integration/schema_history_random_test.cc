// Randomized DDL against a real MariaDB (issue 10): a generator makes hundreds
// of column-changing statements over several tables, with rows between them.
//  - After every statement the server accepted, the history's column list
//    equals information_schema's (the server is the oracle for the parser).
//  - The same sequence runs twice, once with binlog_row_metadata=FULL and once
//    with MINIMAL (in two databases); the parser's rows from the MINIMAL half,
//    named by the history, equal those of the FULL half, named by the binlog.
// Fixed seeds here; CANAL_SCHEMA_RANDOM_SEEDS / _STATEMENTS run longer.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/event_parser.h"
#include "canal/schema/schema_history.h"
#include "support/mariadb_sandbox.h"
#include "support/load_table.h"
#include "support/row_lines.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kPort = 14602;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

// The generator's own idea of each table: enough to write valid statements.
struct ModelTable {
  std::string name;
  std::vector<std::string> columns;  // columns[0] is the key "id"
};

class DdlGenerator {
 public:
  explicit DdlGenerator(uint32_t seed) : rng_(seed) {
    for (int i = 0; i < 4; ++i) tables_.push_back({"t" + std::to_string(i), {"id"}});
  }

  std::vector<std::string> Setup() {
    std::vector<std::string> out;
    for (const auto& t : tables_) {
      out.push_back("CREATE TABLE " + t.name + " (id INT NOT NULL PRIMARY KEY) DEFAULT CHARSET=latin1");
    }
    return out;
  }

  // One statement; the model changes only when Accept() is called.
  std::string Next() {
    pending_ = tables_;
    ModelTable& t = pending_[Pick(pending_.size())];
    const int kind = static_cast<int>(Pick(100));
    if (kind < 8) return Comment() + RenameSwap();
    if (kind < 12) return Comment() + "ALTER TABLE `" + t.name + "` CONVERT TO CHARACTER SET " + Charset();
    if (kind < 16) return "ALTER TABLE " + t.name + " DEFAULT CHARSET = " + Charset();
    std::string sql = Comment() + "ALTER TABLE `" + t.name + "` ";
    const size_t clauses = 1 + Pick(3);
    for (size_t i = 0; i < clauses; ++i) {
      if (i > 0) sql += ", ";
      sql += Clause(&t);
    }
    return sql;
  }
  void Accept() { tables_ = pending_; }
  const std::vector<ModelTable>& tables() const { return tables_; }
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

 private:
  std::string Comment() {
    switch (Pick(5)) {
      case 0: return "/* gen */ ";
      case 1: return "-- gen\n";
      case 2: return "# gen\n";
      default: return "";
    }
  }
  std::string Charset() {
    static const char* kCharsets[] = {"latin1", "utf8mb4", "gbk", "big5", "cp1251", "sjis"};
    return kCharsets[Pick(6)];
  }
  std::string Type() {
    switch (Pick(14)) {
      case 0: return "INT";
      case 1: return "BIGINT UNSIGNED";
      case 2: return "VARCHAR(" + std::to_string(1 + Pick(60)) + ")";
      case 3: return "VARCHAR(10) CHARACTER SET " + Charset();
      case 4: return "TEXT";
      case 5: return "DECIMAL(" + std::to_string(5 + Pick(10)) + ",2)";
      case 6: return "ENUM('a','b','it''s')";
      case 7: return "DATETIME(3)";
      case 8: return "TINYINT";
      case 9: return "DOUBLE";
      case 10: return "CHAR(3) COLLATE utf8mb4_bin";
      case 11: return "BLOB";
      case 12: return "SET('x','y')";
      default: return "SMALLINT UNSIGNED ZEROFILL";
    }
  }
  std::string Position(const ModelTable& t, std::vector<std::string>* cols, const std::string& col) {
    const size_t p = Pick(4);
    if (p == 0 && cols->size() > 1) {
      cols->insert(cols->begin() + 1, col);  // never before the key: keeps the INSERTs simple
      return " AFTER id";
    }
    if (p == 1 && cols->size() > 1) {
      const size_t after = Pick(cols->size());
      const std::string name = (*cols)[after];
      cols->insert(cols->begin() + static_cast<long>(after) + 1, col);
      return " AFTER `" + name + "`";
    }
    (void)t;
    cols->push_back(col);
    return "";
  }
  std::string Clause(ModelTable* t) {
    const size_t kind = Pick(10);
    std::vector<std::string>& cols = t->columns;
    if (kind < 4 || cols.size() < 3) {
      const std::string col = "c" + std::to_string(next_column_++);
      std::string sql = std::string(Pick(2) ? "ADD COLUMN " : "ADD ") + col + " " + Type();
      return sql + Position(*t, &cols, col);
    }
    const size_t victim = 1 + Pick(cols.size() - 1);
    const std::string name = cols[victim];
    if (kind < 6) {
      cols.erase(cols.begin() + static_cast<long>(victim));
      return "DROP COLUMN `" + name + "`";
    }
    if (kind < 8) {
      cols.erase(cols.begin() + static_cast<long>(victim));
      return "MODIFY " + name + " " + Type() + Position(*t, &cols, name);
    }
    const std::string renamed = "r" + std::to_string(next_column_++);
    cols[victim] = renamed;
    if (kind < 9) return "RENAME COLUMN " + name + " TO " + renamed;
    cols.erase(cols.begin() + static_cast<long>(victim));
    return "CHANGE " + name + " " + renamed + " " + Type() + Position(*t, &cols, renamed);
  }
  std::string RenameSwap() {
    const size_t a = Pick(pending_.size());
    size_t b = Pick(pending_.size());
    if (a == b) b = (a + 1) % pending_.size();
    std::swap(pending_[a].columns, pending_[b].columns);
    return "RENAME TABLE " + pending_[a].name + " TO tmp_swap, " + pending_[b].name + " TO " + pending_[a].name +
           ", tmp_swap TO " + pending_[b].name;
  }

  std::mt19937 rng_;
  std::vector<ModelTable> tables_, pending_;
  int next_column_ = 0;
};

class SchemaHistoryRandom : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    SandboxOptions o;
    o.port = kPort;
    o.binlog_row_metadata = "MINIMAL";
    sandbox_ = StartSuiteSandboxOf<MariadbSandbox>(std::move(o), "MINIMAL sandbox", &setup_error_);
  }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override { CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_); }

  static std::pair<std::string, uint64_t> MasterStatus() {
    std::pair<std::string, uint64_t> end{"", 4};
    EXPECT_TRUE(PrimaryEnd(*sandbox_, &end.first, &end.second)) << sandbox_->error();
    return end;
  }

  // information_schema's column lists of `db`, one line per table.
  static std::string ServerColumns(const std::string& db) {
    std::string out;
    EXPECT_TRUE(sandbox_->Sql(
        "SELECT CONCAT(TABLE_NAME, ': ', GROUP_CONCAT(CONCAT_WS(' ', COLUMN_NAME, DATA_TYPE, "
        "IF(COLUMN_TYPE LIKE '%unsigned%', 'unsigned', 'signed'), IFNULL(CHARACTER_SET_NAME, '-'), "
        "IF(COLUMN_KEY = 'PRI', 'key', '-')) ORDER BY ORDINAL_POSITION SEPARATOR ', ')) FROM "
        "information_schema.COLUMNS WHERE TABLE_SCHEMA = '" + db + "' GROUP BY TABLE_NAME ORDER BY TABLE_NAME",
        &out))
        << sandbox_->error();
    return out;
  }
  static std::string HistoryColumns(const schema::SchemaHistory& h, const std::string& db) {
    std::string out;
    for (const auto& [key, t] : h.tables()) {
      if (key.first != db) continue;
      out += t.name + ": ";
      for (size_t i = 0; i < t.columns.size(); ++i) {
        const schema::Column& c = t.columns[i];
        if (i > 0) out += ", ";
        const std::string cs = c.charset.empty() || c.charset == "binary" ? "-" : c.charset;
        out += c.name + " " + c.type + " " + (c.is_unsigned ? "unsigned" : "signed") + " " + cs + " " +
               (c.is_key ? "key" : "-");
      }
      out += "\n";
    }
    return out;
  }

  // Runs `statements` generated DDL (and a row after each) in `db`, checking
  // the history against information_schema after each; returns the statements.
  static void RunSequence(uint32_t seed, int statements, const std::string& db, bool check_oracle) {
    DdlGenerator gen(seed);
    ASSERT_TRUE(sandbox_->Sql("DROP DATABASE IF EXISTS " + db + "; CREATE DATABASE " + db)) << sandbox_->error();
    schema::SchemaHistory history;
    history.PutDatabase(db, "latin1");
    for (const std::string& sql : gen.Setup()) {
      ASSERT_TRUE(sandbox_->Sql("USE " + db + "; " + sql)) << sandbox_->error();
      ASSERT_TRUE(history.ApplySql(sql, db).ok());
    }
    int accepted = 0, row = 0;
    for (int i = 0; i < statements; ++i) {
      const std::string sql = gen.Next();
      if (!sandbox_->Sql("USE " + db + "; " + sql)) continue;  // the server refused it: not in the binlog
      gen.Accept();
      ++accepted;
      const Status s = history.ApplySql(sql, db);
      ASSERT_TRUE(s.ok()) << "seed " << seed << " statement " << i << ": " << sql << "\n" << s.ToString();
      if (check_oracle) {
        ASSERT_NE(ServerColumns(db).find("t0: id int signed - key"), std::string::npos) << ServerColumns(db);
        ASSERT_EQ(HistoryColumns(history, db), ServerColumns(db))
            << "seed " << seed << " after statement " << i << ": " << sql;
      }
      const auto& t = gen.tables()[gen.Pick(gen.tables().size())];
      ASSERT_TRUE(sandbox_->Sql("USE " + db + "; INSERT INTO " + t.name + " (id) VALUES (" + std::to_string(++row) +
                                ")"))
          << sandbox_->error();
    }
    std::printf("[ random ] seed %u, %s: %d of %d statements accepted by the server%s\n", seed, db.c_str(),
                accepted, statements, check_oracle ? ", history == information_schema after each" : "");
    EXPECT_GT(accepted, statements / 2);
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
};

TEST_F(SchemaHistoryRandom, HistoryEqualsInformationSchemaAfterEveryDdl) {
  const int seeds = EnvInt("CANAL_SCHEMA_RANDOM_SEEDS", 2);
  const int statements = EnvInt("CANAL_SCHEMA_RANDOM_STATEMENTS", 150);
  for (int s = 0; s < seeds; ++s) RunSequence(1000 + s, statements, "oracle" + std::to_string(s), true);
}

TEST_F(SchemaHistoryRandom, MinimalRowsNamedByTheHistoryEqualFullRows) {
  const int statements = EnvInt("CANAL_SCHEMA_RANDOM_STATEMENTS", 150);
  const std::string dir = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/schema-history-random";
  std::filesystem::remove_all(dir);
  parser::EventParserOptions o;
  o.destination = "random";
  o.master.host = "127.0.0.1";
  o.master.port = kPort;
  o.master.user = MariadbSandbox::kUser;
  o.master.password = MariadbSandbox::kPassword;
  o.heartbeat_period_ms = 1000;
  o.reconnect_max_ms = 1000;
  o.schema_history_file = dir + "/schema_history.json";
  o.schema_scope = [](std::string_view db, std::string_view) { return db == "rfull" || db == "rmin"; };
  std::tie(o.start.journal_name, o.start.position) = MasterStatus();
  {
    RowLines none;
    parser::EventParser p(o, &none);  // the snapshot, before the sequences
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
    p.Stop();
    ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  }
  ASSERT_TRUE(sandbox_->Sql("SET GLOBAL binlog_row_metadata = FULL")) << sandbox_->error();
  RunSequence(7, statements, "rfull", false);
  ASSERT_TRUE(sandbox_->Sql("SET GLOBAL binlog_row_metadata = MINIMAL")) << sandbox_->error();
  RunSequence(7, statements, "rmin", false);
  ASSERT_TRUE(sandbox_->Sql("CREATE DATABASE IF NOT EXISTS rend; CREATE TABLE IF NOT EXISTS rend.done (a INT);"
                            "INSERT INTO rend.done VALUES (1)"));

  RowLines rec;
  parser::EventParser p(o, &rec);
  p.Start();
  WaitFor([&] {
    std::lock_guard<std::mutex> lock(rec.mu);
    return (!rec.rows.empty() && rec.rows.back().rfind("rend.done", 0) == 0) || !p.running();
  }, 120s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  std::vector<std::string> full, minimal;
  for (const std::string& r : rec.rows) {
    if (r.rfind("rfull.", 0) == 0) full.push_back(r.substr(6));
    if (r.rfind("rmin.", 0) == 0) minimal.push_back(r.substr(5));
  }
  ASSERT_FALSE(full.empty());
  ASSERT_EQ(full.size(), minimal.size());
  for (size_t i = 0; i < full.size(); ++i) ASSERT_EQ(minimal[i], full[i]) << "row " << i;
  std::printf("[ random ] %zu rows from MINIMAL binlogs named by the history equal the FULL ones\n", full.size());
}

}  // namespace
}  // namespace canal::testing
