// One client of the replay primary: greeting, login (with the account's plugin,
// switching the client to it when it answered with another), then commands
// until it quits or starts a binlog dump.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "support/replay_primary/replay_internal.h"

namespace canal::testing::replay {
namespace {

constexpr uint32_t kLongPassword = 0x1, kFoundRows = 0x2, kLongFlag = 0x4, kConnectWithDb = 0x8,
                   kProtocol41 = 0x200, kSsl = 0x800, kTransactions = 0x2000, kSecureConnection = 0x8000,
                   kMultiStatements = 0x10000, kMultiResults = 0x20000, kPluginAuth = 0x80000,
                   kConnectAttrs = 0x100000, kPluginAuthLenenc = 0x200000;
constexpr std::string_view kNative = "mysql_native_password", kSha2 = "caching_sha2_password";
constexpr std::string_view kUnknownPlugin = "replay_unknown_plugin";
constexpr int kLoginTimeoutMs = 10'000;
constexpr size_t kMaxCommand = 1 << 20;  // no replica command comes near this

std::string Ok() { return std::string("\x00\x00\x00\x02\x00\x00\x00", 7); }
std::string Eof() { return std::string("\xfe\x00\x00\x02\x00", 5); }

std::string Xor(std::string a, std::string_view b) {
  for (size_t i = 0; i < a.size() && !b.empty(); ++i) a[i] = static_cast<char>(a[i] ^ b[i % b.size()]);
  return a;
}

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

// Printable for an error message: a client's bytes are never echoed raw.
std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) out.push_back(std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '?');
  if (s.size() > 80) out += "...";
  return out;
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
  if (pat[0] != '_' && std::tolower(static_cast<unsigned char>(pat[0])) != std::tolower(static_cast<unsigned char>(text[0]))) {
    return false;
  }
  return Like(text.substr(1), pat.substr(1));
}

struct Login {
  uint32_t caps = 0;
  std::string user, auth, plugin;
};

