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

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/mysql/dump_connection.h"
#include "canal/parser/mysql/information_schema_provider.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/schema/statement.h"
#include "schema_tracker.h"

namespace canal::parser {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint16_t kArtificialEventFlag = 0x20;  // LOG_EVENT_ARTIFICIAL_F: not at a real position

uint32_t ReadLE32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // x86/ARM little-endian hosts only, like the decoder
}

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

// How the next dump starts.
struct EventParser::StartPlan {
  enum class Kind : uint8_t { kPosition, kMariaGtid, kMysqlGtid } kind = Kind::kPosition;
  ResumePoint point;
  std::string gtid;
  std::string origin;  // for the log line: "stored cursor", "journal.name", ...
};

EventParser::EventParser(EventParserOptions options, TransactionSink* sink, ResumePointSource* cursor,
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
  const std::string_view m = error.message();
  if (m.find("Access denied") != std::string_view::npos || m.find("logging in as") != std::string_view::npos ||
      m.find("lacks a privilege") != std::string_view::npos) {
    return "authentication";
  }
  // A slave-id conflict is a setting to change, even when it comes as a 1236.
  if (m.find(kSlaveIdKey) != std::string_view::npos) return "configuration";
  // 1236: the primary cannot read from the position asked (purged, invalid).
  if (error.IsNotFound() || m.find("1236") != std::string_view::npos) return "position";
  switch (error.code()) {
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
  st.events = events_.load();
  st.rows_events = rows_events_.load();
  st.bytes = bytes_.load();
  const uint32_t t = last_event_time_.load();
  st.lag_ms = caught_up_.load() || t == 0 ? 0 : std::max<int64_t>(0, NowMs() - int64_t{t} * 1000);
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
  Status result;
  while (!stop_) {
    SetState("connecting");
    const uint64_t events_before = events_.load();
    Status error;
    const Outcome outcome = RunSession(&error);
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
    if (events_.load() != events_before) backoff_ms = options_.reconnect_initial_ms;  // it had been working
    if (outcome == Outcome::kRestartNow) continue;
    log_->warn("[{}] connection to {} lost: {}; reconnecting in {} ms from {}", options_.destination,
               options_.master.Address(), error.ToString(), backoff_ms, buffer_.resume_point().ToString());
    SetState("reconnecting");
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(backoff_ms), [this] { return stop_.load(); });
    backoff_ms = std::min(backoff_ms * 2, options_.reconnect_max_ms);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fatal_.ok()) status_.state = "stopped";
  }
  running_ = false;
  return result;
}

