#include "canal/server/admin_api.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "canal/common/ascii_case.h"
#include "canal/common/properties.h"
#include "canal/common/trim.h"
#include "canal/server/client_text.h"
#include "admin_json.h"
#include "file_text.h"

namespace canal::server {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kJsonType = "application/json";
constexpr std::string_view kPrefix = "/api";
constexpr std::string_view kDestinations = "/api/destinations";
constexpr std::string_view kCluster = "/api/cluster";
constexpr const char* kTokenKeys = "canal.admin.token or canal.admin.tokenFile";

// running / stopped / failed / standby, from the status report and the
// registry's view of why a destination is not running.
json DestinationJson(const DestinationReport& d, const HeldState& held, const std::string& mode) {
  std::string state;
  std::string last_error = d.has_status ? d.status.parser.last_error : std::string();
  if (held.stopped_by_operator) {
    state = "stopped";
  } else if (!d.configured) {
    state = "failed";
    if (last_error.empty()) last_error = held.failure.empty() ? "its instance.properties was refused" : held.failure;
  } else if (d.role != "active") {
    state = "standby";
  } else if (d.state == "failed") {
    state = "failed";
  } else if (d.state == "stopped") {
    state = "stopped";
  } else {
    state = "running";
  }
  json j = {{"name", d.name},
            {"state", state},
            {"detail", held.stopped_by_operator ? std::string("stopped by an operator") : d.state},
            {"role", d.role},
            {"mode", mode},
            {"last_error", last_error.empty() ? json(nullptr) : json(last_error)}};
  j["position"] = d.has_status ? AdminPositionJson(d.status.parser.position) : json(nullptr);
  j["acked"] = d.acked ? AdminPositionJson(*d.acked) : json(nullptr);
  j["lag_ms"] = d.has_status ? json(d.delay_ms) : json(nullptr);
  json clients = {{"subscriptions", d.subscriptions}, {"connected", false}};
  if (d.client) {
    const ClientConnection c = d.client->connection();
    clients["connected"] = c.connected;
    if (c.connected) {
      clients["address"] = c.address;
      clients["client_id"] = c.client_id;
    }
  }
  j["clients"] = std::move(clients);
  return j;
}

// A token file holds one line; a larger file is not one.
std::optional<std::string> ReadFile(const std::string& path) { return ReadFileText(path, 64 * 1024); }

}  // namespace

bool ValidDestinationName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

