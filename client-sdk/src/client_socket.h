// Socket: the Connector's connection to a server. A non-blocking TCP socket
// whose reads and writes end at a deadline (poll), optionally with TLS over it
// (OpenSSL on the same non-blocking descriptor, the same deadlines). Internal
// to canal_client.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "canal/client/connector.h"
#include "canal/common/status.h"
#include "client_tls.h"

namespace canal::client::detail {

class Socket {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // Connects to "host:port" (every address it resolves to, in turn) and,
  // with tls.enabled, does the TLS handshake, all within `timeout`.
  static Status Open(const std::string& address, std::chrono::milliseconds timeout, const TlsOptions& tls,
                     std::unique_ptr<Socket>* out);

  Status WriteAll(std::string_view data, Clock::time_point deadline);
  // Reads exactly n bytes; *got says how many arrived before an error.
  Status ReadExact(char* buf, size_t n, Clock::time_point deadline, size_t* got);
  // Whether bytes (or end of stream, or an error) are waiting now.
  bool Readable();
  bool tls() const { return ssl_ != nullptr; }

 private:
  static constexpr size_t kMaxLowWater = size_t{1} << 20;

  Status ConnectTo(const void* addr, unsigned len, Clock::time_point deadline);
  Status Wait(short events, Clock::time_point deadline, std::string_view doing);
  void WakeAfter(size_t want);
  Status StartTls(const std::string& address, const std::string& host, const TlsOptions& tls,
                  Clock::time_point deadline);
  Status TlsWriteAll(std::string_view data, Clock::time_point deadline);
  Status TlsReadExact(char* buf, size_t n, Clock::time_point deadline, size_t* got);
  bool TlsReadable();

  int fd_;
  int lowat_ = 1;
  ssl_st* ssl_ = nullptr;
  SocketBioState bio_;  // (TLS) what the socket BIO works on
};

}  // namespace canal::client::detail
