// Randomized DDL against a real MariaDB: a generator
// (support/ddl_generator.h) makes hundreds of statements over several tables --
// ADD/DROP/MODIFY/CHANGE/RENAME COLUMN with FIRST/AFTER, several clauses in one
// ALTER, ADD/DROP PRIMARY KEY, ALTER ... SET/DROP DEFAULT, CONVERT TO CHARACTER
// SET, RENAME TABLE swaps, DROP TABLE and re-create (plain or LIKE) -- with
// INSERT/UPDATE/DELETE between them that fill every column with a random value
// of its type (signed/unsigned ints, decimals, doubles, text in utf8mb4, latin1
// and CJK charsets, blobs, temporals, ENUM/SET, BIT, NULL).
//  - After every statement the server accepted, the history's column list
//    equals information_schema's (the server is the oracle for the parser).
//  - Two sandboxes, one with binlog_row_metadata=FULL and one with MINIMAL,
//    run the same generated SQL; every row the parser delivers from the
//    MINIMAL one (names from the history, values, before and after images)
//    equals the FULL one's (names from the binlog).
// Statements run with sql_mode='' so a type change over existing rows converts
// them (as a non-strict production server does) rather than refusing the ALTER.
// Fixed seeds here; scripts/schema-history-soak.sh runs longer
// (CANAL_SCHEMA_RANDOM_SEEDS / _STATEMENTS).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/event_parser.h"
#include "canal/schema/schema_history.h"
#include "support/ddl_generator.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/row_lines.h"
#include "support/sandbox_parser.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kPort = TestPort("schema_history", 1);      // MINIMAL
constexpr uint16_t kFullPort = TestPort("schema_lag", 2);  // FULL

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

