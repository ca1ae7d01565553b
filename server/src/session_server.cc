#include "canal/server/session_server.h"

#include <utility>  // before the Asio coroutine headers (Boost 1.74)

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "canal/server/connection_limits.h"
#include "listen_socket.h"
#include "session.h"
#include "tls_context.h"

namespace canal::server {

namespace {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
using boost::system::error_code;

std::string EndpointText(const tcp::endpoint& endpoint) {
  const asio::ip::address address = endpoint.address();
  std::string host = address.to_string();
  if (address.is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(endpoint.port());
}

constexpr std::chrono::milliseconds kMinAcceptPause{50};
// File descriptors kept for everything but client connections: the replica
// connections, meta and log files, directory scans, ZooKeeper.
constexpr size_t kReservedDescriptors = 256;
constexpr std::chrono::milliseconds kMaxAcceptPause{1000};

class SessionServerImpl final : public SessionServer {
 public:
  SessionServerImpl(SessionServerOptions options, DestinationRegistry* registry, std::shared_ptr<spdlog::logger> logger,
                    std::shared_ptr<asio::ssl::context> tls)
      : limits_(options.max_connections, options.max_connections_per_address),
        ios_(MakeContexts(options.io_threads > 0 ? options.io_threads : 1)),
        acceptor_(asio::make_strand(*ios_.front())) {
    context_.options = std::move(options);
    context_.registry = registry;
    context_.logger = logger ? std::move(logger) : spdlog::default_logger();
    context_.blocking = blocking_.get_executor();
    context_.tls = std::move(tls);
    context_.on_session_end = [this](Session* session) {
      std::lock_guard lock(mu_);
      if (live_.erase(session) > 0) limits_.Release(session->remote_host());
    };
  }

  ~SessionServerImpl() override { Stop(); }

  Status Listen() {
    const SessionServerOptions& o = context_.options;
    ListenAddress where;
    where.ip = o.ip;
    where.port = o.port;
    where.listener = "canal server";
    where.ip_setting = "canal.ip ";
    where.ip_fix = "set it to an address of this host, or leave it empty for all";
    where.port_in_use_fix = "another process uses canal.port, pick a free one";
    tcp::endpoint bound;
    if (Status s = BindAndListen(where, &acceptor_, &bound); !s.ok()) return s;
    port_ = bound.port();
    context_.server_address = EndpointText(bound);
    return Status::OK();
  }

  void Start() override {
    std::lock_guard lock(mu_);
    if (started_ || stopping_) return;
    started_ = true;
    for (auto& io : ios_) work_.push_back(asio::make_work_guard(*io));
    asio::co_spawn(acceptor_.get_executor(), AcceptLoop(), [log = context_.logger](std::exception_ptr e) {
      if (e) log->error("canal server: accept loop failed");
    });
    const size_t n = ios_.size();
    {
      std::lock_guard join_lock(join_mu_);
      for (auto& io : ios_) threads_.emplace_back([io = io.get()] { io->run(); });
    }
    const char* tls = !context_.tls                                  ? ""
                      : context_.options.tls.client_ca_file.empty() ? ", TLS"
                                                                    : ", TLS, client certificates required";
    context_.logger->info("canal server listening on {} ({} I/O threads{})", context_.server_address, n, tls);
  }

  void Stop() override {
    std::vector<std::weak_ptr<Session>> sessions;
    bool started = false;
    {
      std::lock_guard lock(mu_);
      started = started_;
      if (!stopping_) {
        stopping_ = true;
        for (auto& [_, weak] : live_) sessions.push_back(weak);
        if (started) {
          asio::post(acceptor_.get_executor(), [this] {
            error_code ec;
            acceptor_.close(ec);
          });
        } else {
          error_code ec;
          acceptor_.close(ec);
        }
        for (auto& weak : sessions) {
          if (auto session = weak.lock()) session->Close();
        }
        // Without work to wait for, run() returns once every session has ended.
        work_.clear();
      }
    }
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(join_mu_);
      const std::thread::id self = std::this_thread::get_id();
      for (std::thread& t : threads_) {
        if (!t.joinable()) continue;
        if (t.get_id() == self) {
          t.detach();  // Stop from one of our own handlers: it cannot join itself
        } else {
          threads.push_back(std::move(t));
        }
      }
      threads_.clear();
    }
    for (std::thread& t : threads) t.join();
    if (!threads.empty()) blocking_.join();
    if (started && !threads.empty()) context_.logger->info("canal server {} stopped", context_.server_address);
  }

  void CloseDestination(const std::string& destination, const std::string& reason) override {
    std::vector<std::shared_ptr<Session>> sessions;
    {
      std::lock_guard lock(mu_);
      for (auto& [_, weak] : live_) {
        if (auto session = weak.lock()) sessions.push_back(std::move(session));
      }
    }
    for (auto& session : sessions) session->CloseIfSubscribedTo(destination, reason);
  }

  uint16_t port() const override { return port_; }

  size_t sessions() const override {
    std::lock_guard lock(mu_);
    return live_.size();
  }

 private:
  awaitable<void> AcceptLoop() {
    asio::steady_timer backoff(acceptor_.get_executor());
    std::chrono::milliseconds pause = kMinAcceptPause;
    for (;;) {
      // Each session stays on one thread: its handlers never hop between
      // threads (a cross-CPU wake-up each), and sessions spread over them.
      tcp::socket socket(asio::make_strand(*ios_[next_io_++ % ios_.size()]));
      error_code ec;
      co_await acceptor_.async_accept(socket, asio::redirect_error(use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
        // Out of descriptors and the like: say so (once in a while), back off
        // so that the rest of the process gets the descriptors closing
        // sessions free, and carry on.
        std::string note;
        if (context_.log_limiter.Allow("accept failed", &note)) {
          context_.logger->warn("canal server {}: accept failed: {}; retrying in {} ms{}", context_.server_address,
                                ec.message(), pause.count(), note);
        }
        backoff.expires_after(pause);
        co_await backoff.async_wait(asio::redirect_error(use_awaitable, ec));
        pause = std::min(pause * 2, kMaxAcceptPause);
        continue;
      }
      pause = kMinAcceptPause;
      const tcp::endpoint remote = socket.remote_endpoint(ec);
      if (ec) continue;  // gone already
      std::string host = remote.address().to_string();
      if (std::string refusal = limits_.Admit(host); !refusal.empty()) {
        // Closed before the handshake: the client sees the connection end.
        std::string note;
        if (context_.log_limiter.Allow("connection refused", &note)) {
          context_.logger->warn("canal server {}: refusing the connection of client {}: {}{}",
                                context_.server_address, EndpointText(remote), refusal, note);
        }
        socket.close(ec);
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      socket.set_option(asio::socket_base::keep_alive(true), ec);
      // Messages name the address the client used, not the wildcard listened on.
      const tcp::endpoint local = socket.local_endpoint(ec);
      if (ec) {
        limits_.Release(host);
        continue;
      }
      auto session = std::make_shared<Session>(&context_, std::move(socket), EndpointText(remote), std::move(host),
                                                EndpointText(local));
      {
        std::lock_guard lock(mu_);
        if (stopping_) {
          limits_.Release(session->remote_host());
          co_return;
        }
        live_.emplace(session.get(), session);
      }
      session->Start();
    }
  }

  static std::vector<std::unique_ptr<asio::io_context>> MakeContexts(int n) {
    std::vector<std::unique_ptr<asio::io_context>> ios;
    for (int i = 0; i < n; ++i) ios.push_back(std::make_unique<asio::io_context>(1));
    return ios;
  }

  // Declared first so that it outlives every session, which the I/O
  // contexts' destruction may release.
  SessionContext context_;
  ConnectionLimits limits_;
  // Cursor flushes (fsync, ZooKeeper writes) run here, off the I/O threads;
  // declared before ios_ so that it outlives every session.
  asio::thread_pool blocking_{2};
  // One context per I/O thread (the acceptor's is the first).
  std::vector<std::unique_ptr<asio::io_context>> ios_;
  tcp::acceptor acceptor_;
  size_t next_io_ = 0;  // the accept loop's: the context of the next session
  uint16_t port_ = 0;

  mutable std::mutex mu_;
  bool started_ = false;   // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work_;  // guarded by mu_
  std::unordered_map<Session*, std::weak_ptr<Session>> live_;                        // guarded by mu_

  std::mutex join_mu_;
  std::vector<std::thread> threads_;  // guarded by join_mu_
};

}  // namespace

Status SessionServer::Create(SessionServerOptions options, DestinationRegistry* registry,
                             std::shared_ptr<spdlog::logger> logger, std::unique_ptr<SessionServer>* out) {
  if (registry == nullptr) return Status::InvalidArgument("canal server: no destination registry given");
  if (options.max_frame_bytes == 0) {
    return Status::InvalidArgument("canal server: the maximum frame size is 0; give it a positive byte count");
  }
  if (options.pre_auth_max_frame_bytes == 0 || options.pre_auth_max_frame_bytes > options.max_frame_bytes) {
    return Status::InvalidArgument("canal server: the frame limit before login (" +
                                   std::to_string(options.pre_auth_max_frame_bytes) +
                                   " bytes) must be positive and at most the frame limit (" +
                                   std::to_string(options.max_frame_bytes) + ")");
  }
  if (options.login_timeout_ms <= 0) {
    return Status::InvalidArgument("canal server: login timeout " + std::to_string(options.login_timeout_ms) +
                                   " ms; give a positive value");
  }
  if (options.default_idle_timeout_ms <= 0) {
    return Status::InvalidArgument("canal server: default idle timeout " +
                                   std::to_string(options.default_idle_timeout_ms) + " ms; give a positive value");
  }
  // Client connections never take the descriptors the rest of the process
  // needs: at most the process's limit less a reserve, whatever the keys say.
  if (rlimit fds{}; ::getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur != RLIM_INFINITY) {
    const size_t cap = fds.rlim_cur > kReservedDescriptors * 2 ? fds.rlim_cur - kReservedDescriptors
                                                               : fds.rlim_cur / 2;
    if (options.max_connections == 0 || options.max_connections > cap) {
      (logger ? logger : spdlog::default_logger())
          ->info("canal server: at most {} client connections (canal.connections.max = {}; the file descriptor "
                 "limit is {}, {} kept for the rest; raise it with ulimit -n)",
                 cap, options.max_connections, static_cast<uint64_t>(fds.rlim_cur), fds.rlim_cur - cap);
      options.max_connections = cap;
    }
  }
  std::shared_ptr<asio::ssl::context> tls;
  if (options.tls.enabled) {
    std::vector<std::string> warnings;
    CANAL_RETURN_IF_ERROR(MakeServerTlsContext(options.tls, &tls, &warnings));
    for (const std::string& w : warnings) (logger ? logger : spdlog::default_logger())->warn("canal server: {}", w);
  }
  auto server = std::make_unique<SessionServerImpl>(std::move(options), registry, std::move(logger), std::move(tls));
  CANAL_RETURN_IF_ERROR(server->Listen());
  *out = std::move(server);
  return Status::OK();
}

}  // namespace canal::server
