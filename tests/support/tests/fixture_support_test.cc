// Tests of the fixture-expectation loaders in tests/support: the README parser,
// the mariadb-binlog -vv parser and value comparison, and the zalora JSON loader.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "support/decoded_vv.h"
#include "support/fixture_readme.h"
#include "support/fixtures.h"
#include "support/vv_format.h"
#include "support/zalora_expected.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using binlog::ColumnInfo;
using binlog::ColumnType;
using binlog::ColumnValue;
using Kind = binlog::ColumnValue::Kind;

// A fresh empty folder under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("canal_fixture_support_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }
  void Write(const std::string& rel, const std::string& bytes) const {
    fs::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel, std::ios::binary) << bytes;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// Sets an environment variable for the scope, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_old_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_old_ = false;
  std::string old_;
};

// ---------------------------------------------------------------- fixtures.h

TEST(SharedDirTest, EnvironmentOverridesTheCompiledPath) {
  TempDir dir;
  ScopedEnv env("CANAL_SHARED_DIR", dir.path().c_str());
  EXPECT_EQ(SharedDir(), dir.path());
  EXPECT_EQ(FixturePath("a/b.bin"), dir.path() + "/fixtures/binlog/a/b.bin");
  EXPECT_FALSE(FixturesAvailable());
  dir.Write("fixtures/binlog/README.md", "x");
  EXPECT_TRUE(FixturesAvailable());
}

TEST(SharedDirTest, MissingFolderGivesEmptyPaths) {
  ScopedEnv env("CANAL_SHARED_DIR", "/nonexistent/canal/shared/dir");
  EXPECT_EQ(SharedDir(), "");
  EXPECT_EQ(FixturePath("x"), "");
  EXPECT_FALSE(FixturesAvailable());
}

TEST(ReadFileToStringTest, MissingFileIsAnIOError) {
  std::string s;
  Status st = ReadFileToString("/nonexistent/canal/file", &s);
  EXPECT_EQ(st.code(), Status::Code::kIOError);
  EXPECT_NE(st.message().find("/nonexistent/canal/file"), std::string_view::npos);
}

// ---------------------------------------------------------- fixture_readme.h

