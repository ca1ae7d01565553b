// AdminApi: JSON over HTTP on the metrics/status port (docs/admin.md), the
// first part of issue 29's admin API:
//
//   GET  /api/destinations                   every destination: state, position, lag, clients, mode
//   GET  /api/destinations/NAME              one of them
//   POST /api/destinations/NAME/stop         stop it here (HA: hand it to the other server)
//   POST /api/destinations/NAME/start        start it from instance.properties as it is now
//   POST /api/destinations/NAME/restart      both
//   POST /api/destinations/NAME/cursor       move the clients' cursors (a position, a time, a GTID
//                                            position); {"dryRun": true} only reports what moves
//   GET  /api/destinations/NAME/config       its instance.properties
//   POST /api/destinations/NAME/config       {"text": ...}: checked, written, applied (or dryRun)
//   GET  /api/destinations/NAME/log?lines=N  the last lines of its log
//   POST /api/destinations/NAME/snapshot     {"tables": [...], "where": ...}: an incremental snapshot
//
// Changes need `Authorization: Bearer <canal.admin.token>` (compared in
// constant time); with no token configured every POST is refused (403). GETs
// are open unless canal.admin.readRequiresToken. A request whose Origin is
// not this server's own is refused (403), a POST body must be JSON (415) and
// is bounded by the endpoint (413), and the wrong method on a path is 405.
// A client that sends a wrong or no token kAuthFailuresAllowed times within
// kAuthWindow is answered 429 for kAuthWindow without its token being looked at.
// Each change is logged at INFO with the client's address and what was
// done; each refusal at WARN (rate-limited), client text cut and escaped.
//
// Handle() runs on the endpoint's I/O thread: a change blocks this port's
// other requests while the registry stops or starts the instance (usually
// well under a second). No exception leaves it on client input.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/server/admin_operations.h"
#include "canal/server/config.h"
#include "canal/server/http_endpoint.h"
#include "canal/server/instance_registry.h"
#include "canal/server/log_limiter.h"
#include "canal/server/status_report.h"

namespace spdlog {
class logger;
}

