// EventParser's first job: where a stream starts — the stored cursor,
// canal.instance.master.journal.name/position, .gtid, .timestamp (found by
// scanning the binlog files through DumpSource), the primary's current end —
// and where it goes when the primary refuses that position.
#include <functional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/query_connection.h"
#include "dump_stream.h"

namespace canal::parser {

namespace {

// A file's text for a log line: bounded, control bytes and non-ASCII shown as '?'.
std::string LogSafe(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 240)) out.push_back(c >= 0x20 && c < 0x7F ? c : '?');
  if (text.size() > 240) out += "...";
  return out;
}

}  // namespace

Status EventParser::ResolveStart(mysql::QueryConnection* query, const mysql::ServerInfo& info, StartPlan* plan) {
  if (cursor_ != nullptr) {
    bool found = false;
    LogPosition cursor;
    CANAL_RETURN_IF_ERROR(cursor_->LoadCursor(&cursor, &found).WithContext("loading the stored cursor"));
    if (found) {
      CANAL_RETURN_IF_ERROR(ResumePointFromCursor(cursor, &plan->point)
                                .WithContext("the stored cursor of destination " + options_.destination +
                                             " (meta.dat or its ZooKeeper node; see docs/operations.md to reset it)"));
      plan->origin = "stored cursor";
      if (cursor.transaction_begin != 0) plan->inside_gtid = cursor.gtid;
      binlog::GtidSet state;
      Status gtid = GtidStateAt(cursor, &state);
      if (gtid.ok()) {
        plan->state = std::move(state);
      } else if (!gtid.IsNotFound()) {
        // A damaged or hand-edited set: the position still says where; the set cannot say
        // where on another server, so a failover will need GTID state from the binlog again.
        log_->warn("[{}] the stored cursor's GTID state is unusable ({}); resuming by its position {}, and "
                   "following a failover needs the state the binlog names next (fix or remove \"gtidSet\" in "
                   "meta.dat or the ZooKeeper cursor node)",
                   options_.destination, LogSafe(gtid.ToString()), plan->point.ToString());
      }
      return Status::OK();
    }
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
    binlog::GtidSet state;
    if (binlog::GtidSet::Parse(start.gtid, &state).ok()) plan->state = std::move(state);
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
    DumpStream stream(&dump);
    DumpSource source(&stream, file, 4, info.binlog_checksum == "CRC32");
    SourceEvent se;
    bool opened = false;  // past the dump's opening artificial ROTATE
    for (;;) {
      CANAL_RETURN_IF_ERROR(source.Next(&decoder, &se));
      // The file ends at its ROTATE. One ended by a restart (STOP) or a crash
      // (no last event) is followed at once by the next file's artificial
      // ROTATE: either ends it, or the next file's events would pass for its own.
      const bool rotate = se.event.As<binlog::RotateEvent>() != nullptr;
      if ((rotate && (se.in_file || opened)) || se.event.type() == binlog::EventType::kStop) {
        bool more = true;
        return on_event(se.event, decoder, 0, 0, &more);  // end of this file
      }
      if (rotate) continue;
      opened = true;
      if (!se.in_file || se.event.As<binlog::HeartbeatEvent>() != nullptr) continue;
      bool more = true;
      CANAL_RETURN_IF_ERROR(on_event(se.event, decoder, se.offset, se.end, &more));
      if (!more) return Status::OK();
      if (last_file && se.end >= last_size) return Status::OK();  // reached the end as it was
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
