#include "canal/server/instance.h"

#include "canal/store/memory_budget.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "canal/meta/meta_manager.h"
#include "canal/parser/read_ahead_stream.h"
#include "snapshot_output.h"

namespace canal::server {

namespace {

// when_needed after a purge: the parser must not resume at the purged cursor (it falls back to
// canal.instance.master.* or the primary's end) until a client acks an entry of the new run.
class SkipPurgedCursor final : public parser::CursorSource {
 public:
  SkipPurgedCursor(std::unique_ptr<parser::CursorSource> inner, std::string file)
      : inner_(std::move(inner)), file_(std::move(file)) {}
  Status LoadCursor(LogPosition* cursor, bool* found) override {
    CANAL_RETURN_IF_ERROR(inner_->LoadCursor(cursor, found));
    if (*found && cursor->snapshot == nullptr && cursor->journal_name == file_) *found = false;
    return Status::OK();
  }

 private:
  std::unique_ptr<parser::CursorSource> inner_;
  const std::string file_;
};

// How often a snapshot plan that waits for the primary asks again.
constexpr std::chrono::seconds kPlanRetry{5};

// How long Stop lets the parser stop on its own before stopping the ring
// under it (a Put waiting for space wakes only then).
constexpr std::chrono::milliseconds kParserStopGrace{200};

// How often a snapshot request file is looked for, and its bounds.
constexpr std::chrono::milliseconds kRequestPoll{250};
// What a destination costs besides its ring, which the server's memory budget
// (canal.memory.budget) sets aside for it: its dump connection's read buffer
// (1 MiB, resident once the stream has been busy), the read-ahead's ring when
// it reads ahead (canal.instance.parser.parallel; 1 MiB) and 512 KiB more: the
// stacks its threads touch, its query connection, decoders, table maps and
// sink. (Measured under a burst: about 350 KiB besides the read buffer; idle,
// 200 destinations take 36 MiB.)
constexpr uint64_t kDestinationOverheadBytes = (1u << 20) + (512u << 10);

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n >= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  } else if (n >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", n);
  }
  return buf;
}

}  // namespace

Instance::Instance(InstanceConfig config, meta::MetaManager* meta, std::shared_ptr<spdlog::logger> logger,
                   InstanceOptions options)
    : config_(std::move(config)),
      meta_(meta),
      log_(logger ? std::move(logger) : std::make_shared<spdlog::logger>("canal-instance-" + config_.destination)),
      options_(options) {}

Instance::~Instance() { Stop(); }

Status Instance::Start() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  return StartLocked();
}

void Instance::Stop() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  StopLocked();
}

Status Instance::Restart() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  StopLocked();
  return StartLocked();
}

Status Instance::StartLocked() {
  if (running()) return Status::OK();
  const std::string& dest = config_.destination;

  std::unique_ptr<store::RingStore> ring;
  CANAL_RETURN_IF_ERROR(store::RingStore::Create(config_.store, &ring).WithContext(config_.properties_file));
  ring->JoinBudget(options_.memory_budget,
                   kDestinationOverheadBytes + (config_.parser.read_ahead ? parser::ReadAheadStream::kDefaultRingBytes : 0));

  // Cursors are stamped with the upstream they belong to, as Canal does.
  meta::LogIdentity identity;
  identity.address = config_.parser.master.host;
  identity.port = config_.parser.master.port;
  CANAL_RETURN_IF_ERROR(meta_->SetSourceIdentity(dest, identity).WithContext("starting destination " + dest));

  // Batches of an earlier run point into a ring that is gone; the new ring
  // delivers again from the cursor. A subscribed client's own filter applies
  // from the first entry, before the client is back (Canal does the same).
  std::vector<meta::ClientIdentity> clients;
  CANAL_RETURN_IF_ERROR(meta_->ListClients(dest, &clients).WithContext("starting destination " + dest));
  std::string filter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    filter = client_filter_;
  }
  for (const meta::ClientIdentity& client : clients) {
    Status s = meta_->ClearAllBatches(client);
    if (!s.ok() && !s.IsNotFound()) return s.WithContext("starting destination " + dest);
    if (!client.filter.empty()) filter = client.filter;
  }

  auto sink = std::make_unique<sink::EntrySink>(config_.sink, ring.get());
  if (!filter.empty()) {
    Status s = sink->SetSubscriptionFilter(filter);
    if (!s.ok()) {
      log_->warn("[{}] the subscribed client's filter '{}' does not compile ({}); using the instance's filter",
                 dest, filter, s.ToString());
      filter.clear();
    }
  }
  std::unique_ptr<parser::CursorSource> cursor = std::make_unique<SlowestCursorSource>(meta_, dest);

  log_->info("[{}] starting: primary {} as {}, filter '{}' black '{}', ring {} entries {} x {} B, from {}", dest,
             config_.parser.master.Address(), config_.parser.master.user, config_.filter_regex,
             config_.filter_black_regex, config_.store.buffer_size, store::BatchModeName(config_.store.batch_mode),
             config_.store.buffer_memunit, config_.properties_file);
  // Low-latency gets end when the parser has caught up, not at each entry of a backlog.
  ring->TrackCatchUp();
  std::shared_ptr<store::RingStore> shared_ring = std::move(ring);
  {
    std::lock_guard<std::mutex> lock(mu_);
    store_ = std::move(shared_ring);  // the last run's ring goes with its last holder
    sink_ = std::move(sink);
    cursor_ = std::move(cursor);
    client_filter_ = filter;
    status_stop_ = false;
    snapshot_complete_handled_ = false;
    plan_error_.clear();
  }
  Status s = StartStream();
  if (!s.ok()) {
    if (!PrimaryUnreachable(s)) {
      std::lock_guard<std::mutex> lock(mu_);
      cursor_.reset();
      sink_.reset();
      return s.WithContext("starting destination " + dest);
    }
    // The primary is down (or restarting) as the server starts: the destination waits for it,
    // as its stream would, instead of not starting at all.
    log_->warn("[{}] the snapshot plan needs the primary, which does not answer ({}); the stream waits for it, "
               "trying again every {} s",
               dest, s.ToString(), std::chrono::duration_cast<std::chrono::seconds>(kPlanRetry).count());
    std::lock_guard<std::mutex> lock(mu_);
    plan_error_ = s.ToString();
  }
  running_.store(true, std::memory_order_release);
  status_thread_ = std::thread([this] { StatusLoop(); });
  return Status::OK();
}

