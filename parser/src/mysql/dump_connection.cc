#include "canal/parser/mysql/dump_connection.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "canal/parser/binlog/gtid_set.h"
#include "canal/parser/mysql/auth_plugins.h"
#include "mysql/packet_io.h"

namespace canal::mysql {
namespace {

// Capability flags (protocol "Capabilities Flags").
constexpr uint32_t kClientLongPassword = 0x00000001;
constexpr uint32_t kClientProtocol41 = 0x00000200;
constexpr uint32_t kClientSsl = 0x00000800;
constexpr uint32_t kClientTransactions = 0x00002000;
constexpr uint32_t kClientSecureConnection = 0x00008000;
constexpr uint32_t kClientMultiResults = 0x00020000;
constexpr uint32_t kClientPluginAuth = 0x00080000;
constexpr uint32_t kClientConnectAttrs = 0x00100000;
constexpr uint32_t kClientPluginAuthLenencData = 0x00200000;

constexpr uint16_t kServerMoreResultsExist = 0x0008;

constexpr uint8_t kComQuery = 0x03;
constexpr uint8_t kComBinlogDump = 0x12;
constexpr uint8_t kComRegisterSlave = 0x15;
constexpr uint8_t kComBinlogDumpGtid = 0x1e;
constexpr uint8_t kComQuit = 0x01;

constexpr uint16_t kBinlogThroughGtid = 0x04;

// Advertised to the server as our max_allowed_packet: events up to 1 GiB.
constexpr uint32_t kClientMaxPacket = 1u << 30;

constexpr uint8_t kOk = 0x00;
constexpr uint8_t kEof = 0xFE;
constexpr uint8_t kErr = 0xFF;
constexpr uint8_t kAuthMoreData = 0x01;

bool IsEofPacket(std::string_view p) { return !p.empty() && static_cast<uint8_t>(p[0]) == kEof && p.size() < 9; }
bool IsErrPacket(std::string_view p) { return !p.empty() && static_cast<uint8_t>(p[0]) == kErr; }

ServerError ParseErrPacket(std::string_view p) {
  ServerError e;
  wire::Reader r(p);
  uint64_t code = 0;
  r.Skip(1);
  r.Int(2, &code);
  e.code = static_cast<uint16_t>(code);
  std::string_view rest = r.Rest();
  // The SQLSTATE marker is absent in errors sent before the handshake completes.
  if (rest.size() >= 6 && rest[0] == '#') {
    e.sql_state = std::string(rest.substr(1, 5));
    rest.remove_prefix(6);
  }
  e.message = std::string(rest);
  if (e.code == 0) e.code = 0xFFFF;  // an ERR packet always counts as a server error
  return e;
}

// What to do about the errors a replica user commonly meets. After a successful
// login an "access denied" (MariaDB answers COM_REGISTER_SLAVE with 1045, MySQL
// with 1227) is a missing grant, not a wrong password.
std::string HintFor(uint16_t code, bool logged_in) {
  if (code == kErSpecificAccessDenied || (code == kErAccessDenied && logged_in)) {
    return " (grant the replication user its privileges: "
           "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO <user>)";
  }
  switch (code) {
    case kErAccessDenied:
      return " (check canal.instance.dbUsername / dbPassword and that the user may connect from this host)";
    case kErMasterFatalReadingBinlog:
      return " (the start position is not in the server's binlogs: purged or mistyped; "
             "choose a position from SHOW BINARY LOGS or reset the instance's stored position)";
    default:
      return "";
  }
}

// Collation ids for the session character set; 45 (utf8mb4_general_ci) exists on
// every MySQL >= 5.5.3 and MariaDB, where 255 is MySQL 8 only.
bool CharsetId(std::string_view name, uint8_t* id) {
  std::string n;
  for (char c : name) {
    if (c != '-' && c != '_') n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  static const std::pair<const char*, uint8_t> kIds[] = {
      {"utf8mb4", 45}, {"utf8", 33}, {"utf8mb3", 33}, {"latin1", 8}, {"binary", 63}, {"ascii", 11},
      {"gbk", 28},     {"gb2312", 24}, {"big5", 1},   {"gb18030", 248}, {"ujis", 12}, {"sjis", 13},
  };
  for (const auto& [cs, cs_id] : kIds) {
    if (n == cs) {
      *id = cs_id;
      return true;
    }
  }
  return false;
}

}  // namespace

struct DumpConnection::Impl {
  explicit Impl(ConnectionOptions o)
      : options(std::move(o)), address(options.Address()), channel(address, options.read_timeout_ms) {}

