// Instance: one destination at work — the replica (EventParser) reading the
// primary, the EntrySink filtering and building entries, and the RingStore
// the subscribed client reads from; the MetaManager (shared by every
// instance) holds the client's cursor.
//
// Start position: the parser first asks this instance (its SlowestCursorSource) for
// the slowest subscribed client's cursor (meta::SlowestCursor, a LogPosition;
// the parser turns it into a start itself), so a restart — of the instance or the whole
// daemon — resumes exactly after what every client acked; only a destination
// nobody has acked yet falls back to canal.instance.master.* and then to the
// primary's current end.
//
// Life cycle: Start() builds a fresh ring, sink and parser and starts the
// parse thread; it fails only for settings the ring refuses or a meta error.
// Stop() stops the ring (a waiting session wakes with Aborted) and the parser
// and joins them. Restart() is Stop() then Start() with the same settings.
// Rings are shared: the instance drops its ring at the next Start, and a
// stopped ring lives on only while a session still holds it (one waiting for
// a batch), so restarts and HA flips do not pile up rings.
// Batches handed out by an earlier run are forgotten at Start (the new ring
// delivers again from the cursor), as Canal forgets them at a restart.
//
// A parser that stops on its own (a configuration error upstream, a position
// gone) leaves the instance running — a client can still drain the ring —
// and is logged at ERROR with the fix; an edit of instance.properties
// restarts it (see instance_registry.h).
//
// Status: every `status_interval` a line goes to the instance's log:
//   state, position, lag, entries and row events per second, store use.
//
// Threads: every method may be called from any thread; Start/Stop/Restart
// are serialised.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/event_parser.h"
#include "canal/server/config.h"
#include "canal/server/destination.h"
#include "canal/server/slowest_cursor_source.h"
#include "canal/sink/entry_sink.h"
#include "canal/snapshot/snapshot_merger.h"
#include "canal/snapshot/snapshot_runner.h"
#include "canal/store/ring_store.h"

namespace spdlog {
class logger;
}
namespace canal::meta {
class MetaManager;
}

namespace canal::store {
class MemoryBudget;
}

namespace canal::server {

class SinkChunkOutput;

// A snapshot for status lines and tests.
struct InstanceStatus {
  bool running = false;
  parser::ParserStatus parser;
  sink::EntrySinkStats sink;
  store::RingStoreStats store;
  uint32_t store_capacity = 0;
  uint64_t store_byte_bound = 0;  // bytes the ring may hold (MEMSIZE, or the memory budget); 0: unbounded
  store::BatchMode store_mode = store::BatchMode::kMemSize;
  std::string client_filter;
  std::string primary;  // canal.instance.master.address (host:port)
  bool snapshot_active = false;  // a snapshot ran or runs in this run of the destination
  uint64_t purged_resnapshots = 0;  // snapshots taken because the cursor's binlog was purged
  snapshot::SnapshotRunStatus snapshot;
};

// What the registry runs for each destination: Instance in the daemon, a
// fake in tests that need no database.
class ManagedDestination : public Destination {
 public:
  virtual Status Start() = 0;
  virtual void Stop() = 0;
  // Fills *out for /status and metrics; false when the destination has no
  // status to report (fakes).
  virtual bool Report(InstanceStatus* /*out*/) const { return false; }
  // Started, but its work stopped on an error (the parser failed): the
  // registry restarts it when its instance.properties is touched.
  virtual bool Halted() const { return false; }
};

struct InstanceOptions {
  std::chrono::milliseconds status_interval{10'000};
  // The server's budget (canal.memory.budget) that each run's ring shares;
  // null: the ring is bounded by its own options only.
  std::shared_ptr<store::MemoryBudget> memory_budget;
};

class Instance final : public ManagedDestination {
 public:
  // `meta` must outlive the instance; a null logger logs nowhere.
  Instance(InstanceConfig config, meta::MetaManager* meta, std::shared_ptr<spdlog::logger> logger,
           InstanceOptions options = {});
  ~Instance() override;  // Stop()s
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  Status Start() override;
  void Stop() override;
  Status Restart();

