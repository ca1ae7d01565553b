// ChunkReader and LoadTableShape against a real MariaDB (a throwaway sandbox): paging is exact for
// every kind of key and chunk size (all chunks together are `SELECT ... ORDER BY key`, no row twice
// or missing), the byte bound, and bad input (a missing table, a user without SELECT, chunk sizes
// out of bounds, a keyless table resumed after a key, a table dropped under the reader).
// Skips where Debian's mariadb-server is not installed.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/snapshot/chunk_query.h"
#include "snapshot_live_support.h"

namespace canal::testing {
namespace {

using snapshot::ChunkKey;
using snapshot::ChunkReader;
using snapshot::SnapshotOptions;
using snapshot::TableShape;

constexpr uint16_t kPort = kSnapshotLivePort;

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The tables: every kind of chunk key, and a keyless and an empty one. Rows go in out of key
// order, so the read order is the index's, not the insertion's.
constexpr const char* kSchema = R"sql(
CREATE DATABASE snap;
CREATE TABLE snap.composite (a INT NOT NULL, b VARCHAR(20) NOT NULL, note VARCHAR(40) NULL,
  amount DECIMAL(10,2) NOT NULL, PRIMARY KEY (a, b)) DEFAULT CHARSET utf8mb4;
CREATE TABLE snap.moments (t DATETIME NOT NULL PRIMARY KEY, x INT NOT NULL);
CREATE TABLE snap.durations (d TIME NOT NULL PRIMARY KEY, x INT NOT NULL);
CREATE TABLE snap.unique_only (id INT NULL, code VARCHAR(12) NOT NULL, x INT NOT NULL,
  UNIQUE KEY uk_id (id), UNIQUE KEY uk_code (code), KEY ix_x (x));
CREATE TABLE snap.keyless (x INT NOT NULL, y VARCHAR(10) NULL);
CREATE TABLE snap.empty (id INT PRIMARY KEY);
CREATE TABLE snap.plain (id INT PRIMARY KEY) ENGINE=MyISAM;
CREATE TABLE snap.urls (url VARCHAR(500) NOT NULL, h INT NOT NULL, PRIMARY KEY (url(20)), UNIQUE KEY uk_h (h));
CREATE VIEW snap.composite_view AS SELECT a, b FROM snap.composite;
CREATE TABLE snap.blobs (id INT PRIMARY KEY, b LONGBLOB NOT NULL);
CREATE TABLE snap.wide (id INT PRIMARY KEY, v MEDIUMBLOB NOT NULL);
INSERT INTO snap.wide SELECT seq, REPEAT(CHAR(64 + seq % 26), 32768) FROM snap.seq_1_to_200;
CREATE TABLE snap.three (a INT NOT NULL, b BIGINT UNSIGNED NOT NULL, c VARBINARY(12) NOT NULL, x INT,
  PRIMARY KEY (a, b, c));
INSERT INTO snap.three SELECT seq % 30, seq % 7, CONCAT('k', seq), seq FROM snap.seq_1_to_600;
)sql";

std::string FillSql() {
  // composite: a in 0..9 (descending), b from strings that sort differently as bytes and in the
  // collation ('B2' vs 'a', 'ä', '', a space), 110 rows.
  const char* bs[] = {"a", "B2", "b1", "", " x", "\xc3\xa9", "zz", "Zy", "m", "k'q", "0"};
  std::string sql = "INSERT INTO snap.composite VALUES ";
  bool first = true;
  for (int a = 9; a >= 0; --a) {
    for (int i = 0; i < 11; ++i) {
      if (!first) sql += ",";
      first = false;
      std::string b = bs[(i * 7 + a) % 11];
      std::string quoted;
      for (char c : b) quoted += c == '\'' ? std::string("''") : std::string(1, c);
      sql += "(" + std::to_string(a) + ",'" + quoted + "'," + ((a + i) % 3 == 0 ? "NULL" : "'n" + std::to_string(i) + "'") +
             "," + std::to_string(a * 100 + i) + "." + std::to_string(i % 10) + "5)";
    }
  }
  sql += ";\nINSERT INTO snap.moments VALUES ";
  for (int i = 0; i < 53; ++i) {
    const int k = (i * 17) % 53;  // out of order; days, hours and seconds vary, minutes make it unique
    char t[64];
    std::snprintf(t, sizeof t, "'2024-%02d-%02d %02d:%02d:%02d'", 1 + k % 9, 10 + k % 18, k % 24, k, (k * 7) % 60);
    sql += std::string(i ? "," : "") + "(" + t + "," + std::to_string(k) + ")";
  }
  // TIME keys on both sides of zero and past 255 hours: the protocol sends a TIME's hours in a
  // byte beside its days, so a bound of '838:59:59' must go as 34 days and 22 hours.
  sql += ";\nINSERT INTO snap.durations VALUES ";
  for (int k = 0; k < 41; ++k) {
    char d[32];
    std::snprintf(d, sizeof d, "'%s%d:%02d:%02d'", k % 5 == 0 ? "-" : "", k == 40 ? 838 : (k * 97) % 839, k,
                  (k * 7) % 60);
    sql += std::string(k ? "," : "") + "(" + d + "," + std::to_string(k) + ")";
  }
  sql += ";\nINSERT INTO snap.unique_only VALUES ";
  for (int i = 0; i < 40; ++i) {
    sql += std::string(i ? "," : "") + "(" + (i % 4 == 0 ? std::string("NULL") : std::to_string(40 - i)) + ",'c" +
           std::to_string((i * 13) % 40) + "'," + std::to_string(i % 5) + ")";
  }
  sql += ";\nINSERT INTO snap.keyless VALUES ";
  for (int i = 0; i < 30; ++i) {
    sql += std::string(i ? "," : "") + "(" + std::to_string(i % 7) + "," + (i % 5 == 0 ? "NULL" : "'y" + std::to_string(i % 3) + "'") +
           ")";
  }
  // blobs: small rows, two rows each larger than the byte bound (64 KiB), small ones between.
  sql += ";\nINSERT INTO snap.blobs VALUES ";
  const int sizes[] = {100, 20000, 30000, 200000, 10, 40000, 40000, 70000, 5, 1, 65536, 3};
  for (int i = 0; i < 12; ++i) {
    sql += std::string(i ? "," : "") + "(" + std::to_string(i + 1) + ",REPEAT(CHAR(" + std::to_string(65 + i) + ")," +
           std::to_string(sizes[i]) + "))";
  }
  return sql + ";";
}

class ChunkReaderLive : public SnapshotLiveSuite<ChunkReaderLive> {
 public:
  static std::string SetupSql() { return std::string(kSchema) + FillSql(); }

