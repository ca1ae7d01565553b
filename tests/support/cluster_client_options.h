// A ClusterConnector's options for the HA suites, whose canal-servers are all local: a
// healthy one answers in milliseconds, while a frozen one accepts TCP connections (the
// kernel does) and never answers, so short timeouts let the connector give up on it quickly.
// Header-only: for test targets that link canal_client_cluster.
#pragma once

#include <chrono>
#include <string>

#include "canal/client/cluster_connector.h"

namespace canal::testing {

inline client::ClusterConnectorOptions LocalClusterClientOptions(const std::string& zk_servers,
                                                                 int zk_session_timeout_ms, int max_attempts,
                                                                 const std::string& destination = "example") {
  using namespace std::chrono_literals;
  client::ClusterConnectorOptions o;
  o.zk_servers = zk_servers;
  o.destination = destination;
  o.zk_session_timeout_ms = zk_session_timeout_ms;
  o.connect_timeout = 1s;
  o.read_timeout = 2s;
  o.retry.max_attempts = max_attempts;
  o.retry.initial_backoff = 100ms;
  o.retry.max_backoff = 500ms;
  o.retry.give_up_after = 60s;
  return o;
}

}  // namespace canal::testing
