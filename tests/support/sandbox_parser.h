// The parser options a live test starts from: a sandbox's replication account
// on loopback, with short connect, heartbeat and reconnect times, so that a test
// waits seconds, not a production backoff, for a restarted or killed server.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "canal/parser/event_parser.h"
#include "support/mariadb_sandbox.h"

namespace canal::testing {

inline parser::EventParserOptions SandboxParserOptions(std::string destination, uint16_t port) {
  parser::EventParserOptions o;
  o.destination = std::move(destination);
  o.master.host = "127.0.0.1";
  o.master.port = port;
  o.master.user = MariadbSandbox::kUser;
  o.master.password = MariadbSandbox::kPassword;
  o.master.connect_timeout_ms = 2000;
  o.heartbeat_period_ms = 1000;
  o.reconnect_initial_ms = 50;
  o.reconnect_max_ms = 1000;
  return o;
}

}  // namespace canal::testing
