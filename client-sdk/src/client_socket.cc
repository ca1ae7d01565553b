#include "client_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>


namespace canal::client::detail {

namespace {

using Clock = Socket::Clock;

// Milliseconds left for poll(): -1 for no deadline, 0 when past.
int PollTimeout(Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count() + 1;
  if (left <= 0) return 0;
  return left > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max() : static_cast<int>(left);
}

std::string Errno(int err) { return std::strerror(err); }

// Splits "host:port" or "[v6]:port".
Status SplitAddress(const std::string& address, std::string* host, std::string* port) {
  const auto colon = address.rfind(':');
  if (address.empty() || colon == std::string::npos || colon + 1 == address.size()) {
    return Status::InvalidArgument("canal server address \"" + address +
                                   "\" has no port: write host:port (ConnectorOptions::address, e.g. 127.0.0.1:11111)");
  }
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  if (host->empty()) {
    return Status::InvalidArgument("canal server address \"" + address + "\" has no host: write host:port");
  }
  if (port->size() > 5 || port->find_first_not_of("0123456789") != std::string::npos || std::stoi(*port) < 1 ||
      std::stoi(*port) > 65535) {
    return Status::InvalidArgument("canal server address \"" + address + "\": port \"" + *port +
                                   "\" is not a number from 1 to 65535");
  }
  return Status::OK();
}

}  // namespace

Socket::~Socket() {
  if (ssl_ != nullptr) {
    // close_notify, best effort: never waits (the socket is non-blocking).
    SSL_shutdown(ssl_);
    SSL_free(ssl_);
    ERR_clear_error();
  }
  ::close(fd_);
}

Status Socket::Open(const std::string& address, std::chrono::milliseconds timeout, const TlsOptions& tls,
                    std::unique_ptr<Socket>* out) {
  std::string host, port;
  CANAL_RETURN_IF_ERROR(SplitAddress(address, &host, &port));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int gai = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
  if (gai != 0) {
    return Status::IOError("canal server " + address + ": cannot resolve host \"" + host + "\": " + gai_strerror(gai));
  }
  const auto now = Clock::now();
  const auto deadline = timeout.count() < 0 || timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(
                                                              Clock::time_point::max() - now)
                            ? Clock::time_point::max()
                            : now + timeout;
  std::string last_error = "no address";
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = "socket: " + Errno(errno);
      continue;
    }
    auto sock = std::make_unique<Socket>(fd);
    Status s = sock->ConnectTo(ai->ai_addr, ai->ai_addrlen, deadline);
    if (s.ok()) {
      ::freeaddrinfo(list);
      const int one = 1;
      // Requests are small and answered one by one: Nagle would add latency to each.
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
      if (tls.enabled) CANAL_RETURN_IF_ERROR(sock->StartTls(address, host, tls, deadline));
      *out = std::move(sock);
      return Status::OK();
    }
    last_error = std::string(s.message());
  }
  ::freeaddrinfo(list);
  return Status::IOError("cannot connect to canal server " + address + ": " + last_error);
}

Status Socket::WriteAll(std::string_view data, Clock::time_point deadline) {
  if (ssl_ != nullptr) return TlsWriteAll(data, deadline);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      CANAL_RETURN_IF_ERROR(Wait(POLLOUT, deadline, "sending"));
      continue;
    }
    return Status::IOError("send failed: " + Errno(errno));
  }
  return Status::OK();
}

Status Socket::ReadExact(char* buf, size_t n, Clock::time_point deadline, size_t* got) {
  if (ssl_ != nullptr) return TlsReadExact(buf, n, deadline, got);
  *got = 0;
  while (*got < n) {
    const ssize_t r = ::recv(fd_, buf + *got, n - *got, 0);
    if (r > 0) {
      *got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return Status::IOError("connection closed by the server");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      WakeAfter(n - *got);
      CANAL_RETURN_IF_ERROR(Wait(POLLIN, deadline, "waiting for the reply"));
      continue;
    }
    return Status::IOError("recv failed: " + Errno(errno));
  }
  return Status::OK();
}

// Asks the kernel to wake a wait for readable bytes only once `want` bytes
// (at most kMaxLowWater) have arrived, not at every segment: each wake-up
// costs both sides a switch. Never more than the read needs, so a short read
// is not kept waiting. (Plain TCP only: under TLS the bytes on the socket
// are records, and part of one may be buffered in OpenSSL already.)
void Socket::WakeAfter(size_t want) {
  const int lowat = static_cast<int>(std::min(want, kMaxLowWater));
  if (lowat == lowat_) return;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat) == 0) lowat_ = lowat;
}

