// EventParser's side of a database failover (docs/replication.md, "Failover"): a binlog
// position names a point in one server's binlog only, so before streaming from one the
// parser asks the server what GTID state that position has there (MariaDB's
// BINLOG_GTID_POS). The same state as the stream's: the same point, stream by position.
// Anything else (another server, a rewritten binlog): resume after the delivered GTID
// state instead, after checking the server has every transaction of it; what it lacks
// was delivered but is lost to it (the old primary's last commits that never reached
// the replica), and stops the destination unless canal.instance.failover.diverged says
// to go on.
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/gtid_divergence.h"
#include "canal/parser/mysql/query_connection.h"
#include "dump_stream.h"

namespace canal::parser {

namespace {

const binlog::GtidSet::DomainGtid* FindDomain(const binlog::GtidSet& set, uint32_t domain) {
  for (const binlog::GtidSet::DomainGtid& d : set.domains()) {
    if (d.domain_id == domain) return &d;
  }
  return nullptr;
}

std::string GtidText(uint32_t domain, uint32_t server, uint64_t seq) {
  return std::to_string(domain) + "-" + std::to_string(server) + "-" + std::to_string(seq);
}

// "0-1-4991..0-1-5012" (one server's run of a domain).
std::string RunText(uint32_t domain, uint32_t server, uint64_t first, uint64_t last) {
  return first == last ? GtidText(domain, server, last)
                       : GtidText(domain, server, first) + ".." + GtidText(domain, server, last);
}

}  // namespace

Status ReadGtidVariable(mysql::QueryConnection* query, const char* name, binlog::GtidSet* out) {
  mysql::ResultSet rs;
  CANAL_RETURN_IF_ERROR(query->Query(std::string("SELECT @@GLOBAL.") + name, &rs));
  *out = binlog::GtidSet();
  if (rs.rows.empty() || rs.rows[0].empty() || !rs.rows[0][0].has_value()) return Status::OK();
  return binlog::GtidSet::Parse(*rs.rows[0][0], out).WithContext(std::string("@@") + name);
}

Status EventParser::BinlogGtidPos(mysql::QueryConnection* query, const ResumePoint& point,
                                  std::optional<binlog::GtidSet>* out) {
  out->reset();
  mysql::ResultSet rs;
  Status s = query->Query("SELECT BINLOG_GTID_POS(" + query->QuoteString(point.file) + ", " +
                              std::to_string(point.position) + ")",
                          &rs);
  // NULL (or an error): the file is not there, or the offset is not an event group's start.
  if (!s.ok() || rs.rows.empty() || rs.rows[0].empty() || !rs.rows[0][0].has_value()) return s;
  binlog::GtidSet set;
  CANAL_RETURN_IF_ERROR(binlog::GtidSet::Parse(*rs.rows[0][0], &set).WithContext("BINLOG_GTID_POS"));
  *out = std::move(set);
  return Status::OK();
}

Status EventParser::FollowGtidState(mysql::QueryConnection* query, const mysql::ServerInfo& info, bool first_start,
                                    StartPlan* plan) {
  GtidStateTracker& state = buffer_.gtid_state();
  if (!info.mariadb) return FollowMysqlGtidState(query, info, first_start, plan);
  state.SetTracking(true);
  if (plan->kind == StartPlan::Kind::kMariaGtid) {
    binlog::GtidSet start;
    if (plan->state) {
      start = *plan->state;
    } else if (!binlog::GtidSet::Parse(plan->gtid, &start).ok()) {
      state.Reset();
      return Status::OK();
    }
    state.Start(start);
    return Status::OK();
  }
  // What the stream's state is here: the start's (the cursor's set), or what was delivered.
  std::optional<binlog::GtidSet> expected;
  if (first_start) {
    expected = plan->state;
  } else if (state.known()) {
    // The same server as the last session: nothing to check (a reconnect, a restart).
    if (info.server_id == streamed_server_id_) return Status::OK();
    expected = state.state();
  } else if (streamed_server_id_ != 0 && info.server_id != streamed_server_id_) {
    return FailoverWithoutGtids(query, info, plan);
  }
  std::optional<binlog::GtidSet> there;
  Status s = BinlogGtidPos(query, plan->point, &there);
  if (!s.ok()) log_->debug("[{}] BINLOG_GTID_POS at {}: {}", options_.destination, plan->point.ToString(), s.ToString());
  if (!expected) {
    if (there) {
      state.Start(*there);
    } else {
      state.Reset();
      log_->info("[{}] the primary names no GTID state at {}; cursors carry one from the next binlog file on "
                 "(until then the destination cannot resume on another server)",
                 options_.destination, plan->point.ToString());
    }
    return Status::OK();
  }
  if (there && there->ToString() == expected->ToString()) {
    state.Start(*expected);
    return Status::OK();
  }
  const std::string why = there ? "its GTID state there is " + there->ToString() + ", the stream's " +
                                      expected->ToString()
                                : "it has no such point (no such file, or not an event group's start)";
  return ResumeByGtid(query, info, *expected, "binlog position " + plan->point.ToString() + " is not the stream's "
                                                  "point on " + options_.master.Address() + " (server_id " +
                                                  std::to_string(info.server_id) + "): " + why,
                      plan);
}

Status EventParser::ReportLost(const std::string& server, uint64_t count, const std::string& lost,
                               const std::string& its_state, const std::string& follows) {
  const std::string message = "the new primary " + server + " lacks " + std::to_string(count) +
                              " transaction(s) that clients already received: " + lost +
                              " (committed on the old primary, never replicated; " + its_state + ")";
  if (options_.on_diverged == DivergedAction::kStop) {
    return Status::Aborted(message + ". Those changes exist only downstream now. To follow the new primary anyway, "
                                     "set canal.instance.failover.diverged=continue (its own history " + follows +
                           " follows), or reset the cursor")
        .WithSubcode(binlog::kErrorDiverged);
  }
  log_->error("[{}] {}; going on {} as canal.instance.failover.diverged=continue says", options_.destination, message,
              follows);
  std::lock_guard<std::mutex> lock(mu_);
  status_.failover_lost_transactions += count;
  return Status::OK();
}

GtidDivergence FindGtidDivergence(const binlog::GtidSet::DomainGtid& delivered,
                                  const binlog::GtidSet::DomainGtid* has,
                                  const binlog::GtidSet::DomainGtid* applied) {
  GtidDivergence out;
  if (has != nullptr && has->server_id != delivered.server_id && applied != nullptr &&
      applied->server_id == delivered.server_id) {
    // It replicated up to `applied`, then wrote its own under the following numbers (or
    // has not written yet): what it never applied is lost, whatever its own count.
    if (applied->seq_no < delivered.seq_no) {
      out.diverged = true;
      out.parts = applied;
    }
    return out;
  }
  if (has == nullptr || has->seq_no < delivered.seq_no) {
    out.diverged = true;  // it is behind what was delivered
    out.parts = has;
  }
  return out;
}

Status EventParser::ResumeByGtid(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                                 const binlog::GtidSet& expected, const std::string& why, StartPlan* plan) {
  const std::string server = options_.master.Address() + " (server_id " + std::to_string(info.server_id) + ")";
  binlog::GtidSet binlog_pos, slave_pos;
  CANAL_RETURN_IF_ERROR(ReadGtidVariable(query, "gtid_binlog_pos", &binlog_pos).WithContext(server));
  // A promoted replica keeps the last GTID it applied from the old primary (RESET SLAVE does not
  // clear it): where its own history parts from the one delivered.
  CANAL_RETURN_IF_ERROR(ReadGtidVariable(query, "gtid_slave_pos", &slave_pos).WithContext(server));

  binlog::GtidSet resume;
  uint64_t lost = 0;
  std::string lost_text;
  for (const binlog::GtidSet::DomainGtid& d : expected.domains()) {
    const binlog::GtidSet::DomainGtid* has = FindDomain(binlog_pos, d.domain_id);
    const binlog::GtidSet::DomainGtid* applied = FindDomain(slave_pos, d.domain_id);
    const GtidDivergence divergence = FindGtidDivergence(d, has, applied);
    const binlog::GtidSet::DomainGtid* parts = divergence.parts;  // the last GTID both histories share
    if (!divergence.diverged) {
      CANAL_RETURN_IF_ERROR(resume.AddMariadb(d.domain_id, d.server_id, d.seq_no));
      continue;
    }
    const uint64_t from = parts == nullptr ? 1 : parts->seq_no + 1;
    lost += d.seq_no - from + 1;
    if (!lost_text.empty()) lost_text += ", ";
    lost_text += RunText(d.domain_id, d.server_id, from, d.seq_no);
    if (parts != nullptr) CANAL_RETURN_IF_ERROR(resume.AddMariadb(parts->domain_id, parts->server_id, parts->seq_no));
  }
  if (lost > 0) {
    CANAL_RETURN_IF_ERROR(ReportLost(server, lost, lost_text, "its state is " + binlog_pos.ToString(),
                                     resume.empty() ? std::string("from its start") : "from " + resume.ToString()));
  }
  // What the new primary has that was not delivered: its writes since the promotion, or
  // transactions written on the replica alone (errant); they are delivered now.
  uint64_t fresh = 0;
  std::string fresh_text;
  for (const binlog::GtidSet::DomainGtid& g : binlog_pos.domains()) {
    const binlog::GtidSet::DomainGtid* from = FindDomain(resume, g.domain_id);
    const uint64_t after = from == nullptr ? 0 : from->seq_no;
    if (g.seq_no <= after) continue;
    fresh += g.seq_no - after;
    if (!fresh_text.empty()) fresh_text += ", ";
    fresh_text += "domain " + std::to_string(g.domain_id) + " after seq " + std::to_string(after) + " up to " +
                  GtidText(g.domain_id, g.server_id, g.seq_no);
  }
  if (fresh > 0) {
    log_->warn("[{}] {} has {} transaction(s) the stream has not delivered ({}): its writes since it became "
               "primary, or transactions written on it alone while it was a replica (errant); they are delivered "
               "next",
               options_.destination, server, fresh, fresh_text);
  }
  if (plan->point.skip_until != 0) {
    log_->warn("[{}] the transaction at {} was partly delivered; on {} it is delivered again from its start",
               options_.destination, plan->point.ToString(), server);
  }
  log_->warn("[{}] {}; resuming after the delivered GTID state {}", options_.destination, why,
             resume.empty() ? std::string("(none: from the start of its binlogs)") : resume.ToString());
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++status_.failovers;
    status_.failover_new_transactions += fresh;
  }
  plan->ResumeAfter(StartPlan::Kind::kMariaGtid, resume);
  buffer_.gtid_state().Start(resume);
  return Status::OK();
}

}  // namespace canal::parser
