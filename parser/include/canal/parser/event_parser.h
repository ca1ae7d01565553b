// EventParser: one instance's replica — connects to the primary, streams its
// binlog from the right place, decodes it, and hands whole transactions to a
// TransactionSink, for as long as it runs.
//
// Start position, first match wins: the stored cursor (CursorSource: the
// meta manager), canal.instance.master.journal.name/position, .gtid,
// .timestamp (the first transaction that began at or after it, found by
// scanning the binlog files), else the primary's current end.
//
// Faults: any network error or server restart reconnects with capped
// exponential backoff and resumes at TransactionBuffer::resume_point(), so no
// transaction is lost or repeated. A start position the server no longer has
// (error 1236) stops the parser unless on_invalid_position says to jump to the
// earliest or latest position. Configuration errors (wrong password, missing
// REPLICATION SLAVE, binlog_format not ROW, ...) stop it with a message that
// names the fix; they are not retried.
//
// The jobs live apart: the start position (start_position.cc), the
// connection and backoff policy (event_parser.cc), and the hot loop over a
// BinlogSource (EventLoop, also run over binlog files by tests and tools).
//
// Threads: Run() loops on the caller's thread; Start() runs it on a thread of
// its own. Stop() and status() may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/schema/history_store.h"
#include "canal/common/status.h"
#include "canal/parser/event_loop.h"
#include "canal/parser/mysql/connection_options.h"
#include "canal/parser/transaction.h"
#include "canal/parser/transaction_buffer.h"

namespace spdlog {
class logger;
}
namespace canal::binlog {
class GtidSet;
}
namespace canal::mysql {
class DumpConnection;
class QueryConnection;
struct ServerInfo;
}

