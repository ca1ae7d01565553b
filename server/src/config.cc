#include "canal/server/config.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "canal/common/trim.h"
#include "canal/parser/event_parser.h"
#include "canal/sink/table_filter.h"
#include "tls_context.h"

namespace canal::server {
namespace {

namespace fs = std::filesystem;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Typed reads of one resolver, with errors naming where a value was set.
class KeyReader {
 public:
  KeyReader(const PropertyResolver* resolver, std::string fallback_origin)
      : resolver_(resolver), fallback_origin_(std::move(fallback_origin)) {}

  // The trimmed value, or nullopt when unset. Substitution errors come back as is.
  Status Get(std::string_view key, std::optional<std::string>* value, PropertySource* source) const {
    return resolver_->Get(key, value, source);
  }

  Status Bad(std::string_view key, const std::string& value, const PropertySource& source,
             std::string_view why) const {
    const std::string& where = source.where.empty() ? fallback_origin_ : source.where;
    return Status::InvalidArgument(where + ": " + std::string(key) + " = '" + value + "': " + std::string(why));
  }

  Status String(std::string_view key, std::string_view fallback, std::string* out) const {
    std::optional<std::string> v;
    CANAL_RETURN_IF_ERROR(Get(key, &v, nullptr));
    *out = v ? *v : std::string(fallback);
    return Status::OK();
  }

  Status Bool(std::string_view key, bool fallback, bool* out) const {
    std::optional<std::string> v;
    PropertySource source;
    CANAL_RETURN_IF_ERROR(Get(key, &v, &source));
    if (!v || v->empty()) {
      *out = fallback;
      return Status::OK();
    }
    std::string l = Lower(*v);
    if (l == "true") {
      *out = true;
    } else if (l == "false") {
      *out = false;
    } else {
      return Bad(key, *v, source, "not a boolean (write true or false)");
    }
    return Status::OK();
  }

  // An integer in [min, max]; an empty or absent value takes `fallback`.
  template <typename Int>
  Status Integer(std::string_view key, Int fallback, Int min, Int max, std::string_view unit, Int* out) const {
    std::optional<std::string> v;
    PropertySource source;
    CANAL_RETURN_IF_ERROR(Get(key, &v, &source));
    if (!v || v->empty()) {
      *out = fallback;
      return Status::OK();
    }
    Int n{};
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size() || n < min || n > max) {
      std::string why = "not " + std::string(unit) + " (a whole number from " + std::to_string(min) + " to " +
                        std::to_string(max) + ")";
      return Bad(key, *v, source, why);
    }
    *out = n;
    return Status::OK();
  }

 private:
  const PropertyResolver* resolver_;
  std::string fallback_origin_;
};

// Lexically normal absolute path of `p`, relative ones taken from `base`.
std::string ResolvePath(const std::string& base, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = fs::path(base) / path;
  path = path.lexically_normal();
  std::string s = path.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool ValidDestinationName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.';
    if (!ok) return false;
  }
  return true;
}

bool IsHex40(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

// "host:port", "[v6]:port" or a bare host (port 3306).
bool SplitAddress(const std::string& text, std::string* host, uint16_t* port) {
  std::string h, p;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos) return false;
    h = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return false;
      p = text.substr(close + 2);
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon != std::string::npos && text.find(':') != colon) return false;  // bare IPv6 needs brackets
    h = colon == std::string::npos ? text : text.substr(0, colon);
    if (colon != std::string::npos) p = text.substr(colon + 1);
  }
  if (h.empty()) return false;
  for (char c : h) {
    if (c == ' ' || c == '\t' || c == '/') return false;
  }
  unsigned value = 3306;
  if (!p.empty() || (text.find(':') != std::string::npos && text[0] != '[')) {
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || value == 0 || value > 65535) return false;
  }
  *host = h;
  *port = static_cast<uint16_t>(value);
  return true;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::string cur;
  auto flush = [&] {
    size_t b = 0, e = cur.size();
    while (b < e && (cur[b] == ' ' || cur[b] == '\t')) ++b;
    while (e > b && (cur[e - 1] == ' ' || cur[e - 1] == '\t')) --e;
    if (e > b) items.push_back(cur.substr(b, e - b));
    cur.clear();
  };
  for (char c : text) {
    if (c == ',') {
      flush();
    } else {
      cur.push_back(c);
    }
  }
  flush();
  return items;
}

// canal.zkServers: "host:port" items, comma-separated, the last one may carry
// ZooKeeper's "/chroot".
bool ValidZkServers(const std::string& text) {
  std::string hosts = text;
  if (size_t slash = hosts.find('/'); slash != std::string::npos) {
    const std::string chroot = hosts.substr(slash);
    if (chroot.size() < 2 || chroot.back() == '/' || chroot.find_first_of(" \t,") != std::string::npos) return false;
    hosts.resize(slash);
  }
  std::vector<std::string> items = SplitList(hosts);
  if (items.empty() || std::count(hosts.begin(), hosts.end(), ',') + 1 != static_cast<long>(items.size())) {
    return false;
  }
  for (const std::string& item : items) {
    std::string host;
    uint16_t port = 0;
    if (item.find(':') == std::string::npos || !SplitAddress(item, &host, &port)) return false;
  }
  return true;
}