  // Destination
  const std::string& name() const override { return config_.destination; }
  bool running() const override { return running_.load(std::memory_order_acquire); }
  std::shared_ptr<store::RingStore> store() override;
  meta::MetaManager* meta() override { return meta_; }
  Status SetClientFilter(std::string_view regex) override;
  bool Halted() const override;

  // A snapshot of `tables` ("schema.table") while streaming (incremental; docs/snapshot.md),
  // rows limited by `where` ("" for all). Joins the snapshot under way, else starts one; *id
  // names it. A clear error, and nothing started, for a table outside the filter, missing,
  // without SELECT, of another engine, already being read, or a bad `where`.
  Status RequestSnapshot(const std::vector<std::string>& tables, const std::string& where, std::string* id);

  InstanceStatus status() const;
  std::string Warning() const override;
  bool Report(InstanceStatus* out) const override {
    *out = status();
    return true;
  }
  // The line the status thread logs.
  std::string StatusLine() const;
  const InstanceConfig& config() const { return config_; }

 private:
  Status StartLocked();
  void StopLocked();
  void StatusLoop();
  // Whether this start runs a snapshot (docs/snapshot.md, "Modes"), and over what: the one the
  // cursor says is under way, or, with mode initial/initial_only and no cursor, every table of
  // the filter's scope.
  Status PlanSnapshot(parser::CursorSource* cursor, const std::string& client_filter,
                      snapshot::SnapshotProgress* progress, bool* run);
  Status CursorFilePurged(const LogPosition& cursor, bool* purged);
  Status ListSnapshotTables(const std::string& client_filter, std::vector<snapshot::TableProgress>* tables);
  void OnSnapshotComplete();
  void TakeSnapshotRequest();
  Status RequestSnapshotLocked(const std::vector<std::string>& tables, const std::string& where, std::string* id);
  void FinishSnapshot();
  Status StartStream();
  void RetryStartStream();
  static bool PrimaryUnreachable(const Status& s);

  const InstanceConfig config_;
  meta::MetaManager* const meta_;
  std::shared_ptr<spdlog::logger> log_;
  const InstanceOptions options_;

  std::mutex lifecycle_mu_;  // serialises Start/Stop/Restart
  std::atomic<bool> running_{false};

  // Built by Start, read by any thread under mu_.
  mutable std::mutex mu_;
  std::shared_ptr<store::RingStore> store_;  // the current run's (see the life-cycle note)
  std::unique_ptr<sink::EntrySink> sink_;
  std::unique_ptr<parser::CursorSource> cursor_;  // the parser's start (SlowestCursorSource)
  std::unique_ptr<parser::EventParser> parser_;
  std::string client_filter_;
  // The snapshot of this run, when one runs (between the parser and the sink).
  std::unique_ptr<SinkChunkOutput> snapshot_output_;
  std::unique_ptr<snapshot::SnapshotMerger> merger_;
  std::unique_ptr<snapshot::SnapshotRunner> runner_;
  bool snapshot_complete_ = false;  // guarded by mu_; handled by the status thread
  bool snapshot_complete_handled_ = false;
  std::string purged_cursor_file_;  // PlanSnapshot -> StartStream
  // Why the snapshot plan (and so the stream) waits for the primary; "" when it does not. The
  // status thread tries StartStream again while it is set. Guarded by mu_.
  std::string plan_error_;
  std::atomic<uint64_t> purged_resnapshots_{0};  // when_needed snapshots after a purged cursor

  // Status thread.
  std::thread status_thread_;
  std::condition_variable status_cv_;  // waits on mu_
  bool status_stop_ = false;           // guarded by mu_
};

}  // namespace canal::server
