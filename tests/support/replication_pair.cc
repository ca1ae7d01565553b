#include "support/replication_pair.h"

#include <cstdlib>
#include <filesystem>
#include <thread>
#include <utility>

#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool ParseUint(const std::string& s, uint64_t* v) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *v = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

std::vector<std::string> ServerOptions(uint32_t server_id, const std::vector<std::string>& extra) {
  // Why each: replication_pair.h. relay_log: a fixed name in the data dir
  // (the default is named after the host).
  std::vector<std::string> o = {"server_id=" + std::to_string(server_id), "log_slave_updates=ON", "gtid_domain_id=0",
                                "gtid_strict_mode=ON", "read_only=ON", "relay_log=relay-bin"};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

std::unique_ptr<MariadbSandbox> MakeServer(uint16_t port, std::string dir, uint32_t server_id,
                                           const std::vector<std::string>& extra) {
  SandboxOptions o;
  o.port = port;
  o.dir = std::move(dir);
  o.extra_options = ServerOptions(server_id, extra);
  return std::make_unique<MariadbSandbox>(std::move(o));
}

std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

std::string Gtid::ToString() const {
  return std::to_string(domain) + "-" + std::to_string(server_id) + "-" + std::to_string(seq);
}

bool ParseGtidPos(const std::string& text, std::map<uint32_t, Gtid>* pos) {
  pos->clear();
  const std::string all = Trim(text);
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    const std::string one = Trim(all.substr(start, end - start));
    const size_t d1 = one.find('-');
    const size_t d2 = d1 == std::string::npos ? d1 : one.find('-', d1 + 1);
    uint64_t domain = 0, server = 0, seq = 0;
    if (d2 == std::string::npos || !ParseUint(one.substr(0, d1), &domain) ||
        !ParseUint(one.substr(d1 + 1, d2 - d1 - 1), &server) || !ParseUint(one.substr(d2 + 1), &seq)) {
      return false;
    }
    (*pos)[static_cast<uint32_t>(domain)] = Gtid{static_cast<uint32_t>(domain), static_cast<uint32_t>(server), seq};
    start = end + 1;
  }
  return true;
}

bool GtidPosCovers(const std::map<uint32_t, Gtid>& applied, const std::map<uint32_t, Gtid>& target) {
  for (const auto& [domain, want] : target) {
    const auto it = applied.find(domain);
    if (it == applied.end()) return false;
    const Gtid& have = it->second;
    if (have.seq < want.seq) return false;
    if (have.seq == want.seq && have.server_id != want.server_id) return false;
  }
  return true;
}

std::string ReplicaStatus::ToString() const {
  if (!configured) return "not a replica (SHOW SLAVE STATUS is empty)";
  std::string s = "master port " + std::to_string(master_port) + ", Slave_IO_Running " + io_running +
                  ", Slave_SQL_Running " + sql_running + ", gtid_slave_pos '" + gtid_slave_pos + "', Gtid_IO_Pos '" +
                  gtid_io_pos + "', SQL state '" + sql_state + "'";
  if (io_errno != 0) s += ", Last_IO_Error " + std::to_string(io_errno) + ": " + io_error;
  if (sql_errno != 0) s += ", Last_SQL_Error " + std::to_string(sql_errno) + ": " + sql_error;
  return s;
}