const FixtureFileExpectation* Find(const std::vector<FixtureFileExpectation>& v, const std::string& path) {
  for (const FixtureFileExpectation& e : v) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

uint64_t Count(const EventCounts& c, uint8_t code) {
  auto it = c.find(code);
  return it == c.end() ? 0 : it->second;
}

TEST(FixtureReadmeTest, LoadsEveryBinlogOfTheRealReadme) {
  CANAL_REQUIRE_FIXTURES();
  std::vector<FixtureFileExpectation> files;
  Status s = LoadFixtureExpectations(FixturePath("README.md"), &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(files.size(), 85u);
  for (const FixtureFileExpectation& e : files) {
    EXPECT_TRUE(fs::is_regular_file(FixturePath(e.path))) << e.path << " (README line " << e.readme_line << ")";
    if (e.expected_failure == FixtureFailure::kNone) {
      EXPECT_GT(e.total_events(), 0u) << e.path;
      EXPECT_GT(Count(e.event_counts, 15), 0u) << e.path << " has no FDE";
    }
  }
}

TEST(FixtureReadmeTest, SpotChecksOfTheRealReadme) {
  CANAL_REQUIRE_FIXTURES();
  std::vector<FixtureFileExpectation> files;
  ASSERT_TRUE(LoadFixtureExpectations(FixturePath("README.md"), &files).ok());

  const FixtureFileExpectation* corrupt = Find(files, "rust_mysql_common/corrupt-relay-bin.000624");
  ASSERT_NE(corrupt, nullptr);
  EXPECT_EQ(corrupt->event_counts, (EventCounts{{2, 454}, {5, 233}, {16, 183}, {15, 2}, {4, 2}}));
  EXPECT_EQ(corrupt->expected_failure, FixtureFailure::kCorrupt);
  EXPECT_EQ(corrupt->failure_offset, 91204u);
  EXPECT_EQ(corrupt->total_events(), 874u);

  const FixtureFileExpectation* compressed = Find(files, "mysql-binlog-connector-java/mysql-bin.compressed");
  ASSERT_NE(compressed, nullptr);
  EXPECT_EQ(compressed->payload_event_counts, (EventCounts{{2, 1}, {19, 1}, {31, 1}, {16, 1}}));
  EXPECT_EQ(Count(compressed->event_counts, 40), 1u);
  EXPECT_EQ(compressed->total_events(), 5u);
  EXPECT_EQ(compressed->optional_metadata, (std::vector<uint8_t>{2, 1}));

  const FixtureFileExpectation* sakila = Find(files, "mysql-binlog-connector-java/mysql-bin.sakila.gz");
  ASSERT_NE(sakila, nullptr);
  EXPECT_TRUE(sakila->gzip);
  EXPECT_TRUE(sakila->fde_in_use);
  EXPECT_EQ(sakila->total_events(), 1462u);
  EXPECT_EQ(Count(sakila->event_counts, 23), 1374u);

  const FixtureFileExpectation* aurora = Find(files, "mysql-binlog-connector-java/mysql-bin.aurora-padding");
  ASSERT_NE(aurora, nullptr);
  EXPECT_EQ(Count(aurora->event_counts, 100), 1u);

  const FixtureFileExpectation* old = Find(files, "rust_mysql_common/ver_5_1-wl2325_r.001");
  ASSERT_NE(old, nullptr);
  EXPECT_TRUE(old->old_type_numbering);
  EXPECT_EQ(old->expected_failure, FixtureFailure::kNone);
  EXPECT_EQ(old->event_counts, (EventCounts{{2, 3}, {19, 3}, {15, 1}, {20, 1}, {21, 1}, {22, 1}, {3, 1}}));
  EXPECT_EQ(old->raw_type_counts, (EventCounts{{2, 3}, {16, 3}, {15, 1}, {17, 1}, {18, 1}, {19, 1}, {3, 1}}));

  const FixtureFileExpectation* tagged = Find(files, "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001");
  ASSERT_NE(tagged, nullptr);
  EXPECT_EQ(Count(tagged->event_counts, 42), 1u);
  EXPECT_EQ(tagged->column_types, (std::vector<uint8_t>{3, 246}));

  // MariaDB 10.11 files: counts from SHOW BINLOG EVENTS, plus the STOP it cannot list.
  const FixtureFileExpectation* m1 = Find(files, "mariadb-10.11/mariadb-bin.000001");
  ASSERT_NE(m1, nullptr);
  EXPECT_EQ(Count(m1->event_counts, 162), 62u);
  EXPECT_EQ(Count(m1->event_counts, 160), 45u);
  EXPECT_EQ(Count(m1->event_counts, 38), 2u);
  EXPECT_EQ(Count(m1->event_counts, 4), 1u);
  const FixtureFileExpectation* m3 = Find(files, "mariadb-10.11/mariadb-bin.000003");
  ASSERT_NE(m3, nullptr);
  EXPECT_EQ(Count(m3->event_counts, 3), 1u);
  for (uint8_t code : {165, 166, 167, 168}) EXPECT_EQ(Count(m3->event_counts, code), 1u) << int(code);

  const FixtureFileExpectation* maria7 = Find(files, "zalora-binlog-parser/fixtures/mysql-bin.07");
  ASSERT_NE(maria7, nullptr);
  EXPECT_EQ(Count(maria7->event_counts, 162), 2u);
  EXPECT_EQ(Count(maria7->event_counts, 33), 0u);
  const FixtureFileExpectation* op = Find(files, "mariadb-operator-poc/domain_id_0/mariadb-repl-bin.000007");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(Count(op->event_counts, 2), 252u);
  const FixtureFileExpectation* cdc = Find(files, "mysql-cdc-rs/5.7/17_18_load/log.bin");
  ASSERT_NE(cdc, nullptr);
  EXPECT_EQ(Count(cdc->event_counts, 17), 1u);
  EXPECT_EQ(Count(cdc->event_counts, 18), 1u);

  // The negative tests, and only those.
  std::set<std::string> negative;
  for (const FixtureFileExpectation& e : files) {
    if (e.expected_failure != FixtureFailure::kNone) negative.insert(e.path);
  }
  EXPECT_EQ(negative, (std::set<std::string>{"rust_mysql_common/binlog_truncated_event.000001",
                                             "rust_mysql_common/binlog_truncated_prev_gtid_event.000001",
                                             "rust_mysql_common/corrupt-relay-bin.000624",
                                             "canal/binlog/tsdb/mysql-bin.000001"}));
  EXPECT_EQ(Find(files, "rust_mysql_common/binlog_truncated_event.000001")->expected_failure,
            FixtureFailure::kTruncated);
  EXPECT_EQ(Find(files, "rust_mysql_common/binlog_truncated_event.000001")->total_events(), 0u);
  EXPECT_EQ(Find(files, "canal/binlog/tsdb/mysql-bin.000001")->expected_failure, FixtureFailure::kBadMagic);
}

const char kTableHeader[] =
    "| file (here) | upstream path | last change | bytes | server | checksum | events / notes |\n"
    "|---|---|---|---:|---|---|---|\n";

std::string Row(const std::string& path, const std::string& server, const std::string& notes) {
  return "| `" + path + "` | `up/" + path + "` | `abc` 2020-01-01 | 100 | " + server + " | CRC32 | " + notes + " |\n";
}

Status ParseText(const std::string& text, std::vector<FixtureFileExpectation>* out) {
  return ParseFixtureReadme(text, "", "test.md", out);
}

TEST(FixtureReadmeTest, ParsesRowsWithAndWithoutProse) {
  std::string text = std::string("# t\n\n") + kTableHeader +
                     Row("a/x.bin", "8.0.1", "prose, with commas; and semicolons — FDE×1, QUERY×2; col types: LONG, "
                                             "VARCHAR; opt. metadata: SIGNEDNESS; FDE in-use flag set") +
                     Row("a/y.bin", "5.6", "QUERY×3, M_GTID×1, TX_PAYLOAD×1; inside payload: XID×1; originally x") +
                     Row("a/readme.txt", "", "just a note") + Row("a/data.json", "", "");
  std::vector<FixtureFileExpectation> files;
  Status s = ParseText(text, &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "a/x.bin");
  EXPECT_EQ(files[0].readme_line, 5);
  EXPECT_EQ(files[0].event_counts, (EventCounts{{15, 1}, {2, 2}}));
  EXPECT_EQ(files[0].column_types, (std::vector<uint8_t>{3, 15}));
  EXPECT_EQ(files[0].optional_metadata, (std::vector<uint8_t>{1}));
  EXPECT_TRUE(files[0].fde_in_use);
  EXPECT_EQ(files[0].server, "8.0.1");
  EXPECT_EQ(files[0].checksum, "CRC32");
  EXPECT_EQ(files[1].event_counts, (EventCounts{{2, 3}, {162, 1}, {40, 1}}));
  EXPECT_EQ(files[1].payload_event_counts, (EventCounts{{16, 1}}));
}

TEST(FixtureReadmeTest, RejectsUnknownEventNameNamingTheLine) {
  std::string text = kTableHeader + Row("a/x.bin", "8.0", "FDE×1, FROBNICATE×2");
  std::vector<FixtureFileExpectation> files;
  Status s = ParseText(text, &files);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("line 3"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("FROBNICATE"), std::string_view::npos) << s.ToString();
}

TEST(FixtureReadmeTest, RejectsMalformedRows) {
  const std::vector<std::string> bad_notes = {
      "FDE×1, QUERY",                                // no ×N
      "FDE×1, QUERY×",                               // no number
      "FDE×1, QUERY×2x",                             // trailing junk
      "FDE×1, FDE×2",                                // counted twice
      "FDE×1; colour: blue",                         // unknown segment
      "FDE×1; col types: LONG, SHORTISH",            // unknown column type
      "FDE×1; opt. metadata: SIGNEDNESS, COLOUR",    // unknown metadata kind
      "XID(17)×1",                                   // explicit code disagrees with the name
      "decoded: QUERY×1",                            // decoded counts without the raw list
      "some prose without any counts",              // binlog with no counts
      "negative test of something — FDE×1",          // negative test of no known kind
  };
  for (const std::string& notes : bad_notes) {
    std::vector<FixtureFileExpectation> files;
    Status s = ParseText(kTableHeader + Row("a/x.bin", "8.0", notes), &files);
    EXPECT_FALSE(s.ok()) << notes;
    EXPECT_NE(s.message().find("line 3"), std::string_view::npos) << s.ToString();
  }
}

TEST(FixtureReadmeTest, RejectsStructuralProblems) {
  std::vector<FixtureFileExpectation> files;
  // A cell too many.
  EXPECT_FALSE(ParseText(kTableHeader + std::string("| `a` | b | c | d | 8.0 | CRC32 | FDE×1 | extra |\n"), &files).ok());
  // A row that does not end with '|'.
  EXPECT_FALSE(ParseText(kTableHeader + std::string("| `a` | b | c | d | 8.0 | CRC32 | FDE×1\n"), &files).ok());
  // Header without its separator line.
  EXPECT_FALSE(ParseText("| file (here) | server | checksum | events / notes |\n| `a` | 8.0 | CRC32 | FDE×1 |\n", &files).ok());
  // Per-file header without the columns we need.
  EXPECT_FALSE(ParseText("| file (here) | server |\n|---|---|\n", &files).ok());
  // Same file twice.
  EXPECT_FALSE(ParseText(kTableHeader + Row("a/x.bin", "8.0", "FDE×1") + Row("a/x.bin", "8.0", "FDE×1"), &files).ok());
  // Counts for a file with no server column.
  EXPECT_FALSE(ParseText(kTableHeader + Row("a/x.json", "", "FDE×1"), &files).ok());
  // File cell that is not a single `path`.
  EXPECT_FALSE(ParseText(kTableHeader + std::string("| a.bin | u | c | 1 | 8.0 | CRC32 | FDE×1 |\n"), &files).ok());
}

TEST(FixtureReadmeTest, ClassifiesNegativeTestsAndCrossChecksCoverage) {
  std::string coverage =
      "| feature | files |\n|---|---|\n"
      "| negative tests (x) | `d/t.bin`, `c.bin` (garbage), `bm.bin` (bad magic). `ok.bin` is NOT corrupt |\n\n";
  std::string rows = Row("d/t.bin", "(truncated)", "14 bytes, truncated header (negative test) — no complete event (0 events)") +
                     Row("d/c.bin", "5.0", "corrupt QUERY at offset 1234 - negative test — QUERY×2, FDE×1") +
                     Row("d/bm.bin", "", "Use only as a bad-magic negative test.") +
                     Row("d/ok.bin", "5.2", "NOT corrupt. — FDE×1");
  std::vector<FixtureFileExpectation> files;
  Status s = ParseText(coverage + kTableHeader + rows, &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].expected_failure, FixtureFailure::kTruncated);
  EXPECT_TRUE(files[0].event_counts.empty());
  EXPECT_EQ(files[1].expected_failure, FixtureFailure::kCorrupt);
  EXPECT_EQ(files[1].failure_offset, 1234u);
  EXPECT_EQ(files[2].expected_failure, FixtureFailure::kBadMagic);
  EXPECT_EQ(files[3].expected_failure, FixtureFailure::kNone);

  // Coverage names a file whose row is not a negative test.
  std::string coverage2 =
      "| feature | files |\n|---|---|\n| negative tests | `d/t.bin`, `c.bin`, `bm.bin`, `ok.bin` |\n\n";
  EXPECT_FALSE(ParseText(coverage2 + kTableHeader + rows, &files).ok());
  // A row marked as a negative test that the Coverage row leaves out.
  std::string coverage3 = "| feature | files |\n|---|---|\n| negative tests | `d/t.bin`, `c.bin` |\n\n";
  EXPECT_FALSE(ParseText(coverage3 + kTableHeader + rows, &files).ok());
}

TEST(FixtureReadmeTest, EveryPrefixParsesOrFailsCleanly) {
  const std::string text = std::string("| feature | files |\n|---|---|\n| negative tests | `t.bin` |\n\n") +
                           kTableHeader + Row("t.bin", "5.7", "truncated (negative test) — FDE×1; col types: LONG") +
                           Row("d.bin", "5.2", "x — decoded: QUERY×1 (raw type codes under GA names: XID(16)×1)");
  std::vector<FixtureFileExpectation> files;
  ASSERT_TRUE(ParseText(text, &files).ok());
  for (size_t n = 0; n <= text.size(); ++n) {
    Status s = ParseText(text.substr(0, n), &files);
    if (!s.ok()) {
      EXPECT_FALSE(s.message().empty());
    }
  }
}

TEST(FixtureReadmeTest, NameTablesCoverTheReadmesVocabulary) {
  uint8_t code = 0;
  const std::pair<const char*, uint8_t> names[] = {
      {"FDE", 15}, {"QUERY", 2}, {"ANON_GTID", 34}, {"M_GTID", 162}, {"ANNOTATE", 160},
      {"ANNOTATE_ROWS", 160}, {"CHECKPOINT", 161}, {"BINLOG_CHECKPOINT", 161}, {"GTID_LIST", 163},
      {"TX_PAYLOAD", 40}, {"PREV_GTIDS", 35}, {"WRITE_ROWS_V0", 20}, {"AURORA_PADDING", 100},
      {"GTID_TAGGED", 42}, {"XA_PREPARE", 38}, {"PARTIAL_UPDATE_ROWS", 39}, {"QUERY_COMPRESSED", 165},
      {"WRITE_ROWS_COMPRESSED_V1", 166}, {"DELETE_ROWS_COMPRESSED_V1", 168}, {"INCIDENT", 26}};
  for (const auto& [name, expected] : names) {
    ASSERT_TRUE(EventCodeForReadmeName(name, false, &code).ok()) << name;
    EXPECT_EQ(code, expected) << name;
  }
  ASSERT_TRUE(EventCodeForReadmeName("GTID", false, &code).ok());
  EXPECT_EQ(code, 33);
  ASSERT_TRUE(EventCodeForReadmeName("GTID", true, &code).ok());
  EXPECT_EQ(code, 162);
  EXPECT_TRUE(EventCodeForReadmeName("gtid", false, &code).IsNotFound());
  EXPECT_TRUE(EventCodeForReadmeName("", false, &code).IsNotFound());
  ASSERT_TRUE(EventCodeForShowBinlogName("Update_rows_compressed_v1", &code).ok());
  EXPECT_EQ(code, 167);
  EXPECT_TRUE(EventCodeForShowBinlogName("Frob", &code).IsNotFound());
}

const char kTsvHeader[] = "Log_name\tPos\tEvent_type\tServer_id\tEnd_log_pos\tInfo\n";

TEST(ShowBinlogEventsTsvTest, CountsEventsAndRejectsUnknownTypes) {
  EventCounts counts;
  uint64_t last = 0;
  std::string tsv = std::string(kTsvHeader) + "b.000001\t4\tFormat_desc\t1\t256\tServer ver\n" +
                    "b.000001\t256\tGtid\t1\t298\tBEGIN GTID 0-1-1\n" + "b.000001\t298\tXid\t1\t329\tCOMMIT\n";
  ASSERT_TRUE(ParseShowBinlogEventsTsv(tsv, "t.tsv", &counts, &last).ok());
  EXPECT_EQ(counts, (EventCounts{{15, 1}, {162, 1}, {16, 1}}));
  EXPECT_EQ(last, 329u);

  counts.clear();
  EXPECT_FALSE(ParseShowBinlogEventsTsv(std::string(kTsvHeader) + "b\t4\tFrob\t1\t9\tx\n", "t", &counts, &last).ok());
  EXPECT_FALSE(ParseShowBinlogEventsTsv("no header\n", "t", &counts, &last).ok());
  EXPECT_FALSE(ParseShowBinlogEventsTsv(kTsvHeader, "t", &counts, &last).ok());  // no events
  EXPECT_FALSE(ParseShowBinlogEventsTsv(std::string(kTsvHeader) + "b\t4\tXid\n", "t", &counts, &last).ok());
  EXPECT_FALSE(ParseShowBinlogEventsTsv(std::string(kTsvHeader) + "b\t9\tXid\t1\t4\tx\n", "t", &counts, &last).ok());
}

TEST(FixtureReadmeTest, MariadbTableTakesCountsFromTheListing) {
  TempDir dir;
  std::string tsv = std::string(kTsvHeader) + "m.000001\t4\tFormat_desc\t1\t256\tx\n" +
                    "m.000001\t256\tGtid\t1\t298\tx\n" + "m.000001\t298\tQuery\t1\t400\tx\n";
  dir.Write("mdb/m.000001.show_binlog_events.tsv", tsv);
  dir.Write("mdb/m.000001", std::string(400, 'x'));
  const std::string table =
      "## `mdb/` — local\n\n| file | bytes | contents |\n|---|---:|---|\n";
  auto parse = [&](const std::string& contents, std::vector<FixtureFileExpectation>* out) {
    return ParseFixtureReadme(table + "| `m.000001` | 400 | " + contents + " |\n| `*.tsv` | | listings |\n",
                              dir.path(), "t.md", out);
  };
  std::vector<FixtureFileExpectation> files;
  Status s = parse("FDE, GTID×1, QUERY×1", &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "mdb/m.000001");
  EXPECT_EQ(files[0].event_counts, (EventCounts{{15, 1}, {162, 1}, {2, 1}}));

  EXPECT_FALSE(parse("GTID×2", &files).ok());           // prose disagrees with the listing
  EXPECT_FALSE(parse("ends with STOP", &files).ok());   // no bytes left for the STOP

  // 23 more bytes than listed: only allowed as the STOP the README announces.
  dir.Write("mdb/m.000001", std::string(423, 'x'));
  EXPECT_FALSE(parse("no word of it", &files).ok());
  s = parse("…; ends with STOP", &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Count(files[0].event_counts, 3), 1u);

  // An unrecognised file cell fails loudly.
  EXPECT_FALSE(ParseFixtureReadme(table + "| `notes.md` | 1 | x |\n", dir.path(), "t.md", &files).ok());
  // A listing that is missing.
  EXPECT_FALSE(ParseFixtureReadme(table + "| `m.000002` | 1 | x |\n", dir.path(), "t.md", &files).ok());
}

// -------------------------------------------------------------- decoded_vv.h

const char kVvInsert[] =
    "# at 100\n"
    "# at 150\n"
    "#231114 22:13:20 server id 1  end_log_pos 150 CRC32 0x6d73ecbc \tAnnotate_rows:\n"
    "#Q> INSERT INTO t VALUES (1)\n"
    "#231114 22:13:20 server id 1  end_log_pos 200 CRC32 0x5a7028b6 \tTable_map: `db`.`t``x` mapped to number 18\n"
    "# at 200\n"
    "#231114 22:13:20 server id 1  end_log_pos 300 CRC32 0xe27e6b7f \tWrite_rows: table id 18 flags: STMT_END_F\n"
    "### INSERT INTO `db`.`t``x`\n"
    "### SET\n"
    "###   @1=1 /* INT meta=0 nullable=0 is_null=0 */\n"
    "###   @2=0                    /* FLOAT meta=4 nullable=1 is_null=0 */\n"
    "###   @3='it's /* not a comment */ \\x0a' /* VARSTRING(40) meta=40 nullable=1 is_null=0 */\n"
    "###   @5=NULL /* INT meta=0 nullable=1 is_null=1 */\n"
    "# Number of rows: 1\n";

TEST(DecodedVvTest, ParsesAnInsertWithPositions) {
  std::vector<VvRowOp> ops;
  Status s = ParseDecodedVvText(kVvInsert, "t.txt", &ops);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(ops.size(), 1u);
  const VvRowOp& op = ops[0];
  EXPECT_EQ(op.kind, VvRowKind::kInsert);
  EXPECT_EQ(op.db, "db");
  EXPECT_EQ(op.table, "t`x");
  EXPECT_EQ(op.event_pos, 200u);
  EXPECT_EQ(op.first_event_pos, 200u);
  EXPECT_EQ(op.table_map_pos, 150u);
  EXPECT_EQ(op.line, 8);
  EXPECT_TRUE(op.before.empty());
  ASSERT_EQ(op.after.size(), 4u);
  EXPECT_EQ(op.after[0].index, 1);
  EXPECT_EQ(op.after[0].value, "1");
  EXPECT_EQ(op.after[0].type_comment, "/* INT meta=0 nullable=0 is_null=0 */");
  EXPECT_EQ(op.after[1].value, "0");  // FLOAT padding dropped
  EXPECT_EQ(op.after[2].value, "'it's /* not a comment */ \\x0a'");
  EXPECT_EQ(op.after[3].index, 5);
  EXPECT_TRUE(op.after[3].is_null);
  EXPECT_FALSE(op.after[2].is_null);
}

TEST(DecodedVvTest, SplitStatementAndUpdateDelete) {
  const char text[] =
      "# at 10\n"
      "#1 1 server id 1  end_log_pos 20 \tTable_map: `d`.`t` mapped to number 1\n"
      "# at 20\n# at 30\n"
      "#1 1 server id 1  end_log_pos 30 \tUpdate_rows: table id 1\n"
      "#1 1 server id 1  end_log_pos 40 \tDelete_rows: table id 1 flags: STMT_END_F\n"
      "### UPDATE `d`.`t`\n### WHERE\n###   @1=1 /* INT meta=0 nullable=0 is_null=0 */\n"
      "### SET\n###   @1=2 /* INT meta=0 nullable=0 is_null=0 */\n"
      "### DELETE FROM `d`.`t`\n### WHERE\n"
      "###   @1='multi\nline\nvalue' /* BLOB/TEXT meta=2 nullable=1 is_null=0 */\n"
      "###   @2=3 /* INT meta=0 nullable=0 is_null=0 */\n"
      "# Number of rows: 2\n"
      "# at 40\n#1 1 server id 1  end_log_pos 71 \tXid = 9\nCOMMIT/*!*/;\n";
  std::vector<VvRowOp> ops;
  Status s = ParseDecodedVvText(text, "t.txt", &ops);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].kind, VvRowKind::kUpdate);
  EXPECT_EQ(ops[0].first_event_pos, 20u);
  EXPECT_EQ(ops[0].event_pos, 30u);
  EXPECT_EQ(ops[0].table_map_pos, 10u);
  ASSERT_EQ(ops[0].before.size(), 1u);
  ASSERT_EQ(ops[0].after.size(), 1u);
  EXPECT_EQ(ops[0].after[0].value, "2");
  EXPECT_EQ(ops[1].kind, VvRowKind::kDelete);
  ASSERT_EQ(ops[1].before.size(), 2u);
  EXPECT_EQ(ops[1].before[0].value, "'multi\nline\nvalue'");
  EXPECT_EQ(ops[1].before[1].value, "3");
  EXPECT_EQ(ops[1].line, 12);
}

