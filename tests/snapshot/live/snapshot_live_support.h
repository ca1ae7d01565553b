// What the snapshot reader's live tests share: logins to the sandbox, a field as text (to compare
// with what the text protocol returns), and a whole table read chunk by chunk.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "canal/parser/mysql/query_connection.h"
#include "canal/snapshot/chunk_reader.h"
#include "canal/snapshot/table_shape_loader.h"
#include "support/mariadb_sandbox.h"
#include "support/sandbox_suite.h"
#include "support/test_ports.h"

namespace canal::testing {

inline constexpr uint16_t kSnapshotLivePort = TestPort("snapshot_live");

inline mysql::ConnectionOptions Login(uint16_t port, std::string user = MariadbSandbox::kUser,
                                      std::string password = MariadbSandbox::kPassword) {
  mysql::ConnectionOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.user = std::move(user);
  o.password = std::move(password);
  o.connect_timeout_ms = 5000;
  o.read_timeout_ms = 30000;
  return o;
}

// A field as the text protocol prints it (DATETIME without fractions in these tests).
inline std::string FieldText(const snapshot::FieldValue& f) {
  using snapshot::FieldKind;
  switch (f.kind) {
    case FieldKind::kNull: return "NULL";
    case FieldKind::kSigned: return std::to_string(f.i64);
    case FieldKind::kUnsigned: return std::to_string(f.u64);
    case FieldKind::kDouble: return std::to_string(f.f64);
    case FieldKind::kTime: {
      char buf[64];
      if (f.field_type == 11) {  // TIME: [-]H:MM:SS, the hours with the days in them
        std::snprintf(buf, sizeof buf, "%s%02u:%02u:%02u", f.time.negative ? "-" : "", f.time.day * 24 + f.time.hour,
                      f.time.minute, f.time.second);
        return buf;
      }
      std::snprintf(buf, sizeof buf, "%04u-%02u-%02u %02u:%02u:%02u", f.time.year, f.time.month, f.time.day,
                    f.time.hour, f.time.minute, f.time.second);
      return buf;
    }
    case FieldKind::kBytes: return std::string(f.bytes);
  }
  return "?";
}

inline std::string RowText(const snapshot::ChunkRow& row) {
  std::string s;
  for (const snapshot::FieldValue& f : row.fields) s += FieldText(f) + "|";
  return s;
}

inline std::string CellsText(const mysql::ResultRow& row) {
  std::string s;
  for (const auto& cell : row) s += (cell ? *cell : std::string("NULL")) + "|";
  return s;
}

struct ChunkSummary {
  snapshot::ChunkResult result;
  std::vector<std::string> rows;
};

// Every chunk of `table` (at most `max_chunks`), in order; the first error stops it.
inline Status ReadWholeTable(mysql::QueryConnection* conn, const std::string& schema, const std::string& table,
                             const snapshot::SnapshotOptions& options, std::vector<ChunkSummary>* chunks,
                             snapshot::ChunkKey* key = nullptr, size_t max_chunks = 100000) {
  chunks->clear();
  snapshot::TableShape shape;
  CANAL_RETURN_IF_ERROR(snapshot::LoadTableShape(conn, schema, table, &shape));
  snapshot::ChunkReader reader(conn);
  CANAL_RETURN_IF_ERROR(reader.Open(shape, "", options));
  if (key != nullptr) *key = reader.key();
  std::vector<snapshot::KeyValue> after;
  while (chunks->size() < max_chunks) {
    ChunkSummary chunk;
    CANAL_RETURN_IF_ERROR(reader.ReadChunk(
        after,
        [&](const snapshot::ChunkRow& row) {
          chunk.rows.push_back(RowText(row));
          return Status::OK();
        },
        &chunk.result));
    after = chunk.result.last_key;
    const bool done = chunk.result.exhausted;
    chunks->push_back(std::move(chunk));
    if (done) return Status::OK();
  }
  return Status::Aborted("more than " + std::to_string(max_chunks) + " chunks");
}

// A suite on one sandbox (the snapshot_live port), with Derived::SetupSql() run when it starts
// and conn_ logged in as the replication user (which holds SELECT) for each test.
template <typename Derived>
class SnapshotLiveSuite : public SandboxSuite<MariadbSandbox, StartSuiteSandbox, kSnapshotLivePort> {
 protected:
  static void SetUpTestSuite() {
    SandboxSuite::SetUpTestSuite();
    if (sandbox_ == nullptr) return;
    if (!sandbox_->Sql(Derived::SetupSql())) {
      setup_error_ = sandbox_->error();
      sandbox_.reset();
    }
  }
  void SetUp() override {
    SandboxSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    conn_ = std::make_unique<mysql::QueryConnection>(Login(kSnapshotLivePort));
    Status s = conn_->Connect();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<mysql::QueryConnection> conn_;
};

}  // namespace canal::testing