bool ReadReplicaStatus(MariadbSandbox& server, ReplicaStatus* status, std::string* error) {
  // Our own client run, not MariadbSandbox::Sql: that one skips column names,
  // and SHOW SLAVE STATUS is only readable by name (\G: one "Name: value" a line).
  std::string client = "mariadb";
  for (const char* p : {"/usr/bin/mariadb", "/usr/bin/mysql"}) {
    if (std::filesystem::exists(p)) {
      client = p;
      break;
    }
  }
  const std::string cmd = ShellQuote(client) + " --no-defaults --socket=" + ShellQuote(server.socket()) +
                          " -uroot --batch -e " +
                          ShellQuote("SELECT @@gtid_slave_pos AS Gtid_Slave_Pos\\G SHOW SLAVE STATUS\\G");
  int rc = 0;
  const std::string out = RunShell(cmd, &rc);
  if (rc != 0) {
    *error = "SHOW SLAVE STATUS on port " + std::to_string(server.port()) + " failed (exit code " +
             std::to_string(rc) + "): " + out;
    return false;
  }
  std::map<std::string, std::string> f;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    start = end + 1;
    const size_t colon = line.find(':');
    if (line.starts_with("***") || colon == std::string::npos) continue;
    f[Trim(line.substr(0, colon))] = Trim(line.substr(colon + 1));
  }
  *status = ReplicaStatus{};
  status->gtid_slave_pos = f["Gtid_Slave_Pos"];
  status->configured = f.contains("Slave_IO_Running");
  if (!status->configured) return true;
  status->io_running = f["Slave_IO_Running"];
  status->sql_running = f["Slave_SQL_Running"];
  status->io_errno = std::atoi(f["Last_IO_Errno"].c_str());
  status->io_error = f["Last_IO_Error"];
  status->sql_errno = std::atoi(f["Last_SQL_Errno"].c_str());
  status->sql_error = f["Last_SQL_Error"];
  status->sql_state = f["Slave_SQL_Running_State"];
  status->master_port = static_cast<uint16_t>(std::atoi(f["Master_Port"].c_str()));
  status->gtid_io_pos = f["Gtid_IO_Pos"];
  // Stays "" after CHANGE MASTER until the primary accepts the GTID start
  // position (its first event is a rotate naming its binlog file).
  status->master_log_file = f["Master_Log_File"];
  return true;
}

ReplicationPair::ReplicationPair(ReplicationPairOptions options) {
  servers_[0] = MakeServer(options.port_a, std::move(options.dir_a), options.server_id_a, options.extra_options);
  servers_[1] = MakeServer(options.port_b, std::move(options.dir_b), options.server_id_b, options.extra_options);
}

namespace {
ReplicationPairOptions PortsOnly(uint16_t port_a, uint16_t port_b) {
  ReplicationPairOptions o;
  o.port_a = port_a;
  o.port_b = port_b;
  return o;
}
}  // namespace

ReplicationPair::ReplicationPair(uint16_t port_a, uint16_t port_b) : ReplicationPair(PortsOnly(port_a, port_b)) {}

ReplicationPair::~ReplicationPair() { Stop(nullptr); }

std::string ReplicationPair::Name(const MariadbSandbox& server) const {
  const bool is_a = &server == servers_[0].get();
  const bool is_primary = &server == servers_[primary_].get();
  return std::string(is_primary ? "primary " : "replica ") + (is_a ? "A" : "B") + " (port " +
         std::to_string(server.port()) + ")";
}

bool ReplicationPair::Run(MariadbSandbox& server, const std::string& sql, const std::string& step,
                          std::string* error, std::string* output) {
  if (server.Sql(sql, output)) return true;
  *error = step + " on " + Name(server) + " failed: " + server.error();
  return false;
}

bool ReplicationPair::Start(std::string* error) {
  primary_ = 0;
  killed_ = -1;
  // Side by side: most of a start is mariadb-install-db and start-up waits.
  bool ok[2] = {false, false};
  std::thread other([&] { ok[1] = servers_[1]->StartFresh(); });
  ok[0] = servers_[0]->StartFresh();
  other.join();
  for (int i = 0; i < 2; ++i) {
    if (!ok[i]) {
      *error = std::string("starting ") + (i == 0 ? "A" : "B") + " on port " + std::to_string(servers_[i]->port()) +
               " failed: " + servers_[i]->error();
      return false;
    }
  }
  // The script's user canal@127.0.0.1 already has REPLICATION SLAVE (and
  // BINLOG MONITOR), on both servers, so either can be a primary.
  if (!Run(primary(), "SET GLOBAL read_only=OFF", "SET GLOBAL read_only=OFF", error)) return false;
  return ReplicateFrom(replica(), primary(), 30s, error);
}