// The snapshot plan (PlanSnapshot, which may ask the primary), then the merger, the readers and
// the parser, started. From Start, or from the status thread while the plan waits for the
// primary (Stop joins that thread before it touches what this builds).
Status Instance::StartStream() {
  const std::string& dest = config_.destination;
  sink::EntrySink* sink = nullptr;
  std::string filter;
  std::shared_ptr<store::RingStore> ring;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sink = sink_.get();
    filter = client_filter_;
    ring = store_;
  }
  // A snapshot, when one runs, stands between the parser and the sink (snapshot_merger.h).
  snapshot::SnapshotProgress progress;
  bool run_snapshot = false;
  CANAL_RETURN_IF_ERROR(PlanSnapshot(cursor_.get(), filter, &progress, &run_snapshot));
  const bool after_purge = !purged_cursor_file_.empty();
  if (after_purge) {
    std::lock_guard<std::mutex> lock(mu_);
    cursor_ = std::make_unique<SkipPurgedCursor>(std::move(cursor_), purged_cursor_file_);
    purged_cursor_file_.clear();
  }
  // The merger is there even with no snapshot to run, so that one can be requested while
  // streaming (RequestSnapshot); with nothing to merge a transaction takes its fast path.
  auto snapshot_output = std::make_unique<SinkChunkOutput>(sink, [r = ring.get()] { r->ProducerCaughtUp(); });
  const size_t window_keys = config_.snapshot.window_keys;
  auto merger = std::make_unique<snapshot::SnapshotMerger>(sink, snapshot_output.get(), window_keys,
                                                           std::max<size_t>(window_keys * 256, size_t{16} << 20));
  merger->Begin(run_snapshot ? progress : snapshot::SnapshotProgress(), [this] { OnSnapshotComplete(); });
  snapshot::SnapshotRunnerOptions ro;
  ro.destination = dest;
  ro.connection = config_.parser.master;
  ro.options = config_.snapshot;
  ro.make_writer = [this] { return std::make_unique<BuilderRowWriter>(config_.sink); };
  ro.log = log_;
  auto runner = std::make_unique<snapshot::SnapshotRunner>(std::move(ro), merger.get());

  parser::EventParserOptions parser_options = config_.parser;
  // After a purge the new snapshot reads the tables as they are now: the stream starts at the
  // primary's end, not at canal.instance.master.*, which is older (and most likely purged too).
  if (after_purge) parser_options.start = parser::StartPosition{};
  parser_options.on_caught_up = [r = ring] { r->ProducerCaughtUp(); };
  // A piece of a large transaction waits whole in the parser while the ring
  // is full: under the shared budget the parser's buffer holds an eighth of
  // the ring's share at most, so a burst on many destinations stays inside
  // the budget.
  if (options_.memory_budget) parser_options.buffer.shared_max_bytes = &options_.memory_budget->piece_bytes();
  auto parser = std::make_unique<parser::EventParser>(std::move(parser_options), merger.get(), cursor_.get(), log_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    parser_ = std::move(parser);
    snapshot_output_ = std::move(snapshot_output);
    merger_ = std::move(merger);
    runner_ = std::move(runner);
    plan_error_.clear();
  }
  parser_->Start();
  if (run_snapshot) {
    Status s = runner_->Start(progress);
    if (!s.ok()) log_->error("[{}] the snapshot did not start: {}", dest, s.ToString());
  }
  return Status::OK();
}

