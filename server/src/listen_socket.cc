#include "listen_socket.h"

#include <boost/asio/socket_base.hpp>

namespace canal::server {

namespace asio = boost::asio;
using asio::ip::tcp;

Status BindAndListen(const ListenAddress& where, tcp::acceptor* acceptor, tcp::endpoint* bound) {
  const std::string wanted = (where.ip.empty() ? "0.0.0.0" : where.ip) + ":" + std::to_string(where.port);
  boost::system::error_code ec;
  const asio::ip::address address =
      where.ip.empty() ? asio::ip::address(asio::ip::address_v4::any()) : asio::ip::make_address(where.ip, ec);
  if (ec) {
    return Status::InvalidArgument(where.listener + ": " + where.ip_setting + "\"" + where.ip +
                                   "\" is not an IP address (" + ec.message() + "); " + where.ip_fix);
  }
  const tcp::endpoint endpoint(address, where.port);
  const auto fail = [&](const char* step) {
    std::string fix;
    if (ec == asio::error::address_in_use && !where.port_in_use_fix.empty()) fix = "; " + where.port_in_use_fix;
    return Status::IOError(where.listener + ": cannot " + step + " " + wanted + ": " + ec.message() + fix);
  };
  if (acceptor->open(endpoint.protocol(), ec)) return fail("open a socket for");
  if (acceptor->set_option(tcp::acceptor::reuse_address(true), ec)) return fail("set SO_REUSEADDR on");
  if (acceptor->bind(endpoint, ec)) return fail("bind");
  if (acceptor->listen(asio::socket_base::max_listen_connections, ec)) return fail("listen on");
  *bound = acceptor->local_endpoint(ec);
  if (ec) return fail("read the bound address of");
  return Status::OK();
}

}  // namespace canal::server