bool ReplicationPair::Stop(std::string* error) {
  // Side by side: a clean shutdown takes ~2 s each. A server already down
  // (killed, never started) is a quick no-op.
  bool ok[2] = {false, false};
  std::thread other([&] { ok[1] = servers_[1]->Stop(); });
  ok[0] = servers_[0]->Stop();
  other.join();
  std::string message;
  for (int i = 0; i < 2; ++i) {
    if (ok[i]) continue;
    message += (message.empty() ? "" : "; ") + ("stopping " + Name(*servers_[i]) + " failed: " + servers_[i]->error());
  }
  if (error != nullptr) *error = message;
  return message.empty();
}

bool ReplicationPair::ReplicateFrom(MariadbSandbox& target, MariadbSandbox& source, std::chrono::milliseconds timeout,
                                    std::string* error) {
  // MASTER_DEMOTE_TO_SLAVE: why, in replication_pair.h. MASTER_CONNECT_RETRY=1:
  // a replica whose primary restarts reconnects within a second, not 60.
  const std::string sql = "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=" + std::to_string(source.port()) +
                          ", MASTER_USER='" + MariadbSandbox::kUser + "', MASTER_PASSWORD='" +
                          MariadbSandbox::kPassword +
                          "', MASTER_USE_GTID=slave_pos, MASTER_DEMOTE_TO_SLAVE=1, MASTER_CONNECT_RETRY=1;\n"
                          "START SLAVE;";
  if (!Run(target, sql, "CHANGE MASTER TO port " + std::to_string(source.port()) + "; START SLAVE", error)) {
    return false;
  }
  return WaitCaughtUp(target, source, timeout, /*require_running=*/true, error);
}

bool ReplicationPair::WaitCaughtUp(MariadbSandbox& target, MariadbSandbox& source, std::chrono::milliseconds timeout,
                                   bool require_running, std::string* error) {
  std::string source_text;
  if (!Run(source, "SELECT @@gtid_binlog_pos", "SELECT @@gtid_binlog_pos", error, &source_text)) return false;
  source_text = Trim(source_text);
  std::map<uint32_t, Gtid> want;
  if (!ParseGtidPos(source_text, &want)) {
    *error = Name(source) + " has an unreadable @@gtid_binlog_pos: '" + source_text + "'";
    return false;
  }
  enum { kWaiting, kDone, kFailed } state = kWaiting;
  ReplicaStatus st;
  std::string read_error;
  WaitFor(
      [&] {
        if (!ReadReplicaStatus(target, &st, &read_error) || !st.configured) {
          state = kFailed;
          return true;
        }
        std::map<uint32_t, Gtid> have;
        const bool covered = ParseGtidPos(st.gtid_slave_pos, &have) && GtidPosCovers(have, want);
        const bool running = st.io_running == "Yes" && st.sql_running == "Yes" && !st.master_log_file.empty();
        if (covered && (running || !require_running)) {
          state = kDone;
        } else if (st.io_running == "No" || st.sql_running == "No") {
          state = kFailed;  // a stopped thread does not come back by itself
        }
        return state != kWaiting;
      },
      timeout, 50ms);
  if (state == kDone) return true;
  const std::string what = Name(target) + " replicating from " + Name(source) + " (to reach its gtid_binlog_pos '" +
                           source_text + "')";
  if (!read_error.empty()) {
    *error = what + ": " + read_error;
  } else if (state == kFailed) {
    *error = what + ": replication stopped: " + st.ToString();
    if (st.io_errno == 1236) {
      *error += " [the replica's GTID position is not in the primary's binlog: it has transactions the primary "
                "lacks (diverged), or the primary purged what it needs]";
    }
  } else {
    *error = what + ": not done within " + Millis(timeout) + ": " + st.ToString();
  }
  return false;
}

bool ReplicationPair::WaitReplicaCaughtUp(std::chrono::milliseconds timeout, std::string* error) {
  return WaitCaughtUp(replica(), primary(), timeout, /*require_running=*/false, error);
}