Status LoadHaKeys(const KeyReader& keys, CanalConfig* config) {
  std::optional<std::string> zk;
  PropertySource source;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.zkServers", &zk, &source));
  if (zk && !zk->empty()) {
    if (!ValidZkServers(*zk)) {
      return keys.Bad("canal.zkServers", *zk, source,
                      "not a ZooKeeper address list (host:port, comma-separated, e.g. 10.0.0.1:2181,10.0.0.2:2181; "
                      "leave it empty to run without ZooKeeper)");
    }
    config->zk_servers = *zk;
  }
  CANAL_RETURN_IF_ERROR(keys.Integer<int64_t>("canal.zookeeper.flush.period", 1000, 0, 3'600'000,
                                              "a number of milliseconds", &config->zk_flush_period_ms));
  // ZooKeeper grants sessions between 2 and 20 ticks (4 s to 40 s with its
  // default 2 s tick); it clamps what we ask.
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.zookeeper.session.timeout", 6000, 1000, 600'000,
                                          "a number of milliseconds", &config->zk_session_timeout_ms));
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.zookeeper.takeover.delay", 1000, 0, 600'000,
                                          "a number of milliseconds", &config->zk_takeover_delay_ms));
  std::optional<std::string> fence;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.zookeeper.fence.timeout", &fence, &source));
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.zookeeper.fence.timeout", 0, 0, 600'000, "a number of milliseconds",
                                          &config->zk_fence_timeout_ms));
  if (config->zk_fence_timeout_ms >= config->zk_session_timeout_ms) {
    return keys.Bad("canal.zookeeper.fence.timeout", fence.value_or(""), source,
                    "must be below canal.zookeeper.session.timeout (" +
                        std::to_string(config->zk_session_timeout_ms) +
                        " ms): another server takes over once the session expires, so this server must stop "
                        "serving before then; leave it empty for half the session timeout");
  }
  std::optional<std::string> register_ip;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.register.ip", &register_ip, &source));
  if (register_ip && !register_ip->empty()) {
    unsigned char buf[16];
    if (inet_pton(AF_INET, register_ip->c_str(), buf) != 1 && inet_pton(AF_INET6, register_ip->c_str(), buf) != 1) {
      return keys.Bad("canal.register.ip", *register_ip, source,
                      "not an IP address (the address other servers and clients reach this server at; leave it "
                      "empty to use canal.ip or this host's first address)");
    }
    config->register_ip = *register_ip;
  }
  std::optional<std::string> mode;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.meta.mode", &mode, &source));
  const std::string m = mode ? Lower(*mode) : "";
  if (m.empty() || m == "auto") {
    config->meta_mode = config->zk_servers.empty() ? CanalConfig::MetaMode::kFile : CanalConfig::MetaMode::kZookeeper;
  } else if (m == "file") {
    config->meta_mode = CanalConfig::MetaMode::kFile;
  } else if (m == "zookeeper") {
    if (config->zk_servers.empty()) {
      return keys.Bad("canal.meta.mode", *mode, source,
                      "keeps cursors in ZooKeeper, but canal.zkServers is empty (set it, or use file)");
    }
    config->meta_mode = CanalConfig::MetaMode::kZookeeper;
  } else {
    return keys.Bad("canal.meta.mode", *mode, source, "not a cursor store (auto, file or zookeeper)");
  }
  std::optional<std::string> placement;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.cluster.placement", &placement, &source));
  const std::string pl = placement ? Lower(*placement) : "";
  if (pl == "balanced") {
    if (config->zk_servers.empty()) {
      return keys.Bad("canal.cluster.placement", *placement, source,
                      "places destinations through ZooKeeper, but canal.zkServers is empty (set it, or use race)");
    }
    config->cluster_balanced = true;
  } else if (!pl.empty() && pl != "race") {
    return keys.Bad("canal.cluster.placement", *placement, source,
                    "not a placement (race: every server contends for every destination, as Canal's do; balanced: "
                    "an elected leader spreads the destinations over the servers)");
  }
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.cluster.max.destinations", 0, 0, 100'000,
                                          "a number of destinations (0: no cap)", &config->cluster_max_destinations));
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.cluster.lost.delay", 0, 0, 600'000, "a number of milliseconds",
                                          &config->cluster_lost_delay_ms));
  if (!config->zk_servers.empty() && config->session.port == 0) {
    return Status::InvalidArgument(config->properties_file +
                                   ": canal.port = 0 with canal.zkServers set: other servers and clients find this "
                                   "server by its port in ZooKeeper; give canal.port a fixed port");
  }
  return Status::OK();
}

}  // namespace