namespace canal::server {

struct AdminConfig {
  std::string token;         // canal.admin.token, or the first line of canal.admin.tokenFile; empty: no changes
  std::string token_origin;  // where it came from, for the log ("canal.admin.tokenFile /x/admin.token")
  bool read_requires_token = false;  // canal.admin.readRequiresToken
};

// Start-up: reads canal.admin.* from canal.properties (a relative tokenFile
// is taken from the folder of canal.properties). InvalidArgument naming the
// key when both token keys are set, the file is unreadable or empty, or the
// token is shorter than kMinTokenBytes or holds characters a header cannot
// carry. *warnings gets what is allowed but unwise (a token file others may read).
inline constexpr size_t kMinTokenBytes = 16;
Status LoadAdminConfig(const CanalConfig& canal, AdminConfig* out, std::vector<std::string>* warnings);

// ---- The pieces, public for the unit tests --------------------------------

struct AdminRoute {
  enum class Kind {
    kNone,    // not under /api: the endpoint's other pages
    kList,    // /api/destinations
    kOne,     // /api/destinations/NAME
    kAction,  // /api/destinations/NAME/{stop,start,restart}
    kOperation,  // /api/destinations/NAME/{cursor,config,log,snapshot}
    kCluster,    // /api/cluster (GET), /api/cluster/{drain,move} (POST): balanced placement
    kUnknown  // under /api, but nothing is there
  };
  Kind kind = Kind::kNone;
  std::string destination;  // as sent (may be anything; only valid names are ever found)
  OperatorAction action = OperatorAction::kStop;
  std::string operation;  // kOperation: cursor, config, log, snapshot; kCluster: "", drain, move
};
// `path`: the request target without its query.
AdminRoute ParseAdminPath(std::string_view path);

enum class TokenCheck { kOk, kMissing, kWrong };
// `authorization`: the header as sent ("Bearer <token>"); the scheme is
// case-insensitive. `expected` must not be empty.
TokenCheck CheckBearer(std::string_view expected, std::string_view authorization);
// Equal in time independent of where they differ and of their lengths.
bool TokenEquals(std::string_view a, std::string_view b);
// Whether a browser's Origin header names the server the request was sent
// to (http://<Host>); "null" and every other origin are foreign.
bool SameOrigin(std::string_view origin, std::string_view host);
// application/json, with or without parameters (charset=utf-8).
bool JsonContentType(std::string_view content_type);

struct AdminRequest {
  std::string_view method;
  std::string_view target;
  std::string_view host;           // Host header
  std::string_view origin;         // Origin header ("" when absent)
  bool has_origin = false;
  std::string_view content_type;
  std::string_view authorization;
  std::string_view body;
  std::string peer;  // the client's ip:port
};

// What the API acts on; functions so that unit tests can fake the server.
struct AdminHooks {
  std::function<ServerReport()> report;  // StatusCollector::Collect
  std::function<Status(std::string_view, OperatorAction, std::string* done)> control;  // InstanceRegistry::Control
  std::function<HeldState(std::string_view)> held;                                     // InstanceRegistry::Held
  std::string mode;  // canal.serverMode as Canal spells it: tcp, kafka, rabbitMQ
  // Cursor, config, log and snapshot; null answers those routes 503.
  AdminOperations* operations = nullptr;
  // Balanced placement (docs/cluster.md); null answers /api/cluster 404 (not a balanced cluster).
  std::function<Status(std::string* json_text)> cluster_view;
  std::function<Status(std::string_view server, bool drain)> cluster_drain;
  std::function<Status(std::string_view destination, std::string_view server)> cluster_move;
};

// Wrong or missing tokens per client address: after too many, 429 for a while.
class AuthThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  AuthThrottle(size_t failures_allowed, Clock::duration window, size_t max_addresses = 4096)
      : allowed_(failures_allowed), window_(window), max_addresses_(max_addresses) {}
  // Whether `address` is shut out now; *retry_after_s how long it still is.
  bool Blocked(const std::string& address, Clock::time_point now, int64_t* retry_after_s);
  void Failed(const std::string& address, Clock::time_point now);
  void Succeeded(const std::string& address) { by_address_.erase(address); }

 private:
  struct Entry {
    size_t failures = 0;
    Clock::time_point first{};
    Clock::time_point blocked_until{};
  };
  const size_t allowed_;
  const Clock::duration window_;
  const size_t max_addresses_;
  std::map<std::string, Entry> by_address_;
};

class AdminApi {
 public:
  // The largest body a request to /api may carry (an instance.properties as
  // JSON text); larger ones are 413 before any of it is read.
  static constexpr size_t kMaxBodyBytes = 1 << 20;
  static constexpr size_t kAuthFailuresAllowed = 10;
  static constexpr std::chrono::seconds kAuthWindow{60};

  AdminApi(AdminConfig config, AdminHooks hooks, std::shared_ptr<spdlog::logger> logger);

  static bool Handles(std::string_view path) { return ParseAdminPath(path).kind != AdminRoute::Kind::kNone; }
  HttpAnswer Handle(const AdminRequest& request);

 private:
  HttpAnswer List(const AdminRequest& request);
  HttpAnswer One(const std::string& name);
  HttpAnswer Act(const AdminRequest& request, const AdminRoute& route);
  HttpAnswer Refuse(const AdminRequest& request, int status, const std::string& message);
  // admin_api_operations.cc
  HttpAnswer Operate(const AdminRequest& request, const AdminRoute& route);
  HttpAnswer ResetCursor(const AdminRequest& request, const std::string& name);
  HttpAnswer Config(const AdminRequest& request, const std::string& name);
  HttpAnswer Log(const AdminRequest& request, const std::string& name);
  HttpAnswer Snapshot(const AdminRequest& request, const std::string& name);
  HttpAnswer Cluster(const AdminRequest& request, const AdminRoute& route);

  const AdminConfig config_;
  const AdminHooks hooks_;
  std::shared_ptr<spdlog::logger> log_;
  LogLimiter refusals_;
  AuthThrottle throttle_{kAuthFailuresAllowed, kAuthWindow};
};

}  // namespace canal::server