TEST(DecodedVvTest, RejectsInconsistentText) {
  const std::string header =
      "# at 10\n#1 1 server id 1  end_log_pos 20 \tWrite_rows: table id 1 flags: STMT_END_F\n"
      "### INSERT INTO `d`.`t`\n### SET\n";
  const std::string value = "###   @1=1 /* INT meta=0 nullable=0 is_null=0 */\n";
  const std::vector<std::string> bad = {
      // Row count disagrees.
      header + value + "# Number of rows: 2\n",
      // Row before any STMT_END_F rows event.
      "# at 10\n#1 1 server id 1  end_log_pos 20 \tWrite_rows: table id 1\n### INSERT INTO `d`.`t`\n### SET\n" +
          value + "# Number of rows: 1\n",
      // Value without its comment, up to the end of the text.
      header + "###   @1=1\n",
      // Columns not ascending.
      header + value + value + "# Number of rows: 1\n",
      // Unknown ### line.
      header + "### REPLACE INTO `d`.`t`\n",
      // SET in a DELETE.
      "# at 10\n#1 1 server id 1  end_log_pos 20 \tDelete_rows: table id 1 flags: STMT_END_F\n"
      "### DELETE FROM `d`.`t`\n### SET\n",
      // INSERT with no values.
      header + "# Number of rows: 1\n",
      // Header with no "# at".
      "#1 1 server id 1  end_log_pos 20 \tWrite_rows: table id 1 flags: STMT_END_F\n",
      // is_null disagrees with the printed value.
      header + "###   @1=NULL /* INT meta=0 nullable=0 is_null=0 */\n# Number of rows: 1\n",
      // Bad table name.
      "# at 10\n#1 1 server id 1  end_log_pos 20 \tWrite_rows: table id 1 flags: STMT_END_F\n### INSERT INTO d.t\n",
      // Bad @N.
      header + "###   @x=1 /* INT meta=0 nullable=0 is_null=0 */\n",
      // Rows printed but the statement never counted.
      header + value,
  };
  for (const std::string& text : bad) {
    std::vector<VvRowOp> ops;
    Status s = ParseDecodedVvText(text, "t.txt", &ops);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find("t.txt line "), std::string_view::npos) << s.ToString();
  }
}