Status MysqlCharsetName(std::string_view name, std::string* mysql_name) {
  static const std::pair<const char*, const char*> kNames[] = {
      // MySQL names, as they are.
      {"utf8mb4", "utf8mb4"}, {"utf8mb3", "utf8mb3"}, {"utf8", "utf8"}, {"latin1", "latin1"},
      {"binary", "binary"},   {"ascii", "ascii"},     {"gbk", "gbk"},   {"gb2312", "gb2312"},
      {"big5", "big5"},       {"gb18030", "gb18030"}, {"ujis", "ujis"}, {"sjis", "sjis"},
      // Java names Canal's files carry. Java's UTF-8 is all of Unicode: utf8mb4.
      {"utf-8", "utf8mb4"},   {"iso-8859-1", "latin1"}, {"us-ascii", "ascii"}, {"euc-jp", "ujis"},
      {"shift_jis", "sjis"},
  };
  std::string l = Lower(name);
  for (const auto& [from, to] : kNames) {
    if (l == from) {
      *mysql_name = to;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown character set (use utf8mb4, UTF-8, utf8, latin1, gbk, gb18030, big5, ...)");
}

namespace {

// canal.instance.mysql.slaveId = 0: an id of this server (its announced or
// listening address, else the host name, and its port), the destination and
// the primary, so that two servers with a destination of the same name on
// one primary do not share an id and knock each other off (ERROR 4052).
uint32_t DefaultSlaveId(const CanalConfig& canal, const std::string& destination, const std::string& master) {
  std::string host = canal.register_ip;
  if (host.empty() && canal.session.ip != "0.0.0.0" && canal.session.ip != "::") host = canal.session.ip;
  if (host.empty()) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) host = name;
  }
  return parser::EventParser::DeriveSlaveId(destination,
                                            host + ":" + std::to_string(canal.session.port) + "@" + master);
}

// What a client gets before it logs in, and how many connections the
// server holds (docs/configuration.md, "Connections").
Status LoadMemoryBudget(const KeyReader& keys, CanalConfig* config) {
  std::optional<std::string> v;
  PropertySource source;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.memory.budget", &v, &source));
  const std::string_view text = v ? Trim(*v) : std::string_view();
  if (text.empty()) {
    config->memory_budget_bytes = DefaultMemoryBudget();
    return Status::OK();
  }
  constexpr uint64_t kMin = 16u << 20;
  if (!ParseByteSize(text, &config->memory_budget_bytes) || config->memory_budget_bytes < kMin) {
    return keys.Bad("canal.memory.budget", std::string(text), source,
                    "not a size of at least 16m (bytes, or with k, m or g: 1g, 512m)");
  }
  return Status::OK();
}

Status LoadConnectionLimits(const KeyReader& keys, SessionServerOptions* session) {
  CANAL_RETURN_IF_ERROR(keys.Integer<uint32_t>("canal.connections.preauth.max.frame.bytes", 64u << 10, 1024,
                                               session->max_frame_bytes, "a byte count",
                                               &session->pre_auth_max_frame_bytes));
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.connections.login.timeout", 10'000, 100, 3'600'000,
                                          "a number of milliseconds", &session->login_timeout_ms));
  CANAL_RETURN_IF_ERROR(keys.Integer<size_t>("canal.connections.max", 1024, 0, 1'000'000,
                                             "a number of connections (0: no limit)", &session->max_connections));
  return keys.Integer<size_t>("canal.connections.max.per.address", 64, 0, 1'000'000,
                              "a number of connections (0: no limit)", &session->max_connections_per_address);
}

// TLS on the client port (docs/configuration.md, "TLS"). Off, the other
// canal.tls.* keys are not read. On, the files are loaded here once, so that
// a bad one stops the start naming its key and file.
Status LoadTlsKeys(const KeyReader& keys, const std::string& base_dir, const std::string& properties_file,
                   ServerTlsOptions* tls) {
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.tls.enabled", false, &tls->enabled));
  if (!tls->enabled) return Status::OK();
  struct File {
    const char* key;
    std::string* path;
    PropertySource source;
  } files[] = {{"canal.tls.cert", &tls->cert_file, {}},
               {"canal.tls.key", &tls->key_file, {}},
               {"canal.tls.clientCa", &tls->client_ca_file, {}}};
  for (File& f : files) {
    std::optional<std::string> v;
    CANAL_RETURN_IF_ERROR(keys.Get(f.key, &v, &f.source));
    *f.path = v && !v->empty() ? ResolvePath(base_dir, *v) : "";
  }
  std::optional<std::string> version;
  PropertySource source;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.tls.minVersion", &version, &source));
  if (version && !version->empty()) {
    const std::string v = Lower(*version);
    if (v != "tlsv1.2" && v != "tlsv1.3") {
      return keys.Bad("canal.tls.minVersion", *version, source,
                      "not a TLS version this server offers (TLSv1.2 or TLSv1.3)");
    }
    tls->min_version = v == "tlsv1.3" ? "TLSv1.3" : "TLSv1.2";
  }
  Status s = CheckServerTls(*tls);
  if (s.ok()) return s;
  // The message starts with the key it is about: say where that was set.
  std::string where = properties_file;
  for (const File& f : files) {
    if (s.message().starts_with(std::string(f.key) + " ") && !f.source.where.empty()) {
      where = f.source.where;
    }
  }
  return Status::InvalidArgument(where + ": " + std::string(s.message()));
}

}  // namespace