 protected:
  // `SELECT * FROM snap.<table> ORDER BY <order>`, each row as text.
  std::vector<std::string> Expected(const std::string& table, const std::string& order) {
    mysql::ResultSet rs;
    Status s = conn_->Query("SELECT * FROM snap." + table + (order.empty() ? "" : " ORDER BY " + order), &rs);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::vector<std::string> rows;
    for (const auto& r : rs.rows) rows.push_back(CellsText(r));
    return rows;
  }

  // Every chunk size against the server's own order: the chunks concatenated are exactly it.
  void CheckPaging(const std::string& table, const std::string& order, ChunkKey::Kind kind) {
    const std::vector<std::string> expected = Expected(table, order);
    for (uint64_t chunk_rows : {uint64_t{1}, uint64_t{7}, uint64_t{100000}}) {
      SCOPED_TRACE(table + " chunk_rows=" + std::to_string(chunk_rows));
      SnapshotOptions options;
      options.chunk_rows = chunk_rows;
      std::vector<ChunkSummary> chunks;
      ChunkKey key;
      Status s = ReadWholeTable(conn_.get(), "snap", table, options, &chunks, &key);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(key.kind, kind);
      std::vector<std::string> got;
      for (size_t i = 0; i < chunks.size(); ++i) {
        const ChunkSummary& c = chunks[i];
        if (kind != ChunkKey::Kind::kNone) {
          EXPECT_LE(c.rows.size(), chunk_rows);
        }
        EXPECT_EQ(c.result.rows, c.rows.size());
        EXPECT_EQ(c.result.exhausted, i + 1 == chunks.size()) << "chunk " << i;
        EXPECT_FALSE(c.result.snapshot.journal_name.empty());
        EXPECT_GE(c.result.snapshot.position, 4u);
        got.insert(got.end(), c.rows.begin(), c.rows.end());
      }
      if (kind == ChunkKey::Kind::kNone) {
        ASSERT_EQ(chunks.size(), 1u) << "a keyless table is one consistent read";
        std::vector<std::string> a = got, b = expected;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        EXPECT_EQ(a, b);
      } else {
        EXPECT_EQ(got, expected);
        // Full chunks, then the rest: no chunk but the last is short.
        EXPECT_EQ(chunks.size(), expected.size() / chunk_rows + 1);
      }
    }
  }
};

TEST_F(ChunkReaderLive, LoadsEveryIndexInOrderWithNullability) {
  TableShape shape;
  Status s = snapshot::LoadTableShape(conn_.get(), "snap", "unique_only", &shape);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(shape.columns.size(), 3u);
  EXPECT_EQ(shape.columns[0].name, "id");
  EXPECT_TRUE(shape.columns[0].nullable);
  EXPECT_EQ(shape.columns[1].data_type, "varchar");
  EXPECT_FALSE(shape.columns[1].nullable);
  EXPECT_EQ(shape.engine, "InnoDB");
  ASSERT_EQ(shape.indexes.size(), 3u);
  for (const auto& index : shape.indexes) {
    if (index.name == "ix_x") EXPECT_FALSE(index.unique);
    else EXPECT_TRUE(index.unique) << index.name;
  }
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "urls", &shape).ok());
  ASSERT_EQ(shape.indexes.size(), 2u);
  EXPECT_EQ(shape.indexes[0].name, "PRIMARY");
  EXPECT_TRUE(shape.indexes[0].prefix);
  EXPECT_FALSE(shape.indexes[1].prefix);
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "composite", &shape).ok());
  ASSERT_EQ(shape.indexes.size(), 1u);
  EXPECT_FALSE(shape.indexes[0].prefix);
  EXPECT_EQ(shape.indexes[0].name, "PRIMARY");
  EXPECT_EQ(shape.indexes[0].columns, (std::vector<std::string>{"a", "b"}));
}

