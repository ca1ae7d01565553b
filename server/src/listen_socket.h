// BindAndListen: the listening socket set-up the Canal-protocol server and the
// metrics endpoint share — parse the configured IP, open, SO_REUSEADDR, bind,
// listen — with errors that name the listener, the address and the fix.
#pragma once

#include <utility>  // before the Asio headers (Boost 1.74)

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>

#include "canal/common/status.h"

namespace canal::server {

struct ListenAddress {
  std::string ip;            // "" = every IPv4 address
  uint16_t port = 0;         // 0 = any free port
  std::string listener;      // prefixes every message: "canal server", "metrics endpoint"
  std::string ip_setting;    // names the IP in its message: "canal.ip " or ""
  std::string ip_fix;        // what to do when `ip` is not an address
  std::string port_in_use_fix;  // what to do when the port is taken ("" = nothing)
};

// Leaves *acceptor listening and *bound its bound endpoint (the real port when
// `port` was 0), or returns InvalidArgument (bad IP) / IOError (naming the step).
Status BindAndListen(const ListenAddress& where, boost::asio::ip::tcp::acceptor* acceptor,
                     boost::asio::ip::tcp::endpoint* bound);

}  // namespace canal::server