HttpAnswer AdminJsonAnswer(int status, const json& body) {
  return {status, kJsonType, body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", false, {}};
}

json AdminPositionJson(const LogPosition& p) {
  if (p.empty()) return nullptr;
  return {{"journal", p.journal_name}, {"offset", p.position}, {"gtid", p.gtid}, {"timestamp_ms", p.timestamp_ms}};
}

Status LoadAdminConfig(const CanalConfig& canal, AdminConfig* out, std::vector<std::string>* warnings) {
  *out = AdminConfig{};
  PropertyResolver resolver({&canal.properties}, canal.env ? canal.env : ProcessEnvironment());
  const std::string where = " in " + canal.properties_file;
  std::optional<std::string> token, file, reads;
  CANAL_RETURN_IF_ERROR(resolver.Get("canal.admin.token", &token));
  CANAL_RETURN_IF_ERROR(resolver.Get("canal.admin.tokenFile", &file));
  CANAL_RETURN_IF_ERROR(resolver.Get("canal.admin.readRequiresToken", &reads));
  const std::string_view inline_token = token ? Trim(*token) : std::string_view();
  const std::string_view file_name = file ? Trim(*file) : std::string_view();
  if (!inline_token.empty() && !file_name.empty()) {
    return Status::InvalidArgument("canal.admin.token and canal.admin.tokenFile are both set" + where +
                                   ": keep one (the file keeps the token out of canal.properties)");
  }
  if (!inline_token.empty()) {
    out->token = std::string(inline_token);
    out->token_origin = "canal.admin.token";
  } else if (!file_name.empty()) {
    fs::path path(file_name);
    if (path.is_relative()) path = fs::path(canal.base_dir) / path;
    const std::optional<std::string> text = ReadFile(path.string());
    if (!text) {
      return Status::InvalidArgument("canal.admin.tokenFile = " + std::string(file_name) + where + ": " +
                                     path.string() + " cannot be read (create it: head -c 32 /dev/urandom | base64 > " +
                                     path.string() + "; chmod 600 " + path.string() + ")");
    }
    // The first line: `base64` ends its output with a newline.
    out->token = std::string(Trim(std::string_view(*text).substr(0, text->find('\n'))));
    out->token_origin = "canal.admin.tokenFile " + path.string();
    if (out->token.empty()) {
      return Status::InvalidArgument("canal.admin.tokenFile = " + std::string(file_name) + where + ": " +
                                     path.string() + " is empty");
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
      warnings->push_back("the admin token file " + path.string() +
                          " may be read by other users; chmod 600 it");
    }
  }
  if (!out->token.empty()) {
    if (out->token.size() < kMinTokenBytes) {
      return Status::InvalidArgument(out->token_origin + where + ": the admin token is shorter than " +
                                     std::to_string(kMinTokenBytes) +
                                     " characters; make one with head -c 32 /dev/urandom | base64");
    }
    for (char c : out->token) {
      if (c <= ' ' || c == 0x7f) {
        return Status::InvalidArgument(out->token_origin + where +
                                       ": the admin token holds a blank or control character; an HTTP header "
                                       "cannot carry it (use base64 text)");
      }
    }
  }
  const std::string_view r = reads ? Trim(*reads) : std::string_view();
  if (r.empty() || AsciiEqualsIgnoreCase(r, "false")) {
    out->read_requires_token = false;
  } else if (AsciiEqualsIgnoreCase(r, "true")) {
    out->read_requires_token = true;
  } else {
    return Status::InvalidArgument("canal.admin.readRequiresToken = " + std::string(r) + where +
                                   ": not a boolean (true or false)");
  }
  if (out->read_requires_token && out->token.empty()) {
    return Status::InvalidArgument("canal.admin.readRequiresToken = true" + where + " but no admin token is set: set " +
                                   std::string(kTokenKeys));
  }
  return Status::OK();
}

AdminRoute ParseAdminPath(std::string_view path) {
  AdminRoute route;
  if (path != kPrefix && !path.starts_with(std::string(kPrefix) + "/")) return route;
  route.kind = AdminRoute::Kind::kUnknown;
  if (path == kDestinations || path == std::string(kDestinations) + "/") {
    route.kind = AdminRoute::Kind::kList;
    return route;
  }
  if (path == kCluster || path == std::string(kCluster) + "/drain" || path == std::string(kCluster) + "/move") {
    route.kind = AdminRoute::Kind::kCluster;
    if (path != kCluster) route.operation = std::string(path.substr(kCluster.size() + 1));
    return route;
  }
  if (!path.starts_with(std::string(kDestinations) + "/")) return route;
  std::string_view rest = path.substr(kDestinations.size() + 1);
  const size_t slash = rest.find('/');
  route.destination = std::string(rest.substr(0, slash));
  if (route.destination.empty()) {
    route.kind = AdminRoute::Kind::kUnknown;
    return route;
  }
  if (slash == std::string_view::npos) {
    route.kind = AdminRoute::Kind::kOne;
    return route;
  }
  const std::string_view action = rest.substr(slash + 1);
  if (action == "stop") {
    route.action = OperatorAction::kStop;
  } else if (action == "start") {
    route.action = OperatorAction::kStart;
  } else if (action == "restart") {
    route.action = OperatorAction::kRestart;
  } else if (action == "cursor" || action == "config" || action == "log" || action == "snapshot") {
    route.kind = AdminRoute::Kind::kOperation;
    route.operation = std::string(action);
    return route;
  } else {
    return route;  // kUnknown
  }
  route.kind = AdminRoute::Kind::kAction;
  return route;
}

bool AuthThrottle::Blocked(const std::string& address, Clock::time_point now, int64_t* retry_after_s) {
  const auto it = by_address_.find(address);
  if (it == by_address_.end() || it->second.blocked_until <= now) return false;
  *retry_after_s = std::chrono::ceil<std::chrono::seconds>(it->second.blocked_until - now).count();
  return true;
}

void AuthThrottle::Failed(const std::string& address, Clock::time_point now) {
  if (by_address_.size() >= max_addresses_ && by_address_.count(address) == 0) {
    // Bounded: forget the addresses whose window is over; if none, the oldest one.
    std::erase_if(by_address_, [&](const auto& kv) { return kv.second.first + window_ <= now && kv.second.blocked_until <= now; });
    if (by_address_.size() >= max_addresses_) {
      auto oldest = by_address_.begin();
      for (auto it = by_address_.begin(); it != by_address_.end(); ++it) {
        if (it->second.first < oldest->second.first) oldest = it;
      }
      by_address_.erase(oldest);
    }
  }
  Entry& e = by_address_[address];
  if (e.failures == 0 || e.first + window_ <= now) {
    e.failures = 0;
    e.first = now;
  }
  if (++e.failures >= allowed_) {
    e.blocked_until = now + window_;
    e.failures = 0;
  }
}

bool TokenEquals(std::string_view a, std::string_view b) {
  // Digests of equal length, compared without an early exit: the time says
  // nothing about the token's length or where a guess first differs.
  unsigned char da[SHA256_DIGEST_LENGTH];
  unsigned char db[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(a.data()), a.size(), da);
  SHA256(reinterpret_cast<const unsigned char*>(b.data()), b.size(), db);
  return CRYPTO_memcmp(da, db, sizeof da) == 0;
}

TokenCheck CheckBearer(std::string_view expected, std::string_view authorization) {
  const std::string_view header = Trim(authorization);
  if (header.empty()) return TokenCheck::kMissing;
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size() || !AsciiEqualsIgnoreCase(header.substr(0, kScheme.size()), kScheme) ||
      (header[kScheme.size()] != ' ' && header[kScheme.size()] != '\t')) {
    return TokenCheck::kWrong;
  }
  const std::string_view token = Trim(header.substr(kScheme.size()));
  return !expected.empty() && TokenEquals(expected, token) ? TokenCheck::kOk : TokenCheck::kWrong;
}

