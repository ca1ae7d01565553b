// AdminOperations: what the admin API changes beyond stop/start (docs/admin.md):
//
//   ResetCursor   move the cursors of a destination's clients to a binlog
//                 position, a time or a MariaDB GTID position; a dry run
//                 says, per client, what the move would deliver again or skip
//                 (transactions, events, bytes, tables), read from the
//                 primary's own SHOW BINLOG EVENTS.
//   ReadConfig / WriteConfig
//                 a destination's instance.properties; a new text is checked
//                 by the parser the server starts with, written atomically
//                 and applied by a restart of that destination alone.
//   TailLog       the last lines of logs/<destination>/<destination>.log.
//   Snapshot      an incremental snapshot, as bin/canal-admin.sh snapshot asks.
//
// A reset stops the destination, writes the cursors, and starts it again
// (unless an operator holds it stopped: then it stays stopped). In a ZooKeeper
// pair the stop hands the destination to the other server, so a reset is
// refused there (docs/admin.md says how to do it by hand).
//
// Threads: calls are serialised by the caller (the endpoint's one I/O thread).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/server/config.h"

namespace spdlog {
class logger;
}
namespace canal::meta {
class MetaManager;
}

namespace canal::server {

class InstanceRegistry;

struct CursorResetRequest {
  // Exactly one of: a position (journal, offset), a time, a MariaDB GTID position.
  std::string journal;
  uint64_t offset = 0;
  int64_t timestamp_ms = 0;
  std::string gtid;
  std::string client_id;  // empty: every subscribed client
  bool dry_run = false;
};

// What a move means for one client, counted over the binlog between its
// cursor and the target.
struct CursorEffect {
  std::string client_id;
  std::optional<LogPosition> from;  // its cursor; nullopt when it acked nothing yet
  std::string effect;               // "repeat", "skip", "none", "unknown"
  uint64_t transactions = 0;        // transactions that start in the range
  uint64_t events = 0;
  uint64_t bytes = 0;
  std::map<std::string, uint64_t> tables;  // schema.table -> transactions in the range that change it
  bool complete = true;  // false: the count stopped at its bound (or could not be made; see note)
  std::string note;
};

struct CursorResetReport {
  LogPosition target;
  std::string located_by;  // how the target was found
  std::vector<CursorEffect> clients;
  bool applied = false;
  std::string result;  // what was done ("stopped, cursors written, started")
};

class AdminOperations {
 public:
  // Events a dry run reads at most per client (SHOW BINLOG EVENTS pages).
  static constexpr uint64_t kMaxCountedEvents = 2'000'000;
  // A log tail: lines at most, and bytes read from the end of the file at most.
  static constexpr size_t kMaxTailLines = 2000;
  static constexpr size_t kMaxTailBytes = 1 << 20;
  // instance.properties larger than this is refused (it is a few KiB).
  static constexpr size_t kMaxConfigBytes = 256 * 1024;

  // `registry`, `meta` outlive this.
  AdminOperations(const CanalConfig& canal, InstanceRegistry* registry, meta::MetaManager* meta,
                  std::string logs_dir, std::shared_ptr<spdlog::logger> logger);

  // NotFound: no such destination (or, with client_id, no such client);
  // FailedPrecondition-like refusals are InvalidArgument with the reason.
  Status ResetCursor(std::string_view destination, const CursorResetRequest& request, CursorResetReport* report);

  Status ReadConfig(std::string_view destination, std::string* path, std::string* text);
  // *result says whether it took effect ("restarted with the new settings",
  // "written; the destination is held stopped: it applies at the next start").
  // A text the parser refuses: InvalidArgument with its message, nothing written.
  Status WriteConfig(std::string_view destination, const std::string& text, bool dry_run, std::string* result);

  // The last `lines` lines (at most kMaxTailLines) of the destination's log;
  // *truncated when the file holds more than was read.
  Status TailLog(std::string_view destination, size_t lines, std::string* text, bool* truncated);

  Status Snapshot(std::string_view destination, const std::vector<std::string>& tables, const std::string& where,
                  std::string* id);

 private:
  Status CountRange(const InstanceConfig& config, const LogPosition& from, const LogPosition& to,
                    CursorEffect* effect);

  const CanalConfig canal_;
  InstanceRegistry* const registry_;
  meta::MetaManager* const meta_;
  const std::string logs_dir_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace canal::server