TEST(DecodedVvTest, EveryPrefixParsesOrFailsCleanly) {
  const std::string text = kVvInsert;
  for (size_t n = 0; n <= text.size(); ++n) {
    std::vector<VvRowOp> ops;
    Status s = ParseDecodedVvText(std::string_view(text).substr(0, n), "t.txt", &ops);
    if (!s.ok()) {
      EXPECT_FALSE(s.message().empty());
    }
  }
}

TEST(DecodedVvTest, ParsesTheRealFiles) {
  CANAL_REQUIRE_FIXTURES();
  size_t total = 0;
  for (const char* name : {"mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003"}) {
    std::vector<VvRowOp> ops;
    Status s = ParseDecodedVv(FixturePath(std::string("mariadb-10.11/") + name + ".decoded-vv.txt"), &ops);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(ops.empty()) << name;
    total += ops.size();
    if (std::string(name) == "mariadb-bin.000001") {
      const VvRowOp& first = ops[0];
      EXPECT_EQ(first.table, "t_num");
      EXPECT_EQ(first.event_pos, 3578u);
      EXPECT_EQ(first.table_map_pos, 3348u);
      ASSERT_EQ(first.after.size(), 24u);
      EXPECT_EQ(first.after[15].value, "0.0000");
      // t_str's first INSERT spans three rows events; -vv prints after the last.
      const VvRowOp* str = nullptr;
      for (const VvRowOp& op : ops) {
        if (op.table == "t_str") {
          str = &op;
          break;
        }
      }
      ASSERT_NE(str, nullptr);
      EXPECT_EQ(str->first_event_pos, 20260u);
      EXPECT_EQ(str->event_pos, 192858u);
      EXPECT_EQ(str->table_map_pos, 18044u);
      ASSERT_EQ(str->after.size(), 36u);
      EXPECT_EQ(str->after[27].value, "b'00000001'");
      EXPECT_EQ(str->after[25].type_comment, "/* ENUM(1 byte) meta=63233 nullable=1 is_null=0 */");
    }
  }
  EXPECT_EQ(total, 445u);
}