Status LoadCanalConfig(const std::string& canal_properties, const ConfigOverrides& overrides, CanalConfig* out,
                       EnvLookup env) {
  CanalConfig config;
  config.env = env ? std::move(env) : ProcessEnvironment();
  std::error_code ec;
  fs::path file = fs::absolute(canal_properties, ec).lexically_normal();
  if (ec) return Status::IOError("resolving " + canal_properties + ": " + ec.message());
  config.properties_file = file.string();
  config.base_dir = file.parent_path().string();

  Status s = Properties::LoadFile(config.properties_file, &config.properties);
  if (s.IsNotFound()) {
    return Status::NotFound(config.properties_file +
                            " does not exist (give the folder holding canal.properties with --conf DIR)");
  }
  CANAL_RETURN_IF_ERROR(s);

  PropertyResolver resolver({&config.properties}, config.env);
  KeyReader keys(&resolver, config.properties_file);

  // canal.conf.dir comes first: canal.file.data.dir defaults to it.
  std::string conf_dir;
  CANAL_RETURN_IF_ERROR(keys.String("canal.conf.dir", "", &conf_dir));
  config.conf_dir = conf_dir.empty() ? ResolvePath(config.base_dir, ".") : ResolvePath(config.base_dir, conf_dir);

  std::optional<std::string> ip;
  PropertySource source;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.ip", &ip, &source));
  if (ip && !ip->empty()) {
    unsigned char buf[16];
    if (inet_pton(AF_INET, ip->c_str(), buf) != 1 && inet_pton(AF_INET6, ip->c_str(), buf) != 1) {
      return keys.Bad("canal.ip", *ip, source,
                      "not an IP address of this host (leave it empty to listen on every interface)");
    }
    config.session.ip = *ip;
  } else {
    config.session.ip = "0.0.0.0";
  }
  uint16_t port = 11111;
  CANAL_RETURN_IF_ERROR(keys.Integer<uint16_t>("canal.port", 11111, 0, 65535, "a TCP port", &port));
  config.session.port = port;
  CANAL_RETURN_IF_ERROR(keys.Integer<uint16_t>("canal.metrics.pull.port", 11112, 0, 65535,
                                               "a TCP port (0 turns the metrics endpoint off)", &config.metrics_port));
  CANAL_RETURN_IF_ERROR(keys.Get("canal.metrics.pull.ip", &ip, &source));
  if (ip && !ip->empty()) {
    unsigned char buf[16];
    if (inet_pton(AF_INET, ip->c_str(), buf) != 1 && inet_pton(AF_INET6, ip->c_str(), buf) != 1) {
      return keys.Bad("canal.metrics.pull.ip", *ip, source, "not an IP address of this host (leave it empty for canal.ip)");
    }
    config.metrics_ip = *ip;
  } else {
    config.metrics_ip = config.session.ip;
  }
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.metrics.pull.max.connections", 16, 1, 10'000, "a number of connections",
                                          &config.metrics_max_connections));
  CANAL_RETURN_IF_ERROR(keys.String("canal.user", "", &config.session.user));
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.get.low.latency", false, &config.session.low_latency_get));
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.file.flush.warn", 100, 0, 3'600'000,
                                          "a number of milliseconds (0: never warn)",
                                          &config.session.slow_flush_warn_ms));
  CANAL_RETURN_IF_ERROR(LoadConnectionLimits(keys, &config.session));
  CANAL_RETURN_IF_ERROR(LoadTlsKeys(keys, config.base_dir, config.properties_file, &config.session.tls));
  std::optional<std::string> passwd;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.passwd", &passwd, &source));
  if (passwd && !passwd->empty()) {
    if (!IsHex40(*passwd)) {
      return keys.Bad("canal.passwd", *passwd, source,
                      "not a stored password: Canal keeps 40 hex digits of SHA1(SHA1(password)) here, e.g. "
                      "printf %s 'PASSWORD' | openssl sha1 -binary | openssl sha1 (see docs/configuration.md)");
    }
    config.session.password_stored = *passwd;
  }
  // Client users (users_file.h; the file itself is read by ClientUsers::Create).
  std::optional<std::string> users_file;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.users.file", &users_file, &source));
  if (users_file && !users_file->empty()) {
    if (config.session.user.empty() && !config.session.password_stored.empty()) {
      return keys.Bad("canal.users.file", *users_file, source,
                      "canal.passwd is set without canal.user: with a users file every login names a user "
                      "(set canal.user, or move the password into the file)");
    }
    config.users_file = ResolvePath(config.base_dir, *users_file);
  }
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.users.reload.interval", 1000, 100, 3'600'000,
                                          "a number of milliseconds", &config.users_reload_interval_ms));

  std::optional<std::string> destinations;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.destinations", &destinations, &source));
  if (destinations) {
    std::set<std::string> seen;
    for (std::string& name : SplitList(*destinations)) {
      if (!ValidDestinationName(name)) {
        return keys.Bad("canal.destinations", *destinations, source,
                        "'" + name + "' is not a destination name (letters, digits, '_', '-', '.'; it names a "
                        "folder of canal.conf.dir)");
      }
      if (!seen.insert(name).second) {
        return keys.Bad("canal.destinations", *destinations, source, "'" + name + "' is listed twice");
      }
      config.destinations.push_back(std::move(name));
    }
  }
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.auto.scan", true, &config.auto_scan));
  CANAL_RETURN_IF_ERROR(LoadMemoryBudget(keys, &config));
  CANAL_RETURN_IF_ERROR(
      keys.Integer<int>("canal.auto.scan.interval", 5, 1, 86'400, "a number of seconds", &config.auto_scan_interval_s));

  if (overrides.data_dir) {
    config.file_data_dir = ResolvePath(fs::current_path(ec).string(), *overrides.data_dir);
  } else {
    std::string data_dir;
    CANAL_RETURN_IF_ERROR(keys.String("canal.file.data.dir", "", &data_dir));
    config.file_data_dir = data_dir.empty() ? config.conf_dir : ResolvePath(config.base_dir, data_dir);
  }
  CANAL_RETURN_IF_ERROR(keys.Integer<int64_t>("canal.file.flush.period", 1000, 0, 3'600'000,
                                              "a number of milliseconds", &config.file_flush_period_ms));
  CANAL_RETURN_IF_ERROR(LoadHaKeys(keys, &config));
  *out = std::move(config);
  return Status::OK();
}

std::string InstancePropertiesPath(const CanalConfig& canal, const std::string& destination) {
  return (fs::path(canal.conf_dir) / destination / "instance.properties").string();
}

uint64_t DefaultMemoryBudget() {
  constexpr uint64_t kDefault = uint64_t{1} << 30;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kDefault;
  return std::min(kDefault, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4);
}

bool ParseByteSize(std::string_view text, uint64_t* bytes) {
  if (text.empty()) return false;
  uint64_t unit = 1;
  const char last = static_cast<char>(text.back() | 0x20);
  if (last == 'k' || last == 'm' || last == 'g') {
    unit = last == 'k' ? uint64_t{1} << 10 : last == 'm' ? uint64_t{1} << 20 : uint64_t{1} << 30;
    text.remove_suffix(1);
  }
  if (text.empty() || text.size() > 19) return false;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > ~uint64_t{0} / unit) return false;
  *bytes = n * unit;
  return true;
}

