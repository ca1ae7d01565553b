// The statements a replica sends before it dumps, answered the way MySQL 8
// does: SET (the dump settings kept), SELECT @@variables, SHOW VARIABLES,
// SHOW MASTER / BINARY LOG STATUS, SHOW BINARY LOGS; and what a failover
// manager asks: @@read_only, @@gtid_executed / @@gtid_purged, SHOW SLAVE /
// REPLICA STATUS.
#include <cctype>
#include <map>
#include <optional>

#include "support/replay_primary/replay_internal.h"

namespace canal::testing::replay {
namespace {

std::string Eof() { return std::string("\xfe\x00\x00\x02\x00", 5); }

std::string Upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.front())) != 0)) s.remove_prefix(1);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) != 0 || s.back() == ';')) s.remove_suffix(1);
  return s;
}

// The single-quoted strings of a statement, in order.
std::vector<std::string> QuotedStrings(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\'') continue;
    std::string v;
    for (++i; i < s.size() && s[i] != '\''; ++i) v.push_back(s[i]);
    out.push_back(v);
  }
  return out;
}

// SQL LIKE with % and _, case-insensitive as variable names are.
bool Like(std::string_view text, std::string_view pat) {
  if (pat.empty()) return text.empty();
  if (pat[0] == '%') {
    for (size_t i = 0; i <= text.size(); ++i) {
      if (Like(text.substr(i), pat.substr(1))) return true;
    }
    return false;
  }
  if (text.empty()) return false;
  const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  if (pat[0] != '_' && lower(pat[0]) != lower(text[0])) {
    return false;
  }
  return Like(text.substr(1), pat.substr(1));
}

class Statements {
 public:
  Statements(Shared* sh, PacketConn* conn, DumpRequest* dump) : sh_(sh), conn_(conn), dump_(dump) {}

 private:

  // The role and GTID state (they change while serving), under the lock.
  struct Live {
    bool read_only = false;
    std::string replicating_from, gtid_executed, gtid_purged;
  };
  Live ReadLive() const {
    std::lock_guard<std::mutex> lock(sh_->mu);
    return {sh_->read_only, sh_->replicating_from, sh_->gtid_executed, sh_->gtid_purged};
  }

  std::map<std::string, std::string> Variables(const Live& live) const {
    const ReplayPrimaryOptions& o = sh_->options;
    const bool crc = !sh_->files.empty() && sh_->files.front().crc32;
    std::map<std::string, std::string> v = {
        {"version", o.server_version},
        {"version_comment", "canal replay primary"},
        {"server_id", std::to_string(o.server_id)},
        {"server_uuid", o.server_uuid},
        {"log_bin", "ON"},
        {"binlog_format", "ROW"},
        {"binlog_row_image", "FULL"},
        {"binlog_row_metadata", "FULL"},
        {"binlog_checksum", crc ? "CRC32" : "NONE"},
        {"gtid_mode", "ON"},
        {"enforce_gtid_consistency", "ON"},
        {"read_only", "OFF"},
        {"max_allowed_packet", "67108864"},
        {"character_set_server", "utf8mb4"},
        {"collation_server", "utf8mb4_0900_ai_ci"},
        {"lower_case_table_names", "0"},
        {"time_zone", "SYSTEM"},
        {"system_time_zone", "UTC"},
    };
    for (const auto& [name, value] : o.variables) v[name] = value;
    // Set from `variables` at the start, and by the setters since.
    v["read_only"] = live.read_only ? "ON" : "OFF";
    v["gtid_executed"] = live.gtid_executed;
    v["gtid_purged"] = live.gtid_purged;
    return v;
  }

  // MySQL's answer to what its grammar lacks.
  bool MysqlSyntaxError(std::string_view near) {
    return conn_->Write(ErrPacket(1064, "42000",
                                  "You have an error in your SQL syntax; check the manual that corresponds to your "
                                  "MySQL server version for the right syntax to use near '" +
                                      Printable(near) + "' at line 1"));
  }