bool ReplicationPair::KillPrimary(std::string* error) {
  if (!primary().Kill9()) {
    *error = "kill -9 of " + Name(primary()) + " failed: " + primary().error();
    return false;
  }
  killed_ = primary_;
  return true;
}

bool ReplicationPair::PromoteReplica(std::string* error, std::chrono::milliseconds drain_timeout) {
  MariadbSandbox& r = replica();
  // STOP SLAVE alone would drop what the relay log holds and the SQL thread
  // has not applied yet (RESET SLAVE ALL deletes the relay logs): stop
  // fetching, then let the SQL thread finish, as orchestrator does.
  if (!Run(r, "STOP SLAVE IO_THREAD", "STOP SLAVE IO_THREAD", error)) return false;
  ReplicaStatus st;
  std::string read_error;
  const bool drained = WaitFor(
      [&] {
        if (!ReadReplicaStatus(r, &st, &read_error)) return false;
        return !st.configured || st.sql_running != "Yes" || st.sql_state.starts_with("Slave has read all relay log");
      },
      drain_timeout, 50ms);
  if (!drained) {
    *error = "promoting " + Name(r) + ": the SQL thread did not apply its relay log within " + Millis(drain_timeout) +
             ": " + (read_error.empty() ? st.ToString() : read_error);
    return false;
  }
  if (st.configured && st.sql_errno != 0) {
    *error = "promoting " + Name(r) + ": its SQL thread stopped with an error: " + st.ToString();
    return false;
  }
  if (!Run(r, "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only=OFF;",
           "promoting (STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only=OFF)", error)) {
    return false;
  }
  primary_ = 1 - primary_;
  return true;
}

bool ReplicationPair::StopReplicaIo(std::string* error) {
  return Run(replica(), "STOP SLAVE IO_THREAD", "STOP SLAVE IO_THREAD", error);
}

bool ReplicationPair::StartReplicaIo(std::string* error) {
  return Run(replica(), "START SLAVE IO_THREAD", "START SLAVE IO_THREAD", error);
}

bool ReplicationPair::PlannedSwitchover(std::string* error, std::chrono::milliseconds timeout) {
  if (killed_ >= 0) {
    *error = "planned switchover: " + Name(*servers_[killed_]) + " is down (killed)";
    return false;
  }
  MariadbSandbox& old_primary = primary();
  if (!Run(old_primary, "SET GLOBAL read_only=ON", "switchover: SET GLOBAL read_only=ON", error)) return false;
  if (!WaitReplicaCaughtUp(timeout, error)) {
    // Aborted before anything changed hands: the primary takes writes again.
    std::string ignored;
    Run(old_primary, "SET GLOBAL read_only=OFF", "switchover abort", &ignored);
    *error = "switchover aborted (the replica did not catch up): " + *error;
    return false;
  }
  if (!PromoteReplica(error, timeout)) return false;
  if (!ReplicateFrom(old_primary, primary(), timeout, error)) {
    *error = "switchover: the new primary is up, but the old one does not replicate from it: " + *error;
    return false;
  }
  return true;
}

bool ReplicationPair::RejoinOldPrimaryAsReplica(std::string* error, std::chrono::milliseconds timeout) {
  if (killed_ < 0 || killed_ == primary_) {
    *error = killed_ < 0 ? "rejoin: no server was killed (KillPrimary first)"
                         : "rejoin: the killed server is still the primary (PromoteReplica first)";
    return false;
  }
  MariadbSandbox& old_primary = *servers_[killed_];
  // my.cnf says read_only=ON (the pair's convention), so it comes back read-only.
  if (!old_primary.Start()) {
    *error = "rejoin: restarting " + Name(old_primary) + " failed: " + old_primary.error();
    return false;
  }
  killed_ = -1;
  if (!Run(old_primary, "SET GLOBAL read_only=ON", "rejoin: SET GLOBAL read_only=ON", error)) return false;
  if (!ReplicateFrom(old_primary, primary(), timeout, error)) {
    *error = "rejoin: " + *error;
    return false;
  }
  return true;
}

}  // namespace canal::testing