TEST_F(ChunkReaderLive, CompositeIntVarcharKeyPagesExactly) {
  CheckPaging("composite", "a, b", ChunkKey::Kind::kPrimary);
}

TEST_F(ChunkReaderLive, DatetimeKeyPagesExactly) { CheckPaging("moments", "t", ChunkKey::Kind::kPrimary); }

TEST_F(ChunkReaderLive, TimeKeyPastAByteOfHoursPagesExactly) {
  CheckPaging("durations", "d", ChunkKey::Kind::kPrimary);
}

TEST_F(ChunkReaderLive, UniqueNotNullIndexPagesExactly) {
  CheckPaging("unique_only", "code", ChunkKey::Kind::kUniqueNotNull);
}

TEST_F(ChunkReaderLive, KeylessTableIsOneStreamedRead) { CheckPaging("keyless", "", ChunkKey::Kind::kNone); }

TEST_F(ChunkReaderLive, ThreeColumnKeyWithUnsignedAndBinaryPagesExactly) {
  CheckPaging("three", "a, b, c", ChunkKey::Kind::kPrimary);
}

// The next-chunk statement is an index range: a chunk near the table's end reads a few index
// entries, not every one before it (a row comparison would, on MariaDB).
TEST_F(ChunkReaderLive, NextChunkReadsAnIndexRangeNotTheIndexFromItsStart) {
  TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "three", &shape).ok());
  ChunkReader reader(conn_.get());
  SnapshotOptions options;
  options.chunk_rows = 5;
  ASSERT_TRUE(reader.Open(shape, "", options).ok());
  std::vector<snapshot::KeyValue> after(3);
  after[0].kind = snapshot::FieldKind::kSigned;
  after[0].field_type = 3;  // LONG
  after[0].i64 = 28;
  after[1].kind = snapshot::FieldKind::kUnsigned;
  after[1].field_type = 8;  // LONGLONG
  after[1].u64 = 3;
  after[2].kind = snapshot::FieldKind::kBytes;
  after[2].field_type = 253;  // VAR_STRING
  after[2].binary = true;
  after[2].bytes = "k";
  auto handler_reads = [&] {
    mysql::ResultSet rs;
    EXPECT_TRUE(conn_->Query("SHOW SESSION STATUS LIKE 'Handler_read_next'", &rs).ok());
    return rs.rows.empty() || !rs.rows[0][1] ? -1 : std::stoll(*rs.rows[0][1]);
  };
  const long long before = handler_reads();
  std::vector<std::string> rows;
  snapshot::ChunkResult result;
  Status s = reader.ReadChunk(
      after, [&](const snapshot::ChunkRow& row) { rows.push_back(RowText(row)); return Status::OK(); }, &result);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const long long reads = handler_reads() - before;
  mysql::ResultSet rs;
  ASSERT_TRUE(conn_->Query("SELECT * FROM snap.three WHERE (a, b, c) > (28, 3, 'k') ORDER BY a, b, c LIMIT 5", &rs).ok());
  std::vector<std::string> expected;
  for (const auto& r : rs.rows) expected.push_back(CellsText(r));
  EXPECT_EQ(rows, expected);
  EXPECT_LT(reads, 60) << "Handler_read_next grew by " << reads << " for a chunk of 5 rows near the end of 600";
}