EventParser::Outcome EventParser::RunSession(Status* error) {
  const std::string where = options_.destination + " (" + options_.master.Address() + ")";
  auto fatal = [&](Status s) {
    *error = std::move(s);
    return Outcome::kFatal;
  };
  auto grant_hint = [&](Status s) {
    return s.WithContext("the replication user '" + options_.master.user +
                         "' lacks a privilege: GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '" +
                         options_.master.user + "'@'%' (MariaDB 10.5+: also BINLOG MONITOR)");
  };
  auto retry = [&](Status s) {
    *error = std::move(s);
    return Outcome::kRetry;
  };
  // Errors that another attempt cannot fix.
  auto is_config_error = [](uint16_t code) {
    return code == mysql::kErAccessDenied || code == mysql::kErSpecificAccessDenied || code == 1044 /*db access*/ ||
           code == 1142 /*table access*/ || code == 1251 /*auth method*/ || code == 1227;
  };

  mysql::QueryConnection query(options_.master);
  Status s = query.Connect();
  if (!s.ok()) {
    if (is_config_error(query.last_server_error().code)) {
      return fatal(s.WithContext("logging in as '" + options_.master.user +
                                 "' (canal.instance.dbUsername / canal.instance.dbPassword)"));
    }
    return retry(s);
  }
  mysql::ServerInfo info;
  s = query.ReadServerInfo(&info);
  if (!s.ok()) return is_config_error(query.last_server_error().code) ? fatal(s) : retry(s);
  std::vector<std::string> warnings;
  s = mysql::CheckReplicationSettings(info, &warnings);
  if (!s.ok()) return fatal(s.WithContext(where));
  if (!start_resolved_) {
    for (const auto& w : warnings) {
      // With a schema history the names come from it, not from information_schema.
      if (!options_.schema_history_file.empty() && w.find("column names come from information_schema") !=
                                                         std::string::npos) {
        continue;
      }
      log_->warn("[{}] {}", options_.destination, w);
    }
    log_->info("[{}] primary {} is {} {}, server_id {}, binlog_format {}, row image {}, row metadata {}, checksum {}",
               options_.destination, options_.master.Address(), info.mariadb ? "MariaDB" : "MySQL", info.version,
               info.server_id, info.binlog_format, info.binlog_row_image,
               info.binlog_row_metadata.empty() ? "(none)" : info.binlog_row_metadata, info.binlog_checksum);
  }

  // Where to start.
  StartPlan plan;
  if (!start_resolved_) {
    s = ResolveStart(&query, info, &plan);
    if (!s.ok()) {
      if (query.last_server_error().code == mysql::kErSpecificAccessDenied) s = grant_hint(s);
      return fatal(s.WithContext(where + ": choosing the start position"));
    }
    start_resolved_ = true;
    log_->info("[{}] starting from {} ({})", options_.destination,
               plan.kind == StartPlan::Kind::kPosition ? plan.point.ToString() : "GTID " + plan.gtid, plan.origin);
    buffer_.ResetTo(plan.point);
  } else {
    plan.point = buffer_.resume_point();
    if (plan.point.empty()) {
      // Nothing delivered yet after a GTID start: start again the same way.
      plan.kind = options_.start.gtid.empty() ? StartPlan::Kind::kPosition
                                               : (info.mariadb ? StartPlan::Kind::kMariaGtid : StartPlan::Kind::kMysqlGtid);
      plan.gtid = options_.start.gtid;
    }
    buffer_.ResetForReconnect();
    log_->info("[{}] resuming from {}", options_.destination,
               plan.kind == StartPlan::Kind::kPosition ? plan.point.ToString() : "GTID " + plan.gtid);
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
  } else if (info.binlog_row_metadata != "FULL") {
    schema.emplace(&query);
    dopts.schema_provider = &*schema;
  }
  binlog::EventDecoder decoder(dopts);

  mysql::DumpConnection dump(options_.master);
  s = dump.Connect();
  if (!s.ok()) return is_config_error(dump.last_server_error().code) ? fatal(s) : retry(s);
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
    if (is_config_error(code)) return fatal(grant_hint(s).WithContext("starting the binlog dump"));
    return retry(s);
  }
  SetState("streaming");
  const int64_t streaming_since_ms = NowMs();

  std::string file = plan.point.file;
  uint64_t pos = plan.point.position;
  const bool crc = info.binlog_checksum == "CRC32";
  for (;;) {
    std::string_view raw;
    s = dump.ReadEvent(&raw);
    if (stop_) return retry(Status::Aborted("stopping"));
    if (!s.ok()) {
      const uint16_t code = dump.last_server_error().code;
      if (mysql::IsSlaveIdConflict(dump.last_server_error())) {
        return OnSlaveIdConflict(s, NowMs() - streaming_since_ms, error);
      }
      if (code == mysql::kErMasterFatalReadingBinlog) return HandleInvalidPosition(&query, plan, s, error);
      if (is_config_error(code)) return fatal(s);
      return retry(s);
    }
    if (raw.size() < 19) return fatal(Status::Corruption(where + ": event of " + std::to_string(raw.size()) + " bytes at " + file + ":" + std::to_string(pos)));
    const uint32_t timestamp = ReadLE32(raw.data());
    const auto type = static_cast<uint8_t>(raw[4]);
    const uint32_t size = ReadLE32(raw.data() + 9);
    const uint32_t log_pos = ReadLE32(raw.data() + 13);
    uint16_t flags;
    std::memcpy(&flags, raw.data() + 17, 2);
    bytes_.fetch_add(raw.size(), std::memory_order_relaxed);

    // The server opens every dump with an artificial ROTATE naming the file,
    // before the FORMAT_DESCRIPTION the decoder needs: read it by hand.
    if (type == static_cast<uint8_t>(binlog::EventType::kRotate) && !decoder.has_format()) {
      const size_t tail = crc ? 4 : 0;
      if (raw.size() < 19 + 8 + tail) return fatal(Status::Corruption(where + ": short ROTATE event"));
      uint64_t next_pos;
      std::memcpy(&next_pos, raw.data() + 19, 8);
      file.assign(raw.substr(27, raw.size() - 27 - tail));
      pos = next_pos;
      decoder.set_source_name(file);
      continue;
    }
    const bool positioned = log_pos != 0 && (flags & kArtificialEventFlag) == 0 && log_pos >= size;
    const uint64_t offset = positioned ? log_pos - size : pos;
    const uint64_t end = positioned ? log_pos : pos;
    binlog::Event ev;
    s = decoder.Decode(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), offset, &ev);
    if (!s.ok()) {
      // A checksum that does not match: the bytes were damaged on their way
      // here, and reading them again from the resume point is the cure (a file
      // damaged on the primary's disk keeps failing, with backoff, and says so).
      if (s.IsCorruption() && s.message().find("checksum mismatch") != std::string_view::npos) {
        return retry(s.WithContext(where));
      }
      // A TABLE_MAP the history does not match: say how to fix it.
      if (tracker.has_value() && s.message().find("TABLE_MAP") != std::string_view::npos &&
          s.message().find("schema history") == std::string_view::npos) {
        s = Status::Corruption(std::string(s.message()) + tracker->FixHint());
      }
      return fatal(s.WithContext(where));
    }
    events_.fetch_add(1, std::memory_order_relaxed);

    if (const auto* rot = ev.As<binlog::RotateEvent>()) {
      // A real rotate ends a file; an artificial one (also sent after a GTID
      // start) just names where the stream is.
      file.assign(rot->next_file);
      pos = rot->position;
      decoder.set_source_name(file);
      continue;
    }
    if (ev.As<binlog::HeartbeatEvent>() != nullptr) {
      caught_up_ = true;
      if (log_pos != 0) pos = log_pos;
      LogPosition p;
      p.journal_name = file;
      p.position = pos;
      p.server_id = ev.header.server_id;
      {
        std::lock_guard<std::mutex> lock(mu_);
        status_.position = p;
      }
      if (!buffer_.in_transaction()) sink_->OnIdle(p);
      continue;
    }
    // The lag counts from changes in the stream: not from the FORMAT_DESCRIPTION
    // a dump opens with (it carries the file's creation time, which would make
    // a fresh start look hours behind until the first heartbeat).
    if (timestamp != 0 && positioned && type != static_cast<uint8_t>(binlog::EventType::kFormatDescription)) {
      last_event_time_.store(timestamp, std::memory_order_relaxed);
      caught_up_ = false;
    }
    if (tracker.has_value()) {
      if (const auto* q = ev.As<binlog::QueryEvent>()) {
        s = tracker->OnQuery(*q, schema::BinlogPoint{file, offset}, ev.header.timestamp);
        if (!s.ok()) return fatal(s.WithContext(where));
      } else if (const auto* tm = ev.As<binlog::TableMapEventRef>(); tm != nullptr && tm->table != nullptr) {
        s = tracker->CheckNamedTable(*tm->table);
        if (!s.ok()) return fatal(s.WithContext(where + " at " + file + ":" + std::to_string(offset)));
      }
    }
    if (schema.has_value()) {
      const auto* q = ev.As<binlog::QueryEvent>();
      if (q != nullptr && canal::schema::MayChangeColumns(canal::schema::ClassifyStatement(q->query))) {
        schema->Clear();
      }
    }
    if (ev.As<binlog::RowsEvent>() != nullptr) rows_events_.fetch_add(1, std::memory_order_relaxed);
    s = buffer_.Add(ev, decoder, file, offset, end);
    if (!s.ok()) return fatal(s.WithContext(where));
    while (decoder.has_pending_inner()) {
      binlog::Event inner;
      bool done = false;
      s = decoder.NextInner(&inner, &done);
      if (!s.ok()) return fatal(s.WithContext(where));
      if (done) break;
      if (inner.As<binlog::RowsEvent>() != nullptr) rows_events_.fetch_add(1, std::memory_order_relaxed);
      s = buffer_.Add(inner, decoder, file, offset, end);
      if (!s.ok()) return fatal(s.WithContext(where));
    }
    if (positioned) pos = end;
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_.position.journal_name = file;
      status_.position.position = pos;
      status_.position.server_id = ev.header.server_id;
      status_.position.timestamp_ms = int64_t{ev.header.timestamp} * 1000;
      status_.resume = buffer_.resume_point();
      status_.transactions = buffer_.transactions();
      status_.skipped_events = buffer_.skipped_events();
    }
  }
}

}  // namespace canal::parser