class SchemaHistoryRandom : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = StartMinimalSuiteSandbox(kPort, &setup_error_);
  }
  // The FULL sandbox, started by the one test that needs it (ctest runs each
  // test in a process of its own: the oracle test does not pay for it).
  static void StartFull() {
    if (full_ != nullptr || !full_error_.empty()) return;
    SandboxOptions f;
    f.port = kFullPort;
    f.binlog_row_metadata = "FULL";
    full_ = StartSuiteSandboxOf<MariadbSandbox>(std::move(f), "FULL sandbox", &full_error_);
  }
  static void TearDownTestSuite() {
    full_.reset();
    sandbox_.reset();
  }
  void SetUp() override { CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_); }

  static std::pair<std::string, uint64_t> MasterStatus(MariadbSandbox& server) {
    std::pair<std::string, uint64_t> end{"", 4};
    EXPECT_TRUE(PrimaryEnd(server, &end.first, &end.second)) << server.error();
    return end;
  }

  // information_schema's column lists of `db`, one line per table.
  static std::string ServerColumns(MariadbSandbox& server, const std::string& db) {
    std::string out;
    EXPECT_TRUE(server.Sql(
        "SELECT CONCAT(TABLE_NAME, ': ', GROUP_CONCAT(CONCAT_WS(' ', COLUMN_NAME, DATA_TYPE, "
        "IF(COLUMN_TYPE LIKE '%unsigned%', 'unsigned', 'signed'), IFNULL(CHARACTER_SET_NAME, '-'), "
        "IF(COLUMN_KEY = 'PRI', 'key', '-')) ORDER BY ORDINAL_POSITION SEPARATOR ', ')) FROM "
        "information_schema.COLUMNS WHERE TABLE_SCHEMA = '" + db + "' GROUP BY TABLE_NAME ORDER BY TABLE_NAME",
        &out))
        << server.error();
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

  // Statements run non-strict (see the top) with the client's utf8mb4.
  static bool Run(MariadbSandbox& server, const std::string& db, const std::string& sql) {
    return server.Sql("SET SESSION sql_mode = ''; USE " + db + ";\n" + sql);
  }

  // Runs `statements` generated DDL in `db` with row changes after each,
  // checking the history against information_schema after each DDL when
  // `check_oracle`.
  static void RunSequence(MariadbSandbox& server, uint32_t seed, int statements, const std::string& db,
                          bool check_oracle) {
    DdlGenerator gen(seed);
    ASSERT_TRUE(server.Sql("DROP DATABASE IF EXISTS " + db + "; CREATE DATABASE " + db)) << server.error();
    schema::SchemaHistory history;
    history.PutDatabase(db, "latin1");
    for (const std::string& sql : gen.Setup()) {
      ASSERT_TRUE(Run(server, db, sql)) << server.error();
      ASSERT_TRUE(history.ApplySql(sql, db).ok());
    }
    int accepted = 0;
    for (int i = 0; i < statements; ++i) {
      const std::string sql = gen.Next();
      if (Run(server, db, sql)) {  // else the server refused it: not in the binlog
        gen.Accept();
        ++accepted;
        const Status s = history.ApplySql(sql, db);
        ASSERT_TRUE(s.ok()) << "seed " << seed << " statement " << i << ": " << sql << "\n" << s.ToString();
        if (check_oracle) {
          const std::string columns = ServerColumns(server, db);
          ASSERT_NE(columns.find("id int signed"), std::string::npos) << columns;  // the query's format holds
          ASSERT_EQ(HistoryColumns(history, db), columns) << "seed " << seed << " after statement " << i << ": " << sql;
        }
      }
      const std::string rows = gen.RowChanges();
      ASSERT_TRUE(Run(server, db, rows)) << "seed " << seed << " after statement " << i << ": " << sql << "\n"
                                 << server.error();
    }
    std::printf("[ random ] seed %u, %s: %d of %d statements accepted by the server, %d inserts, %d updates, "
                "%d deletes%s\n",
                seed, db.c_str(), accepted, statements, gen.inserts(), gen.updates(), gen.deletes(),
                check_oracle ? ", history == information_schema after each" : "");
    EXPECT_GT(accepted, statements / 2);
    EXPECT_GT(gen.updates(), 0);
    EXPECT_GT(gen.deletes(), 0);
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_, full_;
  static inline std::string setup_error_, full_error_;
};

TEST_F(SchemaHistoryRandom, HistoryEqualsInformationSchemaAfterEveryDdl) {
  const int seeds = EnvInt("CANAL_SCHEMA_RANDOM_SEEDS", 2);
  const int statements = EnvInt("CANAL_SCHEMA_RANDOM_STATEMENTS", 150);
  for (int s = 0; s < seeds; ++s) RunSequence(*sandbox_, 1000 + s, statements, "oracle" + std::to_string(s), true);
}

// One parser per sandbox, each with its own history.
parser::EventParserOptions ParserOptions(uint16_t port, const std::string& dir) {
  parser::EventParserOptions o = SandboxParserOptions("random", port);
  o.schema_history_file = dir + "/schema_history.json";
  o.schema_scope = [](std::string_view db, std::string_view) { return db == "rdb"; };
  return o;
}

TEST_F(SchemaHistoryRandom, MinimalRowsNamedByTheHistoryEqualFullRows) {
  StartFull();
  CANAL_REQUIRE_SANDBOX(full_, full_error_);
  const int statements = EnvInt("CANAL_SCHEMA_RANDOM_STATEMENTS", 150);
  // One seed in CI (the oracle test runs two); the soak script runs more.
  const int seeds = EnvInt("CANAL_SCHEMA_RANDOM_SEEDS", 2) / 2;
  for (uint32_t seed = 7; seed < 7 + static_cast<uint32_t>(std::max(seeds, 1)); ++seed) {
    const std::string dir = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/schema-history-random";
    std::filesystem::remove_all(dir);
    MariadbSandbox* servers[2] = {full_.get(), sandbox_.get()};
    parser::EventParserOptions options[2] = {ParserOptions(kFullPort, dir + "/full"),
                                             ParserOptions(kPort, dir + "/minimal")};
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(servers[i]->Sql("DROP DATABASE IF EXISTS rdb; DROP DATABASE IF EXISTS rend")) << servers[i]->error();
      std::tie(options[i].start.journal_name, options[i].start.position) = MasterStatus(*servers[i]);
      RowLines none;
      parser::EventParser p(options[i], &none);  // the snapshot, before the sequence
      p.Start();
      ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
      p.Stop();
      ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
      ASSERT_NO_FATAL_FAILURE(RunSequence(*servers[i], seed, statements, "rdb", false));
      ASSERT_TRUE(servers[i]->Sql("CREATE DATABASE rend; CREATE TABLE rend.done (a INT);"
                                  "INSERT INTO rend.done VALUES (1)"))
          << servers[i]->error();
    }

    // Both parsers catch up at once.
    RowLines rec[2];
    std::unique_ptr<parser::EventParser> parsers[2];
    for (int i = 0; i < 2; ++i) {
      parsers[i] = std::make_unique<parser::EventParser>(options[i], &rec[i]);
      parsers[i]->Start();
    }
    for (int i = 0; i < 2; ++i) {
      WaitFor([&] {
        std::lock_guard<std::mutex> lock(rec[i].mu);
        return (!rec[i].rows.empty() && rec[i].rows.back().rfind("rend.done", 0) == 0) || !parsers[i]->running();
      }, 120s);
      parsers[i]->Stop();
      ASSERT_TRUE(parsers[i]->fatal_error().ok()) << parsers[i]->fatal_error().ToString();
    }
    // The end marker is outside the scope (positional names on MINIMAL): rdb only.
    std::vector<std::string> full, minimal;
    for (const std::string& r : rec[0].rows) {
      if (r.rfind("rdb.", 0) == 0) full.push_back(r);
    }
    for (const std::string& r : rec[1].rows) {
      if (r.rfind("rdb.", 0) == 0) minimal.push_back(r);
    }
    ASSERT_EQ(rec[0].rows.back().rfind("rend.done", 0), 0u);
    ASSERT_EQ(rec[1].rows.back().rfind("rend.done", 0), 0u);
    ASSERT_FALSE(full.empty());
    ASSERT_EQ(full.size(), minimal.size());
    size_t updates = 0, deletes = 0;
    for (size_t i = 0; i < full.size(); ++i) {
      ASSERT_EQ(minimal[i], full[i]) << "seed " << seed << ", row " << i;
      updates += full[i].find(" UPDATE before:") != std::string::npos;
      deletes += full[i].find(" DELETE before:") != std::string::npos;
    }
    EXPECT_GT(updates, 0u);
    EXPECT_GT(deletes, 0u);
    std::printf("[ random ] seed %u: %zu rows (%zu updates, %zu deletes) from the MINIMAL sandbox, named by the "
                "history, equal the FULL sandbox's, names and values\n",
                seed, full.size(), updates, deletes);
  }
}

}  // namespace
}  // namespace canal::testing