namespace canal::parser {

// canal.instance.master.journal.name / .position / .timestamp / .gtid
struct StartPosition {
  std::string journal_name;
  uint64_t position = 0;      // 0 with a journal name: the file's start (4)
  int64_t timestamp_ms = 0;   // 0: unset
  std::string gtid;           // MariaDB "0-1-100,1-2-7" or MySQL "uuid:1-100"
};

// What to do when the server says the start position does not exist
// (canal.instance.parser.invalid.position.action).
enum class InvalidPositionAction : uint8_t {
  kStop,      // the default: report and stop; an operator decides
  kEarliest,  // restart at the oldest binlog the server still has (re-reads)
  kLatest,    // restart at the current end (skips what is in between)
};
Status ParseInvalidPositionAction(std::string_view text, InvalidPositionAction* action);

// What to do when a new primary lacks transactions the stream already delivered
// (canal.instance.failover.diverged; docs/replication.md, "Failover").
enum class DivergedAction : uint8_t {
  kStop,      // the default: stop the destination, naming the lost GTIDs
  kContinue,  // log ERROR, count them, follow the new primary's history
};
Status ParseDivergedAction(std::string_view text, DivergedAction* action);

// Where the stored cursor comes from (the meta manager: the slowest
// subscribed client's); optional. The cursor is the one type every module
// uses for it — LogPosition, as the sink writes it into each entry and the
// meta manager keeps it — and only the parser turns it into where to dump
// (ResumePointFromCursor).
class CursorSource {
 public:
  virtual ~CursorSource() = default;
  // *found = false when there is no cursor yet.
  virtual Status LoadCursor(LogPosition* cursor, bool* found) = 0;
};

// One of the servers canal.instance.master.address lists.
struct MasterCandidate {
  std::string host;
  uint16_t port = 3306;
};

struct EventParserOptions {
  std::string destination = "example";
  mysql::ConnectionOptions master;  // host and port: the candidate streamed from first
  // canal.instance.master.address with several host:port (docs/replication.md, "Failover"):
  // the parser streams from the one that is primary and looks for the new one when the
  // current one fails `detect_retry_threshold` sessions in a row or stops being primary
  // (read-only, or replicating). Empty or one: the master only, retried for ever.
  std::vector<MasterCandidate> candidates;
  // Canal's canal.instance.standby.address (also among the candidates) and its
  // standby.journal.name/position/timestamp: where a stream without GTID state starts when
  // it moves to the standby (with GTID state the delivered set says where, and these are
  // not used). Empty host: none.
  MasterCandidate standby;
  StartPosition standby_start;
  int detect_retry_threshold = 3;  // canal.instance.detecting.retry.threshold
  // canal.instance.detecting.enable / .sql / .heartbeatHaEnable: while the stream is caught up,
  // run `detecting_sql` on the primary once per heartbeat period (a health check, or a
  // heartbeat write such as Debezium's heartbeat.action.query). A failure is a WARN and
  // counted; with `detecting_ha`, `detect_retry_threshold` failures in a row end the session
  // and the candidates are asked for the primary.
  bool detecting_enable = false;
  std::string detecting_sql = "select 1";
  bool detecting_ha = false;
  uint32_t slave_id = 0;  // canal.instance.mysql.slaveId; 0: derived from destination and address
  StartPosition start;
  InvalidPositionAction on_invalid_position = InvalidPositionAction::kStop;
  DivergedAction on_diverged = DivergedAction::kStop;
  // A stream without GTID state (MySQL gtid_mode=OFF, or a start by position before the
  // next binlog file named the state) that finds another server: stop (0, the default),
  // or, when canal.instance.failover.timestamp.fallback is on, resume on the new server
  // at the first transaction at or after the last delivered one's time minus this many
  // seconds (canal.instance.fallbackIntervalInSeconds): the window is delivered again.
  int failover_timestamp_fallback_s = 0;
  int heartbeat_period_ms = 3'000;  // asked of the server; silence of 3 periods drops the connection
  int reconnect_initial_ms = 100;
  int reconnect_max_ms = 30'000;
  bool verify_checksum = true;
  // canal.instance.parser.parallel: the socket is read, framed and its checksums checked on
  // a thread of its own, ahead of the decoding (ReadAheadStream). Off: one thread does all.
  bool read_ahead = true;
  TransactionBufferOptions buffer;
  // The destination's schema history (docs/schema-history.md): column names for
  // binlogs without FULL row metadata, checked against those with it. Empty: no
  // history; columns come from information_schema as it is now.
  std::string schema_history_file;
  // Where the history is kept instead of that file (ZooKeeper, for HA); the
  // file name still turns the history on.
  std::shared_ptr<schema::HistoryStore> schema_history_store;
  // Compaction (canal.instance.tsdb.snapshot.interval / .expire, in hours
  // there): at a start at least `interval` after the last compaction, DDL
  // records older than `expire` and before the start position fold into the
  // snapshot. 0 = never.
  int64_t schema_compact_interval_s = 24 * 3600;
  int64_t schema_compact_expire_s = 360 * 3600;
  // Tables whose history is kept (the destination's filter); null = all.
  std::function<bool(std::string_view db, std::string_view table)> schema_scope;
  // Called on the parser's thread when it has given the sink everything it
  // read and is about to wait: for more from the primary (all it sent so far
  // is read), or for a reconnect. The server tells its ring, so a low-latency
  // get ends then instead of at every entry of a backlog. Empty: not called.
  std::function<void()> on_caught_up;
};

struct ParserStatus {
  std::string state;        // connecting, streaming, reconnecting, stopped, failed
  LogPosition position;     // end of the last event read (file, offset, event time)
  ResumePoint resume;       // where a reconnect would start
  int64_t lag_ms = 0;       // now minus the last event's time; 0 when caught up (heartbeats)
  uint64_t events = 0, transactions = 0, rows_events = 0, bytes = 0, reconnects = 0;
  // Events re-read after a reconnect inside a partly delivered transaction and skipped.
  uint64_t skipped_events = 0;
  std::string server;        // the candidate streamed from (host:port), and why it was chosen
  bool parallel = false;     // the stream is read ahead on a thread of its own (read_ahead)
  std::string last_error;
  int64_t last_error_ms = 0;  // when last_error happened (ms since the epoch); 0: never
  // Moves to another server's binlog by GTID state (a failover), transactions the new
  // server lacked though they were delivered (diverged=continue), and transactions it had
  // that the stream had not delivered when it moved there.
  uint64_t failovers = 0, failover_lost_transactions = 0, failover_new_transactions = 0;
  // Of the failovers, those resumed by time (no GTID state): each delivers a window again.
  uint64_t failover_timestamp_fallbacks = 0;
  // Runs of canal.instance.detecting.sql that failed.
  uint64_t detecting_failures = 0;
  // Sessions that ended in an error, by kind (ErrorKind), for metrics.
  std::map<std::string, uint64_t> errors;
};

// The kind of a parser error for metrics and status: "connection" (network,
// timeouts, the primary going away), "authentication", "position" (binlog
// gone or invalid position), "decode" (corrupt or truncated events),
// "configuration" (settings the primary refuses), "unsupported", "other".
std::string_view ParserErrorKind(const Status& error);

class EventParser {
 public:
  EventParser(EventParserOptions options, TransactionSink* sink, CursorSource* cursor = nullptr,
              std::shared_ptr<spdlog::logger> logger = nullptr);
  ~EventParser();
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;