namespace canal::parser {

Status EventParser::ResolveStart(mysql::QueryConnection* query, const mysql::ServerInfo& info, StartPlan* plan) {
  if (cursor_ != nullptr) {
    bool found = false;
    CANAL_RETURN_IF_ERROR(cursor_->LoadResumePoint(&plan->point, &found).WithContext("loading the stored cursor"));
    if (found && !plan->point.empty()) {
      plan->origin = "stored cursor";
      return Status::OK();
    }
    plan->point = ResumePoint{};
  }
  const StartPosition& start = options_.start;
  if (!start.journal_name.empty()) {
    plan->point.file = start.journal_name;
    plan->point.position = start.position == 0 ? 4 : start.position;
    plan->origin = "canal.instance.master.journal.name/position";
    return Status::OK();
  }
  if (!start.gtid.empty()) {
    if (!info.mariadb && info.gtid_mode != "ON") {
      return Status::InvalidArgument("canal.instance.master.gtid is set but the MySQL primary has gtid_mode=" +
                                     info.gtid_mode + "; enable gtid_mode=ON or start by journal name/position");
    }
    plan->kind = info.mariadb ? StartPlan::Kind::kMariaGtid : StartPlan::Kind::kMysqlGtid;
    plan->gtid = start.gtid;
    plan->origin = "canal.instance.master.gtid";
    return Status::OK();
  }
  if (start.timestamp_ms > 0) {
    CANAL_RETURN_IF_ERROR(FindByTimestamp(query, info, start.timestamp_ms, &plan->point));
    plan->origin = "canal.instance.master.timestamp=" + std::to_string(start.timestamp_ms);
    return Status::OK();
  }
  mysql::MasterStatus ms;
  CANAL_RETURN_IF_ERROR(query->ShowMasterStatus(&ms));
  plan->point.file = ms.file;
  plan->point.position = ms.position;
  plan->origin = "the primary's current end (no cursor and no configured start)";
  return Status::OK();
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
      return dump->DumpFromPosition(plan.point.file, static_cast<uint32_t>(plan.point.position), options_.slave_id);
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
      " in its instance.properties (the destination stays stopped until that file changes)");
}