// A failure to reach the primary (refused, lost, too many connections, shutting down), not a
// refusal a retry cannot change (a wrong password, a missing privilege, bad data).
bool Instance::PrimaryUnreachable(const Status& s) {
  if (s.code() != Status::Code::kIOError) return false;
  const int32_t code = s.subcode();
  return code == 0 || code == 1040 /* ER_CON_COUNT_ERROR */ || code == 1053 /* ER_SERVER_SHUTDOWN */;
}

void Instance::StopLocked() {
  if (!running()) return;
  running_.store(false, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_stop_ = true;
  }
  status_cv_.notify_all();
  if (status_thread_.joinable()) status_thread_.join();

  // The parser wakes from a socket read at once, but not from a Put waiting
  // for a full ring: stop the ring too once the parser has stopped or had a
  // moment to see its stop flag (so the ring's Aborted is not reported as a
  // failure). The stopper thread says when the parser is down.
  // A keyless table's read may hold the parse thread: the merger lets it go first.
  if (merger_) merger_->Stop();
  struct {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  } parser_stop;
  std::thread stopper([p = parser_.get(), &parser_stop] {
    if (p != nullptr) p->Stop();  // none while the snapshot plan waited for the primary
    std::lock_guard<std::mutex> lock(parser_stop.mu);
    parser_stop.done = true;
    parser_stop.cv.notify_all();  // under the lock: parser_stop outlives the call
  });
  {
    std::unique_lock<std::mutex> lock(parser_stop.mu);
    parser_stop.cv.wait_for(lock, kParserStopGrace, [&] { return parser_stop.done; });
  }
  store_->Stop();
  stopper.join();
  if (runner_) runner_->Stop();  // its readers woke from the merger or the stopped ring

  const LogPosition at = parser_ ? parser_->status().position : LogPosition();
  log_->info("[{}] stopped {}", config_.destination, at.empty() ? std::string("before reading any event") : "at " + at.ToString());
  std::lock_guard<std::mutex> lock(mu_);
  runner_.reset();
  parser_.reset();
  merger_.reset();
  snapshot_output_.reset();
  cursor_.reset();
  sink_.reset();
}

std::shared_ptr<store::RingStore> Instance::store() {
  std::lock_guard<std::mutex> lock(mu_);
  return store_;
}

bool Instance::Halted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_.load(std::memory_order_acquire) && parser_ != nullptr && !parser_->running();
}

Status Instance::SetClientFilter(std::string_view regex) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sink_) {
    CANAL_RETURN_IF_ERROR(sink_->SetSubscriptionFilter(regex));
  } else if (!regex.empty()) {
    // Not running: check it now so the client hears of a bad pattern.
    std::unique_ptr<sink::TableFilter> check;
    CANAL_RETURN_IF_ERROR(sink::TableFilter::Create(regex, config_.filter_black_regex, &check));
  }
  if (client_filter_ != regex) {
    log_->info("[{}] client filter {}", config_.destination,
               regex.empty() ? std::string("cleared: the instance's filter applies") : "'" + std::string(regex) + "'");
  }
  client_filter_.assign(regex);
  return Status::OK();
}

InstanceStatus Instance::status() const {
  InstanceStatus st;
  st.running = running();
  std::lock_guard<std::mutex> lock(mu_);
  if (parser_) {
    st.parser = parser_->status();
  } else if (!plan_error_.empty()) {
    st.parser.state = "waiting for the primary";
    st.parser.last_error = "the snapshot plan needs the primary: " + plan_error_;
  }
  if (sink_) st.sink = sink_->stats();
  if (store_) {
    st.store = store_->stats();
    st.store_capacity = store_->options().buffer_size;
    st.store_byte_bound = st.store.held_bound;  // MEMSIZE's, or the memory budget's share
    st.store_mode = store_->options().batch_mode;
  }
  st.client_filter = client_filter_;
  st.primary = config_.parser.master.Address();
  st.purged_resnapshots = purged_resnapshots_.load();
  if (runner_) {
    st.snapshot = runner_->status();
    st.snapshot_active = !st.snapshot.id.empty();
  }
  return st;
}

std::string Instance::Warning() const {
  const InstanceStatus st = status();
  const std::string& state = st.parser.state;
  if (st.running && state == "streaming") return {};
  std::string w = "destination " + config_.destination + " is not streaming from its primary " + st.primary + ": " +
                  (!st.running ? std::string("stopped") : state.empty() ? std::string("starting") : state);
  if (!st.parser.last_error.empty()) w += " (last error: " + st.parser.last_error + ")";
  return w;
}