  // SHOW SLAVE STATUS (old column names) / SHOW REPLICA STATUS (8.0.22's): no
  // row when not a replica, else one running connection to replicating_from.
  bool ReplicaStatus(bool new_names, const Live& live) {
    // The columns a failover manager reads, in MySQL's order.
    static const char* const kColumns[] = {
        "Slave_IO_State", "Master_Host", "Master_User", "Master_Port", "Connect_Retry", "Master_Log_File",
        "Read_Master_Log_Pos", "Relay_Log_File", "Relay_Log_Pos", "Relay_Master_Log_File", "Slave_IO_Running",
        "Slave_SQL_Running", "Last_Errno", "Last_Error", "Exec_Master_Log_Pos", "Seconds_Behind_Master",
        "Last_IO_Errno", "Last_IO_Error", "Master_Server_Id", "Master_UUID", "Retrieved_Gtid_Set",
        "Executed_Gtid_Set", "Auto_Position"};
    std::vector<std::string> columns;
    for (std::string c : kColumns) {
      if (new_names) {
        for (auto [from, to] : {std::pair{"Master", "Source"}, std::pair{"Slave", "Replica"}}) {
          if (const size_t at = c.find(from); at != std::string::npos) c.replace(at, std::string_view(from).size(), to);
        }
      }
      columns.push_back(c);
    }
    if (live.replicating_from.empty()) return SendResult(columns, {});
    const size_t colon = live.replicating_from.rfind(':');
    const std::string host = live.replicating_from.substr(0, colon);
    const std::string port = colon == std::string::npos ? "3306" : live.replicating_from.substr(colon + 1);
    const std::vector<std::optional<std::string>> row = {
        new_names ? "Waiting for source to send event" : "Waiting for master to send event",
        host, sh_->options.user, port, "60", "binlog.000001", "4", "relay.000001", "4", "binlog.000001",
        "Yes", "Yes", "0", "", "4", "0", "0", "", "0", "", "", live.gtid_executed, "1"};
    return SendResult(columns, {row});
  }

  bool SendResult(const std::vector<std::string>& columns,
                  const std::vector<std::vector<std::optional<std::string>>>& rows) {
    std::string p;
    PutLenenc(&p, columns.size());
    if (!conn_->Write(p)) return false;
    for (const std::string& c : columns) {
      p.clear();
      PutLenencString(&p, "def");
      PutLenencString(&p, "");
      PutLenencString(&p, "");
      PutLenencString(&p, "");
      PutLenencString(&p, c);
      PutLenencString(&p, c);
      p.push_back('\x0c');
      PutInt(&p, 255, 2);   // utf8mb4
      PutInt(&p, 1024, 4);  // display length
      p.push_back('\xfd');  // VAR_STRING
      PutInt(&p, 0, 2);     // flags
      p.push_back('\0');    // decimals
      PutInt(&p, 0, 2);
      if (!conn_->Write(p)) return false;
    }
    if (!conn_->Write(Eof())) return false;
    for (const auto& row : rows) {
      p.clear();
      for (const auto& v : row) {
        if (v) {
          PutLenencString(&p, *v);
        } else {
          p.push_back('\xfb');
        }
      }
      if (!conn_->Write(p)) return false;
    }
    return conn_->Write(Eof());
  }

  bool Syntax(std::string_view sql) {
    return conn_->Write(ErrPacket(1064, "42000", "the replay primary does not answer '" + Printable(sql) + "'"));
  }

  bool Set(std::string_view sql) {
    // SET @a = x, @b = 'y': the replica's session settings the dump depends on.
    std::string upper = Upper(sql);
    auto value_of = [&](std::string_view name) -> std::optional<std::string> {
      const size_t at = upper.find(name);
      if (at == std::string::npos) return std::nullopt;
      size_t eq = upper.find('=', at);
      if (eq == std::string::npos) return std::nullopt;
      size_t end = upper.find(',', eq);
      return std::string(Trim(std::string_view(upper).substr(eq + 1, end == std::string::npos ? end : end - eq - 1)));
    };
    if (auto v = value_of("@MASTER_BINLOG_CHECKSUM")) dump_->checksum_aware = *v != "'NONE'" && *v != "NONE";
    if (auto v = value_of("@SOURCE_BINLOG_CHECKSUM")) dump_->checksum_aware = *v != "'NONE'" && *v != "NONE";
    if (auto v = value_of("@MASTER_HEARTBEAT_PERIOD")) {
      int64_t ns = 0;
      for (char c : *v) {
        if (c < '0' || c > '9') break;
        ns = ns * 10 + (c - '0');
        if (ns > (int64_t{1} << 50)) break;
      }
      dump_->heartbeat_ns = ns;
    }
    return conn_->Write(OkPacket());
  }