Status LoadInstanceConfig(const CanalConfig& canal, const std::string& destination, InstanceConfig* out) {
  const std::string path = InstancePropertiesPath(canal, destination);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return Status::NotFound(path + " does not exist (destination " + destination +
                              " needs its instance.properties; copy conf/example/instance.properties)");
    }
    return Status::IOError("reading " + path + ": cannot open");
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParseInstanceConfig(canal, destination, path, buf.str(), out);
}

namespace {

// Canal's start keys under `prefix` (canal.instance.master, canal.instance.standby):
// journal.name, position (which needs the journal name) and timestamp.
Status ReadStartKeys(KeyReader& keys, const std::string& prefix, parser::StartPosition* at) {
  CANAL_RETURN_IF_ERROR(keys.String(prefix + ".journal.name", "", &at->journal_name));
  // 64 bits: one huge transaction makes a binlog file larger than 4 GiB.
  CANAL_RETURN_IF_ERROR(keys.Integer<uint64_t>(prefix + ".position", 0, 0, std::numeric_limits<int64_t>::max(),
                                               "a binlog offset", &at->position));
  if (at->position != 0 && at->journal_name.empty()) {
    PropertySource source;
    std::optional<std::string> pos;
    CANAL_RETURN_IF_ERROR(keys.Get(prefix + ".position", &pos, &source));
    return keys.Bad(prefix + ".position", pos.value_or(""), source,
                    "a position needs " + prefix + ".journal.name (the binlog file it is in)");
  }
  return keys.Integer<int64_t>(prefix + ".timestamp", 0, 0, std::numeric_limits<int64_t>::max(),
                               "a time in milliseconds since 1970-01-01 UTC", &at->timestamp_ms);
}

// The primary and how to log in.
Status ReadPrimary(KeyReader& keys, const std::string& path, InstanceConfig* config,
                   const CanalConfig& canal, const std::string& destination) {
  PropertySource source;
  std::optional<std::string> address;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.master.address", &address, &source));
  if (!address || address->empty()) {
    return Status::InvalidArgument(path + ": canal.instance.master.address is not set (write host:port of the "
                                          "primary, e.g. canal.instance.master.address=127.0.0.1:3306)");
  }
  // Several host:port, comma-separated, and Canal's standby: candidates for the primary
  // (docs/replication.md, "Failover"); the first is where the stream starts.
  std::vector<parser::MasterCandidate> candidates;
  // `first` (optional): the first address of `text`, whether or not it was a candidate already.
  const auto add_candidates = [&](const std::string& key, const std::string& text, const PropertySource& from,
                                  parser::MasterCandidate* first = nullptr) -> Status {
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      std::string one = text.substr(start, comma - start);
      one.erase(0, one.find_first_not_of(" \t"));
      one.erase(one.find_last_not_of(" \t") + 1);
      start = comma + 1;
      if (one.empty()) continue;
      parser::MasterCandidate c;
      if (!SplitAddress(one, &c.host, &c.port)) {
        return keys.Bad(key, text, from,
                        "not host:port, or a comma-separated list of them (e.g. 127.0.0.1:3306, "
                        "db1.example.com:3306,db2.example.com:3306, [::1]:3306)");
      }
      const bool seen = std::any_of(candidates.begin(), candidates.end(), [&](const parser::MasterCandidate& o) {
        return o.host == c.host && o.port == c.port;
      });
      if (first != nullptr && first->host.empty()) *first = c;
      if (!seen) candidates.push_back(std::move(c));
    }
    return Status::OK();
  };
  CANAL_RETURN_IF_ERROR(add_candidates("canal.instance.master.address", *address, source));
  if (candidates.empty()) {
    return keys.Bad("canal.instance.master.address", *address, source, "names no host:port");
  }
  std::optional<std::string> standby;
  PropertySource standby_source;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.standby.address", &standby, &standby_source));
  if (standby && !standby->empty()) {
    // Canal's standby (its first address) and where its binlog goes on for a stream without
    // GTID state that moves to it.
    CANAL_RETURN_IF_ERROR(
        add_candidates("canal.instance.standby.address", *standby, standby_source, &config->parser.standby));
    CANAL_RETURN_IF_ERROR(ReadStartKeys(keys, "canal.instance.standby", &config->parser.standby_start));
  }
  config->parser.master.host = candidates.front().host;
  config->parser.master.port = candidates.front().port;
  if (candidates.size() > 1) config->parser.candidates = std::move(candidates);
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.instance.detecting.retry.threshold", 3, 1, 1000,
                                          "a number of failed sessions", &config->parser.detect_retry_threshold));
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.instance.detecting.enable", false, &config->parser.detecting_enable));
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.instance.detecting.heartbeatHaEnable", false, &config->parser.detecting_ha));
  std::optional<std::string> detecting_sql;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.detecting.sql", &detecting_sql, &source));
  if (detecting_sql && !Trim(*detecting_sql).empty()) config->parser.detecting_sql = std::string(Trim(*detecting_sql));
  if (config->parser.detecting_enable && config->parser.detecting_sql.size() > 4096) {
    return keys.Bad("canal.instance.detecting.sql", config->parser.detecting_sql.substr(0, 64) + "...", source,
                    "one SQL statement of at most 4096 bytes");
  }
  std::optional<std::string> user;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.dbUsername", &user, &source));
  if (!user || user->empty()) {
    return Status::InvalidArgument(path + ": canal.instance.dbUsername is not set (the replication user on " +
                                   *address + ", with REPLICATION SLAVE and REPLICATION CLIENT)");
  }
  config->parser.master.user = *user;
  CANAL_RETURN_IF_ERROR(keys.String("canal.instance.dbPassword", "", &config->parser.master.password));
  std::optional<std::string> charset;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.connectionCharset", &charset, &source));
  if (charset && !charset->empty()) {
    Status s = MysqlCharsetName(*charset, &config->parser.master.charset);
    if (!s.ok()) return keys.Bad("canal.instance.connectionCharset", *charset, source, s.message());
  }
  CANAL_RETURN_IF_ERROR(keys.Integer<uint32_t>("canal.instance.mysql.slaveId", 0, 0,
                                               std::numeric_limits<uint32_t>::max(),
                                               "a server id (0 derives one)", &config->parser.slave_id));
  if (config->parser.slave_id == 0) config->parser.slave_id = DefaultSlaveId(canal, destination, *address);
  return Status::OK();
}

