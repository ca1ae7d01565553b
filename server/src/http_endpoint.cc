#include "canal/server/http_endpoint.h"

#include <utility>  // before the Asio coroutine headers (Boost 1.74)

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <thread>

#include "canal/server/admin_api.h"
#include "canal/server/admin_page.h"
#include "canal/server/status_report.h"
#include "listen_socket.h"

namespace canal::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr size_t kMaxHeaderBytes = 8 * 1024;
constexpr size_t kMaxBodyBytes = 0;  // GET and HEAD carry no body (the admin API's POSTs may)
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kTextType = "text/plain; charset=utf-8";

HttpAnswer Text(int status, std::string body) { return {status, kTextType, std::move(body), false, {}}; }

// The admin page and its parts: only this origin's scripts, styles and
// requests, and never inside another site's frame (it has buttons).
HttpAnswer Page(std::string content_type, std::string body) {
  HttpAnswer a{200, std::move(content_type), std::move(body), false, {}};
  a.headers.emplace_back("Content-Security-Policy", kAdminPageCsp);
  a.headers.emplace_back("X-Frame-Options", "DENY");
  a.headers.emplace_back("Referrer-Policy", "no-referrer");
  return a;
}

}  // namespace

HttpAnswer Route(std::string_view method, std::string_view target, std::string_view accept,
                 StatusCollector* collector, const StatusHistory* history) {
  if (method != "GET" && method != "HEAD") {
    HttpAnswer a = Text(405, "method not allowed: only GET and HEAD are served here\n");
    a.allow_header = true;
    return a;
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/metrics") return {200, kMetricsType, RenderMetrics(collector->Collect()), false, {}};
  const bool wants_html = accept.find("text/html") != std::string_view::npos;
  if (path == "/status.html" || (path == "/status" && wants_html)) {
    return Page("text/html; charset=utf-8", RenderStatusHtml(collector->Collect()));
  }
  if (path == "/status.js") return Page("text/javascript; charset=utf-8", std::string(AdminPageScript()));
  if (path == "/status.css") return Page("text/css; charset=utf-8", std::string(AdminPageStyle()));
  if (path == "/status" || path == "/status.json") {
    return {200, "application/json", RenderStatusJson(collector->Collect(), history), false, {}};
  }
  if (path == "/health") {
    std::string why;
    if (Healthy(collector->Collect(), &why)) return Text(200, "ok\n");
    return Text(503, "not streaming:\n" + why);
  }
  if (path == "/") {
    return Text(200, "canal-server: /metrics (Prometheus), /status (JSON), /status.html (the admin page), /health\n");
  }
  return Text(404, "not found: this port serves /metrics, /status, /status.html and /health\n");
}

namespace {

class HttpEndpointImpl final : public HttpEndpoint {
 public:
  HttpEndpointImpl(HttpEndpointOptions options, StatusCollector* collector, std::shared_ptr<spdlog::logger> logger)
      : options_(std::move(options)),
        collector_(collector),
        log_(logger ? std::move(logger) : spdlog::default_logger()),
        history_(options_.history_samples, options_.history_every),
        acceptor_(io_) {}
  ~HttpEndpointImpl() override { Stop(); }

  Status Listen() {
    ListenAddress where;
    where.ip = options_.ip;
    where.port = options_.port;
    where.listener = "metrics endpoint";
    where.ip_fix = "set canal.metrics.pull.ip (or canal.ip) to an address";
    where.port_in_use_fix = "another process uses canal.metrics.pull.port, pick a free one (0 turns it off)";
    tcp::endpoint bound;
    if (Status s = BindAndListen(where, &acceptor_, &bound); !s.ok()) return s;
    port_ = bound.port();
    address_ = bound.address().to_string() + ":" + std::to_string(port_);
    return Status::OK();
  }

  void Start() override {
    std::lock_guard lock(mu_);
    if (thread_.joinable() || stopped_) return;
    asio::co_spawn(io_, AcceptLoop(), asio::detached);
    asio::co_spawn(io_, SampleLoop(), asio::detached);
    thread_ = std::thread([this] {
      for (;;) {
        try {
          io_.run();
          return;
        } catch (const std::exception& e) {
          // A bug in a handler must not take the server down: log and serve on.
          log_->error("metrics endpoint: {}", e.what());
        }
      }
    });
    log_->info("metrics endpoint listening on {} (/metrics, /status, /health{})", address_,
               options_.admin != nullptr ? ", /api" : "");
  }

  void Stop() override {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    io_.stop();
    if (thread_.joinable()) thread_.join();
    error_code ec;
    acceptor_.close(ec);
  }

  uint16_t port() const override { return port_; }

 private:
  // The sparklines' history: a sample now (a page opened at once shows
  // something), then every history_every, on this thread like the requests.
  asio::awaitable<void> SampleLoop() {
    asio::steady_timer timer(io_);
    for (;;) {
      history_.Record(collector_->Collect());
      timer.expires_after(history_.every());
      error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
    }
  }

  asio::awaitable<void> AcceptLoop() {
    for (;;) {
      error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
        // Out of descriptors and the like: do not spin.
        log_->warn("metrics endpoint: accept failed: {}", ec.message());
        asio::steady_timer pause(io_, std::chrono::milliseconds(100));
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      const bool over = connections_ >= options_.max_connections;
      ++connections_;
      asio::co_spawn(io_, Serve(std::move(socket), over), [this](std::exception_ptr e) {
        --connections_;
        if (!e) return;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          log_->warn("metrics endpoint: connection failed: {}", ex.what());
        } catch (...) {
        }
      });
    }
  }

  asio::awaitable<void> Send(beast::tcp_stream& stream, const HttpAnswer& a, bool head, bool keep_alive,
                             unsigned version) {
    http::response<http::string_body> res{static_cast<http::status>(a.status), version};
    res.set(http::field::server, "canal-server");
    res.set(http::field::content_type, a.content_type);
    res.set(http::field::cache_control, "no-cache");
    res.set("X-Content-Type-Options", "nosniff");
    if (a.allow_header) res.set(http::field::allow, "GET, HEAD");
    for (const auto& [name, value] : a.headers) res.set(name, value);
    res.keep_alive(keep_alive);
    if (head) {
      res.content_length(a.body.size());
    } else {
      res.body() = a.body;
      res.prepare_payload();
    }
    error_code ec;
    stream.expires_after(options_.idle_timeout);
    if (head) {
      http::response_serializer<http::string_body> sr{res};
      co_await http::async_write_header(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
    } else {
      co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    }
  }

  static std::string_view View(boost::beast::string_view v) { return {v.data(), v.size()}; }

  // The request as the admin API sees it (views into `req`, which outlives the call).
  static AdminRequest AdminRequestOf(const http::request<http::string_body>& req, beast::tcp_stream& stream) {
    AdminRequest r;
    r.method = View(req.method_string());
    r.target = View(req.target());
    r.host = View(req[http::field::host]);
    const auto origin = req.find(http::field::origin);
    r.has_origin = origin != req.end();
    if (r.has_origin) r.origin = View(origin->value());
    r.content_type = View(req[http::field::content_type]);
    r.authorization = View(req[http::field::authorization]);
    r.body = req.body();
    error_code ec;
    const tcp::endpoint peer = stream.socket().remote_endpoint(ec);
    r.peer = ec ? std::string("?") : peer.address().to_string() + ":" + std::to_string(peer.port());
    return r;
  }

  asio::awaitable<void> Serve(tcp::socket socket, bool over_limit) {
    beast::tcp_stream stream(std::move(socket));
    error_code ec;
    if (over_limit) {
      co_await Send(stream,
                    Text(503, "too many connections to the metrics endpoint (canal.metrics.pull.max.connections)\n"),
                    false, false, 11);
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      co_return;
    }
    beast::flat_buffer buffer(kMaxHeaderBytes);
    // With the admin API a body is allowed (on /api only), up to its bound:
    // Beast checks a Content-Length against the limit before reading any of
    // the body, and counts chunked bodies as they come.
    const size_t body_limit = options_.admin != nullptr ? AdminApi::kMaxBodyBytes : kMaxBodyBytes;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(kMaxHeaderBytes);
      parser.body_limit(body_limit);
      stream.expires_after(options_.idle_timeout);
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
          ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
        break;
      }
      if (ec == http::error::body_limit && options_.admin != nullptr) {
        co_await Send(stream, Text(413, "request body too large: at most " + std::to_string(body_limit) + " bytes\n"),
                      false, false, 11);
        break;
      }
      if (ec) {
        // Bad request line, headers too large, a body: answer 400 and close.
        co_await Send(stream, Text(400, "bad request: " + ec.message() + "\n"), false, false, 11);
        break;
      }
      const http::request<http::string_body>& req = parser.get();
      const bool head = req.method() == http::verb::head;
      const std::string_view method(req.method_string().data(), req.method_string().size());
      const std::string_view target(req.target().data(), req.target().size());
      const std::string_view path = target.substr(0, target.find('?'));
      HttpAnswer answer;
      if (options_.admin != nullptr && AdminApi::Handles(path)) {
        answer = options_.admin->Handle(AdminRequestOf(req, stream));
      } else if (!req.body().empty()) {
        co_await Send(stream, Text(400, "bad request: no body is expected here\n"), false, false, 11);
        break;
      } else {
        const auto accept = req[http::field::accept];
        answer = Route(method, target, std::string_view(accept.data(), accept.size()), collector_, &history_);
      }
      const bool keep_alive = req.keep_alive();
      co_await Send(stream, answer, head, keep_alive, req.version());
      if (!keep_alive) break;
    }
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  }

  const HttpEndpointOptions options_;
  StatusCollector* const collector_;
  std::shared_ptr<spdlog::logger> log_;
  StatusHistory history_;  // sampled and read on the I/O thread (it locks anyway)
  asio::io_context io_{1};
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::string address_;
  size_t connections_ = 0;  // on the I/O thread only

  std::mutex mu_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace

Status HttpEndpoint::Create(HttpEndpointOptions options, StatusCollector* collector,
                            std::shared_ptr<spdlog::logger> logger, std::unique_ptr<HttpEndpoint>* out) {
  if (collector == nullptr) return Status::InvalidArgument("metrics endpoint: no status collector");
  if (options.max_connections == 0) {
    return Status::InvalidArgument("canal.metrics.pull.max.connections must be at least 1");
  }
  auto endpoint = std::make_unique<HttpEndpointImpl>(std::move(options), collector, std::move(logger));
  CANAL_RETURN_IF_ERROR(endpoint->Listen());
  *out = std::move(endpoint);
  return Status::OK();
}

}  // namespace canal::server
