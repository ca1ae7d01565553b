#include "canal/parser/event_parser.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/mysql/primary_probe.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/mysql/dump_connection.h"
#include "canal/parser/mysql/information_schema_provider.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/parser/read_ahead_stream.h"
#include "canal/parser/resume_from_cursor.h"
#include "canal/schema/statement.h"
#include "dump_stream.h"
#include "schema_tracker.h"
#include "stream_observer.h"

namespace canal::parser {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string SqlQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
  return out;
}

}  // namespace

Status ParseInvalidPositionAction(std::string_view text, InvalidPositionAction* action) {
  if (text == "stop" || text.empty()) {
    *action = InvalidPositionAction::kStop;
  } else if (text == "earliest") {
    *action = InvalidPositionAction::kEarliest;
  } else if (text == "latest") {
    *action = InvalidPositionAction::kLatest;
  } else {
    return Status::InvalidArgument("invalid position action '" + std::string(text) +
                                   "'; use stop, earliest or latest");
  }
  return Status::OK();
}

Status ParseDivergedAction(std::string_view text, DivergedAction* action) {
  if (text == "stop" || text.empty()) {
    *action = DivergedAction::kStop;
  } else if (text == "continue") {
    *action = DivergedAction::kContinue;
  } else {
    return Status::InvalidArgument("canal.instance.failover.diverged is '" + std::string(text) +
                                   "'; use stop (the default) or continue");
  }
  return Status::OK();
}

uint32_t EventParser::DeriveSlaveId(std::string_view destination, std::string_view address) {
  // FNV-1a: stable across runs and builds (std::hash is not).
  uint32_t h = 2166136261u;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 16777619u;
    }
  };
  mix(destination);
  mix("@");
  mix(address);
  // Keep clear of the small ids people give their real servers.
  return 100000u + h % 2000000000u;
}


EventParser::EventParser(EventParserOptions options, TransactionSink* sink, CursorSource* cursor,
                         std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)),
      sink_(sink),
      cursor_(cursor),
      log_(logger ? std::move(logger) : spdlog::default_logger()),
      buffer_(sink, options_.buffer) {
  if (options_.slave_id == 0) options_.slave_id = DeriveSlaveId(options_.destination, options_.master.Address());
  // Silence for three heartbeat periods means the primary or the path is gone.
  options_.master.read_timeout_ms = std::max(options_.master.read_timeout_ms, 3 * options_.heartbeat_period_ms);
  status_.state = "stopped";
}

EventParser::~EventParser() { Stop(); }

namespace {
constexpr std::string_view kSlaveIdKey = "canal.instance.mysql.slaveId";
}  // namespace

std::string_view ParserErrorKind(const Status& error) {
  // Refusals from the primary carry its error number as their subcode
  // (mysql::ServerError), our own kinds the number of the server error they
  // stand for: the label never depends on how a message is worded.
  switch (error.subcode()) {
    case mysql::kErAccessDenied:
    case mysql::kErSpecificAccessDenied:
    case mysql::kErDbAccessDenied:
    case mysql::kErTableAccessDenied:
    case mysql::kErNotSupportedAuthMode:
      return "authentication";
    // A slave-id conflict is a setting to change, even when it came as a 1236.
    case mysql::kErSlaveSameId:
      return "configuration";
    // 1236: the primary cannot read from the position asked (purged, invalid).
    case mysql::kErMasterFatalReadingBinlog:
      return "position";
    case binlog::kErrorDiverged:
      return "diverged";
    case binlog::kErrorNoGtidState:
      return "no_gtid";
    default:
      break;
  }
  switch (error.code()) {
    case Status::Code::kNotFound:
      return "position";
    case Status::Code::kCorruption:
    case Status::Code::kTruncated:
      return "decode";
    case Status::Code::kNotSupported:
      return "unsupported";
    case Status::Code::kInvalidArgument:
      return "configuration";
    case Status::Code::kIOError:
    case Status::Code::kAborted:
      return "connection";
    default:
      return "other";
  }
}

void EventParser::SetState(std::string_view state) {
  std::lock_guard<std::mutex> lock(mu_);
  status_.state.assign(state);
}