TEST_F(ChunkReaderLive, EmptyTableIsOneEmptyExhaustedChunk) {
  SnapshotOptions options;
  std::vector<ChunkSummary> chunks;
  Status s = ReadWholeTable(conn_.get(), "snap", "empty", options, &chunks);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_TRUE(chunks[0].rows.empty());
  EXPECT_TRUE(chunks[0].result.exhausted);
  EXPECT_TRUE(chunks[0].result.last_key.empty());
}

TEST_F(ChunkReaderLive, ByteBoundEndsAChunkAndABigRowIsAChunkOfItsOwn) {
  SnapshotOptions options;
  options.chunk_bytes = SnapshotOptions::kMinChunkBytes;  // 64 KiB
  std::vector<ChunkSummary> chunks;
  Status s = ReadWholeTable(conn_.get(), "snap", "blobs", options, &chunks);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> got;
  for (const ChunkSummary& c : chunks) {
    ASSERT_FALSE(c.rows.empty() && !c.result.exhausted);
    // Every row but the chunk's last kept the chunk under the bound.
    uint64_t before_last = 0;
    for (size_t i = 0; i + 1 < c.rows.size(); ++i) before_last += c.rows[i].size() - 2;  // "id|" aside, ~bytes
    EXPECT_LT(before_last, options.chunk_bytes);
    got.insert(got.end(), c.rows.begin(), c.rows.end());
  }
  EXPECT_EQ(got, Expected("blobs", "id"));
  // Rows 5-7 meet the bound, so row 8 (70000 bytes, more than the bound) starts a chunk and ends it.
  bool big_alone = false;
  for (const ChunkSummary& c : chunks) big_alone |= c.rows.size() == 1 && c.result.bytes > options.chunk_bytes;
  EXPECT_TRUE(big_alone);
  EXPECT_GE(chunks.size(), 5u);
}

// The chunk's LIMIT follows the row width: the server sends about the rows the chunks hold, not a
// fixed 8192-row LIMIT's worth per chunk that the byte bound then drops (before: ~100x here).
TEST_F(ChunkReaderLive, WideRowsAreNotSentPastTheByteBound) {
  const auto bytes_sent = [&] {
    mysql::ResultSet rs;
    Status s = conn_->Query("SHOW SESSION STATUS LIKE 'Bytes_sent'", &rs);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return rs.rows.empty() || !rs.rows[0][1] ? uint64_t{0} : std::stoull(*rs.rows[0][1]);
  };
  SnapshotOptions options;
  options.chunk_bytes = SnapshotOptions::kMinChunkBytes;  // 64 KiB: two 32 KiB rows a chunk
  const uint64_t before = bytes_sent();
  std::vector<ChunkSummary> chunks;
  Status s = ReadWholeTable(conn_.get(), "snap", "wide", options, &chunks);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const uint64_t sent = bytes_sent() - before;
  size_t rows = 0;
  for (const ChunkSummary& c : chunks) rows += c.rows.size();
  EXPECT_EQ(rows, 200u);
  const uint64_t values = 200u * 32768u;
  EXPECT_LT(sent, values + values / 2) << "the server sent " << sent << " bytes for " << values << " bytes of values";
  // The first chunk takes one row (a MEDIUMBLOB may be 16 MiB), then two a chunk.
  EXPECT_LE(chunks.size(), 102u);
}

TEST_F(ChunkReaderLive, MissingTableIsNotFoundNamingIt) {
  TableShape shape;
  Status s = snapshot::LoadTableShape(conn_.get(), "snap", "no_such_table", &shape);
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "`snap`.`no_such_table`")) << s.ToString();
}

TEST_F(ChunkReaderLive, AViewAndANonTransactionalTableAreRefused) {
  TableShape shape;
  Status s = snapshot::LoadTableShape(conn_.get(), "snap", "composite_view", &shape);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "`snap`.`composite_view` is a view")) << s.ToString();

  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "plain", &shape).ok());
  EXPECT_EQ(shape.engine, "MyISAM");
  ChunkReader reader(conn_.get());
  s = reader.Open(shape, "", SnapshotOptions{});
  EXPECT_EQ(s.code(), Status::Code::kNotSupported) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "`snap`.`plain` is ENGINE=MyISAM")) << s.ToString();
}