  ConnectionOptions options;
  std::string address;
  PacketChannel channel;

  bool connected = false;
  bool dumping = false;
  uint32_t connection_id = 0;
  std::string server_version;
  bool mariadb = false;
  std::string plugin;
  ServerError last_error;
  uint64_t bytes_received = 0;
  uint32_t client_caps = 0;

  Status Fail(Status::Code code, std::string_view what, std::string_view detail) const {
    std::string msg = address + ": " + std::string(what) + ": " + std::string(detail);
    switch (code) {
      case Status::Code::kCorruption: return Status::Corruption(msg);
      case Status::Code::kNotSupported: return Status::NotSupported(msg);
      case Status::Code::kInvalidArgument: return Status::InvalidArgument(msg);
      case Status::Code::kNotFound: return Status::NotFound(msg);
      default: return Status::IOError(msg);
    }
  }
  Status ServerFailure(std::string_view what, std::string_view err_packet) {
    last_error = ParseErrPacket(err_packet);
    return Fail(Status::Code::kIOError, what, last_error.ToString() + HintFor(last_error.code, !plugin.empty()))
        .WithSubcode(last_error.code);
  }
  Status Read(std::string_view* p, std::string_view what) {
    Status s = channel.ReadMessage(p, what);
    if (!s.ok()) connected = dumping = false;
    return s;
  }
  Status Write(std::string_view p) {
    Status s = channel.WriteMessage(p);
    if (!s.ok()) connected = dumping = false;
    return s;
  }
  Status RequireConnected(std::string_view what) const {
    if (!connected) return Fail(Status::Code::kInvalidArgument, what, "not connected (call Connect first)");
    return Status::OK();
  }