// --------------------------------------------------------------- vv_format.h

ColumnInfo Col(ColumnType type, uint16_t meta = 0) {
  ColumnInfo c;
  c.type = type;
  c.real_type = type;
  c.meta = meta;
  return c;
}

ColumnValue Signed(ColumnType type, int64_t v) {
  ColumnValue cv;
  cv.kind = Kind::kSigned;
  cv.type = type;
  cv.i64 = v;
  return cv;
}

ColumnValue Unsigned(ColumnType type, uint64_t v) {
  ColumnValue cv;
  cv.kind = Kind::kUnsigned;
  cv.type = type;
  cv.u64 = v;
  return cv;
}

ColumnValue Temporal(Kind kind, ColumnType type, uint8_t fsp, binlog::TemporalValue t) {
  ColumnValue cv;
  cv.kind = kind;
  cv.type = type;
  cv.fsp = fsp;
  cv.temporal = t;
  return cv;
}

ColumnValue Text(Kind kind, ColumnType type, std::string_view raw) {
  ColumnValue cv;
  cv.kind = kind;
  cv.type = type;
  cv.raw = raw;
  return cv;
}

// Both directions: our rendering is the -vv text, and the comparison accepts it.
void ExpectSame(const ColumnValue& v, const ColumnInfo& col, const std::string& vv) {
  EXPECT_EQ(FormatLikeMariadbBinlog(v, col), vv);
  std::string why;
  EXPECT_TRUE(VvValueMatches(v, col, vv, &why)) << vv << ": " << why;
}

void ExpectDifferent(const ColumnValue& v, const ColumnInfo& col, const std::string& vv) {
  std::string why;
  EXPECT_FALSE(VvValueMatches(v, col, vv, &why)) << vv;
  EXPECT_FALSE(why.empty()) << vv;
}

TEST(VvFormatTest, IntegersPrintSignedWithTheUnsignedReading) {
  // Lines from mariadb-bin.000001.decoded-vv.txt (t_num rows 2 and 6).
  ExpectSame(Signed(ColumnType::kTiny, -128), Col(ColumnType::kTiny), "-128 (128)");
  ExpectSame(Unsigned(ColumnType::kTiny, 255), Col(ColumnType::kTiny), "-1 (255)");
  ExpectSame(Unsigned(ColumnType::kTiny, 200), Col(ColumnType::kTiny), "-56 (200)");
  ExpectSame(Signed(ColumnType::kTiny, 127), Col(ColumnType::kTiny), "127");
  ExpectSame(Unsigned(ColumnType::kShort, 54321), Col(ColumnType::kShort), "-11215 (54321)");
  ExpectSame(Signed(ColumnType::kInt24, -123456), Col(ColumnType::kInt24), "-123456 (16653760)");
  ExpectSame(Unsigned(ColumnType::kInt24, 16777215), Col(ColumnType::kInt24), "-1 (16777215)");
  ExpectSame(Unsigned(ColumnType::kLong, 3000000000u), Col(ColumnType::kLong), "-1294967296 (3000000000)");
  ExpectSame(Signed(ColumnType::kLong, -2147483648LL), Col(ColumnType::kLong), "-2147483648 (2147483648)");
  ExpectSame(Unsigned(ColumnType::kLongLong, 18446744073709551615ULL), Col(ColumnType::kLongLong),
             "-1 (18446744073709551615)");
  ExpectSame(Signed(ColumnType::kLongLong, INT64_MIN), Col(ColumnType::kLongLong),
             "-9223372036854775808 (9223372036854775808)");
  ExpectSame(Unsigned(ColumnType::kLongLong, 9876543210987654321ULL), Col(ColumnType::kLongLong),
             "-8570200862721897295 (9876543210987654321)");
  ExpectSame(Signed(ColumnType::kLong, 0), Col(ColumnType::kLong), "0");
  // A signed column holding -1 matches the same text.
  std::string why;
  EXPECT_TRUE(VvValueMatches(Signed(ColumnType::kTiny, -1), Col(ColumnType::kTiny), "-1 (255)", &why)) << why;

  ExpectDifferent(Unsigned(ColumnType::kTiny, 254), Col(ColumnType::kTiny), "-1 (255)");
  ExpectDifferent(Signed(ColumnType::kTiny, -2), Col(ColumnType::kTiny), "-1 (255)");
  ExpectDifferent(Signed(ColumnType::kLong, 5), Col(ColumnType::kLong), "6");
  ExpectDifferent(Signed(ColumnType::kLong, -5), Col(ColumnType::kLong), "-5");  // no unsigned reading
}

