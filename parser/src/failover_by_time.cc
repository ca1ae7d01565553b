// A failover the stream cannot follow exactly: another server behind the address (or
// another candidate) and no GTID state to resume by (MySQL with gtid_mode below ON, or a
// start by position before the next binlog file named the state). A binlog position
// names a point in one server's binlog only, so the destination stops naming the fix,
// unless the standby keys say where the standby's binlog goes on, or the operator chose
// Canal's timestamp way: resume on the new server at the first
// transaction at or after the last delivered one's time minus a window, which delivers
// the window's transactions again (docs/replication.md, "Failover without GTIDs").
#include <string>

#include <spdlog/spdlog.h>

#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/query_connection.h"
#include "dump_stream.h"

namespace canal::parser {

Status EventParser::FailoverWithoutGtids(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                                         StartPlan* plan) {
  const std::string server = options_.master.Address() + " (server_id " + std::to_string(info.server_id) + ")";
  const std::string moved = "the stream moved from server_id " + std::to_string(streamed_server_id_) + " to " +
                            server + " and has no GTID state to resume by (" +
                            (info.mariadb || info.gtid_mode == "ON"
                                 ? std::string("the start by binlog position has not reached a binlog file that "
                                               "names it yet")
                                 : "gtid_mode=" + info.gtid_mode) +
                            "): its binlog position means nothing on another server";
  const StartPosition& standby = options_.standby_start;
  if (!options_.standby.host.empty() && options_.standby.host == options_.master.host &&
      options_.standby.port == options_.master.port && (!standby.journal_name.empty() || standby.timestamp_ms > 0)) {
    // Canal's meaning of the standby keys: the operator said where the standby's binlog goes on.
    ResumePoint point;
    if (!standby.journal_name.empty()) {
      point.file = standby.journal_name;
      point.position = standby.position == 0 ? 4 : standby.position;
    } else {
      CANAL_RETURN_IF_ERROR(FindByTimestamp(query, info, standby.timestamp_ms, &point).WithContext(server));
    }
    log_->warn("[{}] {}; starting on the standby at {} as canal.instance.standby.{} says (what lies between the "
               "last delivered transaction and that point is as the setting chose it)",
               options_.destination, moved, point.ToString(),
               standby.journal_name.empty() ? "timestamp" : "journal.name/position");
    return StartAt(point, false, plan);
  }
  const uint32_t last_ts = plan->point.timestamp;
  if (options_.failover_timestamp_fallback_s <= 0 || last_ts == 0) {
    return Status::Aborted(moved + (options_.failover_timestamp_fallback_s > 0
                                        ? std::string(", and no transaction was delivered yet to take a time from")
                                        : std::string()) +
                           ". Enable GTIDs on every server (MySQL: gtid_mode=ON and enforce_gtid_consistency=ON) "
                           "so that cursors carry the delivered set, then reset the cursor; or set "
                           "canal.instance.failover.timestamp.fallback=true to resume by time, which delivers up to "
                           "canal.instance.fallbackIntervalInSeconds of changes again")
        .WithSubcode(binlog::kErrorNoGtidState);
  }
  const int64_t from_s = std::max<int64_t>(0, int64_t{last_ts} - options_.failover_timestamp_fallback_s);
  ResumePoint point;
  CANAL_RETURN_IF_ERROR(FindByTimestamp(query, info, from_s * 1000, &point).WithContext(server));
  log_->warn("[{}] {}; resuming by time as canal.instance.failover.timestamp.fallback says: at {}, the first "
             "transaction at or after {} s ({} s before the last delivered one): the transactions of that window "
             "are delivered again",
             options_.destination, moved, point.ToString(), from_s, options_.failover_timestamp_fallback_s);
  return StartAt(point, true, plan);
}

Status EventParser::StartAt(const ResumePoint& point, bool by_time, StartPlan* plan) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++status_.failovers;
    if (by_time) ++status_.failover_timestamp_fallbacks;
  }
  plan->kind = StartPlan::Kind::kPosition;
  plan->point = point;
  buffer_.ResetTo(point);
  buffer_.gtid_state().Reset();  // known again from the next binlog file
  return Status::OK();
}

}  // namespace canal::parser