  Status Handshake();
  Status AuthResponse(std::string_view plugin_name, std::string_view nonce, std::string* out);
  Status FullAuthPassword(std::string_view nonce, std::string_view pem, std::string* out);
  Status Authenticate(std::string plugin_name, std::string nonce);
  Status ReadOkOrErr(std::string_view what);
  Status RunQuery(std::string_view sql, ResultSet* result);
};

Status DumpConnection::Impl::Handshake() {
  constexpr std::string_view kWhat = "reading the server greeting";
  std::string_view p;
  CANAL_RETURN_IF_ERROR(Read(&p, kWhat));
  if (IsErrPacket(p)) return ServerFailure("connecting", p);  // too many connections, host blocked, ...
  wire::Reader r(p);
  uint8_t protocol = 0;
  r.U8(&protocol);
  if (protocol != 10) {
    return Fail(Status::Code::kNotSupported, kWhat,
                "protocol version " + std::to_string(protocol) + " (only v10, MySQL >= 4.1 / MariaDB, is supported)");
  }
  std::string_view version, nonce1, nonce2, plugin_name;
  uint64_t id = 0, caps_low = 0, caps_high = 0, charset = 0, status = 0;
  uint8_t nonce_len = 0;
  if (!r.NulString(&version) || !r.Int(4, &id) || !r.Bytes(8, &nonce1) || !r.Skip(1) || !r.Int(2, &caps_low)) {
    return Fail(Status::Code::kCorruption, kWhat, "greeting is truncated");
  }
  uint32_t server_caps = static_cast<uint32_t>(caps_low);
  if (r.remaining() > 0) {
    if (!r.Int(1, &charset) || !r.Int(2, &status) || !r.Int(2, &caps_high) || !r.U8(&nonce_len) || !r.Skip(10)) {
      return Fail(Status::Code::kCorruption, kWhat, "greeting is truncated");
    }
    server_caps |= static_cast<uint32_t>(caps_high) << 16;
    if (server_caps & kClientSecureConnection) {
      size_t n = std::max<int>(13, static_cast<int>(nonce_len) - 8);
      if (!r.Bytes(std::min(n, r.remaining()), &nonce2)) return Fail(Status::Code::kCorruption, kWhat, "truncated nonce");
    }
    if (server_caps & kClientPluginAuth) r.NulString(&plugin_name);  // some servers omit the final NUL
  }
  if (!(server_caps & kClientProtocol41)) {
    return Fail(Status::Code::kNotSupported, kWhat, "the server does not speak protocol 4.1");
  }
  connection_id = static_cast<uint32_t>(id);
  server_version = std::string(version);
  mariadb = server_version.find("MariaDB") != std::string::npos;
  // MariaDB 10.x prefixes a fake "5.5.5-" for old replicas.
  if (mariadb && server_version.rfind("5.5.5-", 0) == 0) server_version.erase(0, 6);

  std::string nonce(nonce1);
  nonce.append(nonce2);
  if (!nonce.empty() && nonce.back() == '\0') nonce.pop_back();

  uint8_t charset_id = 45;
  if (!CharsetId(options.charset, &charset_id)) {
    return Fail(Status::Code::kInvalidArgument, "connecting",
                "unknown character set '" + options.charset +
                    "' (set canal.instance.connectionCharset to utf8mb4, utf8, latin1, gbk, ...)");
  }

  const bool server_tls = (server_caps & kClientSsl) != 0;
  const bool use_tls = options.tls != TlsMode::kDisabled && server_tls;
  if (options.tls == TlsMode::kRequired && !server_tls) {
    return Fail(Status::Code::kIOError, "connecting",
                "TLS is required but the server does not offer it (configure ssl_cert/ssl_key on the server, "
                "or allow plain connections)");
  }
  client_caps = kClientLongPassword | kClientProtocol41 | kClientTransactions | kClientSecureConnection |
                kClientMultiResults | kClientPluginAuth | kClientPluginAuthLenencData | kClientConnectAttrs;
  if (use_tls) client_caps |= kClientSsl;
  client_caps &= server_caps;

  std::string fixed;
  wire::PutInt(&fixed, client_caps, 4);
  wire::PutInt(&fixed, kClientMaxPacket, 4);
  fixed.push_back(static_cast<char>(charset_id));
  fixed.append(23, '\0');
  if (use_tls) {
    CANAL_RETURN_IF_ERROR(Write(fixed));  // SSLRequest: the fixed part alone
    Status s = channel.StartTls(options.tls_ca_file);
    if (!s.ok()) {
      connected = false;
      return s;
    }
  }

  // Answer with the server's default plugin when we speak it; otherwise native,
  // and the server switches us to the account's plugin if that differs.
  std::string first_plugin(plugin_name.empty() ? auth::kNativePassword : plugin_name);
  if (!auth::IsSupportedPlugin(first_plugin)) first_plugin = std::string(auth::kNativePassword);
  std::string response;
  CANAL_RETURN_IF_ERROR(AuthResponse(first_plugin, nonce, &response));

  std::string msg = fixed;
  msg.append(options.user);
  msg.push_back('\0');
  if (client_caps & kClientPluginAuthLenencData) {
    wire::PutLenencString(&msg, response);
  } else {
    msg.push_back(static_cast<char>(response.size()));
    msg.append(response);
  }
  if (client_caps & kClientPluginAuth) {
    msg.append(first_plugin);
    msg.push_back('\0');
  }
  if (client_caps & kClientConnectAttrs) {
    std::string attrs;
    wire::PutLenencString(&attrs, "_client_name");
    wire::PutLenencString(&attrs, "canal-cpp");
    wire::PutLenencString(&attrs, "program_name");
    wire::PutLenencString(&attrs, "canal-cpp binlog dump");
    wire::PutLenencString(&msg, attrs);
  }
  CANAL_RETURN_IF_ERROR(Write(msg));
  return Authenticate(std::move(first_plugin), std::move(nonce));
}

Status DumpConnection::Impl::FullAuthPassword(std::string_view nonce, std::string_view pem, std::string* out) {
  if (channel.tls_active()) {
    // Inside TLS the password itself is the proof.
    out->assign(options.password);
    out->push_back('\0');
    return Status::OK();
  }
  Status s = auth::RsaEncryptPassword(options.password, nonce, pem, out);
  if (!s.ok()) return Fail(Status::Code::kInvalidArgument, "authenticating", s.message());
  return Status::OK();
}

// The first message for `plugin_name`: a scramble, or for sha256_password the
// password (TLS), the RSA-encrypted password (key file) or a request for the key.
Status DumpConnection::Impl::AuthResponse(std::string_view plugin_name, std::string_view nonce, std::string* out) {
  out->clear();
  if (plugin_name == auth::kNativePassword) {
    *out = auth::NativePasswordScramble(options.password, nonce);
  } else if (plugin_name == auth::kCachingSha2Password) {
    *out = auth::CachingSha2Scramble(options.password, nonce);
  } else if (plugin_name == auth::kSha256Password) {
    if (options.password.empty()) {
      out->push_back('\0');
    } else if (channel.tls_active()) {
      return FullAuthPassword(nonce, {}, out);
    } else if (!options.server_public_key_file.empty()) {
      std::ifstream in(options.server_public_key_file, std::ios::binary);
      std::stringstream pem;
      pem << in.rdbuf();
      if (!in) {
        return Fail(Status::Code::kInvalidArgument, "authenticating",
                    "cannot read the server public key file '" + options.server_public_key_file + "'");
      }
      return FullAuthPassword(nonce, pem.str(), out);
    } else if (options.allow_public_key_retrieval) {
      out->push_back('\x01');  // sha256_password: "send me your public key"
    } else {
      return Fail(Status::Code::kInvalidArgument, "authenticating",
                  "sha256_password without TLS needs the server's RSA key: set a public key file or allow "
                  "public key retrieval");
    }
  } else {
    return Fail(Status::Code::kNotSupported, "authenticating",
                "the server asks for authentication plugin '" + std::string(plugin_name) + "' for user '" +
                    options.user +
                    "', which this client does not support (supported: mysql_native_password, caching_sha2_password, "
                    "sha256_password); use mysql_native_password for the replication user, e.g. ALTER USER ... "
                    "IDENTIFIED WITH mysql_native_password BY '...' (MySQL) or IDENTIFIED VIA mysql_native_password "
                    "USING PASSWORD('...') (MariaDB)");
  }
  return Status::OK();
}

Status DumpConnection::Impl::Authenticate(std::string plugin_name, std::string nonce) {
  constexpr std::string_view kWhat = "authenticating";
  bool awaiting_key = false;
  // A handful of rounds suffice for every supported plugin; a server that keeps
  // asking is broken, not slow.
  for (int round = 0; round < 8; ++round) {
    std::string_view p;
    CANAL_RETURN_IF_ERROR(Read(&p, kWhat));
    if (p.empty()) return Fail(Status::Code::kCorruption, kWhat, "empty packet from the server");
    const uint8_t kind = static_cast<uint8_t>(p[0]);
    if (kind == kOk) {
      plugin = std::move(plugin_name);
      return Status::OK();
    }
    if (kind == kErr) return ServerFailure(kWhat, p);
    std::string out;
    if (kind == kEof) {  // auth switch request
      if (p.size() == 1) {
        return Fail(Status::Code::kNotSupported, kWhat,
                    "the server asks for the pre-4.1 password hash (mysql_old_password); use mysql_native_password "
                    "for the replication user");
      }
      wire::Reader r(p.substr(1));
      std::string_view name;
      r.NulString(&name);
      std::string_view data = r.Rest();
      if (!data.empty() && data.back() == '\0') data.remove_suffix(1);
      plugin_name = std::string(name);
      nonce = std::string(data);
      awaiting_key = false;
      CANAL_RETURN_IF_ERROR(AuthResponse(plugin_name, nonce, &out));
      CANAL_RETURN_IF_ERROR(Write(out));
      continue;
    }
    if (kind != kAuthMoreData) {
      return Fail(Status::Code::kCorruption, kWhat,
                  "unexpected packet starting with byte " + std::to_string(kind) + " during authentication");
    }
    std::string_view data = p.substr(1);
    if (plugin_name == auth::kCachingSha2Password && !awaiting_key && data.size() == 1) {
      if (data[0] == '\x03') continue;  // fast auth succeeded; the OK follows
      if (data[0] != '\x04') {
        return Fail(Status::Code::kCorruption, kWhat,
                    "unexpected caching_sha2_password state " + std::to_string(static_cast<uint8_t>(data[0])));
      }
      // Full authentication: the server has no cached hash for this account.
      if (channel.tls_active()) {
        CANAL_RETURN_IF_ERROR(FullAuthPassword(nonce, {}, &out));
      } else if (!options.server_public_key_file.empty()) {
        std::ifstream in(options.server_public_key_file, std::ios::binary);
        std::stringstream pem;
        pem << in.rdbuf();
        if (!in) {
          return Fail(Status::Code::kInvalidArgument, kWhat,
                      "cannot read the server public key file '" + options.server_public_key_file + "'");
        }
        CANAL_RETURN_IF_ERROR(FullAuthPassword(nonce, pem.str(), &out));
      } else if (options.allow_public_key_retrieval) {
        out = "\x02";  // caching_sha2_password: "send me your public key"
        awaiting_key = true;
      } else {
        return Fail(Status::Code::kInvalidArgument, kWhat,
                    "caching_sha2_password full authentication without TLS needs the server's RSA key: enable TLS, "
                    "set a public key file or allow public key retrieval");
      }
      CANAL_RETURN_IF_ERROR(Write(out));
      continue;
    }
    if (plugin_name == auth::kCachingSha2Password || plugin_name == auth::kSha256Password) {
      // The PEM public key we asked for.
      awaiting_key = false;
      CANAL_RETURN_IF_ERROR(FullAuthPassword(nonce, data, &out));
      CANAL_RETURN_IF_ERROR(Write(out));
      continue;
    }
    return Fail(Status::Code::kCorruption, kWhat, "unexpected extra authentication data for " + plugin_name);
  }
  return Fail(Status::Code::kCorruption, kWhat, "the server kept asking for more authentication data");
}

Status DumpConnection::Impl::ReadOkOrErr(std::string_view what) {
  std::string_view p;
  CANAL_RETURN_IF_ERROR(Read(&p, what));
  if (IsErrPacket(p)) return ServerFailure(what, p);
  if (p.empty() || static_cast<uint8_t>(p[0]) != kOk) {
    return Fail(Status::Code::kCorruption, what, "expected an OK packet from the server");
  }
  return Status::OK();
}

Status DumpConnection::Impl::RunQuery(std::string_view sql, ResultSet* result) {
  CANAL_RETURN_IF_ERROR(RequireConnected("running a statement"));
  if (dumping) {
    return Fail(Status::Code::kInvalidArgument, "running a statement", "the connection is streaming a binlog");
  }
  const std::string what = "running '" + std::string(sql.substr(0, 80)) + (sql.size() > 80 ? "...'" : "'");
  std::string cmd(1, static_cast<char>(kComQuery));
  cmd.append(sql);
  channel.ResetSequence();
  CANAL_RETURN_IF_ERROR(Write(cmd));
  bool first_result = true;
  for (;;) {  // one pass per result of a multi-result statement
    std::string_view p;
    CANAL_RETURN_IF_ERROR(Read(&p, what));
    if (p.empty()) return Fail(Status::Code::kCorruption, what, "empty packet from the server");
    if (IsErrPacket(p)) return ServerFailure(what, p);
    const uint8_t kind = static_cast<uint8_t>(p[0]);
    uint16_t status = 0;
    if (kind == kOk) {
      wire::Reader r(p.substr(1));
      uint64_t ignored = 0, st = 0;
      if (!r.Lenenc(&ignored) || !r.Lenenc(&ignored) || !r.Int(2, &st)) {
        return Fail(Status::Code::kCorruption, what, "truncated OK packet");
      }
      status = static_cast<uint16_t>(st);
    } else if (kind == 0xFB) {
      return Fail(Status::Code::kNotSupported, what, "the server asks for LOAD DATA LOCAL INFILE");
    } else {
      wire::Reader r(p);
      uint64_t columns = 0;
      if (!r.Lenenc(&columns) || columns == 0 || columns > 4096) {
        return Fail(Status::Code::kCorruption, what, "bad column count in a result set");
      }
      const bool keep = first_result && result != nullptr;
      if (keep) {
        result->column_names.clear();
        result->rows.clear();
      }
      for (uint64_t i = 0; i < columns; ++i) {
        CANAL_RETURN_IF_ERROR(Read(&p, what));
        wire::Reader c(p);
        std::string_view catalog, schema, table, org_table, name;
        if (!c.LenencString(&catalog) || !c.LenencString(&schema) || !c.LenencString(&table) ||
            !c.LenencString(&org_table) || !c.LenencString(&name)) {
          return Fail(Status::Code::kCorruption, what, "truncated column definition");
        }
        if (keep) result->column_names.emplace_back(name);
      }
      CANAL_RETURN_IF_ERROR(Read(&p, what));
      if (!IsEofPacket(p)) return Fail(Status::Code::kCorruption, what, "missing EOF after the column definitions");
      for (;;) {
        CANAL_RETURN_IF_ERROR(Read(&p, what));
        if (IsErrPacket(p)) return ServerFailure(what, p);
        if (IsEofPacket(p)) {
          wire::Reader e(p.substr(1));
          uint64_t warnings = 0, st = 0;
          e.Int(2, &warnings);
          e.Int(2, &st);
          status = static_cast<uint16_t>(st);
          break;
        }
        wire::Reader rr(p);
        ResultRow row;
        if (keep) row.reserve(columns);
        for (uint64_t i = 0; i < columns; ++i) {
          std::string_view v;
          bool is_null = false;
          if (!rr.LenencString(&v, &is_null)) return Fail(Status::Code::kCorruption, what, "truncated row");
          if (keep) row.push_back(is_null ? std::nullopt : std::optional<std::string>(std::string(v)));
        }
        if (keep) result->rows.push_back(std::move(row));
      }
    }
    first_result = false;
    if (!(status & kServerMoreResultsExist)) return Status::OK();
  }
}

DumpConnection::DumpConnection(ConnectionOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

DumpConnection::~DumpConnection() { Close(); }

Status DumpConnection::Connect() {
  Impl& d = *impl_;
  Close();
  d.last_error = {};
  d.bytes_received = 0;
  d.plugin.clear();
  CANAL_RETURN_IF_ERROR(d.channel.Connect(d.options.host, d.options.port, d.options.connect_timeout_ms));
  d.connected = true;  // for Read/Write bookkeeping; cleared on any failure below
  Status s = d.Handshake();
  if (!s.ok()) {
    d.connected = false;
    d.channel.Close();
    return s;
  }
  return Status::OK();
}

Status DumpConnection::Execute(std::string_view sql) { return impl_->RunQuery(sql, nullptr); }

Status DumpConnection::Query(std::string_view sql, ResultSet* result) {
  if (result == nullptr) return Status::InvalidArgument("DumpConnection::Query: result is null");
  return impl_->RunQuery(sql, result);
}

Status DumpConnection::RegisterSlave(uint32_t server_id, std::string_view report_host, uint16_t report_port) {
  Impl& d = *impl_;
  constexpr std::string_view kWhat = "registering as replica (COM_REGISTER_SLAVE)";
  CANAL_RETURN_IF_ERROR(d.RequireConnected(kWhat));
  // Each string has a one-byte length.
  auto short_string = [](std::string* out, std::string_view s) {
    s = s.substr(0, 255);
    out->push_back(static_cast<char>(s.size()));
    out->append(s);
  };
  std::string cmd(1, static_cast<char>(kComRegisterSlave));
  wire::PutInt(&cmd, server_id, 4);
  short_string(&cmd, report_host);
  short_string(&cmd, "");  // report user
  short_string(&cmd, "");  // report password
  wire::PutInt(&cmd, report_port, 2);
  wire::PutInt(&cmd, 0, 4);  // replication rank (unused)
  wire::PutInt(&cmd, 0, 4);  // master id: the server fills it in
  d.channel.ResetSequence();
  CANAL_RETURN_IF_ERROR(d.Write(cmd));
  return d.ReadOkOrErr(kWhat);
}

Status DumpConnection::DumpFromPosition(std::string_view file, uint32_t position, uint32_t server_id) {
  Impl& d = *impl_;
  CANAL_RETURN_IF_ERROR(d.RequireConnected("starting the binlog dump"));
  std::string cmd(1, static_cast<char>(kComBinlogDump));
  wire::PutInt(&cmd, position, 4);
  wire::PutInt(&cmd, 0, 2);  // flags: 0 = block at the end of the binlog and wait
  wire::PutInt(&cmd, server_id, 4);
  cmd.append(file);
  d.channel.ResetSequence();
  CANAL_RETURN_IF_ERROR(d.Write(cmd));
  d.dumping = true;
  return Status::OK();
}

Status DumpConnection::DumpFromGtidSet(std::string_view gtid_set, uint32_t server_id, std::string_view file,
                                       uint64_t position) {
  Impl& d = *impl_;
  constexpr std::string_view kWhat = "starting the binlog dump by GTID";
  CANAL_RETURN_IF_ERROR(d.RequireConnected(kWhat));
  if (d.mariadb) {
    return d.Fail(Status::Code::kNotSupported, kWhat,
                  "MariaDB has no COM_BINLOG_DUMP_GTID; set @slave_connect_state and use DumpFromPosition");
  }
  std::string encoded;
  Status s = EncodeMysqlGtidSet(gtid_set, &encoded);
  if (!s.ok()) return d.Fail(Status::Code::kInvalidArgument, kWhat, s.message());
  std::string cmd(1, static_cast<char>(kComBinlogDumpGtid));
  wire::PutInt(&cmd, kBinlogThroughGtid, 2);
  wire::PutInt(&cmd, server_id, 4);
  wire::PutInt(&cmd, file.size(), 4);
  cmd.append(file);
  wire::PutInt(&cmd, position, 8);
  wire::PutInt(&cmd, encoded.size(), 4);
  cmd.append(encoded);
  d.channel.ResetSequence();
  CANAL_RETURN_IF_ERROR(d.Write(cmd));
  d.dumping = true;
  return Status::OK();
}

Status DumpConnection::ReadEvent(std::string_view* event) {
  Impl& d = *impl_;
  constexpr std::string_view kWhat = "reading the binlog stream";
  if (!d.dumping) {
    return d.Fail(Status::Code::kInvalidArgument, kWhat,
                  d.connected ? "no dump in progress (call DumpFromPosition or DumpFromGtidSet first)"
                              : "not connected");
  }
  std::string_view p;
  CANAL_RETURN_IF_ERROR(d.Read(&p, kWhat));
  if (p.empty()) return d.Fail(Status::Code::kCorruption, kWhat, "empty packet in the binlog stream");
  const uint8_t kind = static_cast<uint8_t>(p[0]);
  if (kind == kOk) {
    *event = p.substr(1);
    d.bytes_received += event->size();
    return Status::OK();
  }
  d.dumping = false;
  if (kind == kErr) {
    Status s = d.ServerFailure(kWhat, p);
    d.connected = false;  // the server ends the dump thread after an error
    return s;
  }
  if (IsEofPacket(p)) return d.Fail(Status::Code::kNotFound, kWhat, "end of binlog stream (EOF from the server)");
  d.connected = false;
  return d.Fail(Status::Code::kCorruption, kWhat,
                "unexpected packet starting with byte " + std::to_string(kind) + " (" + std::to_string(p.size()) +
                    " bytes) in the binlog stream");
}

void DumpConnection::Shutdown() { impl_->channel.Shutdown(); }

void DumpConnection::Close() {
  Impl& d = *impl_;
  if (d.connected && !d.dumping && d.channel.is_open() && !d.channel.shutdown_requested()) {
    // A polite COM_QUIT spares the server an "aborted connection" warning.
    d.channel.ResetSequence();
    d.channel.WriteMessage(std::string(1, static_cast<char>(kComQuit))).PermitUncheckedError();
  }
  d.connected = d.dumping = false;
  d.channel.Close();
}

bool DumpConnection::connected() const { return impl_->connected; }
uint32_t DumpConnection::connection_id() const { return impl_->connection_id; }
const std::string& DumpConnection::server_version() const { return impl_->server_version; }
bool DumpConnection::is_mariadb() const { return impl_->mariadb; }
bool DumpConnection::tls_active() const { return impl_->channel.tls_active(); }
const std::string& DumpConnection::auth_plugin() const { return impl_->plugin; }
const ServerError& DumpConnection::last_server_error() const { return impl_->last_error; }
uint64_t DumpConnection::bytes_received() const { return impl_->bytes_received; }

void DumpConnection::set_max_event_bytes(uint64_t n) { impl_->channel.set_max_message_bytes(n); }
void DumpConnection::set_before_block(std::function<void()> f) { impl_->channel.set_before_block(std::move(f)); }

// ---- GTID sets -------------------------------------------------------------

Status EncodeMysqlGtidSet(std::string_view gtid_set, std::string* out) {
  binlog::GtidSet set;
  CANAL_RETURN_IF_ERROR(binlog::GtidSet::Parse(gtid_set, &set));
  if (set.flavor() == binlog::GtidSet::Flavor::kMariadb) {
    return Status::InvalidArgument("bad GTID set element '" + std::string(gtid_set) +
                                   "': a MariaDB GTID position, where a MySQL GTID set (uuid:interval) is needed");
  }
  Status s = set.EncodeForDump(out);
  if (s.IsNotSupported()) {
    return Status::InvalidArgument("bad GTID set element '" + std::string(gtid_set) + "': " + std::string(s.message()));
  }
  return s;
}

}  // namespace canal::mysql