EventParser::Outcome EventParser::HandleInvalidPosition(mysql::QueryConnection* query, const StartPlan& plan,
                                                        const Status& cause, Status* error) {
  const std::string where = plan.kind == StartPlan::Kind::kPosition ? "binlog position " + plan.point.ToString()
                                                                    : "GTID position " + plan.gtid;
  if (options_.on_invalid_position == InvalidPositionAction::kStop) {
    *error = Status::NotFound(
        "the primary " + options_.master.Address() + " cannot serve " + where + " (" + cause.ToString() +
        "): the binlog was purged or the position is wrong. Set canal.instance.parser.invalid.position.action="
        "earliest (re-read from the oldest binlog) or =latest (skip to the current end), or reset the cursor");
    return Outcome::kFatal;
  }
  if (++invalid_position_jumps_ > 2) {
    *error = Status::NotFound("the primary keeps refusing the start position after jumping: " + cause.ToString());
    return Outcome::kFatal;
  }
  ResumePoint point;
  if (options_.on_invalid_position == InvalidPositionAction::kEarliest) {
    std::vector<mysql::BinaryLogFile> files;
    Status s = query->ShowBinaryLogs(&files);
    if (!s.ok() || files.empty()) {
      *error = s.ok() ? Status::NotFound("SHOW BINARY LOGS returned nothing") : s;
      return Outcome::kRetry;
    }
    point.file = files.front().name;
    point.position = 4;
  } else {
    mysql::MasterStatus ms;
    Status s = query->ShowMasterStatus(&ms);
    if (!s.ok()) {
      *error = s;
      return Outcome::kRetry;
    }
    point.file = ms.file;
    point.position = ms.position;
  }
  log_->error("[{}] the primary cannot serve {} ({}); jumping to the {} position {} as "
              "canal.instance.parser.invalid.position.action says: changes in between are {}",
              options_.destination, where, cause.ToString(),
              options_.on_invalid_position == InvalidPositionAction::kEarliest ? "earliest" : "latest",
              point.ToString(),
              options_.on_invalid_position == InvalidPositionAction::kEarliest ? "re-read" : "skipped");
  buffer_.ResetTo(point);
  *error = cause;
  return Outcome::kRestartNow;
}

