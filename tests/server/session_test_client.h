// A tiny blocking client of Canal's protocol for the session server's tests:
// it speaks frames over a plain POSIX socket, with a deadline on every read
// so that a broken server fails a test instead of hanging it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "canal/packet.pb.h"
#include "canal/proto/password_scramble.h"

namespace canal::server::testing {

class TestClient {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TestClient(uint16_t port, std::chrono::milliseconds read_timeout = std::chrono::seconds(10))
      : read_timeout_(read_timeout) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~TestClient() { Close(); }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Closes with a reset instead of a FIN (a crashing client).
  void Abort() {
    if (fd_ < 0) return;
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    Close();
  }
  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }
  int fd() const { return fd_; }

  bool SendRaw(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  static std::string Frame(std::string_view payload) {
    const auto n = static_cast<uint32_t>(payload.size());
    std::string f = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                     static_cast<char>(n)};
    f.append(payload);
    return f;
  }

  static std::string PacketBytes(protocol::PacketType type, const google::protobuf::MessageLite& body) {
    protocol::Packet p;
    p.set_type(type);
    p.set_body(body.SerializeAsString());
    return p.SerializeAsString();
  }

  bool SendPacket(protocol::PacketType type, const google::protobuf::MessageLite& body) {
    return SendRaw(Frame(PacketBytes(type, body)));
  }

  // Reads one frame and parses it; false on EOF, reset, timeout or garbage.
  bool ReadPacket(protocol::Packet* packet) {
    uint8_t h[4];
    if (!ReadExact(reinterpret_cast<char*>(h), 4)) return false;
    const uint32_t n = (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | h[3];
    if (n > (256u << 20)) return false;
    std::string body(n, '\0');
    if (!ReadExact(body.data(), n)) return false;
    last_frame_ = body;
    return packet->ParseFromString(body);
  }

  // Whether the server closes the connection within `timeout` (frames that
  // come first are discarded).
  bool WaitClosed(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    char buf[4096];
    for (;;) {
      if (!PollReadable(deadline)) return false;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return true;  // reset
      }
    }
  }

