// Plain sockets to a server on 127.0.0.1, for tests of HTTP endpoints: a
// connect, a read until the peer closes, and an HTTP/1.0 GET (the server
// closes after the answer, so no chunked bodies or keep-alive to handle).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace canal::testing {

// A connected socket, or -1.
int ConnectLoopback(uint16_t port);
// Everything the peer sends until it closes (or `limit` passes).
std::string ReadUntilClosed(int fd, std::chrono::milliseconds limit = std::chrono::seconds(10));

struct HttpReply {
  int status = 0;  // 0: no (parsable) answer
  std::string body;
};
HttpReply HttpGet(uint16_t port, const std::string& target);
// Sends `raw` (a whole request, which should say Connection: close) and
// parses the answer; *raw_reply (optional) gets it whole, headers included.
HttpReply HttpExchange(uint16_t port, const std::string& raw, std::string* raw_reply = nullptr);

}  // namespace canal::testing