  // Runs until Stop() (returns OK) or a fatal error (returns it).
  Status Run();
  // Run() on a thread of its own; fatal_error() says how it ended.
  void Start();
  // Asks the loop to end and waits for the thread started by Start().
  void Stop();
  bool running() const { return running_.load(); }
  Status fatal_error() const;
  ParserStatus status() const;

  // Where `start` (a journal name and offset, a timestamp, or a MariaDB GTID position; the
  // first set wins, as in ResolveStart) lies in the primary's binlog now, without streaming:
  // the admin API's cursor reset. A journal is checked against SHOW BINARY LOGS (the file
  // exists, the offset is within it); a timestamp is found as a configured start would be; a
  // GTID position is where the primary starts a dump asked for it. *how says which way.
  // Its short dumps register options.slave_id: give the locating parser an id the running
  // parser does not use, or the primary drops one of them.
  Status Locate(const StartPosition& start, ResumePoint* out, std::string* how);

  // A stable replica server id for a destination (canal.instance.mysql.slaveId=0).
  static uint32_t DeriveSlaveId(std::string_view destination, std::string_view address);

 private:
  struct StartPlan;
  enum class Outcome : uint8_t { kRetry, kFatal, kRestartNow };
  Outcome RunSession(Status* error);
  // RunSession's steps. ConnectAndCheck logs in, reads the primary's settings
  // and checks them: nullopt to go on, else the session's outcome (*error set).
  std::optional<Outcome> ConnectAndCheck(mysql::QueryConnection* query, mysql::ServerInfo* info, Status* error);
  // The first start's position (ResolveStart), or the buffer's resume point.
  Status PlanStart(mysql::QueryConnection* query, const mysql::ServerInfo& info, StartPlan* plan);
  Status GrantHint(const Status& s) const;
  Status ResolveStart(mysql::QueryConnection* query, const mysql::ServerInfo& info, StartPlan* plan);
  Status StartDump(mysql::DumpConnection* dump, const mysql::ServerInfo& info, const StartPlan& plan);
  Status SlaveIdConflict(const Status& server_error) const;
  Outcome OnSlaveIdConflict(const Status& server_error, int64_t streamed_ms, Status* error);
  Outcome HandleInvalidPosition(mysql::QueryConnection* query, const StartPlan& plan, const Status& cause,
                                Status* error);
  Status FindByTimestamp(mysql::QueryConnection* query, const mysql::ServerInfo& info, int64_t timestamp_ms,
                         ResumePoint* point);
  // gtid_failover.cc: the GTID state at the start, and the move to another server's binlog.
  Status FollowGtidState(mysql::QueryConnection* query, const mysql::ServerInfo& info, bool first_start,
                         StartPlan* plan);
  Status ResumeByGtid(mysql::QueryConnection* query, const mysql::ServerInfo& info, const binlog::GtidSet& expected,
                      const std::string& why, StartPlan* plan);
  // Delivered transactions the new server lacks (`lost`, `count` of them): the destination
  // stops (kErrorDiverged), or with diverged=continue an ERROR line and the count. `its_state`
  // and `follows` ("from ...", "after ...") complete the message.
  Status ReportLost(const std::string& server, uint64_t count, const std::string& lost, const std::string& its_state,
                    const std::string& follows);
  // mysql_gtid_failover.cc: the same for MySQL's executed GTID sets.
  Status FollowMysqlGtidState(mysql::QueryConnection* query, const mysql::ServerInfo& info, bool first_start,
                              StartPlan* plan);
  Status ResumeByMysqlGtid(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                           const binlog::GtidSet& expected, bool failover, const std::string& why, StartPlan* plan);
  // Whether the binlog of `query`'s server holds the transaction `gtid` at `point` (file and
  // the offset where it begins): then a position inside it means the same there.
  static bool SameTransactionAt(mysql::QueryConnection* query, const ResumePoint& point, const std::string& gtid);
  // Another server and no GTID state to resume by: stop, or the timestamp fallback.
  Status FailoverWithoutGtids(mysql::QueryConnection* query, const mysql::ServerInfo& info, StartPlan* plan);
  // Its end: the stream goes on at `point` of the new server (a failover; `by_time`: the fallback).
  Status StartAt(const ResumePoint& point, bool by_time, StartPlan* plan);
  static Status BinlogGtidPos(mysql::QueryConnection* query, const ResumePoint& point,
                              std::optional<binlog::GtidSet>* out);
  // The candidate that is primary now; true when it is another than the current one, which
  // then becomes options_.master (candidates.cc).
  bool MoveToPrimary(const Status& why);
  // While streaming, at most once per heartbeat period: false (and the reason) when the server
  // `query` is on is no longer the primary.
  bool StillPrimary(mysql::QueryConnection* query, std::string* reason);
  // The same moment: canal.instance.detecting.sql, at most once per heartbeat period; false
  // (and the reason) when it failed often enough to look for another primary.
  bool DetectingSqlPasses(mysql::QueryConnection* query, std::string* reason);
  void SetState(std::string_view state);
  void Fail(const Status& s);
  void NoteErrorLocked(const Status& s);  // last_error, its time and kind; mu_ held

  EventParserOptions options_;
  TransactionSink* sink_;
  CursorSource* cursor_;
  std::shared_ptr<spdlog::logger> log_;
  TransactionBuffer buffer_;
  bool start_resolved_ = false;
  bool retook_slave_id_ = false;  // a slave-id conflict was answered by taking the id back
  int invalid_position_jumps_ = 0;  // jumps since events last flowed (a loop guard)
  uint32_t streamed_server_id_ = 0;  // @@server_id of the server the last session streamed from
  std::string not_primary_;          // why the last session ended: the server is not the primary
  int64_t role_checked_ms_ = 0;      // when StillPrimary last asked
  int64_t detected_ms_ = 0;          // when the detecting SQL last ran
  int detect_failures_ = 0;          // its failures in a row

  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::thread thread_;
  mutable std::mutex mu_;  // guards the fields below and the live dump connection pointer
  std::condition_variable cv_;
  ParserStatus status_;
  Status fatal_;
  mysql::DumpConnection* live_dump_ = nullptr;
  // Status fields the loop updates without the lock (read under it for snapshots).
  LoopCounters counters_;
};

}  // namespace canal::parser