// The first transaction that began at or after `timestamp_ms`. Binlog files
// are found by the time of their FORMAT_DESCRIPTION (the file's creation), then
// the chosen file is scanned transaction by transaction.
Status EventParser::FindByTimestamp(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                                    int64_t timestamp_ms, ResumePoint* point) {
  const uint32_t target = static_cast<uint32_t>((timestamp_ms + 999) / 1000);
  std::vector<mysql::BinaryLogFile> files;
  CANAL_RETURN_IF_ERROR(query->ShowBinaryLogs(&files));
  if (files.empty()) return Status::NotFound("SHOW BINARY LOGS lists no binlog files");

  // Streams `file` from 4, handing each event to `on_event` until it returns false.
  auto scan = [&](const std::string& file,
                  const std::function<Status(const binlog::Event&, const binlog::EventDecoder&, uint64_t, uint64_t,
                                             bool*)>& on_event) -> Status {
    mysql::DumpConnection dump(options_.master);
    CANAL_RETURN_IF_ERROR(dump.Connect());
    StartPlan plan;
    plan.point.file = file;
    plan.point.position = 4;
    CANAL_RETURN_IF_ERROR(StartDump(&dump, info, plan));
    binlog::EventDecoder decoder;
    decoder.set_source_name(file);
    const uint64_t last_size = files.back().size;
    const bool last_file = file == files.back().name;
    for (;;) {
      std::string_view raw;
      CANAL_RETURN_IF_ERROR(dump.ReadEvent(&raw));
      if (raw.size() < 19) return Status::Corruption("short event while scanning " + file);
      const auto type = static_cast<uint8_t>(raw[4]);
      const uint32_t size = ReadLE32(raw.data() + 9);
      const uint32_t log_pos = ReadLE32(raw.data() + 13);
      if (type == static_cast<uint8_t>(binlog::EventType::kRotate) && !decoder.has_format()) continue;
      binlog::Event ev;
      CANAL_RETURN_IF_ERROR(decoder.Decode(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(),
                                           log_pos >= size ? log_pos - size : 0, &ev));
      // The file ends at its ROTATE. One ended by a restart (STOP) or a crash
      // (no last event) is followed at once by the next file's artificial
      // ROTATE: either ends it, or the next file's events would pass for its own.
      if (ev.As<binlog::RotateEvent>() != nullptr || type == static_cast<uint8_t>(binlog::EventType::kStop)) {
        bool more = true;
        CANAL_RETURN_IF_ERROR(on_event(ev, decoder, 0, 0, &more));  // end of this file
        return Status::OK();
      }
      if (log_pos == 0 || ev.As<binlog::HeartbeatEvent>() != nullptr) continue;
      bool more = true;
      CANAL_RETURN_IF_ERROR(on_event(ev, decoder, log_pos - size, log_pos, &more));
      if (!more) return Status::OK();
      if (last_file && log_pos >= last_size) return Status::OK();  // reached the end as it was
    }
  };

  // Newest file created at or before the target.
  size_t chosen = files.size();
  for (size_t i = files.size(); i-- > 0;) {
    uint32_t created = 0;
    CANAL_RETURN_IF_ERROR(scan(files[i].name, [&](const binlog::Event& ev, const binlog::EventDecoder&, uint64_t,
                                                  uint64_t, bool* more) {
      if (ev.As<const binlog::FormatDescription*>() != nullptr) {
        created = ev.header.timestamp;
        *more = false;
      }
      return Status::OK();
    }));
    if (created != 0 && created <= target) {
      chosen = i;
      break;
    }
  }
  if (chosen == files.size()) {
    log_->warn("[{}] canal.instance.master.timestamp={} is older than the oldest binlog {}; starting there",
               options_.destination, timestamp_ms, files.front().name);
    point->file = files.front().name;
    point->position = 4;
    return Status::OK();
  }

  struct Finder : TransactionSink {
    uint32_t target;
    bool found = false;
    Transaction first;
    Status OnTransaction(const Transaction& t) override {
      if (t.timestamp >= target) {
        found = true;
        first.file = t.file;
        first.begin_offset = t.begin_offset;
        return Status::Aborted("found");
      }
      return Status::OK();
    }
  } finder;
  finder.target = target;
  TransactionBuffer buffer(&finder);
  bool rotated = false;
  uint64_t last_end = 4;
  const std::string& name = files[chosen].name;
  Status s = scan(name, [&](const binlog::Event& ev, const binlog::EventDecoder& dec, uint64_t off, uint64_t end,
                            bool* more) {
    if (end == 0) {
      rotated = true;
      return Status::OK();
    }
    last_end = end;
    Status add = buffer.Add(ev, dec, name, off, end);
    if (finder.found) {
      *more = false;
      return Status::OK();
    }
    return add;
  });
  CANAL_RETURN_IF_ERROR(s);
  if (finder.found) {
    point->file = finder.first.file;
    point->position = finder.first.begin_offset;
  } else if (rotated && chosen + 1 < files.size()) {
    point->file = files[chosen + 1].name;
    point->position = 4;
  } else {
    // Everything in the binlogs is older: start at the end as it was.
    point->file = name;
    point->position = last_end;
  }
  return Status::OK();
}

}  // namespace canal::parser