// A peek, not poll: poll would not report fewer bytes than the low-water
// mark the last read left (a short error reply after a big batch).
bool Socket::Readable() {
  if (ssl_ != nullptr) return TlsReadable();
  char c;
  const ssize_t r = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

Status Socket::ConnectTo(const void* addr, unsigned len, Clock::time_point deadline) {
  if (::connect(fd_, static_cast<const sockaddr*>(addr), static_cast<socklen_t>(len)) == 0) return Status::OK();
  if (errno != EINPROGRESS) return Status::IOError(Errno(errno));
  Status s = Wait(POLLOUT, deadline, "connecting (ConnectorOptions::connect_timeout)");
  if (!s.ok()) return s;
  int err = 0;
  socklen_t err_len = sizeof err;
  ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &err_len);
  return err == 0 ? Status::OK() : Status::IOError(Errno(err));
}

Status Socket::Wait(short events, Clock::time_point deadline, std::string_view doing) {
  while (true) {
    pollfd p{fd_, events, 0};
    const int timeout = PollTimeout(deadline);
    const int r = ::poll(&p, 1, timeout);
    if (r > 0) return Status::OK();  // errors and hang-ups surface in the next send/recv
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::IOError("poll failed: " + Errno(errno));
    return Status::IOError("timed out " + std::string(doing));
  }
}

// ---- TLS ------------------------------------------------------------------------

Status Socket::StartTls(const std::string& address, const std::string& host, const TlsOptions& tls,
                        Clock::time_point deadline) {
  SSL_CTX* ctx = nullptr;
  CANAL_RETURN_IF_ERROR(MakeClientTlsContext(tls, &ctx));
  ssl_ = SSL_new(ctx);
  SSL_CTX_free(ctx);  // the SSL holds its own reference
  if (ssl_ == nullptr) return Status::IOError("TLS with " + address + ": cannot make a TLS session");
  bio_.fd = fd_;
  BIO* bio = NewSocketBio(&bio_);
  if (bio == nullptr) return Status::IOError("TLS with " + address + ": cannot make a socket BIO");
  SSL_set_bio(ssl_, bio, bio);
  const std::string& name = tls.server_name.empty() ? host : tls.server_name;
  if (tls.verify && !SetPeerName(ssl_, name)) {
    return Status::InvalidArgument("TLS with " + address + ": \"" + name +
                                   "\" is not a host name or IP address (tls.server_name)");
  }
  SSL_set_connect_state(ssl_);
  for (;;) {
    ERR_clear_error();
    const int r = SSL_connect(ssl_);
    if (r == 1) return Status::OK();
    const int err = SSL_get_error(ssl_, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      Status s = Wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline,
                      "in the TLS handshake (ConnectorOptions::connect_timeout)");
      if (!s.ok()) return Status::IOError("TLS handshake with " + address + " failed: " + std::string(s.message()));
      continue;
    }
    return Status::IOError("TLS handshake with " + address + " failed: " + TlsFailure(ssl_, err, true));
  }
}

Status Socket::TlsWriteAll(std::string_view data, Clock::time_point deadline) {
  size_t done = 0;
  while (done < data.size()) {
    size_t n = 0;
    ERR_clear_error();
    const int r = SSL_write_ex(ssl_, data.data() + done, data.size() - done, &n);
    if (r == 1) {
      done += n;
      continue;
    }
    const int err = SSL_get_error(ssl_, r);
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
      CANAL_RETURN_IF_ERROR(Wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, "sending"));
      continue;
    }
    return Status::IOError("TLS send failed: " + TlsFailure(ssl_, err, false));
  }
  return Status::OK();
}

Status Socket::TlsReadExact(char* buf, size_t n, Clock::time_point deadline, size_t* got) {
  *got = 0;
  while (*got < n) {
    size_t r = 0;
    ERR_clear_error();
    const int ok = SSL_read_ex(ssl_, buf + *got, n - *got, &r);
    if (ok == 1) {
      *got += r;
      continue;
    }
    const int err = SSL_get_error(ssl_, ok);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      CANAL_RETURN_IF_ERROR(Wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, "waiting for the reply"));
      continue;
    }
    return Status::IOError(TlsFailure(ssl_, err, false));
  }
  return Status::OK();
}

// Application bytes waiting, or an end or error to report. A peek through
// OpenSSL: bytes on the socket may be a TLS message that is no data.
bool Socket::TlsReadable() {
  if (SSL_pending(ssl_) > 0) return true;
  char c;
  const ssize_t raw = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (raw < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  size_t n = 0;
  ERR_clear_error();
  if (SSL_peek_ex(ssl_, &c, 1, &n) == 1) return true;
  const int err = SSL_get_error(ssl_, 0);
  ERR_clear_error();
  return err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE;
}

}  // namespace canal::client::detail
