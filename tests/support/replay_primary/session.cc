// One client of the replay primary: greeting, login (with the account's plugin,
// switching the client to it when it answered with another), then commands
// until it quits or starts a binlog dump.
#include <algorithm>

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


std::string Xor(std::string a, std::string_view b) {
  for (size_t i = 0; i < a.size() && !b.empty(); ++i) a[i] = static_cast<char>(a[i] ^ b[i % b.size()]);
  return a;
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
    conn_.Write(ErrPacket(1045, "28000",
                          "Access denied for user '" + Printable(user) + "'@'127.0.0.1' (using password: YES)"));
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
      sh_->Count([](ReplayPrimaryStats& s) { ++s.auth_failures; });
      std::string reply;
      if (SwitchTo(kUnknownPlugin, &reply)) {  // a client without the plugin has given up by now
        conn_.Write(ErrPacket(1251, "08004", "Client does not support authentication protocol requested by server"));
      }
      return false;
    }
    if (login.user != o.user) return Deny(login.user);
    std::string auth = login.auth;
    if (login.plugin != o.account_plugin && !SwitchTo(o.account_plugin, &auth)) return false;
    const bool ok = o.account_plugin == kNative ? NativeAuth(auth) : Sha2Auth(auth);
    if (!ok) return Deny(login.user);
    sh_->Count([](ReplayPrimaryStats& s) { ++s.logins; });
    return conn_.Write(OkPacket());
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
          if (!conn_.Write(OkPacket())) return;
          break;
        case 0x03:
          sh_->Count([](ReplayPrimaryStats& s) { ++s.queries; });
          if (!AnswerStatement(sh_, &conn_, &dump_, std::string_view(cmd).substr(1))) return;
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
          if (!conn_.Write(OkPacket())) return;
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
    std::string why;
    if (ok && (GetInt(cmd, 1, 2) & 0x04) != 0) {
      ok = cmd.size() - at >= 4 && GetInt(cmd, at, 4) == cmd.size() - at - 4 &&
           dump_.executed.Decode(cmd.substr(at + 4), &why);
    }
    if (!ok) {
      conn_.Write(ErrPacket(1835, "HY000",
                            "Malformed communication packet (COM_BINLOG_DUMP_GTID" + (why.empty() ? "" : ": " + why) +
                                ")"));
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