// Where to start.
Status ReadStartPosition(KeyReader& keys, InstanceConfig* config) {
  CANAL_RETURN_IF_ERROR(ReadStartKeys(keys, "canal.instance.master", &config->parser.start));
  CANAL_RETURN_IF_ERROR(keys.String("canal.instance.master.gtid", "", &config->parser.start.gtid));
  return Status::OK();
}

// The parser: invalid positions, value text, heartbeats, transaction size.
Status ReadParserKeys(KeyReader& keys, InstanceConfig* config) {
  PropertySource source;
  std::optional<std::string> action;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.parser.invalid.position.action", &action, &source));
  if (action && !action->empty()) {
    Status s = parser::ParseInvalidPositionAction(Lower(*action), &config->parser.on_invalid_position);
    if (!s.ok()) {
      return keys.Bad("canal.instance.parser.invalid.position.action", *action, source,
                      "not one of stop, earliest, latest");
    }
  }
  std::optional<std::string> diverged;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.failover.diverged", &diverged, &source));
  if (diverged && !diverged->empty() &&
      !parser::ParseDivergedAction(Lower(*diverged), &config->parser.on_diverged).ok()) {
    return keys.Bad("canal.instance.failover.diverged", *diverged, source, "not one of stop, continue");
  }
  bool by_time = false;
  int fallback_window_s = 60;
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.instance.failover.timestamp.fallback", false, &by_time));
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.instance.fallbackIntervalInSeconds", 60, 1, 86400, "seconds",
                                          &fallback_window_s));
  config->parser.failover_timestamp_fallback_s = by_time ? fallback_window_s : 0;
  std::optional<std::string> forms;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.value.format", &forms, &source));
  if (forms && !forms->empty()) {
    const std::string f = Lower(*forms);
    if (f == "canal") {
      config->sink.entries.values.forms = render::TextForms::kCanal;
    } else if (f == "mysql") {
      config->sink.entries.values.forms = render::TextForms::kMysql;
    } else {
      return keys.Bad("canal.instance.value.format", *forms, source,
                      "not one of canal (Java's FLOAT/DOUBLE text, mysqlType with display widths) or mysql");
    }
  }
  int heartbeat_s = 3;
  CANAL_RETURN_IF_ERROR(keys.Integer<int>("canal.instance.detecting.interval.time", 3, 1, 3600,
                                          "a number of seconds", &heartbeat_s));
  config->parser.heartbeat_period_ms = heartbeat_s * 1000;
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.instance.parser.parallel", true, &config->parser.read_ahead));
  CANAL_RETURN_IF_ERROR(keys.Integer<size_t>("canal.instance.transaction.size", 4096, 1, size_t{1} << 20,
                                             "a number of events", &config->parser.buffer.max_events));
  return Status::OK();
}