bool SameOrigin(std::string_view origin, std::string_view host) {
  host = Trim(host);
  origin = Trim(origin);
  if (host.empty()) return false;
  for (std::string_view scheme : {std::string_view("http://"), std::string_view("https://")}) {
    if (origin.size() == scheme.size() + host.size() && AsciiEqualsIgnoreCase(origin.substr(0, scheme.size()), scheme) &&
        AsciiEqualsIgnoreCase(origin.substr(scheme.size()), host)) {
      return true;
    }
  }
  return false;
}

bool JsonContentType(std::string_view content_type) {
  const std::string_view media = Trim(content_type.substr(0, content_type.find(';')));
  return AsciiEqualsIgnoreCase(media, "application/json");
}

AdminApi::AdminApi(AdminConfig config, AdminHooks hooks, std::shared_ptr<spdlog::logger> logger)
    : config_(std::move(config)),
      hooks_(std::move(hooks)),
      log_(logger ? std::move(logger) : spdlog::default_logger()) {}

HttpAnswer AdminApi::Refuse(const AdminRequest& request, int status, const std::string& message) {
  // Refusals are what a flood is made of: a few lines per kind, then a count.
  std::string note;
  if (refusals_.Allow(std::to_string(status), &note)) {
    log_->warn("admin: refused {} {} from {}: {} {}{}", ClientText(request.method, 16), ClientText(request.target),
               request.peer, status, message, note);
  }
  HttpAnswer a = AdminJsonAnswer(status, json{{"error", message}});
  if (status == 401) a.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"canal-admin\"");
  return a;
}