TEST(VvFormatTest, YearEnumSetBit) {
  ExpectSame(Signed(ColumnType::kYear, 2024), Col(ColumnType::kYear), "2024");
  ExpectSame(Signed(ColumnType::kYear, 0), Col(ColumnType::kYear), "1900");  // -vv: 1900 + byte
  ExpectDifferent(Signed(ColumnType::kYear, 1901), Col(ColumnType::kYear), "1900");

  ColumnInfo e = Col(ColumnType::kString, 63234);
  e.real_type = ColumnType::kEnum;
  ExpectSame(Unsigned(ColumnType::kEnum, 300), e, "300");
  ExpectDifferent(Unsigned(ColumnType::kEnum, 3), e, "4");

  // SET bitmaps: bytes in storage order, each most significant bit first.
  ColumnInfo set2 = Col(ColumnType::kString, 63490);
  set2.real_type = ColumnType::kSet;
  ExpectSame(Unsigned(ColumnType::kSet, 0x001), set2, "b'0000000100000000'");  // 's1'
  ExpectSame(Unsigned(ColumnType::kSet, 0x101), set2, "b'0000000100000001'");  // 's1,s9'
  ColumnInfo set8 = Col(ColumnType::kString, 63496);
  set8.real_type = ColumnType::kSet;
  uint64_t s00_s31_s32_s63 = 1ULL | (1ULL << 31) | (1ULL << 32) | (1ULL << 63);
  ExpectSame(Unsigned(ColumnType::kSet, s00_s31_s32_s63), set8,
             "b'0000000100000000000000001000000000000001000000000000000010000000'");
  ExpectDifferent(Unsigned(ColumnType::kSet, 0x100), set2, "b'0000000100000000'");

  ColumnInfo bit9 = Col(ColumnType::kBit, 257);
  bit9.max_length = 9;
  ExpectSame(Unsigned(ColumnType::kBit, 0x101), bit9, "b'100000001'");
  ColumnInfo bit1 = Col(ColumnType::kBit, 1);
  ExpectSame(Unsigned(ColumnType::kBit, 0), bit1, "b'0'");  // width from meta
  ColumnInfo bit64 = Col(ColumnType::kBit, 2048);
  ExpectSame(Unsigned(ColumnType::kBit, UINT64_MAX), bit64, "b'" + std::string(64, '1') + "'");
  ExpectDifferent(Unsigned(ColumnType::kBit, 2), bit9, "b'100000001'");
}

TEST(VvFormatTest, FloatsAndDoubles) {
  ColumnValue f;
  f.kind = Kind::kFloat;
  f.type = ColumnType::kFloat;
  f.f32 = -3.40282e38f;
  ExpectSame(f, Col(ColumnType::kFloat, 4), "-3.40282e+38");
  f.f32 = 3.14159f;
  ExpectSame(f, Col(ColumnType::kFloat, 4), "3.14159");
  f.f32 = 1.17549e-38f;
  ExpectSame(f, Col(ColumnType::kFloat, 4), "1.17549e-38");
  ExpectDifferent(f, Col(ColumnType::kFloat, 4), "1.17548e-38");

  ColumnValue d;
  d.kind = Kind::kDouble;
  d.type = ColumnType::kDouble;
  d.f64 = -1.7976931348623157e308;
  ExpectSame(d, Col(ColumnType::kDouble, 8), "-1.7976931348623157081e+308");
  d.f64 = 2.718281828459045;
  ExpectSame(d, Col(ColumnType::kDouble, 8), "2.7182818284590450908");
  d.f64 = 0;
  ExpectSame(d, Col(ColumnType::kDouble, 8), "0");
  ExpectDifferent(d, Col(ColumnType::kDouble, 8), "1e-300");
  ExpectDifferent(d, Col(ColumnType::kDouble, 8), "0x");
}

TEST(VvFormatTest, Decimals) {
  ColumnInfo col = Col(ColumnType::kNewDecimal, 0x0502);
  col.precision = 5;
  col.decimals = 2;
  // MySQL binary decimal: 3 integer digits in 2 bytes, 2 fraction digits in 1
  // byte, sign bit flipped; negative values have every byte inverted.
  const std::string pos("\x80\x7B\x2D", 3);  // 123.45
  const std::string neg("\x7C\x18\x9C", 3);  // -999.99
  ColumnValue v;
  v.kind = Kind::kDecimal;
  v.type = ColumnType::kNewDecimal;
  v.raw = pos;
  ExpectSame(v, col, "123.45");
  ExpectDifferent(v, col, "123.46");
  std::string why;
  EXPECT_TRUE(VvValueMatches(v, col, "0123.450", &why)) << why;  // insignificant zeros
  v.raw = neg;
  ExpectSame(v, col, "-999.99");
  ExpectDifferent(v, col, "999.99");
  ExpectDifferent(v, col, "-999.9.9");
  v.raw = std::string_view("\x80", 1);  // wrong size for DECIMAL(5,2)
  ExpectDifferent(v, col, "0.00");
}

TEST(VvFormatTest, TemporalValues) {
  // Lines from t_time in mariadb-bin.000001.decoded-vv.txt.
  ExpectSame(Temporal(Kind::kDate, ColumnType::kDate, 0, {false, 2024, 2, 29}), Col(ColumnType::kDate), "'2024:02:29'");
  ExpectSame(Temporal(Kind::kDate, ColumnType::kDate, 0, {}), Col(ColumnType::kDate), "'0000:00:00'");
  ExpectDifferent(Temporal(Kind::kDate, ColumnType::kDate, 0, {false, 2024, 2, 28}), Col(ColumnType::kDate),
                  "'2024:02:29'");
  ExpectDifferent(Temporal(Kind::kDate, ColumnType::kDate, 0, {false, 2024, 2, 29}), Col(ColumnType::kDate),
                  "'2024-02-29'");

  ExpectSame(Temporal(Kind::kTime, ColumnType::kTime2, 1, {false, 0, 0, 0, 12, 34, 56, 700000}),
             Col(ColumnType::kTime2, 1), "'12:34:56.7'");
  ExpectSame(Temporal(Kind::kTime, ColumnType::kTime2, 6, {true, 0, 0, 0, 838, 59, 58, 999999}),
             Col(ColumnType::kTime2, 6), "'-838:59:58.999999'");
  ExpectSame(Temporal(Kind::kTime, ColumnType::kTime2, 1, {true, 0, 0, 0, 0, 0, 0, 100000}),
             Col(ColumnType::kTime2, 1), "'-00:00:00.1'");
  ExpectSame(Temporal(Kind::kTime, ColumnType::kTime2, 0, {}), Col(ColumnType::kTime2, 0), "'00:00:00'");
  std::string why;
  EXPECT_TRUE(VvValueMatches(Temporal(Kind::kTime, ColumnType::kTime2, 0, {true}), Col(ColumnType::kTime2),
                             "'00:00:00'", &why))
      << why;  // the sign of zero carries no value
  ExpectDifferent(Temporal(Kind::kTime, ColumnType::kTime2, 2, {false, 0, 0, 0, 0, 0, 1, 250000}),
                  Col(ColumnType::kTime2, 2), "'-00:00:01.25'");
  // fsp from the column when the value lacks it.
  EXPECT_EQ(FormatLikeMariadbBinlog(Temporal(Kind::kTime, ColumnType::kTime2, 0, {false, 0, 0, 0, 1, 2, 3, 500000}),
                                    Col(ColumnType::kTime2, 1)),
            "'01:02:03.5'");

  ExpectSame(Temporal(Kind::kDateTime, ColumnType::kDateTime2, 6, {false, 2020, 2, 2, 20, 20, 20, 202020}),
             Col(ColumnType::kDateTime2, 6), "'2020-02-02 20:20:20.202020'");
  ExpectSame(Temporal(Kind::kDateTime, ColumnType::kDateTime2, 0, {false, 2024, 2, 29, 12, 34, 56, 0}),
             Col(ColumnType::kDateTime2, 0), "'2024-02-29 12:34:56'");
  ExpectSame(Temporal(Kind::kDateTime, ColumnType::kDateTime2, 3, {}), Col(ColumnType::kDateTime2, 3),
             "'0000-00-00 00:00:00.000'");
  ExpectDifferent(Temporal(Kind::kDateTime, ColumnType::kDateTime2, 0, {false, 2024, 2, 29, 12, 34, 57, 0}),
                  Col(ColumnType::kDateTime2, 0), "'2024-02-29 12:34:56'");

  ColumnValue ts;
  ts.kind = Kind::kTimestamp;
  ts.type = ColumnType::kTimestamp2;
  ts.fsp = 3;
  ts.u64 = 1709210096;
  ts.timestamp_micros = 789000;
  ExpectSame(ts, Col(ColumnType::kTimestamp2, 3), "1709210096.789");
  ExpectDifferent(ts, Col(ColumnType::kTimestamp2, 3), "1709210096.788");
  ts.fsp = 6;
  ts.u64 = 0;
  ts.timestamp_micros = 0;
  ExpectSame(ts, Col(ColumnType::kTimestamp2, 6), "0.000000");
  ts.fsp = 0;
  ts.u64 = 2147483647;
  ExpectSame(ts, Col(ColumnType::kTimestamp2, 0), "2147483647");
}

