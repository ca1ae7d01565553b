// EventParser's side of a MySQL failover (docs/replication.md, "Failover"). MySQL names
// no GTID state for a binlog position (MariaDB's BINLOG_GTID_POS has no MySQL peer), so a
// stored cursor that carries the executed set resumes by that set (COM_BINLOG_DUMP_GTID),
// which is exact on whichever server answers; a reconnect to the same server resumes by
// position. A cursor inside a large transaction keeps its place only when the server's
// binlog holds that very transaction at that offset (SHOW BINLOG EVENTS): else the
// transaction is delivered again from its start.
#include <string>

#include <spdlog/spdlog.h>

#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/query_connection.h"
#include "dump_stream.h"

namespace canal::parser {

namespace {

// A set's text for a log line: long sets (many servers' histories) cut, with the count.
std::string ShortSet(const binlog::GtidSet& set) {
  constexpr size_t kMax = 400;
  std::string text = set.ToString();
  if (text.size() > kMax) text = text.substr(0, kMax) + "... (" + std::to_string(set.sources().size()) + " sources)";
  return text;
}

}  // namespace

bool EventParser::SameTransactionAt(mysql::QueryConnection* query, const ResumePoint& point, const std::string& gtid) {
  if (gtid.empty() || point.file.empty()) return false;
  mysql::ResultSet rs;
  Status s = query->Query("SHOW BINLOG EVENTS IN " + query->QuoteString(point.file) + " FROM " +
                              std::to_string(point.position) + " LIMIT 1",
                          &rs);
  if (!s.ok() || rs.rows.empty()) return false;
  // Columns: Log_name, Pos, Event_type, Server_id, End_log_pos, Info; a GTID event's Info
  // is "SET @@SESSION.GTID_NEXT= 'uuid[:tag]:gno'".
  size_t info_column = 5;
  for (size_t i = 0; i < rs.column_names.size(); ++i) {
    if (rs.column_names[i] == "Info") info_column = i;
  }
  const mysql::ResultRow& row = rs.rows[0];
  if (info_column >= row.size() || !row[info_column].has_value()) return false;
  return row[info_column]->find("'" + gtid + "'") != std::string::npos;
}

Status EventParser::FollowMysqlGtidState(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                                         bool first_start, StartPlan* plan) {
  GtidStateTracker& state = buffer_.gtid_state();
  // Below gtid_mode=ON transactions may be anonymous: no set describes a point of the stream.
  const bool gtids = info.gtid_mode == "ON";
  state.SetTracking(gtids);
  if (plan->kind == StartPlan::Kind::kMysqlGtid) {
    if (plan->state) {
      state.Start(*plan->state);
    } else {
      state.Reset();
    }
    return Status::OK();
  }
  if (first_start) {
    if (!plan->state || plan->state->flavor() == binlog::GtidSet::Flavor::kMariadb) return Status::OK();
    if (!gtids) {
      log_->warn("[{}] the stored cursor carries the GTID set {} but {} has gtid_mode={}: resuming by the cursor's "
                 "binlog position, which is right only on the server that wrote it",
                 options_.destination, ShortSet(*plan->state), options_.master.Address(), info.gtid_mode);
      return Status::OK();
    }
    if (plan->point.skip_until != 0 && SameTransactionAt(query, plan->point, plan->inside_gtid)) {
      // The partly delivered transaction is at the cursor's place here: resume inside it.
      state.Start(*plan->state);
      return Status::OK();
    }
    return ResumeByMysqlGtid(query, info, *plan->state, false,
                             "the stored cursor carries the delivered GTID set, exact on any server", plan);
  }
  // A reconnect: by position on the same server, by GTID on another.
  if (streamed_server_id_ == 0 || info.server_id == streamed_server_id_) return Status::OK();
  if (!gtids || !state.known()) return FailoverWithoutGtids(query, info, plan);
  return ResumeByMysqlGtid(query, info, state.state(), true,
                           options_.master.Address() + " is now server_id " + std::to_string(info.server_id) +
                               ", the stream was on " + std::to_string(streamed_server_id_),
                           plan);
}

Status EventParser::ResumeByMysqlGtid(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                                      const binlog::GtidSet& expected, bool failover, const std::string& why,
                                      StartPlan* plan) {
  const std::string server = options_.master.Address() + " (server_id " + std::to_string(info.server_id) + ")";
  binlog::GtidSet executed;
  CANAL_RETURN_IF_ERROR(ReadGtidVariable(query, "gtid_executed", &executed).WithContext(server));
  if (executed.flavor() == binlog::GtidSet::Flavor::kMariadb) {
    return Status::InvalidArgument(server + " answered @@gtid_executed with a MariaDB GTID position");
  }
  // What clients have that this server never executed: the old primary's last commits that
  // did not reach it. The rest is where the stream resumes.
  binlog::GtidSet lost, resume, fresh;
  CANAL_RETURN_IF_ERROR(expected.Subtract(executed, &lost).WithContext(server));
  CANAL_RETURN_IF_ERROR(expected.Subtract(lost, &resume).WithContext(server));
  if (!lost.empty()) {
    CANAL_RETURN_IF_ERROR(ReportLost(server, lost.TransactionCount(), ShortSet(lost),
                                     "its gtid_executed is " + ShortSet(executed),
                                     resume.empty() ? std::string("from its first binlog")
                                                    : "after " + ShortSet(resume)));
  }
  CANAL_RETURN_IF_ERROR(executed.Subtract(resume, &fresh).WithContext(server));
  const uint64_t fresh_count = fresh.TransactionCount();
  if (failover) {
    if (fresh_count > 0) {
      log_->warn("[{}] {} has {} transaction(s) the stream has not delivered ({}): its writes since it became "
                 "primary, or transactions written on it alone while it was a replica (errant); they are delivered "
                 "next",
                 options_.destination, server, fresh_count, ShortSet(fresh));
    }
    log_->warn("[{}] {}; resuming after the delivered GTID set {}", options_.destination, why,
               resume.empty() ? std::string("(none: from the start of its binlogs)") : ShortSet(resume));
    std::lock_guard<std::mutex> lock(mu_);
    ++status_.failovers;
    status_.failover_new_transactions += fresh_count;
  } else {
    log_->info("[{}] {}: resuming after {} on {}", options_.destination, why,
               resume.empty() ? std::string("nothing (from the first binlog)") : ShortSet(resume), server);
  }
  if (plan->point.skip_until != 0) {
    log_->warn("[{}] the transaction {} at {} was partly delivered and is not at that place on {}: it is delivered "
               "again from its start",
               options_.destination, plan->inside_gtid.empty() ? std::string("(no GTID)") : plan->inside_gtid,
               plan->point.ToString(), server);
  }
  plan->ResumeAfter(StartPlan::Kind::kMysqlGtid, resume);
  buffer_.gtid_state().Start(resume);
  return Status::OK();
}

}  // namespace canal::parser