void EventParser::Fail(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  fatal_ = s;
  status_.state = "failed";
  NoteErrorLocked(s);
}

void EventParser::NoteErrorLocked(const Status& s) {
  status_.last_error = s.ToString();
  status_.last_error_ms = NowMs();
  ++status_.errors[std::string(ParserErrorKind(s))];
}

Status EventParser::fatal_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fatal_;
}

ParserStatus EventParser::status() const {
  ParserStatus st;
  {
    std::lock_guard<std::mutex> lock(mu_);
    st = status_;
  }
  st.events = counters_.events.load();
  st.rows_events = counters_.rows_events.load();
  st.bytes = counters_.bytes.load();
  const int64_t t = counters_.last_event_ms.load();
  st.lag_ms = counters_.caught_up.load() || t == 0 ? 0 : std::max<int64_t>(0, NowMs() - t);
  return st;
}

void EventParser::Start() {
  Stop();
  stop_ = false;
  running_ = true;
  thread_ = std::thread([this] {
    Status s = Run();
    s.PermitUncheckedError();
  });
}

void EventParser::Stop() {
  stop_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (live_dump_ != nullptr) live_dump_->Shutdown();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status EventParser::Run() {
  running_ = true;
  int backoff_ms = options_.reconnect_initial_ms;
  // Among several candidates a dead primary must not hold the search for long.
  const int max_backoff_ms =
      options_.candidates.size() > 1 ? std::min(options_.reconnect_max_ms, 2'000) : options_.reconnect_max_ms;
  int failures_in_a_row = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.server.empty()) status_.server = options_.master.Address();
  }
  Status result;
  while (!stop_) {
    SetState("connecting");
    const uint64_t events_before = counters_.events.load();
    Status error;
    const Outcome outcome = RunSession(&error);
    // Nothing more comes until a reconnect: what the sink has is all there is.
    if (options_.on_caught_up) options_.on_caught_up();
    if (stop_) break;
    if (outcome == Outcome::kFatal) {
      log_->error("[{}] parser stopped: {}", options_.destination, error.ToString());
      Fail(error);
      result = error;
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++status_.reconnects;
      NoteErrorLocked(error);
    }
    if (counters_.events.load() != events_before) {
      backoff_ms = options_.reconnect_initial_ms;  // it had been working
      failures_in_a_row = 0;
    } else {
      ++failures_in_a_row;
    }
    if (options_.candidates.size() > 1 &&
        (!not_primary_.empty() || failures_in_a_row >= options_.detect_retry_threshold)) {
      const bool moved = MoveToPrimary(error);
      not_primary_.clear();
      if (moved) {
        failures_in_a_row = 0;
        backoff_ms = options_.reconnect_initial_ms;
        continue;
      }
    }
    if (outcome == Outcome::kRestartNow) continue;
    log_->warn("[{}] connection to {} lost: {}; reconnecting in {} ms from {}", options_.destination,
               options_.master.Address(), error.ToString(), backoff_ms, buffer_.resume_point().ToString());
    SetState("reconnecting");
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(backoff_ms), [this] { return stop_.load(); });
    backoff_ms = std::min(backoff_ms * 2, max_backoff_ms);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fatal_.ok()) status_.state = "stopped";
  }
  running_ = false;
  return result;
}

namespace {

// Errors that another attempt cannot fix.
bool IsConfigError(uint16_t code) {
  return code == mysql::kErAccessDenied || code == mysql::kErSpecificAccessDenied ||
         code == mysql::kErDbAccessDenied || code == mysql::kErTableAccessDenied ||
         code == mysql::kErNotSupportedAuthMode;
}

}  // namespace

Status EventParser::GrantHint(const Status& s) const {
  return s.WithContext("the replication user '" + options_.master.user +
                       "' lacks a privilege: GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '" +
                       options_.master.user + "'@'%' (MariaDB 10.5+: also BINLOG MONITOR)");
}