TEST(VvFormatTest, StringsBlobsAndNull) {
  ColumnInfo vs = Col(ColumnType::kVarchar, 256);
  ExpectSame(Text(Kind::kString, ColumnType::kVarchar, "nl\nhere"), vs, "'nl\\x0ahere'");
  ExpectSame(Text(Kind::kString, ColumnType::kVarchar, "quote's"), vs, "'quote's'");
  ExpectSame(Text(Kind::kString, ColumnType::kVarchar, "back\\slash"), vs, "'back\\slash'");
  ExpectSame(Text(Kind::kBytes, ColumnType::kVarchar, std::string_view("\x00\xff\x00", 3)), vs, "'\\x00\xff\\x00'");
  ExpectSame(Text(Kind::kBytes, ColumnType::kBlob, std::string_view("\x00\x01\x02\x03\x04", 5)), Col(ColumnType::kBlob, 2),
             "'\\x00\\x01\\x02\\x03\\x04'");
  ExpectSame(Text(Kind::kString, ColumnType::kString, "\x7f"), Col(ColumnType::kString, 65279), "'\x7f'");
  ExpectSame(Text(Kind::kString, ColumnType::kString, ""), Col(ColumnType::kString, 65028), "''");
  ExpectDifferent(Text(Kind::kString, ColumnType::kVarchar, "abc"), vs, "'abd'");
  ExpectDifferent(Text(Kind::kString, ColumnType::kVarchar, "abc"), vs, "abc");
  ExpectDifferent(Text(Kind::kString, ColumnType::kVarchar, "\n"), vs, "'\n'");  // -vv escapes it

  ColumnValue json = Text(Kind::kJson, ColumnType::kBlob, "{\"a\": 1}");
  json.json_is_text = true;
  ExpectSame(json, Col(ColumnType::kBlob, 4), "'{\"a\": 1}'");
  json.json_is_text = false;
  ExpectDifferent(json, Col(ColumnType::kJson, 4), "'{\"a\": 1}'");

  ColumnValue null;
  null.kind = Kind::kNull;
  null.type = ColumnType::kLong;
  ExpectSame(null, Col(ColumnType::kLong), "NULL");
  ExpectDifferent(null, Col(ColumnType::kLong), "0");
  ExpectDifferent(Signed(ColumnType::kLong, 0), Col(ColumnType::kLong), "NULL");
  ColumnValue absent;
  EXPECT_EQ(FormatLikeMariadbBinlog(absent, Col(ColumnType::kLong)), "");
  ExpectDifferent(absent, Col(ColumnType::kLong), "1");
}

TEST(VvFormatTest, GarbageTextNeverMatchesAndNeverCrashes) {
  const std::vector<std::string> garbage = {"", "'", "''x", "b'", "b''", "b'2'", "b'" + std::string(65, '1') + "'",
                                            "-", "(", "1 (", "1 (x)", " (1)", "'12:3'", "'::'", "'1:2:3.'",
                                            "'2024:02'", "1.", ".5", "1.1234567", "'-'", "99999999999999999999999"};
  std::vector<std::pair<ColumnValue, ColumnInfo>> values = {
      {Signed(ColumnType::kLong, 1), Col(ColumnType::kLong)},
      {Unsigned(ColumnType::kBit, 1), Col(ColumnType::kBit, 1)},
      {Unsigned(ColumnType::kSet, 1), Col(ColumnType::kSet, 0xF801)},
      {Unsigned(ColumnType::kEnum, 1), Col(ColumnType::kEnum)},
      {Signed(ColumnType::kYear, 1999), Col(ColumnType::kYear)},
      {Temporal(Kind::kDate, ColumnType::kDate, 0, {false, 1, 1, 1}), Col(ColumnType::kDate)},
      {Temporal(Kind::kTime, ColumnType::kTime2, 0, {false, 0, 0, 0, 1, 2, 3}), Col(ColumnType::kTime2)},
      {Temporal(Kind::kDateTime, ColumnType::kDateTime2, 0, {false, 1, 1, 1}), Col(ColumnType::kDateTime2)},
      {Text(Kind::kString, ColumnType::kVarchar, "x"), Col(ColumnType::kVarchar)},
  };
  ColumnValue ts;
  ts.kind = Kind::kTimestamp;
  ts.u64 = 1;
  values.push_back({ts, Col(ColumnType::kTimestamp2)});
  for (const auto& [v, col] : values) {
    for (const std::string& g : garbage) {
      std::string why;
      EXPECT_FALSE(VvValueMatches(v, col, g, &why)) << "kind " << int(v.kind) << " text [" << g << "]";
    }
  }
}

// ---------------------------------------------------------- zalora_expected.h

TEST(ZaloraExpectedTest, ParsesAnObjectStream) {
  ZaloraSchema schema{{"rooms", {"room_no", "room_name", "building_no"}}};
  const char text[] = R"JSON({"Header": {"Schema": "db", "Table": "rooms", "BinlogMessageTime": "2017-04-13T06:34:37Z",
      "BinlogPosition": 692, "XId": 10}, "Type": "Insert",
   "Data": {"Row": {"building_no": 1, "room_name": "Amazon", "room_no": 1}, "MappingNotice": ""}}
  {"Header": {"Schema": "db", "Table": "rooms", "BinlogMessageTime": "t", "BinlogPosition": 967, "XId": 12,
      "GTID": "u:1"}, "Type": "Update",
   "OldData": {"Row": {"(unknown_1)": "a \"}\" b", "(unknown_0)": null}, "MappingNotice": "n"},
   "NewData": {"Row": {"(unknown_1)": "c", "(unknown_0)": 2}, "MappingNotice": "n2"}}
  {"Header": {"Schema": "db", "Table": "(unknown)", "BinlogMessageTime": "t", "BinlogPosition": 1, "XId": 0},
   "Type": "Query", "Query": "DROP TABLE x"})JSON";
  std::vector<ZaloraEvent> events;
  Status s = ParseZaloraJsonStream(text, "t.json", &schema, &events);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, ZaloraEventType::kInsert);
  EXPECT_EQ(events[0].binlog_position, 692u);
  EXPECT_EQ(events[0].xid, 10u);
  ASSERT_EQ(events[0].after.size(), 3u);
  EXPECT_EQ(events[0].after[0].name, "room_no");  // sorted into column order
  EXPECT_EQ(events[0].after[1].text, "Amazon");
  EXPECT_EQ(events[0].after[2].index, 2);
  EXPECT_TRUE(events[0].before.empty());
  EXPECT_EQ(events[1].type, ZaloraEventType::kUpdate);
  EXPECT_EQ(events[1].gtid, "u:1");
  ASSERT_EQ(events[1].before.size(), 2u);
  EXPECT_TRUE(events[1].before[0].is_null);
  EXPECT_EQ(events[1].before[1].text, "a \"}\" b");
  EXPECT_EQ(events[1].after[0].text, "2");
  EXPECT_EQ(events[1].mapping_notice, "n2");
  EXPECT_EQ(events[2].type, ZaloraEventType::kQuery);
  EXPECT_EQ(events[2].query, "DROP TABLE x");

  EXPECT_TRUE(ParseZaloraJsonStream("", "empty.json", nullptr, &events).ok());
  EXPECT_TRUE(events.empty());
}