  // Whether nothing arrives (and the connection stays open) for `quiet`.
  bool QuietFor(std::chrono::milliseconds quiet) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(quiet.count())) == 0;
  }

  // ---- the conversation ------------------------------------------------------

  // Reads the HANDSHAKE and returns its seed; nullopt when it is not one.
  std::optional<std::string> ReadHandshake() {
    protocol::Packet p;
    if (!ReadPacket(&p) || p.type() != protocol::HANDSHAKE || p.version() != 1) return std::nullopt;
    protocol::Handshake h;
    if (!h.ParseFromString(p.body())) return std::nullopt;
    seed_ = h.seeds();
    return seed_;
  }

  void SendAuth(const std::string& user, const std::string& password, const std::string& destination = "",
                const std::string& client_id = "", int32_t net_read_timeout_ms = 3'600'000,
                const std::string& filter = "") {
    protocol::ClientAuth a;
    a.set_username(user);
    if (!password.empty()) a.set_password(proto::ScramblePassword(seed_, password));
    a.set_net_read_timeout(net_read_timeout_ms);
    a.set_net_write_timeout(net_read_timeout_ms);
    a.set_destination(destination);
    a.set_client_id(client_id);
    a.set_filter(filter);
    SendPacket(protocol::CLIENTAUTHENTICATION, a);
  }

  // Reads an ACK; nullopt when the next packet is anything else (or none).
  std::optional<protocol::Ack> ReadAck() {
    protocol::Packet p;
    if (!ReadPacket(&p) || p.type() != protocol::ACK) return std::nullopt;
    protocol::Ack a;
    if (!a.ParseFromString(p.body())) return std::nullopt;
    return a;
  }

  // Handshake + auth (+ subscription at auth); true when accepted.
  bool Login(const std::string& user = "canal", const std::string& password = "canal",
             const std::string& destination = "", const std::string& client_id = "",
             int32_t net_read_timeout_ms = 3'600'000) {
    if (!ReadHandshake()) return false;
    SendAuth(user, password, destination, client_id, net_read_timeout_ms);
    std::optional<protocol::Ack> ack = ReadAck();
    return ack && ack->error_code() == 0;
  }

  std::optional<protocol::Ack> Subscribe(const std::string& destination, const std::string& client_id,
                                         const std::string& filter = "") {
    protocol::Sub s;
    s.set_destination(destination);
    s.set_client_id(client_id);
    s.set_filter(filter);
    SendPacket(protocol::SUBSCRIPTION, s);
    return ReadAck();
  }

  std::optional<protocol::Ack> Unsubscribe(const std::string& destination, const std::string& client_id) {
    protocol::Unsub u;
    u.set_destination(destination);
    u.set_client_id(client_id);
    SendPacket(protocol::UNSUBSCRIPTION, u);
    return ReadAck();
  }

  // timeout nullopt: the field is left out (return at once).
  void SendGet(const std::string& destination, const std::string& client_id, int32_t fetch_size,
               std::optional<int64_t> timeout = std::nullopt, std::optional<int32_t> unit = std::nullopt,
               bool auto_ack = false) {
    protocol::Get g;
    g.set_destination(destination);
    g.set_client_id(client_id);
    g.set_fetch_size(fetch_size);
    if (timeout) g.set_timeout(*timeout);
    if (unit) g.set_unit(*unit);
    if (auto_ack) g.set_auto_ack(true);
    SendPacket(protocol::GET, g);
  }

  // The answer to a GET: MESSAGES, or an error ACK.
  struct GetReply {
    bool received = false;
    bool is_messages = false;
    protocol::Messages messages;
    protocol::Ack ack;
  };
  GetReply ReadGetReply() {
    GetReply r;
    protocol::Packet p;
    if (!ReadPacket(&p)) return r;
    r.received = true;
    if (p.type() == protocol::MESSAGES) {
      r.is_messages = r.messages.ParseFromString(p.body());
    } else if (p.type() == protocol::ACK) {
      r.ack.ParseFromString(p.body());
    }
    return r;
  }

  GetReply Get(const std::string& destination, const std::string& client_id, int32_t fetch_size,
               std::optional<int64_t> timeout = std::nullopt, std::optional<int32_t> unit = std::nullopt,
               bool auto_ack = false) {
    SendGet(destination, client_id, fetch_size, timeout, unit, auto_ack);
    return ReadGetReply();
  }

  void Ack(const std::string& destination, const std::string& client_id, int64_t batch_id) {
    protocol::ClientAck a;
    a.set_destination(destination);
    a.set_client_id(client_id);
    a.set_batch_id(batch_id);
    SendPacket(protocol::CLIENTACK, a);
  }

  void Rollback(const std::string& destination, const std::string& client_id, int64_t batch_id) {
    protocol::ClientRollback r;
    r.set_destination(destination);
    r.set_client_id(client_id);
    r.set_batch_id(batch_id);
    SendPacket(protocol::CLIENTROLLBACK, r);
  }

  const std::string& seed() const { return seed_; }
  const std::string& last_frame() const { return last_frame_; }

 private:
  // Waits for the socket to be readable (or closed) until `deadline`; false
  // when it passes first or poll fails.
  bool PollReadable(Clock::time_point deadline) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left.count()));
      if (r < 0 && errno == EINTR) continue;
      return r > 0;
    }
  }

  bool ReadExact(char* out, size_t n) {
    const Clock::time_point deadline = Clock::now() + read_timeout_;
    while (n > 0) {
      if (!PollReadable(deadline)) return false;
      const ssize_t got = ::recv(fd_, out, n, 0);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) return false;
      out += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }

  int fd_ = -1;
  std::chrono::milliseconds read_timeout_;
  std::string seed_;
  std::string last_frame_;
};

}  // namespace canal::server::testing