std::optional<EventParser::Outcome> EventParser::ConnectAndCheck(mysql::QueryConnection* query,
                                                                 mysql::ServerInfo* info, Status* error) {
  Status s = query->Connect();
  if (!s.ok()) {
    if (IsConfigError(query->last_server_error().code)) {
      *error = s.WithContext("logging in as '" + options_.master.user +
                             "' (canal.instance.dbUsername / canal.instance.dbPassword)");
      return Outcome::kFatal;
    }
    *error = std::move(s);
    return Outcome::kRetry;
  }
  s = query->ReadServerInfo(info);
  if (!s.ok()) {
    *error = std::move(s);
    return IsConfigError(query->last_server_error().code) ? Outcome::kFatal : Outcome::kRetry;
  }
  std::vector<mysql::ReplicationWarning> warnings;
  s = mysql::CheckReplicationSettings(*info, &warnings);
  if (!s.ok()) {
    *error = s.WithContext(options_.destination + " (" + options_.master.Address() + ")");
    return Outcome::kFatal;
  }
  if (options_.candidates.size() > 1) {
    // Among candidates, stream only from the primary (a replica's binlog lags, and it is
    // not where the application writes).
    mysql::PrimaryProbe role;
    role.address = options_.master.Address();
    s = mysql::ReadPrimaryRole(query, &role);
    if (!s.ok()) {
      *error = s.WithContext(role.address);
      return Outcome::kRetry;
    }
    role.reachable = true;
    if (!role.primary()) {
      not_primary_ = role.address + " is not the primary: " + role.Describe();
      *error = Status::Aborted(not_primary_);
      return Outcome::kRetry;
    }
  }
  if (!start_resolved_) {
    for (const auto& w : warnings) {
      // With a schema history the names come from it, not from information_schema.
      if (!options_.schema_history_file.empty() && w.kind == mysql::ReplicationWarning::Kind::kRowMetadata) continue;
      log_->warn("[{}] {}", options_.destination, w.text);
    }
    log_->info("[{}] primary {} is {} {}, server_id {}, binlog_format {}, row image {}, row metadata {}, checksum {}",
               options_.destination, options_.master.Address(), info->mariadb ? "MariaDB" : "MySQL", info->version,
               info->server_id, info->binlog_format, info->binlog_row_image,
               info->binlog_row_metadata.empty() ? "(none)" : info->binlog_row_metadata, info->binlog_checksum);
  }
  return std::nullopt;
}

Status EventParser::PlanStart(mysql::QueryConnection* query, const mysql::ServerInfo& info, StartPlan* plan) {
  if (!start_resolved_) {
    Status s = ResolveStart(query, info, plan);
    if (s.ok()) s = FollowGtidState(query, info, true, plan);
    if (!s.ok()) {
      if (query->last_server_error().code == mysql::kErSpecificAccessDenied) s = GrantHint(s);
      return s;
    }
    start_resolved_ = true;
    log_->info("[{}] starting from {} ({})", options_.destination,
               plan->kind == StartPlan::Kind::kPosition ? plan->point.ToString() : "GTID " + plan->gtid,
               plan->origin);
    buffer_.ResetTo(plan->point);
    return Status::OK();
  }
  plan->point = buffer_.resume_point();
  if (plan->point.empty()) {
    // Nothing delivered yet after a GTID start: start again after the same state.
    const GtidStateTracker& state = buffer_.gtid_state();
    if (state.known()) {
      plan->kind = info.mariadb ? StartPlan::Kind::kMariaGtid : StartPlan::Kind::kMysqlGtid;
      plan->gtid = state.state().ToString();
    } else {
      plan->kind = options_.start.gtid.empty()
                       ? StartPlan::Kind::kPosition
                       : (info.mariadb ? StartPlan::Kind::kMariaGtid : StartPlan::Kind::kMysqlGtid);
      plan->gtid = options_.start.gtid;
    }
  } else {
    // Another server behind the same address (a failover behind a VIP or DNS): by GTID.
    CANAL_RETURN_IF_ERROR(FollowGtidState(query, info, false, plan));
  }
  if (plan->kind != StartPlan::Kind::kPosition) {
    buffer_.ResetTo(ResumePoint{});  // nothing to skip: a GTID start begins at a transaction
  } else {
    buffer_.ResetForReconnect();
  }
  log_->info("[{}] resuming from {}", options_.destination,
             plan->kind == StartPlan::Kind::kPosition ? plan->point.ToString() : "GTID " + plan->gtid);
  return Status::OK();
}