 public:
  bool Query(std::string_view sql) {
    const std::string u = Upper(sql);
    const ReplayPrimaryOptions& o = sh_->options;
    const Live live = ReadLive();
    const auto vars = Variables(live);
    auto starts = [&](std::string_view p) { return u.rfind(p, 0) == 0; };
    if (starts("SET ")) return Set(sql);
    if (u == "SELECT VERSION()") return SendResult({"VERSION()"}, {{o.server_version}});
    if (starts("SELECT @@")) {
      std::vector<std::string> names;
      std::vector<std::optional<std::string>> row;
      std::string_view rest = std::string_view(sql).substr(7);
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        std::string_view item = Trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (item.rfind("@@", 0) != 0) return Syntax(sql);
        std::string name(item.substr(2));
        for (std::string_view scope : {"global.", "GLOBAL.", "session.", "SESSION."}) {
          if (name.rfind(scope, 0) == 0) name.erase(0, scope.size());
        }
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const auto it = vars.find(name);
        if (it == vars.end()) {
          return conn_->Write(ErrPacket(1193, "HY000", "Unknown system variable '" + Printable(name) + "'"));
        }
        names.emplace_back(item);
        // A boolean reads as 0 / 1 in a SELECT (ON / OFF in SHOW VARIABLES).
        if (name == "read_only") {
          row.emplace_back(it->second == "ON" ? "1" : "0");
        } else {
          row.emplace_back(it->second);
        }
      }
      return SendResult(names, {row});
    }
    if (starts("SHOW VARIABLES") || starts("SHOW GLOBAL VARIABLES") || starts("SHOW SESSION VARIABLES")) {
      const std::vector<std::string> wanted = QuotedStrings(sql);
      const bool like = u.find(" LIKE ") != std::string::npos;
      std::vector<std::vector<std::optional<std::string>>> rows;
      for (const auto& [name, value] : vars) {
        bool match = wanted.empty();
        for (const std::string& w : wanted) match = match || (like ? Like(name, w) : Upper(name) == Upper(w));
        if (match) rows.push_back({name, value});
      }
      return SendResult({"Variable_name", "Value"}, rows);
    }
    const int version = VersionNumber(o.server_version);
    const bool old_status = u == "SHOW MASTER STATUS" && version < 80400;       // 8.4 removed it
    const bool new_status = u == "SHOW BINARY LOG STATUS" && version >= 80200;  // 8.2 added it
    if (old_status || new_status) {
      const std::vector<std::string> columns = {"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB",
                                                "Executed_Gtid_Set"};
      if (sh_->files.empty()) return SendResult(columns, {});
      const BinlogFile& last = sh_->files.back();
      return SendResult(columns, {{last.name, std::to_string(last.bytes.size()), "", "", live.gtid_executed}});
    }
    // MySQL has one replication status statement per version: SLAVE until 8.4,
    // REPLICA from 8.0.22; ALL SLAVES is MariaDB's.
    if (u == "SHOW ALL SLAVES STATUS") return MysqlSyntaxError(sql.substr(5));
    if (u == "SHOW SLAVE STATUS") {
      return version >= 80400 ? MysqlSyntaxError(sql.substr(5)) : ReplicaStatus(false, live);
    }
    if (u == "SHOW REPLICA STATUS") {
      return version < 80022 ? MysqlSyntaxError(sql.substr(5)) : ReplicaStatus(true, live);
    }
    if (u == "SHOW BINARY LOGS" || u == "SHOW MASTER LOGS") {
      std::vector<std::vector<std::optional<std::string>>> rows;
      for (const BinlogFile& f : sh_->files) rows.push_back({f.name, std::to_string(f.bytes.size()), "No"});
      return SendResult({"Log_name", "File_size", "Encrypted"}, rows);
    }
    if (starts("SHOW BINLOG EVENTS")) return BinlogEvents(sql, u);
    // The primary has no tables (its binlogs are recordings): information_schema
    // answers with the columns asked for and no rows, so a replica keeps the
    // binlog's positional column names.
    const size_t from = u.find(" FROM INFORMATION_SCHEMA.");
    if (starts("SELECT ") && from != std::string::npos) {
      std::vector<std::string> columns;
      std::string_view list = sql.substr(7, from - 7);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        columns.emplace_back(Trim(list.substr(0, comma)));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      sh_->Count([](ReplayPrimaryStats& s) { ++s.schema_queries; });
      return SendResult(columns, {});
    }
    return Syntax(sql);
  }

 private:
  // SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT n]: the events from `pos` (an event's
  // start, as MySQL requires) with MySQL's columns; Info is filled for GTID events (what a
  // replica checks: "SET @@SESSION.GTID_NEXT= 'uuid[:tag]:gno'") and the event type name for
  // the others' sake.
  bool BinlogEvents(std::string_view sql, const std::string& u) {
    const std::vector<std::string> quoted = QuotedStrings(sql);
    const BinlogFile* file = sh_->files.empty() ? nullptr : &sh_->files.front();
    if (!quoted.empty()) {
      file = nullptr;
      for (const BinlogFile& f : sh_->files) {
        if (f.name == quoted[0]) file = &f;
      }
      if (file == nullptr) {
        return conn_->Write(ErrPacket(1220, "HY000", "Error when executing command SHOW BINLOG EVENTS: Could not find "
                                                     "target log"));
      }
    }
    auto number_after = [&](std::string_view word, uint64_t fallback) {
      const size_t at = u.find(word);
      if (at == std::string::npos) return fallback;
      uint64_t v = 0;
      for (size_t i = at + word.size(); i < u.size() && u[i] >= '0' && u[i] <= '9' && v < (uint64_t{1} << 40); ++i) {
        v = v * 10 + static_cast<uint64_t>(u[i] - '0');
      }
      return v;
    };
    const uint64_t from = number_after(" FROM ", 4);
    const uint64_t limit = number_after(" LIMIT ", 1000);
    const std::vector<std::string> columns = {"Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info"};
    std::vector<std::vector<std::optional<std::string>>> rows;
    if (file == nullptr) return SendResult(columns, rows);
    bool found = from == 4 || from >= file->bytes.size();
    for (size_t at : file->event_offsets) {
      if (at == from) found = true;
      if (at < from || rows.size() >= limit || at + 19 > file->bytes.size()) continue;
      const std::string_view ev = std::string_view(file->bytes).substr(at);
      const uint8_t type = static_cast<uint8_t>(ev[4]);
      const uint64_t size = GetInt(ev, 9, 4);
      if (size < 19 || size > ev.size()) break;
      const std::string_view body = ev.substr(19, size - 19 - (file->crc32 ? 4 : 0));
      std::string name = "Event_type_" + std::to_string(type), info;
      if (type == 33 && body.size() >= 25) {
        name = "Gtid";
        info = "SET @@SESSION.GTID_NEXT= '" + UuidText(body.substr(1, 16)) + ":" + std::to_string(GetInt(body, 17, 8)) +
               "'";
      } else if (type == 42) {
        std::string sid, tag;
        uint64_t gno = 0;
        name = "Gtid_tagged_log_event";
        if (ReadTaggedGtid(body, &sid, &tag, &gno)) {
          info = "SET @@SESSION.GTID_NEXT= '" + UuidText(sid) + ":" + tag + ":" + std::to_string(gno) + "'";
        }
      } else if (type == 34) {
        name = "Anonymous_Gtid";
        info = "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'";
      }
      rows.push_back({file->name, std::to_string(at), name, std::to_string(GetInt(ev, 5, 4)),
                      std::to_string(at + size), info});
    }
    if (!found) {
      return conn_->Write(ErrPacket(1220, "HY000", "Error when executing command SHOW BINLOG EVENTS: Wrong offset or "
                                                   "I/O error"));
    }
    return SendResult(columns, rows);
  }

  Shared* sh_;
  PacketConn* conn_;
  DumpRequest* dump_;
};

}  // namespace

std::string OkPacket() { return std::string("\x00\x00\x00\x02\x00\x00\x00", 7); }

// Printable for an error message: a client's bytes are never echoed raw.
std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) out.push_back(std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '?');
  if (s.size() > 80) out += "...";
  return out;
}

bool AnswerStatement(Shared* sh, PacketConn* conn, DumpRequest* dump, std::string_view sql) {
  return Statements(sh, conn, dump).Query(Trim(sql));
}

}  // namespace canal::testing::replay