TEST_F(ChunkReaderLive, UserWithoutSelectIsToldTheGrant) {
  ASSERT_TRUE(sandbox_->Sql("CREATE USER IF NOT EXISTS 'nosel'@'127.0.0.1' IDENTIFIED BY 'nosel'; "
                            "GRANT REPLICATION CLIENT ON *.* TO 'nosel'@'127.0.0.1';"))
      << sandbox_->error();
  mysql::QueryConnection weak(Login(kPort, "nosel", "nosel"));
  ASSERT_TRUE(weak.Connect().ok());
  TableShape shape;
  Status s = snapshot::LoadTableShape(&weak, "snap", "composite", &shape);
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "GRANT SELECT ON `snap`.`composite` TO 'nosel'")) << s.ToString();

  // With the shape known (another connection's), the read itself is refused by the server.
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "composite", &shape).ok());
  ChunkReader reader(&weak);
  s = reader.Open(shape, "", SnapshotOptions{});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.subcode(), 1142) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "`snap`.`composite`")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "first chunk")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "GRANT SELECT ON `snap`.`composite` TO 'nosel'")) << s.ToString();
}

TEST_F(ChunkReaderLive, ChunkSizesOutOfBoundsAreRefusedByTheOptions) {
  TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "composite", &shape).ok());
  ChunkReader reader(conn_.get());
  for (uint64_t rows : {uint64_t{0}, uint64_t{1'000'000'000'000}}) {
    SnapshotOptions options;
    options.chunk_rows = rows;
    Status s = reader.Open(shape, "", options);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
    EXPECT_TRUE(Contains(s.message(), "canal.instance.snapshot.chunk.rows=" + std::to_string(rows))) << s.ToString();
    std::vector<snapshot::KeyValue> none;
    snapshot::ChunkResult result;
    EXPECT_FALSE(reader.ReadChunk(none, [](const snapshot::ChunkRow&) { return Status::OK(); }, &result).ok())
        << "a reader whose Open failed reads nothing";
  }
}

TEST_F(ChunkReaderLive, KeylessTableCannotBeResumedAfterAKey) {
  TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "keyless", &shape).ok());
  ChunkReader reader(conn_.get());
  ASSERT_TRUE(reader.Open(shape, "", SnapshotOptions{}).ok());
  EXPECT_EQ(reader.key().kind, ChunkKey::Kind::kNone);
  std::vector<snapshot::KeyValue> after(1);
  after[0].kind = snapshot::FieldKind::kSigned;
  snapshot::ChunkResult result;
  Status s = reader.ReadChunk(after, [](const snapshot::ChunkRow&) { return Status::OK(); }, &result);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "no chunk key")) << s.ToString();
}

TEST_F(ChunkReaderLive, ATableDroppedUnderTheReaderNamesTheStepAndTheError) {
  ASSERT_TRUE(sandbox_->Sql("CREATE TABLE snap.doomed (id INT PRIMARY KEY); INSERT INTO snap.doomed VALUES (1),(2);"))
      << sandbox_->error();
  TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "doomed", &shape).ok());
  ChunkReader reader(conn_.get());
  SnapshotOptions options;
  options.chunk_rows = 1;
  ASSERT_TRUE(reader.Open(shape, "", options).ok());
  snapshot::ChunkResult result;
  auto keep = [](const snapshot::ChunkRow&) { return Status::OK(); };
  ASSERT_TRUE(reader.ReadChunk({}, keep, &result).ok());
  ASSERT_TRUE(sandbox_->Sql("DROP TABLE snap.doomed;")) << sandbox_->error();
  Status s = reader.ReadChunk(result.last_key, keep, &result);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "`snap`.`doomed`")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "next chunk")) << s.ToString();
  EXPECT_EQ(s.subcode(), 1146) << s.ToString();  // ER_NO_SUCH_TABLE
  // The connection is still usable: the failed chunk's transaction was rolled back.
  EXPECT_TRUE(conn_->Execute("SELECT 1").ok());
}

TEST_F(ChunkReaderLive, ACallbackErrorStopsTheReadAndIsReturned) {
  TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "composite", &shape).ok());
  ChunkReader reader(conn_.get());
  ASSERT_TRUE(reader.Open(shape, "", SnapshotOptions{}).ok());
  int seen = 0;
  snapshot::ChunkResult result;
  Status s = reader.ReadChunk(
      {},
      [&](const snapshot::ChunkRow&) { return ++seen == 3 ? Status::Aborted("enough") : Status::OK(); }, &result);
  EXPECT_EQ(s.code(), Status::Code::kAborted);
  EXPECT_EQ(seen, 3);
  // The same reader reads the whole chunk next time (the rest of the result was dropped).
  seen = 0;
  ASSERT_TRUE(reader.ReadChunk({}, [&](const snapshot::ChunkRow&) { ++seen; return Status::OK(); }, &result).ok());
  EXPECT_EQ(seen, 110);
}

}  // namespace
}  // namespace canal::testing