EventParser::Outcome EventParser::RunSession(Status* error) {
  const std::string where = options_.destination + " (" + options_.master.Address() + ")";
  auto fatal = [&](Status s) {
    *error = std::move(s);
    return Outcome::kFatal;
  };
  auto retry = [&](Status s) {
    *error = std::move(s);
    return Outcome::kRetry;
  };

  mysql::QueryConnection query(options_.master);
  mysql::ServerInfo info;
  if (const std::optional<Outcome> o = ConnectAndCheck(&query, &info, error)) return *o;

  StartPlan plan;
  Status s = PlanStart(&query, info, &plan);
  if (!s.ok()) {
    // The connection failing while asking (SHOW MASTER STATUS, the GTID state of a new
    // primary) is worth another attempt; a wrong setting or a diverged primary is not.
    s = s.WithContext(where + ": choosing the start position");
    return s.code() == Status::Code::kIOError && query.last_server_error().code == 0 ? retry(s) : fatal(s);
  }

  // The schema history names columns when the binlog does not (row metadata
  // not FULL); without one, information_schema does (today's columns).
  std::optional<SchemaTracker> tracker;
  std::optional<mysql::InformationSchemaProvider> schema;
  binlog::DecoderOptions dopts;
  dopts.verify_checksum = options_.verify_checksum;
  if (!options_.schema_history_file.empty()) {
    tracker.emplace(SchemaTrackerOptions{options_.destination, options_.schema_history_file,
                                         options_.schema_history_store, options_.schema_scope,
                                         options_.schema_compact_interval_s, options_.schema_compact_expire_s},
                    log_);
    s = tracker->Open(&query, info, schema::BinlogPoint{plan.point.file, plan.point.position});
    if (!s.ok()) return s.code() == Status::Code::kAborted ? retry(s) : fatal(s.WithContext(where));
    dopts.schema_provider = tracker->provider();
  } else {
    // Not FULL: names, keys, charsets. FULL too: the decoder asks it only for
    // what FULL lacks, MariaDB's old-code TIMESTAMP(N) etc. (N is in no binlog).
    schema.emplace(&query);
    dopts.schema_provider = &*schema;
  }
  binlog::EventDecoder decoder(dopts);

  mysql::DumpConnection dump(options_.master);
  s = dump.Connect();
  if (!s.ok()) return IsConfigError(dump.last_server_error().code) ? fatal(s) : retry(s);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return retry(Status::Aborted("stopping"));
    live_dump_ = &dump;
  }
  struct Unpublish {
    EventParser* p;
    ~Unpublish() {
      std::lock_guard<std::mutex> lock(p->mu_);
      p->live_dump_ = nullptr;
    }
  } unpublish{this};

  s = StartDump(&dump, info, plan);
  if (!s.ok()) {
    const uint16_t code = dump.last_server_error().code;
    if (mysql::IsSlaveIdConflict(dump.last_server_error())) return OnSlaveIdConflict(s, 0, error);
    if (code == mysql::kErMasterFatalReadingBinlog) return HandleInvalidPosition(&query, plan, s, error);
    if (IsConfigError(code)) return fatal(GrantHint(s).WithContext("starting the binlog dump"));
    return retry(s);
  }
  SetState("streaming");
  streamed_server_id_ = info.server_id;
  const int64_t streaming_since_ms = NowMs();
  const uint64_t dump_from = DumpRequestOffset(plan.point.position);
  if (plan.kind == StartPlan::Kind::kPosition && dump_from != plan.point.position) {
    log_->warn("[{}] {} lies past 4 GiB, beyond what COM_BINLOG_DUMP can ask for: reading {} from its start and "
               "skipping to it", options_.destination, plan.point.ToString(), plan.point.file);
  }

  // The hot loop over the socket (stream_observer.h: schema tracking before
  // each event, the status published after).
  StreamObserver observer(&mu_, &status_, &buffer_, tracker.has_value() ? &*tracker : nullptr,
                          schema.has_value() ? &*schema : nullptr, &decoder);
  // (Only now: before the dump the sink has nothing new from this session.)
  auto caught_up = [this, &observer, &query, &dump] {
    observer.Publish();
    if (options_.on_caught_up) options_.on_caught_up();
    // Caught up: a moment to ask whether this is still the primary (a switchover makes it
    // read-only and writes go elsewhere, while this stream would just go quiet).
    if (std::string reason; !StillPrimary(&query, &reason) || !DetectingSqlPasses(&query, &reason)) {
      not_primary_ = std::move(reason);
      dump.Shutdown();
    }
  };
  DumpStream stream(&dump);
  const bool crc32 = info.binlog_checksum == "CRC32";
  std::optional<ReadAheadStream> ahead;
  if (options_.read_ahead) {
    ReadAheadStream::Options ao;
    ao.check_crc32 = crc32 && options_.verify_checksum;
    ahead.emplace(&stream, ao);
    ahead->set_on_caught_up(caught_up);
    // The reading thread only notes it; the callback runs on this one, in order.
    dump.set_before_block([&ahead] { ahead->SourceWillBlock(); });
    if (Status started = ahead->Start(); !started.ok()) {
      log_->warn("[{}] {}; reading the binlog on the parse thread", options_.destination, started.ToString());
      ahead.reset();  // (the hook below replaces the one that named it)
    }
  }
  if (!ahead) dump.set_before_block(caught_up);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.parallel = ahead.has_value();
  }

  // Where the stream stands before its first event: a sink that merges other rows with the
  // stream (a snapshot) learns the start now, not at the first transaction or heartbeat.
  if (plan.point.skip_until == 0 && !plan.point.file.empty() && !buffer_.in_transaction()) {
    LogPosition start;
    start.journal_name = plan.point.file;
    start.position = plan.point.position;
    sink_->OnIdle(start);
  }
  DumpSource source(ahead ? static_cast<RawEventStream*>(&*ahead) : &stream, plan.point.file, dump_from, crc32,
                    dump_from == plan.point.position ? 0 : plan.point.position);
  EventLoop loop(&buffer_, sink_, &counters_, &observer);
  const LoopEnd end = loop.Run(&source, &decoder, stop_, &s);
  // The reading thread ends before the connection is looked at or closed below (one that
  // still reads is shut down: whatever it read past the end of this session is not used).
  if (ahead) {
    ahead->Stop();
    log_->info("[{}] binlog read-ahead: {} events read ahead, {} read on the parse thread at a trickle, {} hand-overs",
               options_.destination, ahead->events_read(), ahead->direct_reads(), ahead->hand_overs());
  }
  observer.Publish();
  dump.set_before_block(nullptr);  // it names the observer, which ends with this scope
  if (end == LoopEnd::kStopped || stop_) {
    // The primary's dump thread would outlive this connection until its next write fails (an
    // idle primary: until its next event or heartbeat), and a new dump under the same replica
    // id (this destination started again) waits about 100 ms for the primary to end it: end it
    // now, through the session's own query connection (a user may KILL its own threads).
    if (const uint32_t id = dump.connection_id(); id != 0) {
      dump.Close();
      query.Execute("KILL CONNECTION " + std::to_string(id)).PermitUncheckedError();
    }
    return retry(Status::Aborted("stopping"));
  }
  if (!not_primary_.empty()) return retry(Status::Aborted(not_primary_));
  if (end == LoopEnd::kSource && source.stream_failed()) {
    const uint16_t code = dump.last_server_error().code;
    if (mysql::IsSlaveIdConflict(dump.last_server_error())) {
      return OnSlaveIdConflict(s, NowMs() - streaming_since_ms, error);
    }
    if (code == mysql::kErMasterFatalReadingBinlog) return HandleInvalidPosition(&query, plan, s, error);
    if (IsConfigError(code)) return fatal(s);
    return retry(s);
  }
  // A checksum that does not match: the bytes were damaged on their way
  // here, and reading them again from the resume point is the cure (a file
  // damaged on the primary's disk keeps failing, with backoff, and says so).
  if (s.subcode() == binlog::kErrorChecksumMismatch) return retry(s.WithContext(where));
  // A TABLE_MAP the history does not fit: say how to fix it.
  if (tracker.has_value() && s.subcode() == binlog::kErrorSchemaMismatch) {
    s = Status::Corruption(std::string(s.message()) + tracker->FixHint()).WithSubcode(s.subcode());
  }
  return fatal(s.WithContext(where));
}

