#include "canal/parser/mysql/primary_probe.h"

#include <cstdlib>
#include <optional>

#include "canal/parser/mysql/query_connection.h"

namespace canal::mysql {

namespace {

bool IsYes(const std::optional<std::string>& v) {
  // "Yes", or "Connecting" while the IO thread retries its primary: replicating all the same.
  return v.has_value() && (*v == "Yes" || *v == "Connecting" || *v == "Preparing");
}

}  // namespace

std::string PrimaryProbe::Describe() const {
  if (!reachable) return "unreachable: " + error;
  std::string s = read_only ? "read_only=ON" : "read_only=OFF";
  s += replicating ? ", replicating from " + (replicating_from.empty() ? std::string("a primary") : replicating_from)
                   : ", not replicating";
  if (!replication_unknown.empty()) s = (read_only ? "read_only=ON" : "read_only=OFF") + std::string(", ") +
                                        replication_unknown;
  s += " (server_id " + std::to_string(server_id) + ")";
  return s;
}

Status ReadPrimaryRole(QueryConnection* query, PrimaryProbe* out) {
  ResultSet rs;
  CANAL_RETURN_IF_ERROR(query->Query("SELECT @@GLOBAL.read_only, @@GLOBAL.server_id", &rs));
  if (rs.rows.empty() || rs.rows[0].size() < 2 || !rs.rows[0][0] || !rs.rows[0][1]) {
    return Status::Corruption("SELECT @@read_only, @@server_id returned no row");
  }
  out->read_only = *rs.rows[0][0] != "0" && *rs.rows[0][0] != "OFF";
  out->server_id = static_cast<uint32_t>(std::strtoul(rs.rows[0][1]->c_str(), nullptr, 10));
  out->replicating = false;
  out->replicating_from.clear();
  // MariaDB lists every named connection; MySQL has one (SHOW REPLICA STATUS on 8.4).
  ResultSet slaves;
  Status s = query->Query("SHOW ALL SLAVES STATUS", &slaves);
  if (!s.ok()) s = query->Query("SHOW SLAVE STATUS", &slaves);
  if (!s.ok()) s = query->Query("SHOW REPLICA STATUS", &slaves);
  if (!s.ok()) {
    // Without the privilege the role rests on read_only alone (orchestrator and the cloud
    // managers keep replicas read-only); say how to tell replicas apart as well.
    out->replication_unknown = "replication status not readable (GRANT SLAVE MONITOR on MariaDB 10.5+, "
                               "REPLICATION CLIENT on MySQL, to the user): " + std::string(s.message());
    return Status::OK();
  }
  out->replication_unknown.clear();
  const auto column = [&](std::string_view a, std::string_view b) -> int {
    for (size_t i = 0; i < slaves.column_names.size(); ++i) {
      if (slaves.column_names[i] == a || slaves.column_names[i] == b) return static_cast<int>(i);
    }
    return -1;
  };
  const int io = column("Slave_IO_Running", "Replica_IO_Running");
  const int sql = column("Slave_SQL_Running", "Replica_SQL_Running");
  const int host = column("Master_Host", "Source_Host");
  const int port = column("Master_Port", "Source_Port");
  for (const ResultRow& row : slaves.rows) {
    const auto at = [&](int i) -> std::optional<std::string> {
      return i >= 0 && static_cast<size_t>(i) < row.size() ? row[i] : std::nullopt;
    };
    if (IsYes(at(io)) || IsYes(at(sql))) {
      out->replicating = true;
      if (at(host)) out->replicating_from = *at(host) + (at(port) ? ":" + *at(port) : "");
      break;
    }
  }
  return Status::OK();
}

PrimaryProbe ProbePrimary(const ConnectionOptions& options) {
  PrimaryProbe p;
  p.address = options.Address();
  QueryConnection query(options);
  Status s = query.Connect();
  if (s.ok()) s = ReadPrimaryRole(&query, &p);
  if (!s.ok()) {
    p.error = s.ToString();
    return p;
  }
  p.reachable = true;
  return p;
}

int ChoosePrimary(const std::vector<PrimaryProbe>& probes, int current, bool* split) {
  int chosen = -1, count = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (!probes[i].primary()) continue;
    ++count;
    if (chosen == -1 || static_cast<int>(i) == current) chosen = static_cast<int>(i);
  }
  *split = count > 1;
  return chosen;
}

}  // namespace canal::mysql
