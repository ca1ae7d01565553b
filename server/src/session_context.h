// SessionContext: what the SessionServer shares with its sessions (options,
// registry, logger, holders, the blocking pool); outlives every session.
#pragma once

#include <utility>  // Boost 1.74's coroutine headers use std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "canal/server/log_limiter.h"
#include "canal/server/session_server.h"
#include "session_holders.h"

namespace spdlog {
class logger;
}
namespace boost::asio::ssl {
class context;
}

namespace canal::server {

class Session;

struct SessionContext {
  SessionServerOptions options;
  DestinationRegistry* registry = nullptr;
  std::shared_ptr<spdlog::logger> logger;
  std::string server_address;  // "ip:port" listened on, for the server's own log lines
  DestinationHolders holders;
  // Warnings a client can repeat at will go through this.
  LogLimiter log_limiter;
  // Where blocking work (the cursor flush: fsync, a ZooKeeper write) runs,
  // so that it never holds an I/O thread; none: on the session's thread.
  std::optional<boost::asio::any_io_executor> blocking;
  // canal.tls.*: set, every client connection starts with a TLS handshake.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // Called on the session's strand when its processor has finished.
  std::function<void(Session*)> on_session_end;
};

}  // namespace canal::server