Status EventParser::StartDump(mysql::DumpConnection* dump, const mysql::ServerInfo& info, const StartPlan& plan) {
  // Events keep the checksum the binlog has, so the decoder can verify them.
  CANAL_RETURN_IF_ERROR(dump->Execute("SET @master_binlog_checksum = @@global.binlog_checksum"));
  CANAL_RETURN_IF_ERROR(dump->Execute("SET @master_heartbeat_period = " +
                                      std::to_string(int64_t{options_.heartbeat_period_ms} * 1'000'000)));
  char uuid[40];
  std::snprintf(uuid, sizeof uuid, "63616e61-6c00-4000-8000-%012x", options_.slave_id);
  CANAL_RETURN_IF_ERROR(dump->Execute(std::string("SET @slave_uuid = '") + uuid + "'"));
  if (info.mariadb) {
    // 4 = MARIA_SLAVE_CAPABILITY_GTID: GTID events and annotations instead of fake BEGINs.
    CANAL_RETURN_IF_ERROR(dump->Execute("SET @mariadb_slave_capability = 4"));
    if (plan.kind == StartPlan::Kind::kMariaGtid) {
      CANAL_RETURN_IF_ERROR(dump->Execute("SET @slave_connect_state = " + SqlQuote(plan.gtid)));
      CANAL_RETURN_IF_ERROR(dump->Execute("SET @slave_gtid_strict_mode = 0"));
      CANAL_RETURN_IF_ERROR(dump->Execute("SET @slave_gtid_ignore_duplicates = 0"));
    }
  }
  CANAL_RETURN_IF_ERROR(dump->RegisterSlave(options_.slave_id));
  switch (plan.kind) {
    case StartPlan::Kind::kPosition:
      return dump->DumpFromPosition(plan.point.file, static_cast<uint32_t>(DumpRequestOffset(plan.point.position)), options_.slave_id);
    case StartPlan::Kind::kMariaGtid:
      return dump->DumpFromPosition("", 4, options_.slave_id);
    case StartPlan::Kind::kMysqlGtid:
      return dump->DumpFromGtidSet(plan.gtid, options_.slave_id);
  }
  return Status::InvalidArgument("unknown start plan");
}