// The ring.
Status ReadRing(KeyReader& keys, const std::string& path, InstanceConfig* config) {
  PropertySource source;
  for (std::string_view key : {"canal.instance.memory.buffer.size", "canal.instance.memory.buffer.memunit",
                               "canal.instance.memory.batch.mode", "canal.instance.get.ddl.isolation"}) {
    std::optional<std::string> v;
    CANAL_RETURN_IF_ERROR(keys.Get(key, &v, &source));
    if (!v || v->empty()) continue;
    Status s = config->store.SetFromProperty(key, *v);
    if (!s.ok()) return Status::InvalidArgument(source.where + ": " + std::string(s.message()));
  }
  if (Status s = config->store.Validate(); !s.ok()) {
    return Status::InvalidArgument(path + " (with canal.properties' defaults): " + std::string(s.message()));
  }
  return Status::OK();
}

// Filters: event types, tables, fields.
Status ReadFilters(KeyReader& keys, const std::string& path, InstanceConfig* config) {
  PropertySource source;
  for (std::string_view key :
       {"canal.instance.filter.query.dml", "canal.instance.filter.query.ddl", "canal.instance.filter.query.dcl",
        "canal.instance.filter.dml.insert", "canal.instance.filter.dml.update", "canal.instance.filter.dml.delete",
        "canal.instance.filter.transaction.entry"}) {
    std::optional<std::string> v;
    CANAL_RETURN_IF_ERROR(keys.Get(key, &v, &source));
    if (!v || v->empty()) continue;
    Status s = config->sink.event_types.Set(key, *v);
    if (!s.ok()) return keys.Bad(key, *v, source, "not a boolean (write true or false)");
  }
  struct FilterKey {
    std::string_view key;
    std::string* value;
  };
  const FilterKey filter_keys[] = {
      {"canal.instance.filter.regex", &config->filter_regex},
      {"canal.instance.filter.black.regex", &config->filter_black_regex},
      {"canal.instance.filter.field", &config->filter_field},
      {"canal.instance.filter.black.field", &config->filter_black_field},
  };
  for (const FilterKey& f : filter_keys) {
    std::optional<std::string> v;
    CANAL_RETURN_IF_ERROR(keys.Get(f.key, &v, &source));
    if (!v || v->empty()) continue;
    *f.value = *v;
    // Compiled one by one so that an error names the file the pattern is in.
    Status s;
    if (f.key == "canal.instance.filter.regex") {
      std::unique_ptr<sink::TableFilter> t;
      s = sink::TableFilter::Create(*v, "", &t);
    } else if (f.key == "canal.instance.filter.black.regex") {
      std::unique_ptr<sink::TableFilter> t;
      s = sink::TableFilter::Create("", *v, &t);
    } else {
      std::unique_ptr<sink::FieldFilter> ff;
      s = sink::FieldFilter::Create(*v, f.key, &ff);
    }
    if (!s.ok()) return Status::InvalidArgument(source.where + ": " + std::string(s.message()));
  }
  CANAL_RETURN_IF_ERROR(config->sink.CompileFilters(config->filter_regex, config->filter_black_regex,
                                                   config->filter_field, config->filter_black_field)
                            .WithContext(path));
  return Status::OK();
}

// The schema history (docs/schema-history.md), kept for the tables the
// instance's filter accepts, next to the destination's meta.dat.
Status ReadSchemaHistory(KeyReader& keys, InstanceConfig* config, const CanalConfig& canal,
                         const std::string& destination) {
  bool tsdb = true;
  CANAL_RETURN_IF_ERROR(keys.Bool("canal.instance.tsdb.enable", true, &tsdb));
  int64_t interval_h = 24, expire_h = 360;
  CANAL_RETURN_IF_ERROR(keys.Integer<int64_t>("canal.instance.tsdb.snapshot.interval", 24, 0, 24 * 365,
                                              "a number of hours", &interval_h));
  CANAL_RETURN_IF_ERROR(keys.Integer<int64_t>("canal.instance.tsdb.snapshot.expire", 360, 0, 24 * 3650,
                                              "a number of hours", &expire_h));
  config->parser.schema_compact_interval_s = interval_h * 3600;
  config->parser.schema_compact_expire_s = expire_h * 3600;
  if (tsdb) {
    config->parser.schema_history_file = canal.file_data_dir + "/" + destination + "/schema_history.json";
    std::shared_ptr<const sink::TableFilter> filter = config->sink.table_filter;
    config->parser.schema_scope = [filter](std::string_view db, std::string_view table) {
      return filter == nullptr || filter->Accepts(db, table);
    };
  }
  return Status::OK();
}

