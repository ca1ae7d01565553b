// HttpEndpoint: the metrics and status port (canal.metrics.pull.port), HTTP/1.1
// on Boost.Beast, one I/O thread of its own so that a scrape never waits for
// the client sessions (and they never wait for it).
//
//   GET /metrics       Prometheus text format 0.0.4
//   GET /status        JSON; HTML instead when the Accept header prefers text/html
//   GET /status.html   HTML for a person: the admin page (admin_page.h), with
//                      /status.js and /status.css, under a strict
//                      Content-Security-Policy
//   GET /health        200 "ok" when every destination active here is streaming,
//                      else 503 naming the others
//   GET /              a short index
//   /api/...           the admin API (admin_api.h, docs/admin.md), when
//                      HttpEndpointOptions::admin is set
// HEAD is answered like GET without the body. Another method is 405, another
// path 404, a request Beast cannot parse (or with a body outside /api, or
// headers past 8 KiB) 400, a body past AdminApi::kMaxBodyBytes 413 (before
// it is read); a connection idle for `idle_timeout` is closed. At most
// `max_connections` are served at once: one more gets 503 and is closed.
// Nothing a client sends can stop the endpoint or the server.
//
// Every `history_every` the endpoint samples the report into a StatusHistory
// (status_history.h) on its own thread: /status JSON carries each
// destination's recent rows/s and lag for the page's sparklines.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/common/status.h"
#include "canal/server/status_history.h"

namespace spdlog {
class logger;
}

namespace canal::server {

class StatusCollector;
class AdminApi;

struct HttpEndpointOptions {
  std::string ip = "0.0.0.0";   // canal.metrics.pull.ip (default: canal.ip)
  uint16_t port = 11112;        // canal.metrics.pull.port; 0 = any free port (tests)
  size_t max_connections = 16;  // canal.metrics.pull.max.connections
  std::chrono::milliseconds idle_timeout{30'000};
  AdminApi* admin = nullptr;    // serves /api/... when set; must outlive the endpoint
  std::chrono::milliseconds history_every = StatusHistory::kDefaultEvery;  // the sparklines' sampling
  size_t history_samples = StatusHistory::kDefaultCapacity;               // kept per destination
};

// One answer, independent of the transport (unit tests call Route directly).
struct HttpAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
  bool allow_header = false;  // 405: send "Allow: GET, HEAD"
  std::vector<std::pair<std::string, std::string>> headers;  // more header fields (Allow, WWW-Authenticate)
};

// The answer to `method target` with the given Accept header; `history`
// (optional) goes into /status JSON.
HttpAnswer Route(std::string_view method, std::string_view target, std::string_view accept, StatusCollector* collector,
                 const StatusHistory* history = nullptr);

class HttpEndpoint {
 public:
  // Binds and listens (InvalidArgument / IOError naming the address); serves
  // after Start(). `collector` must outlive the endpoint.
  static Status Create(HttpEndpointOptions options, StatusCollector* collector, std::shared_ptr<spdlog::logger> logger,
                       std::unique_ptr<HttpEndpoint>* out);
  virtual ~HttpEndpoint() = default;
  virtual void Start() = 0;
  // Closes the listener and every connection and joins the thread. Idempotent.
  virtual void Stop() = 0;
  virtual uint16_t port() const = 0;
};

}  // namespace canal::server