HttpAnswer AdminApi::Handle(const AdminRequest& request) {
  const std::string_view path = request.target.substr(0, request.target.find('?'));
  const AdminRoute route = ParseAdminPath(path);
  if (route.kind == AdminRoute::Kind::kUnknown || route.kind == AdminRoute::Kind::kNone) {
    return Refuse(request, 404,
                  "not found: the admin API serves /api/destinations, /api/destinations/NAME, POST "
                  "/api/destinations/NAME/{stop,start,restart,cursor,snapshot}, /api/destinations/NAME/config, "
                  "GET /api/destinations/NAME/log, GET /api/cluster and POST /api/cluster/{drain,move} (docs/admin.md)");
  }
  // What each path allows: changes are POST; the config is read with GET and
  // written with POST; reading a config or a log needs the token (a config holds
  // the database password).
  const std::string& op = route.operation;
  const bool cluster = route.kind == AdminRoute::Kind::kCluster;
  const bool post_only = route.kind == AdminRoute::Kind::kAction || op == "cursor" || op == "snapshot" ||
                         (cluster && !op.empty());
  const bool get_only = route.kind == AdminRoute::Kind::kList || route.kind == AdminRoute::Kind::kOne || op == "log" ||
                        (cluster && op.empty());
  const bool change = request.method == "POST";
  if (post_only && request.method != "POST") {
    HttpAnswer a = Refuse(request, 405, "method not allowed: changes are POST only");
    a.headers.emplace_back("Allow", "POST");
    return a;
  }
  if (get_only && request.method != "GET" && request.method != "HEAD") {
    HttpAnswer a = Refuse(request, 405, "method not allowed: this path is read with GET");
    a.headers.emplace_back("Allow", "GET, HEAD");
    return a;
  }
  if (!post_only && !get_only && request.method != "GET" && request.method != "HEAD" && !change) {
    HttpAnswer a = Refuse(request, 405, "method not allowed: GET to read, POST to change");
    a.headers.emplace_back("Allow", "GET, HEAD, POST");
    return a;
  }
  const bool secret_read = !cluster && (op == "config" || op == "log");
  // A page of another site may make a browser send a request here, with the
  // operator's network position; the browser names that site in Origin.
  if (request.has_origin && !SameOrigin(request.origin, request.host)) {
    return Refuse(request, 403, "cross-site request refused: Origin " + ClientText(request.origin) +
                                    " is not this server's own");
  }
  if (change || secret_read || config_.read_requires_token) {
    if (config_.token.empty()) {
      return Refuse(request, 403,
                    "changes are turned off: no admin token is configured; set " + std::string(kTokenKeys) +
                        " in canal.properties and restart the server (docs/admin.md)");
    }
    // Guessing is throttled per address (the port changes with every connection).
    const std::string address = request.peer.substr(0, request.peer.rfind(':'));
    const auto now = AuthThrottle::Clock::now();
    int64_t retry_after_s = 0;
    if (throttle_.Blocked(address, now, &retry_after_s)) {
      HttpAnswer a = Refuse(request, 429,
                            "too many requests with a wrong or missing admin token from " + address + "; try again in " +
                                std::to_string(retry_after_s) + " s");
      a.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
      return a;
    }
    switch (CheckBearer(config_.token, request.authorization)) {
      case TokenCheck::kOk:
        throttle_.Succeeded(address);
        break;
      case TokenCheck::kMissing:
        throttle_.Failed(address, now);
        return Refuse(request, 401, "no credentials: send Authorization: Bearer <the admin token>");
      case TokenCheck::kWrong:
        throttle_.Failed(address, now);
        return Refuse(request, 401, "wrong admin token");
    }
  }
  if (!request.body.empty()) {
    if (!JsonContentType(request.content_type)) {
      return Refuse(request, 415, "a request body must be Content-Type: application/json (or send none)");
    }
    const json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) return Refuse(request, 400, "the body is not a JSON object");
  }
  switch (route.kind) {
    case AdminRoute::Kind::kList:
      return List(request);
    case AdminRoute::Kind::kOne:
      if (!ValidDestinationName(route.destination)) {
        return Refuse(request, 404, "no destination '" + ClientText(route.destination) + "' on this server");
      }
      {
        HttpAnswer a = One(route.destination);
        if (a.status == 404) return Refuse(request, 404, "no destination '" + route.destination + "' on this server");
        return a;
      }
    case AdminRoute::Kind::kOperation:
      return Operate(request, route);
    case AdminRoute::Kind::kCluster:
      return Cluster(request, route);
    default:
      return Act(request, route);
  }
}

HttpAnswer AdminApi::List(const AdminRequest&) {
  const ServerReport report = hooks_.report();
  json list = json::array();
  for (const DestinationReport& d : report.destinations) list.push_back(DestinationJson(d, hooks_.held(d.name), hooks_.mode));
  return AdminJsonAnswer(200, json{{"server", report.server_address}, {"mode", hooks_.mode}, {"destinations", list}});
}

HttpAnswer AdminApi::One(const std::string& name) {
  const ServerReport report = hooks_.report();
  for (const DestinationReport& d : report.destinations) {
    if (d.name == name) return AdminJsonAnswer(200, DestinationJson(d, hooks_.held(name), hooks_.mode));
  }
  return AdminJsonAnswer(404, json{{"error", "no destination '" + name + "' on this server"}});
}

HttpAnswer AdminApi::Act(const AdminRequest& request, const AdminRoute& route) {
  const std::string& name = route.destination;
  const char* verb = OperatorActionName(route.action);
  if (!ValidDestinationName(name)) return Refuse(request, 404, "no destination '" + ClientText(name) + "' on this server");
  std::string done;
  const Status s = hooks_.control(name, route.action, &done);
  if (s.IsNotFound()) return Refuse(request, 404, "no destination '" + name + "' on this server");
  if (s.code() == Status::Code::kAborted) return Refuse(request, 503, s.ToString());
  HttpAnswer after = One(name);
  const json state = after.status == 200 ? json::parse(after.body, nullptr, false) : json(nullptr);
  const std::string state_name = state.is_object() ? state.value("state", std::string("?")) : std::string("gone");
  json reply = {{"destination", name}, {"action", verb}, {"ok", s.ok()}, {"state", state}};
  if (s.ok()) {
    log_->info("admin: {} {} by {} (token ok): {}; state now {}", verb, name, request.peer, done, state_name);
    reply["result"] = done;
    return AdminJsonAnswer(200, reply);
  }
  log_->warn("admin: {} {} by {} (token ok) failed: {}; state now {}", verb, name, request.peer, s.ToString(),
             state_name);
  reply["error"] = s.ToString();
  return AdminJsonAnswer(500, reply);
}

}  // namespace canal::server
