#include "support/loopback_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace canal::testing {

int ConnectLoopback(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string ReadUntilClosed(int fd, std::chrono::milliseconds limit) {
  std::string out;
  char buf[16384];
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

HttpReply HttpGet(uint16_t port, const std::string& target) {
  return HttpExchange(port, "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
}

HttpReply HttpExchange(uint16_t port, const std::string& req, std::string* raw_reply) {
  HttpReply r;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return r;
  std::string raw;
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) raw = ReadUntilClosed(fd);
  ::close(fd);
  if (raw_reply != nullptr) *raw_reply = raw;
  const size_t sp = raw.find(' ');
  const size_t end = raw.find("\r\n\r\n");
  if (!raw.starts_with("HTTP/1.") || sp == std::string::npos || end == std::string::npos) return r;
  r.status = std::atoi(raw.c_str() + sp + 1);
  r.body = raw.substr(end + 4);
  return r;
}

}  // namespace canal::testing