bool ParseLogin(std::string_view p, Login* l) {
  if (p.size() < 32) return false;
  l->caps = static_cast<uint32_t>(GetInt(p, 0, 4));
  size_t at = 32;
  const size_t nul = p.find('\0', at);
  if (nul == std::string_view::npos) return false;
  l->user = std::string(p.substr(at, nul - at));
  at = nul + 1;
  if (at >= p.size()) return true;
  size_t len = static_cast<uint8_t>(p[at++]);
  if ((l->caps & kPluginAuthLenenc) != 0 && len >= 0xFB) return false;  // a scramble is never that long
  if (at + len > p.size()) return false;
  l->auth = std::string(p.substr(at, len));
  at += len;
  if ((l->caps & kConnectWithDb) != 0) {
    const size_t end = p.find('\0', at);
    if (end == std::string_view::npos) return true;
    at = end + 1;
  }
  if ((l->caps & kPluginAuth) != 0 && at < p.size()) {
    const size_t end = p.find('\0', at);
    l->plugin = std::string(p.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
  }
  return true;
}

class Session {
 public:
  Session(Shared* sh, int fd) : sh_(sh), conn_(fd, &sh->stop) {}

  void Run() {
    if (!LogIn()) return;
    Serve();
  }

 private:
  std::string ServerCaps() const {
    uint32_t caps = kLongPassword | kFoundRows | kLongFlag | kConnectWithDb | kProtocol41 | kTransactions |
                    kSecureConnection | kMultiStatements | kMultiResults | kPluginAuth | kConnectAttrs |
                    kPluginAuthLenenc;
    if (sh_->options.tls) caps |= kSsl;
    std::string s;
    PutInt(&s, caps, 4);
    return s;
  }

  std::string Greeting() const {
    const ReplayPrimaryOptions& o = sh_->options;
    const uint32_t caps = static_cast<uint32_t>(GetInt(ServerCaps(), 0, 4));
    std::string g(1, '\x0a');
    g.append(o.server_version);
    g.push_back('\0');
    PutInt(&g, connection_id_, 4);
    g.append(nonce_.substr(0, 8));
    g.push_back('\0');
    PutInt(&g, caps & 0xFFFF, 2);
    g.push_back(static_cast<char>(255));  // utf8mb4_0900_ai_ci
    PutInt(&g, 2, 2);                     // autocommit
    PutInt(&g, caps >> 16, 2);
    g.push_back(21);
    g.append(10, '\0');
    g.append(nonce_.substr(8));
    g.push_back('\0');
    g.append(o.default_plugin.empty() ? o.account_plugin : o.default_plugin);
    g.push_back('\0');
    return g;
  }

  bool Deny(std::string_view user) {
    sh_->Count([](ReplayPrimaryStats& s) { ++s.auth_failures; });
    conn_.Write(ErrPacket(1045, "28000", "Access denied for user '" + Printable(user) + "'@'127.0.0.1' (using password: YES)"));
    return false;
  }

  bool SwitchTo(std::string_view plugin, std::string* reply) {
    std::string sw(1, '\xfe');
    sw.append(plugin);
    sw.push_back('\0');
    sw.append(nonce_);
    sw.push_back('\0');
    return conn_.Write(sw) && conn_.Read(reply, kLoginTimeoutMs, 4096);
  }

  bool LogIn() {
    const ReplayPrimaryOptions& o = sh_->options;
    nonce_ = RandomBytes(20);
    sh_->Count([this](ReplayPrimaryStats& s) { connection_id_ = static_cast<uint32_t>(++s.connections); });
    if (!conn_.Write(Greeting())) return false;
    std::string p;
    if (!conn_.Read(&p, kLoginTimeoutMs, 4096)) return false;
    if (p.size() == 32 && (GetInt(p, 0, 4) & kSsl) != 0) {  // SSLRequest
      if (!o.tls || !conn_.StartTls(sh_->keys.tls) || !conn_.Read(&p, kLoginTimeoutMs, 4096)) return false;
    }
    Login login;
    if (!ParseLogin(p, &login)) {
      conn_.Write(ErrPacket(1043, "08S01", "Bad handshake"));
      return false;
    }
    bool unknown_plugin = false;
    {
      std::lock_guard<std::mutex> lock(sh_->mu);
      unknown_plugin = sh_->unknown_plugin;
    }
    if (unknown_plugin) {
      std::string reply;
      if (SwitchTo(kUnknownPlugin, &reply)) {  // a client without the plugin has given up by now
        conn_.Write(ErrPacket(1251, "08004", "Client does not support authentication protocol requested by server"));
      }
      sh_->Count([](ReplayPrimaryStats& s) { ++s.auth_failures; });
      return false;
    }
    if (login.user != o.user) return Deny(login.user);
    std::string auth = login.auth;
    if (login.plugin != o.account_plugin && !SwitchTo(o.account_plugin, &auth)) return false;
    const bool ok = o.account_plugin == kNative ? NativeAuth(auth) : Sha2Auth(auth);
    if (!ok) return Deny(login.user);
    sh_->Count([](ReplayPrimaryStats& s) { ++s.logins; });
    return conn_.Write(Ok());
  }

  bool NativeAuth(std::string_view auth) {
    const std::string& pw = sh_->options.password;
    sh_->Count([](ReplayPrimaryStats& s) { ++s.native_auths; });
    if (pw.empty()) return auth.empty();
    const std::string stored = Sha1(Sha1(pw));
    const std::string candidate = Xor(std::string(auth), Sha1(nonce_, stored));
    return auth.size() == 20 && Sha1(candidate) == stored;
  }

  bool Sha2Auth(std::string_view auth) {
    const ReplayPrimaryOptions& o = sh_->options;
    bool cached = false;
    {
      std::lock_guard<std::mutex> lock(sh_->mu);
      cached = sh_->sha2_cache.count(o.user) > 0;
    }
    if (o.password.empty()) return auth.empty() || auth == std::string_view("\0", 1);
    if (cached) {
      const std::string stage1 = Sha256(o.password);
      const std::string expected = Xor(stage1, Sha256(Sha256(stage1), nonce_));
      if (auth != expected) return false;
      sh_->Count([](ReplayPrimaryStats& s) { ++s.fast_auths; });
      return conn_.Write(std::string("\x01\x03", 2));
    }
    std::string reply;
    if (!conn_.Write(std::string("\x01\x04", 2)) || !conn_.Read(&reply, kLoginTimeoutMs, 4096)) return false;
    std::string password;
    if (conn_.tls()) {
      password = reply;
      sh_->Count([](ReplayPrimaryStats& s) { ++s.full_auths_tls; });
    } else {
      if (reply == "\x02") {
        sh_->Count([](ReplayPrimaryStats& s) { ++s.public_key_requests; });
        if (!conn_.Write("\x01" + sh_->keys.public_pem) || !conn_.Read(&reply, kLoginTimeoutMs, 4096)) return false;
      }
      std::string plain;
      if (!RsaDecrypt(sh_->keys.key, reply, &plain)) return false;
      password = Xor(plain, nonce_);
      sh_->Count([](ReplayPrimaryStats& s) { ++s.full_auths_rsa; });
    }
    if (!password.empty() && password.back() == '\0') password.pop_back();
    if (password != o.password) return false;
    std::lock_guard<std::mutex> lock(sh_->mu);
    sh_->sha2_cache.insert(o.user);
    return true;
  }

  // ---- commands ----

  void Serve() {
    std::string cmd;
    while (conn_.Read(&cmd, -1, kMaxCommand)) {
      if (cmd.empty()) return;
      switch (static_cast<uint8_t>(cmd[0])) {
        case 0x01: return;  // COM_QUIT
        case 0x02:          // COM_INIT_DB
        case 0x0e:          // COM_PING
          if (!conn_.Write(Ok())) return;
          break;
        case 0x03:
          sh_->Count([](ReplayPrimaryStats& s) { ++s.queries; });
          if (!Query(Trim(std::string_view(cmd).substr(1)))) return;
          break;
        case 0x15:  // COM_REGISTER_SLAVE
          if (cmd.size() < 5) {
            conn_.Write(ErrPacket(1835, "HY000", "Malformed communication packet"));
            return;
          }
          sh_->Count([&](ReplayPrimaryStats& s) {
            ++s.registrations;
            s.last_slave_server_id = static_cast<uint32_t>(GetInt(cmd, 1, 4));
          });
          if (!conn_.Write(Ok())) return;
          break;
        case 0x12: DumpByPosition(cmd); return;
        case 0x1e: DumpByGtid(cmd); return;
        default:
          if (!conn_.Write(ErrPacket(1047, "08S01", "Unknown command"))) return;
      }
    }
  }

  void DumpByPosition(std::string_view cmd) {
    if (cmd.size() < 11) {
      conn_.Write(ErrPacket(1835, "HY000", "Malformed communication packet"));
      return;
    }
    dump_.position = GetInt(cmd, 1, 4);
    dump_.file = std::string(cmd.substr(11));
    sh_->Count([&](ReplayPrimaryStats& s) {
      ++s.dumps;
      s.last_dump_file = dump_.file;
      s.last_dump_position = dump_.position;
    });
    StreamBinlog(sh_, &conn_, dump_);
  }

  void DumpByGtid(std::string_view cmd) {
    // flags(2) server_id(4) name_size(4) name position(8) [data_size(4) data]
    bool ok = cmd.size() >= 11;
    size_t at = 11;
    if (ok) {
      const uint64_t name_size = GetInt(cmd, 7, 4);
      ok = name_size <= cmd.size() - at && cmd.size() - at - name_size >= 8;
      if (ok) {
        dump_.file = std::string(cmd.substr(at, name_size));
        at += name_size;
        dump_.position = GetInt(cmd, at, 8);
        at += 8;
      }
    }
    if (ok && (GetInt(cmd, 1, 2) & 0x04) != 0) {
      ok = cmd.size() - at >= 4 && GetInt(cmd, at, 4) == cmd.size() - at - 4 &&
           dump_.executed.Decode(cmd.substr(at + 4));
    }
    if (!ok) {
      conn_.Write(ErrPacket(1835, "HY000", "Malformed communication packet (COM_BINLOG_DUMP_GTID)"));
      return;
    }
    dump_.gtid = true;
    sh_->Count([&](ReplayPrimaryStats& s) {
      ++s.gtid_dumps;
      s.last_dump_file = dump_.file;
      s.last_dump_position = dump_.position;
    });
    StreamBinlog(sh_, &conn_, dump_);
  }

  std::map<std::string, std::string> Variables() const {
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
        {"gtid_executed", o.gtid_executed},
        {"gtid_purged", ""},
        {"max_allowed_packet", "67108864"},
        {"character_set_server", "utf8mb4"},
        {"collation_server", "utf8mb4_0900_ai_ci"},
        {"lower_case_table_names", "0"},
        {"time_zone", "SYSTEM"},
        {"system_time_zone", "UTC"},
    };
    for (const auto& [name, value] : o.variables) v[name] = value;
    return v;
  }

  bool SendResult(const std::vector<std::string>& columns,
                  const std::vector<std::vector<std::optional<std::string>>>& rows) {
    std::string p;
    PutLenenc(&p, columns.size());
    if (!conn_.Write(p)) return false;
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
      if (!conn_.Write(p)) return false;
    }
    if (!conn_.Write(Eof())) return false;
    for (const auto& row : rows) {
      p.clear();
      for (const auto& v : row) {
        if (v) {
          PutLenencString(&p, *v);
        } else {
          p.push_back('\xfb');
        }
      }
      if (!conn_.Write(p)) return false;
    }
    return conn_.Write(Eof());
  }

  bool Syntax(std::string_view sql) {
    return conn_.Write(ErrPacket(1064, "42000", "the replay primary does not answer '" + Printable(sql) + "'"));
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
    if (auto v = value_of("@MASTER_BINLOG_CHECKSUM")) dump_.checksum_aware = *v != "'NONE'" && *v != "NONE";
    if (auto v = value_of("@SOURCE_BINLOG_CHECKSUM")) dump_.checksum_aware = *v != "'NONE'" && *v != "NONE";
    if (auto v = value_of("@MASTER_HEARTBEAT_PERIOD")) {
      int64_t ns = 0;
      for (char c : *v) {
        if (c < '0' || c > '9') break;
        ns = ns * 10 + (c - '0');
        if (ns > (int64_t{1} << 50)) break;
      }
      dump_.heartbeat_ns = ns;
    }
    return conn_.Write(Ok());
  }

  bool Query(std::string_view sql) {
    const std::string u = Upper(sql);
    const ReplayPrimaryOptions& o = sh_->options;
    const auto vars = Variables();
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
          return conn_.Write(ErrPacket(1193, "HY000", "Unknown system variable '" + Printable(name) + "'"));
        }
        names.emplace_back(item);
        row.emplace_back(it->second);
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
    const int version = (o.server_version[0] - '0') * 100 + (o.server_version.size() > 2 ? o.server_version[2] - '0' : 0);
    const bool old_status = u == "SHOW MASTER STATUS" && version < 804;  // 8.4 removed it
    const bool new_status = u == "SHOW BINARY LOG STATUS" && version >= 802;  // 8.2 added it
    if (old_status || new_status) {
      if (sh_->files.empty()) return SendResult({"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set"}, {});
      const BinlogFile& last = sh_->files.back();
      return SendResult({"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set"},
                        {{last.name, std::to_string(last.bytes.size()), "", "", o.gtid_executed}});
    }
    if (u == "SHOW BINARY LOGS" || u == "SHOW MASTER LOGS") {
      std::vector<std::vector<std::optional<std::string>>> rows;
      for (const BinlogFile& f : sh_->files) rows.push_back({f.name, std::to_string(f.bytes.size()), "No"});
      return SendResult({"Log_name", "File_size", "Encrypted"}, rows);
    }
    return Syntax(sql);
  }

  Shared* sh_;
  PacketConn conn_;
  std::string nonce_;
  uint32_t connection_id_ = 0;
  DumpRequest dump_;
};

}  // namespace

std::string ErrPacket(uint16_t code, std::string_view state, std::string_view message) {
  std::string e(1, '\xff');
  PutInt(&e, code, 2);
  e.push_back('#');
  e.append(state.substr(0, 5));
  e.append(message);
  return e;
}

void ServeClient(Shared* shared, int fd) {
  Session session(shared, fd);
  session.Run();
}

}  // namespace canal::testing::replay
