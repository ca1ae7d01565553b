// SnapshotRunner: the reader threads of one destination's snapshot (library canal_snapshot_driver).
//
// `threads` readers, each with its own connection to the primary, take the snapshot's tables
// one at a time (a table is read by one reader, chunk after chunk; tables in parallel). For each
// chunk a reader opens a window in the merger, reads the chunk in its own consistent snapshot
// (ChunkReader), converts and renders every row on its own thread (SnapshotRowConverter, then
// the destination's RowWriter: the RowData bytes the sink would write), and offers the chunk to
// the merger, which sends it out once the stream has passed its P (or asks for it again). So a
// reader holds one chunk at a time: memory is bounded by threads x chunk bytes (as rendered),
// and a slow client slows the readers through the ring, never grows memory.
//
// A table's columns are loaded again whenever the stream delivered a DDL on it since they were
// loaded (the merger counts them), so the chunks after an ALTER carry the new columns. A table
// dropped since the snapshot began is skipped with a WARN line. A keyless table is one read
// that holds the stream at its P while it goes out (snapshot_merger.h).
//
// Errors (a missing privilege, a type the snapshot cannot render, a lost primary) stop the
// snapshot with state "failed" and the error in status(), logged at ERROR with the fix; the
// stream goes on. Stop() ends the readers (a read in progress is abandoned).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/parser/mysql/connection_options.h"
#include "canal/snapshot/chunk_reader.h"
#include "canal/snapshot/snapshot_merger.h"
#include "canal/snapshot/snapshot_options.h"
#include "canal/snapshot/snapshot_progress.h"

namespace spdlog {
class logger;
}

namespace canal::snapshot {

// Renders one snapshot row as the RowData bytes the destination's sink writes for an inserted
// row (server/: the sink's EntryBuilder with the destination's field filters). One per reader.
// `table_version` is new whenever `table` changed, so a writer may keep what it worked out
// for the table (its plan) between rows of one version.
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  // The row's RowData field written at *at in *buffer, in place (no copy): bytes past *at may
  // be overwritten, the size grows as needed and never shrinks; *at moves past the row and is
  // unchanged on error.
  virtual Status AppendAt(const binlog::TableMap& table, uint64_t table_version,
                          std::span<const binlog::ColumnValue> values, std::string* buffer, size_t* at) = 0;
};

struct SnapshotRunnerOptions {
  std::string destination;
  mysql::ConnectionOptions connection;  // the primary, as the parser reaches it
  SnapshotOptions options;
  std::function<std::unique_ptr<RowWriter>()> make_writer;
  std::shared_ptr<spdlog::logger> log;
};

struct SnapshotRunStatus {
  std::string id;
  std::string state;  // "reading", "complete", "failed", "stopped"
  std::string last_error;
  uint64_t tables_total = 0, tables_done = 0;
  uint64_t rows_read = 0;      // rows read from the primary (repeats of redone chunks count)
  uint64_t rows_sent = 0;      // rows that went out
  uint64_t rows_estimate = 0;  // information_schema's estimate of every table's rows
  uint64_t chunks = 0, redone = 0, dropped_rows = 0;
  int64_t started_ms = 0, elapsed_ms = 0;
  double rows_per_second = 0;
  int64_t eta_ms = -1;  // -1: unknown
};

class SnapshotRunner {
 public:
  SnapshotRunner(SnapshotRunnerOptions options, SnapshotMerger* merger);
  ~SnapshotRunner();  // Stop()s
  SnapshotRunner(const SnapshotRunner&) = delete;
  SnapshotRunner& operator=(const SnapshotRunner&) = delete;

  // Starts the readers over `progress`'s tables that are not done (the merger was given the
  // same progress by Begin).
  Status Start(const SnapshotProgress& progress);
  // More tables to read (indexes into the merger's progress, which AddTables returned), for
  // snapshot `id`: readers start as needed, up to `threads`. Aborted once the readers were
  // stopped (Stop, or a failed snapshot).
  Status Enqueue(const std::string& id, const std::vector<size_t>& tables);
  // Tables requested while streaming, for snapshot `id` (the one under way, or a new one): each
  // joins the merger's progress when a reader takes it (the merger may wait for a full ring;
  // the requester does not).
  Status Request(const std::string& id, int64_t started_ms, std::vector<TableProgress> tables);
  // Whether "schema.table" is waiting for a reader or being read.
  bool Busy(const std::string& name) const;
  void Stop();
  // The merger reported the snapshot complete.
  void MarkComplete();
  SnapshotRunStatus status() const;

 private:
  struct Reader;
  struct TableRead;
  struct Work {
    size_t index = 0;                        // into the merger's progress...
    std::optional<TableProgress> request;    // ...or a requested table, added when taken
    int64_t started_ms = 0;
    std::string name;                        // schema.table
  };
  void Run(Reader* r);
  Status BeginWorkLocked(const std::string& id);
  Status StartReaders(size_t added);
  std::string Id() const;
  Status Load(Reader* r, const TableProgress& tp, TableRead* t, bool* gone);
  Status ConvertRow(Reader* r, TableRead* t, const ChunkRow& row, bool keyed);
  Status ReadTable(Reader* r, size_t table_index);
  Status ReadKeyless(Reader* r, size_t table_index, TableRead* t);
  void Fail(const Status& s);

  const SnapshotRunnerOptions options_;
  SnapshotMerger* const merger_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> rows_read_{0};
  std::atomic<uint64_t> rows_estimate_{0};
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<Reader>> readers_;

  mutable std::mutex mu_;
  std::vector<Work> queue_;    // tables left to read
  std::set<std::string> active_;  // schema.table being read
  size_t alive_ = 0;           // reader threads that have not ended
  std::string id_;
  std::string state_ = "complete";
  std::string last_error_;
  int64_t started_steady_ms_ = 0;
  int64_t started_wall_ms_ = 0;
  int64_t finished_steady_ms_ = 0;
};

}  // namespace canal::snapshot
