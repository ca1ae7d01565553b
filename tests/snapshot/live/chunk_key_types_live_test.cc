// Paging by a chunk key of each column type the key binding sends back as a typed parameter:
// every chunk starts right after the last key of the one before, so all chunks together are the
// server's own `ORDER BY key`, no row twice or missing, at chunk sizes 1, 7 and 100,000. Each
// table is (k <type> PRIMARY KEY, x INT): the rows are compared by x, so a value's text form does
// not matter, only where each chunk starts. Values sit at the edges of each type (negative,
// fractions, the largest unsigned, non-ASCII text under a case-insensitive collation) and go in
// out of key order. A TIME key past 255 hours once went back to the server cut to a byte; a wrong
// bound shows up here as a chunk that starts too early (rows twice) or too late (rows missing).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "snapshot_live_support.h"

namespace canal::testing {
namespace {

using snapshot::SnapshotOptions;

constexpr int kRows = 41;

struct KeyTable {
  const char* name;
  const char* type;
  std::string (*value)(int i);  // the SQL literal of row i's key
};

std::string Quoted(const char* format, auto... args) {
  char buf[96];
  std::snprintf(buf, sizeof buf, format, args...);
  return std::string("'") + buf + "'";
}

const std::vector<KeyTable>& Tables() {
  static const std::vector<KeyTable> tables = {
      {"k_decimal", "DECIMAL(12,3)",
       [](int i) {
         const long v = (static_cast<long>(i) * 7919 * 7919) % 2000000001L - 1000000000L;
         char buf[40];
         std::snprintf(buf, sizeof buf, "%s%ld.%03ld", v < 0 ? "-" : "", std::labs(v) / 1000, std::labs(v) % 1000);
         return std::string(buf);
       }},
      {"k_datetime6", "DATETIME(6)",
       [](int i) { return Quoted("2024-%02d-%02d 10:%02d:%02d.%06d", 1 + i % 12, 1 + i % 28, i, (i * 37) % 60, (i * 123457) % 1000000); }},
      {"k_timestamp3", "TIMESTAMP(3)",
       [](int i) { return Quoted("2021-06-%02d %02d:%02d:%02d.%03d", 1 + i % 28, i % 24, i, (i * 7) % 60, (i * 37) % 1000); }},
      {"k_date", "DATE", [](int i) { return "DATE_ADD('1000-01-01', INTERVAL " + std::to_string((i * 7907) % 3000000) + " DAY)"; }},
      {"k_time6", "TIME(6)",
       [](int i) {
         return Quoted("%s%d:%02d:%02d.%06d", i % 3 == 0 ? "-" : "", i == 40 ? 838 : (i * 97) % 839, i, (i * 11) % 60,
                       i == 40 ? 0 : (i * 654321) % 1000000);
       }},
      {"k_double", "DOUBLE",
       [](int i) {
         const double v = (i % 2 ? -1.0 : 1.0) * std::pow(10.0, (i * 37) % 600 - 300) * (1.0 + i / 7.0);
         char buf[40];
         std::snprintf(buf, sizeof buf, "%.17g", v);
         return std::string(buf);
       }},
      {"k_float", "FLOAT",
       [](int i) {
         const float v = static_cast<float>((i % 2 ? -1.0 : 1.0) * std::pow(10.0, (i * 7) % 70 - 35) * (1.0 + i / 3.0));
         char buf[40];
         std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
         return std::string(buf);
       }},
      {"k_bigint_unsigned", "BIGINT UNSIGNED",
       [](int i) {
         return std::to_string(i % 2 ? UINT64_MAX - static_cast<uint64_t>(i) * i * 1000003ULL
                                     : static_cast<uint64_t>(i) * 104729ULL);
       }},
      {"k_char", "CHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
       [](int i) {
         static const char* const kSuffix[] = {"\xc3\xa0", "B", "\xc3\xa7", "d", "\xc3\x89"};
         char buf[16];
         std::snprintf(buf, sizeof buf, "%02d", (i * 29) % 100);
         return "'" + std::string(i % 2 ? "" : "x") + kSuffix[i % 5] + buf + "'";
       }},
  };
  return tables;
}

class ChunkKeyTypesLive : public SnapshotLiveSuite<ChunkKeyTypesLive> {
 public:
  static std::string SetupSql() {
    // The server's own time zone for TIMESTAMP literals, UTC as the reader's session has it.
    std::string sql = "SET time_zone = '+00:00';\nCREATE DATABASE snap;\n";
    for (const KeyTable& t : Tables()) {
      sql += std::string("CREATE TABLE snap.") + t.name + " (k " + t.type + " NOT NULL PRIMARY KEY, x INT NOT NULL);\n";
      sql += std::string("INSERT INTO snap.") + t.name + " VALUES ";
      for (int n = 0; n < kRows; ++n) {
        const int i = (n * 17) % kRows;  // out of key order
        sql += std::string(n ? "," : "") + "(" + t.value(i) + "," + std::to_string(i) + ")";
      }
      sql += ";\n";
    }
    return sql;
  }
};

// x of each row in the server's key order.
std::vector<std::string> ServerOrder(mysql::QueryConnection* conn, const std::string& table) {
  mysql::ResultSet rs;
  Status s = conn->Query("SELECT x FROM snap." + table + " ORDER BY k", &rs);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> xs;
  for (const auto& r : rs.rows) xs.push_back(r[0] ? *r[0] : "NULL");
  return xs;
}

TEST_F(ChunkKeyTypesLive, EveryKeyTypePagesExactly) {
  for (const KeyTable& t : Tables()) {
    const std::vector<std::string> want = ServerOrder(conn_.get(), t.name);
    ASSERT_EQ(want.size(), static_cast<size_t>(kRows)) << t.name;
    for (uint64_t chunk_rows : {uint64_t{1}, uint64_t{7}, uint64_t{100000}}) {
      SCOPED_TRACE(std::string(t.name) + " chunk_rows=" + std::to_string(chunk_rows));
      SnapshotOptions options;
      options.chunk_rows = chunk_rows;
      std::vector<ChunkSummary> chunks;
      // A wrong bound that starts a chunk too early repeats rows; stop long before it loops.
      Status s = ReadWholeTable(conn_.get(), "snap", t.name, options, &chunks, nullptr, 2 * kRows + 2);
      ASSERT_TRUE(s.ok()) << s.ToString();
      std::vector<std::string> got;
      for (const ChunkSummary& c : chunks) {
        for (const std::string& row : c.rows) {
          // RowText: "k|x|"; x is the text after the last field separator but one.
          const size_t end = row.rfind('|');
          const size_t begin = row.rfind('|', end - 1);
          got.push_back(row.substr(begin + 1, end - begin - 1));
        }
      }
      EXPECT_EQ(got, want);
    }
  }
}

}  // namespace
}  // namespace canal::testing