std::string Instance::StatusLine() const {
  InstanceStatus st = status();
  std::string line = st.parser.state.empty() ? std::string("stopped") : st.parser.state;
  line += " at " + (st.parser.position.empty() ? std::string("(no event yet)") : st.parser.position.ToString());
  line += ", lag " + std::to_string(st.parser.lag_ms) + " ms";
  line += ", store " + std::to_string(st.store.put_sequence - st.store.ack_sequence) + "/" +
          std::to_string(st.store_capacity) + " entries " + Bytes(st.store.held_bytes);
  if (st.store_byte_bound != 0) line += "/" + Bytes(st.store_byte_bound);
  line += ", " + std::to_string(st.store.put_sequence - st.store.get_sequence) + " not yet fetched";
  if (st.snapshot_active) {
    const snapshot::SnapshotRunStatus& sn = st.snapshot;
    char buf[256];
    std::snprintf(buf, sizeof buf, ", snapshot %s %s: %" PRIu64 "/%" PRIu64 " tables, %" PRIu64 " rows sent (%.0f rows/s)",
                  sn.id.c_str(), sn.state.c_str(), sn.tables_done, sn.tables_total, sn.rows_sent, sn.rows_per_second);
    line += buf;
    if (sn.eta_ms > 0) line += ", about " + std::to_string((sn.eta_ms + 999) / 1000) + " s left";
  }
  return line;
}

// On the status thread while the snapshot plan waits for the primary: tries again, saying in the
// log when the reason changes and when the stream starts.
void Instance::RetryStartStream() {
  Status s = StartStream();
  if (s.ok()) {
    log_->info("[{}] the primary {} answers: the snapshot plan is made and the stream starts", config_.destination,
               config_.parser.master.Address());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (s.ToString() == plan_error_) return;
  plan_error_ = s.ToString();
  if (PrimaryUnreachable(s)) {
    log_->warn("[{}] the snapshot plan still waits for the primary: {}", config_.destination, plan_error_);
  } else {
    log_->error("[{}] the snapshot plan failed: {}; trying again every {} s (fix it, or touch {} to restart the "
                "destination)",
                config_.destination, plan_error_, std::chrono::duration_cast<std::chrono::seconds>(kPlanRetry).count(),
                config_.properties_file);
  }
}

void Instance::StatusLoop() {
  using Clock = std::chrono::steady_clock;
  auto last_time = Clock::now();
  uint64_t last_entries = 0, last_rows = 0;
  bool reported_failure = false;
  auto next_status = last_time + options_.status_interval;
  auto next_plan = last_time + kPlanRetry;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Wakes for a snapshot's end, a snapshot request (polled), and the status line.
    const auto wait = std::min<std::chrono::steady_clock::duration>(kRequestPoll, next_status - Clock::now());
    if (status_cv_.wait_for(lock, std::max<std::chrono::steady_clock::duration>(wait, std::chrono::milliseconds(1)),
                            [this] { return status_stop_ || (snapshot_complete_ && !snapshot_complete_handled_); })) {
      if (status_stop_) return;
      snapshot_complete_handled_ = true;
      lock.unlock();
      FinishSnapshot();
      lock.lock();
      continue;
    }
    const bool plan_waits = !plan_error_.empty();
    lock.unlock();
    if (plan_waits && Clock::now() >= next_plan) {
      next_plan = Clock::now() + kPlanRetry;
      RetryStartStream();
    }
    TakeSnapshotRequest();
    if (Clock::now() < next_status) {
      lock.lock();
      continue;
    }
    next_status = Clock::now() + options_.status_interval;
    InstanceStatus st = status();
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_time).count();
    const double entries_per_s = seconds > 0 ? static_cast<double>(st.sink.entries - last_entries) / seconds : 0;
    const double rows_per_s = seconds > 0 ? static_cast<double>(st.parser.rows_events - last_rows) / seconds : 0;
    last_time = now;
    last_entries = st.sink.entries;
    last_rows = st.parser.rows_events;
    char rates[96];
    std::snprintf(rates, sizeof rates, ", %.1f entries/s, %.1f row events/s", entries_per_s, rows_per_s);
    log_->info("[{}] status: {}{}, reconnects {}", config_.destination, StatusLine(), rates, st.parser.reconnects);
    if (st.parser.state == "failed" && !reported_failure) {
      reported_failure = true;
      log_->error("[{}] the replica has stopped: {}. Clients can still read what the ring holds; fix {} (an edit "
                  "restarts this instance when canal.auto.scan is on) or restart the server",
                  config_.destination, st.parser.last_error, config_.properties_file);
    }
    lock.lock();
  }
}

}  // namespace canal::server