// canal.instance.snapshot.* (docs/snapshot.md): read with wide bounds here so that Validate's
// message (the key, the bounds and why) is the one a bad value gets.
Status ReadSnapshot(KeyReader& keys, InstanceConfig* config) {
  snapshot::SnapshotOptions& o = config->snapshot;
  std::string mode;
  CANAL_RETURN_IF_ERROR(keys.String("canal.instance.snapshot.mode", "never", &mode));
  CANAL_RETURN_IF_ERROR(snapshot::ParseSnapshotMode(mode, &o.mode));
  constexpr uint64_t kWide = uint64_t{1} << 62;
  uint64_t threads = o.threads;
  CANAL_RETURN_IF_ERROR(keys.Integer<uint64_t>("canal.instance.snapshot.threads", o.threads, 0, kWide,
                                               "a number of reader threads", &threads));
  o.threads = static_cast<uint32_t>(std::min<uint64_t>(threads, UINT32_MAX));
  CANAL_RETURN_IF_ERROR(keys.Integer<uint64_t>("canal.instance.snapshot.chunk.rows", o.chunk_rows, 0, kWide,
                                               "a number of rows", &o.chunk_rows));
  CANAL_RETURN_IF_ERROR(keys.Integer<uint64_t>("canal.instance.snapshot.chunk.bytes", o.chunk_bytes, 0, kWide,
                                               "a number of bytes", &o.chunk_bytes));
  CANAL_RETURN_IF_ERROR(keys.Integer<uint64_t>("canal.instance.snapshot.window.keys", o.window_keys, 0, kWide,
                                               "a number of keys", &o.window_keys));
  return o.Validate();
}

// canal.instance.cluster.*: where a balanced cluster should run the destination (docs/cluster.md).
Status ReadClusterHints(KeyReader& keys, InstanceConfig* config) {
  std::optional<std::string> weight;
  PropertySource source;
  CANAL_RETURN_IF_ERROR(keys.Get("canal.instance.cluster.weight", &weight, &source));
  if (weight && !weight->empty()) {
    char* end = nullptr;
    const double w = std::strtod(weight->c_str(), &end);
    if (end == weight->c_str() || *end != '\0' || !std::isfinite(w) || w <= 0 || w > 1e6) {
      return keys.Bad("canal.instance.cluster.weight", *weight, source,
                      "not a weight (a number above 0 and at most 1000000; 1 is an ordinary destination, 4 one "
                      "that costs four)");
    }
    config->cluster_weight = w;
  }
  for (const char* key : {"canal.instance.cluster.preferred", "canal.instance.cluster.excluded"}) {
    std::optional<std::string> list;
    CANAL_RETURN_IF_ERROR(keys.Get(key, &list, &source));
    if (!list) continue;
    std::vector<std::string>& out =
        std::string_view(key).ends_with("preferred") ? config->cluster_preferred : config->cluster_excluded;
    std::string_view rest = *list;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string item(Trim(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (item.empty()) continue;
      std::string host;
      uint16_t port = 0;
      if (item.find(':') == std::string::npos || !SplitAddress(item, &host, &port)) {
        return keys.Bad(key, *list, source,
                        "not a list of servers (ip:port as the cluster knows them, comma-separated, e.g. "
                        "10.0.0.5:11111,10.0.0.6:11111)");
      }
      out.push_back(std::move(item));
    }
  }
  return Status::OK();
}

}  // namespace

Status ParseInstanceConfig(const CanalConfig& canal, const std::string& destination, const std::string& path,
                           const std::string& contents, InstanceConfig* out) {
  if (!ValidDestinationName(destination)) {
    return Status::InvalidArgument("'" + destination + "' is not a destination name (letters, digits, '_', '-', '.')");
  }
  Properties props;
  CANAL_RETURN_IF_ERROR(Properties::Parse(contents, path, &props));
  PropertyResolver resolver({&props, &canal.properties}, canal.env ? canal.env : ProcessEnvironment());
  KeyReader keys(&resolver, path);

  InstanceConfig config;
  config.destination = destination;
  config.properties_file = path;
  config.contents = contents;
  config.parser.destination = destination;

  CANAL_RETURN_IF_ERROR(ReadPrimary(keys, path, &config, canal, destination));
  CANAL_RETURN_IF_ERROR(ReadStartPosition(keys, &config));
  CANAL_RETURN_IF_ERROR(ReadParserKeys(keys, &config));
  CANAL_RETURN_IF_ERROR(ReadRing(keys, path, &config));
  CANAL_RETURN_IF_ERROR(ReadFilters(keys, path, &config));
  CANAL_RETURN_IF_ERROR(ReadSchemaHistory(keys, &config, canal, destination));
  CANAL_RETURN_IF_ERROR(ReadSnapshot(keys, &config).WithContext(path));
  CANAL_RETURN_IF_ERROR(ReadClusterHints(keys, &config));
  *out = std::move(config);
  return Status::OK();
}

}  // namespace canal::server