// Both MySQL and MariaDB drop the replica that was there first when a second
// one registers with its id. Retrying every time would knock the other off in
// turn, forever, each side "streaming" a moment at a time. So: a session that
// had been streaming a while (the established one) takes its id back once;
// a session knocked off soon after it started (the newcomer, knocked back),
// or a second conflict, stops the parser (state "failed", logged once) naming
// the key to change. The instance restarts when its properties file changes.
EventParser::Outcome EventParser::OnSlaveIdConflict(const Status& server_error, int64_t streamed_ms,
                                                    Status* error) {
  constexpr int64_t kEstablishedMs = 5000;
  if (streamed_ms >= kEstablishedMs && !retook_slave_id_) {
    retook_slave_id_ = true;
    log_->warn("[{}] another replica registered on {} with this destination's slave id {} and the primary dropped "
               "this connection ({}); reconnecting at once to take the id back (a second conflict stops this "
               "destination): give one of them another {}",
               options_.destination, options_.master.Address(), options_.slave_id, server_error.ToString(),
               kSlaveIdKey);
    *error = server_error;
    return Outcome::kRestartNow;
  }
  *error = SlaveIdConflict(server_error);
  return Outcome::kFatal;
}

Status EventParser::SlaveIdConflict(const Status& server_error) const {
  return Status::InvalidArgument(
      "another replica registered on " + options_.master.Address() + " with this destination's slave id " +
      std::to_string(options_.slave_id) + ", so the primary dropped this connection (" + server_error.ToString() +
      "); two canal-servers or replicas share the id: give this destination a unique " + std::string(kSlaveIdKey) +
      " in its instance.properties (the destination stays stopped until that file changes)")
      .WithSubcode(mysql::kErSlaveSameId);
}

}  // namespace canal::parser