TEST(ZaloraExpectedTest, RejectsMalformedStreams) {
  const std::string header =
      R"("Header": {"Schema": "d", "Table": "t", "BinlogMessageTime": "x", "BinlogPosition": 1, "XId": 0})";
  const std::vector<std::string> bad = {
      "[1, 2]",                                                 // not an object stream
      "{\"Header\": {",                                         // not closed
      "{" + header + ", \"Type\": \"Insert\"} trailing",        // junk after an object
      "{" + header + ", \"Type\": \"Replace\"}",                // unknown Type
      "{" + header + ", \"Type\": \"Insert\"}",                 // Insert without Data
      "{\"Type\": \"Query\", \"Query\": \"x\"}",                // no Header
      "{" + header + ", \"Type\": \"Query\", \"Query\": \"x\", \"Extra\": 1}",  // unknown member
      "{" + header + ", \"Type\": \"Insert\", \"Data\": {\"Row\": {\"a\": [1]}, \"MappingNotice\": \"\"}}",
      "{" + header + ", \"Type\": \"Insert\", \"Data\": {\"Row\": {}, \"MappingNotice\": 3}}",
      "{" + header + ", \"Type\": \"Update\", \"OldData\": {\"Row\": {}, \"MappingNotice\": \"\"}}",
      "{\"Header\": {\"Schema\": \"d\", \"Table\": \"t\", \"BinlogMessageTime\": \"x\", \"BinlogPosition\": -1, "
      "\"XId\": 0}, \"Type\": \"Query\", \"Query\": \"x\"}",
      "{" + header + ", \"Type\": \"Query\", \"Query\": \"x\",}",  // invalid JSON
  };
  for (const std::string& text : bad) {
    std::vector<ZaloraEvent> events;
    EXPECT_FALSE(ParseZaloraJsonStream(text, "t.json", nullptr, &events).ok()) << text;
  }
}

TEST(ZaloraExpectedTest, EveryPrefixParsesOrFailsCleanly) {
  const std::string text =
      R"({"Header": {"Schema": "d", "Table": "t", "BinlogMessageTime": "x", "BinlogPosition": 1, "XId": 0},)"
      R"( "Type": "Delete", "Data": {"Row": {"a": "\"}", "b": 1.5}, "MappingNotice": ""}})";
  std::vector<ZaloraEvent> events;
  ASSERT_TRUE(ParseZaloraJsonStream(text, "t.json", nullptr, &events).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].before[1].text, "1.5");
  for (size_t n = 0; n < text.size(); ++n) {
    Status s = ParseZaloraJsonStream(std::string_view(text).substr(0, n), "t.json", nullptr, &events);
    if (n > 0) {
      EXPECT_FALSE(s.ok()) << n;
    }
  }
}

TEST(ZaloraExpectedTest, ParsesSchemaSql) {
  ZaloraSchema schema;
  ASSERT_TRUE(ParseZaloraSchemaSql("CREATE TABLE `a` (\n  `x` int,\n  `y` text,\n  PRIMARY KEY (`x`)\n) ENGINE=I;\n",
                                   "s.sql", &schema)
                  .ok());
  EXPECT_EQ(schema, (ZaloraSchema{{"a", {"x", "y"}}}));
  schema.clear();
  EXPECT_FALSE(ParseZaloraSchemaSql("CREATE TABLE `a` (\n  `x` int,\n", "s.sql", &schema).ok());
  schema.clear();
  EXPECT_FALSE(ParseZaloraSchemaSql("CREATE TABLE `a` (\n  CHECK (x)\n)\n", "s.sql", &schema).ok());
}

TEST(ZaloraExpectedTest, LoadsAllRealFiles) {
  CANAL_REQUIRE_FIXTURES();
  std::vector<ZaloraExpectedFile> files;
  Status s = LoadZaloraExpectations(FixturePath(""), &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(files.size(), 10u);
  size_t rows = 0;
  for (const ZaloraExpectedFile& f : files) {
    EXPECT_TRUE(fs::is_regular_file(FixturePath(f.binlog_path))) << f.binlog_path;
    for (const ZaloraEvent& e : f.events) {
      if (e.type == ZaloraEventType::kQuery) continue;
      ++rows;
      for (const auto* image : {&e.before, &e.after}) {
        for (const ZaloraColumn& c : *image) EXPECT_GE(c.index, 0) << f.json_path << " " << c.name;
      }
    }
  }
  EXPECT_EQ(rows, 45u);

  auto find = [&](const std::string& path) -> const ZaloraExpectedFile* {
    for (const ZaloraExpectedFile& f : files) {
      if (f.json_path == path) return &f;
    }
    return nullptr;
  };
  const ZaloraExpectedFile* f01 = find("zalora-binlog-parser/fixtures/01.json");
  ASSERT_NE(f01, nullptr);
  EXPECT_EQ(f01->binlog_path, "zalora-binlog-parser/fixtures/mysql-bin.01");
  ASSERT_EQ(f01->events.size(), 10u);
  const ZaloraEvent& first = f01->events[0];
  EXPECT_EQ(first.type, ZaloraEventType::kInsert);
  EXPECT_EQ(first.table, "buildings");
  EXPECT_EQ(first.binlog_position, 397u);
  EXPECT_EQ(first.xid, 9u);
  ASSERT_EQ(first.after.size(), 3u);
  EXPECT_EQ(first.after[0].name, "building_no");
  EXPECT_EQ(first.after[0].text, "1");
  EXPECT_EQ(first.after[2].text, "3950 North 1st Street CA 95134");

  const ZaloraExpectedFile* none = find("zalora-binlog-parser/fixtures/01-no-events.json");
  ASSERT_NE(none, nullptr);
  EXPECT_TRUE(none->events.empty());
  EXPECT_EQ(none->include_tables, std::vector<std::string>{"unknown_table"});

  const ZaloraExpectedFile* f06 = find("zalora-binlog-parser/fixtures/06.json");
  ASSERT_NE(f06, nullptr);
  const ZaloraEvent* unnamed = nullptr;
  for (const ZaloraEvent& e : f06->events) {
    if (e.type == ZaloraEventType::kInsert) {
      unnamed = &e;
      break;
    }
  }
  ASSERT_NE(unnamed, nullptr);
  ASSERT_EQ(unnamed->after.size(), 3u);
  EXPECT_EQ(unnamed->after[2].name, "(unknown_2)");
  EXPECT_EQ(unnamed->after[2].text, "2017-04-24 05:45:11");

  const ZaloraExpectedFile* gtid = find("zalora-binlog-parser/gtid-fixtures/01.json");
  ASSERT_NE(gtid, nullptr);
  EXPECT_EQ(gtid->events.size(), 23u);
  bool saw_gtid = false;
  for (const ZaloraEvent& e : gtid->events) saw_gtid = saw_gtid || e.gtid == "10440e47-3885-11eb-ac5b-0242ac110002:20";
  EXPECT_TRUE(saw_gtid);
}

}  // namespace
}  // namespace canal::testing
