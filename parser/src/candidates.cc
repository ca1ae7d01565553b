// EventParser among several candidate servers (canal.instance.master.address with several
// host:port): which one is the primary, and noticing when the current one stops being it.
// The move itself, by GTID state, is gtid_failover.cc's.
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/primary_probe.h"
#include "canal/parser/mysql/query_connection.h"

namespace canal::parser {

bool EventParser::MoveToPrimary(const Status& why) {
  std::vector<mysql::PrimaryProbe> probes;
  int current = -1;
  for (size_t i = 0; i < options_.candidates.size(); ++i) {
    mysql::ConnectionOptions o = options_.master;
    o.host = options_.candidates[i].host;
    o.port = options_.candidates[i].port;
    o.connect_timeout_ms = std::min(o.connect_timeout_ms, 3'000);  // a dead host must not hold the search
    if (o.host == options_.master.host && o.port == options_.master.port) current = static_cast<int>(i);
    probes.push_back(mysql::ProbePrimary(o));
  }
  bool split = false;
  const int chosen = mysql::ChoosePrimary(probes, current, &split);
  std::string all;
  for (const mysql::PrimaryProbe& p : probes) all += (all.empty() ? "" : "; ") + p.address + ": " + p.Describe();
  if (split) {
    log_->error("[{}] more than one candidate is writable and not replicating ({}): taking {}; make the others "
                "read-only", options_.destination, all, probes[chosen].address);
  }
  if (chosen < 0) {
    log_->warn("[{}] no candidate is the primary yet ({}); asking again", options_.destination, all);
    return false;
  }
  if (chosen == current) return false;
  const std::string from = options_.master.Address();
  options_.master.host = options_.candidates[chosen].host;
  options_.master.port = options_.candidates[chosen].port;
  const std::string reason = "moved from " + from + " (" + why.ToString() + ") to " + probes[chosen].address +
                             ", the primary: " + probes[chosen].Describe();
  log_->warn("[{}] {}", options_.destination, reason);
  std::lock_guard<std::mutex> lock(mu_);
  status_.server = options_.master.Address() + " (" + reason + ")";
  return true;
}

bool EventParser::StillPrimary(mysql::QueryConnection* query, std::string* reason) {
  if (options_.candidates.size() < 2) return true;
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                       .count();
  if (now - role_checked_ms_ < options_.heartbeat_period_ms) return true;
  role_checked_ms_ = now;
  mysql::PrimaryProbe role;
  role.address = options_.master.Address();
  // A failed check is the stream's business (it fails too, or the connection comes back).
  if (!mysql::ReadPrimaryRole(query, &role).ok()) return true;
  role.reachable = true;
  if (role.primary()) return true;
  *reason = options_.master.Address() + " is no longer the primary: " + role.Describe();
  return false;
}

bool EventParser::DetectingSqlPasses(mysql::QueryConnection* query, std::string* reason) {
  if (!options_.detecting_enable || options_.detecting_sql.empty()) return true;
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                       .count();
  if (now - detected_ms_ < options_.heartbeat_period_ms) return true;
  detected_ms_ = now;
  mysql::ResultSet rs;
  Status s = query->Query(options_.detecting_sql, &rs);
  if (s.ok()) {
    detect_failures_ = 0;
    return true;
  }
  ++detect_failures_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++status_.detecting_failures;
  }
  log_->warn("[{}] canal.instance.detecting.sql failed on {} ({} in a row): {}", options_.destination,
             options_.master.Address(), detect_failures_, s.ToString());
  if (!options_.detecting_ha || options_.candidates.size() < 2 || detect_failures_ < options_.detect_retry_threshold) {
    return true;
  }
  *reason = "canal.instance.detecting.sql failed " + std::to_string(detect_failures_) + " times in a row on " +
            options_.master.Address() + " (canal.instance.detecting.heartbeatHaEnable): " + s.ToString();
  detect_failures_ = 0;
  return false;
}

}  // namespace canal::parser
