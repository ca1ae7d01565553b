// FakeMysqlServer: a one-connection MySQL server on 127.0.0.1 for unit tests of
// the dump connection. It accepts one client in a thread and runs the test's
// script against it (send a greeting, read the login, answer, stream events...).
// Packets are raw bytes; the helpers below build the few the tests need.
//
// Every socket call is bounded (10 s) so that a broken client cannot hang a test.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace canal::testing {

class FakeMysqlConn {
 public:
  explicit FakeMysqlConn(int fd) : fd_(fd) {}

  // One packet as given (payload < 16 MiB).
  bool Send(uint8_t seq, std::string_view payload) {
    std::string frame;
    frame.push_back(static_cast<char>(payload.size() & 0xFF));
    frame.push_back(static_cast<char>((payload.size() >> 8) & 0xFF));
    frame.push_back(static_cast<char>((payload.size() >> 16) & 0xFF));
    frame.push_back(static_cast<char>(seq));
    frame.append(payload);
    return SendRaw(frame);
  }
  // A message split the protocol's way; *seq is advanced past its packets.
  bool SendMessage(uint8_t* seq, std::string_view payload) {
    size_t off = 0;
    for (;;) {
      size_t chunk = std::min<size_t>(payload.size() - off, 0xFFFFFF);
      if (!Send((*seq)++, payload.substr(off, chunk))) return false;
      off += chunk;
      if (chunk < 0xFFFFFF) return true;
    }
  }
  bool SendRaw(std::string_view bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ssl_ ? SSL_write(ssl_, bytes.data() + done, static_cast<int>(bytes.size() - done))
                       : ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // One packet; false when the client closed the connection (or 10 s passed).
  bool Read(std::string* payload, uint8_t* seq = nullptr) {
    uint8_t h[4];
    if (!ReadExactly(h, 4)) return false;
    size_t len = h[0] | (size_t{h[1]} << 8) | (size_t{h[2]} << 16);
    if (seq) *seq = h[3];
    payload->resize(len);
    return ReadExactly(reinterpret_cast<uint8_t*>(payload->data()), len);
  }
  // Waits until the client closes its end (or 10 s).
  void WaitForClose() {
    std::string ignored;
    while (Read(&ignored)) {
    }
  }
  int fd() const { return fd_; }
  // Server side of TLS on this connection; later Send/Read go through it.
  bool AcceptTls(SSL_CTX* ctx) {
    ssl_ = SSL_new(ctx);
    SSL_set_fd(ssl_, fd_);
    return SSL_accept(ssl_) == 1;
  }
  ~FakeMysqlConn() {
    if (ssl_) SSL_free(ssl_);
  }

 private:
  bool ReadExactly(uint8_t* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      pollfd p{fd_, POLLIN, 0};
      if ((ssl_ == nullptr || SSL_pending(ssl_) == 0) && ::poll(&p, 1, 10'000) <= 0) return false;
      ssize_t got = ssl_ ? SSL_read(ssl_, dst + done, static_cast<int>(n - done)) : ::recv(fd_, dst + done, n - done, 0);
      if (got <= 0) return false;
      done += static_cast<size_t>(got);
    }
    return true;
  }
  int fd_;
  SSL* ssl_ = nullptr;
};

class FakeMysqlServer {
 public:
  using Script = std::function<void(FakeMysqlConn&)>;

  explicit FakeMysqlServer(Script script) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 1);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, script = std::move(script)] {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 10'000) <= 0) return;
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      FakeMysqlConn conn(fd);
      script(conn);
      ::close(fd);
    });
  }
  ~FakeMysqlServer() {
    Join();
    ::close(listen_fd_);
  }
  // Waits for the script to finish (so that what it recorded may be read).
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  FakeMysqlServer(const FakeMysqlServer&) = delete;
  FakeMysqlServer& operator=(const FakeMysqlServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

// ---- packet builders --------------------------------------------------------

namespace fake_mysql {

constexpr uint32_t kDefaultCaps = 0x00000001 | 0x00000200 | 0x00002000 | 0x00008000 | 0x00020000 | 0x00080000 |
                                  0x00100000 | 0x00200000;

inline void PutInt(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

inline void PutLenencString(std::string* out, std::string_view s) {
  out->push_back(static_cast<char>(s.size()));  // tests keep strings under 251 bytes
  out->append(s);
}

// Handshake v10 with a 20-byte nonce.
inline std::string Greeting(std::string_view nonce20, std::string_view plugin, uint32_t caps = kDefaultCaps,
                            uint32_t connection_id = 42, std::string_view version = "8.0.36-fake") {
  std::string g(1, '\x0a');
  g.append(version);
  g.push_back('\0');
  PutInt(&g, connection_id, 4);
  g.append(nonce20.substr(0, 8));
  g.push_back('\0');
  PutInt(&g, caps & 0xFFFF, 2);
  g.push_back(45);
  PutInt(&g, 2, 2);  // status: autocommit
  PutInt(&g, caps >> 16, 2);
  g.push_back(21);
  g.append(10, '\0');
  g.append(nonce20.substr(8));
  g.push_back('\0');
  g.append(plugin);
  g.push_back('\0');
  return g;
}

inline std::string Ok() { return std::string("\x00\x00\x00\x02\x00\x00\x00", 7); }
inline std::string Eof() { return std::string("\xfe\x00\x00\x02\x00", 5); }

inline std::string Err(uint16_t code, std::string_view state, std::string_view message) {
  std::string e(1, '\xff');
  PutInt(&e, code, 2);
  e.push_back('#');
  e.append(state);
  e.append(message);
  return e;
}

struct HandshakeResponse {
  uint32_t caps = 0;
  uint8_t charset = 0;
  std::string user, auth, plugin;
  bool ok = false;
};

inline HandshakeResponse ParseHandshakeResponse(std::string_view p) {
  HandshakeResponse r;
  if (p.size() < 33) return r;
  for (int i = 0; i < 4; ++i) r.caps |= uint32_t{static_cast<uint8_t>(p[i])} << (8 * i);
  r.charset = static_cast<uint8_t>(p[8]);
  size_t pos = 32;
  size_t nul = p.find('\0', pos);
  if (nul == std::string_view::npos) return r;
  r.user = std::string(p.substr(pos, nul - pos));
  pos = nul + 1;
  if (pos >= p.size()) return r;
  size_t alen = static_cast<uint8_t>(p[pos++]);  // a scramble is < 251 bytes
  if (pos + alen > p.size()) return r;
  r.auth = std::string(p.substr(pos, alen));
  pos += alen;
  nul = p.find('\0', pos);
  if (nul == std::string_view::npos) return r;
  r.plugin = std::string(p.substr(pos, nul - pos));
  r.ok = true;
  return r;
}

}  // namespace fake_mysql
}  // namespace canal::testing
