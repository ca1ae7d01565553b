#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "support/replay_primary/replay_internal.h"

namespace canal::testing::replay {

namespace {
constexpr size_t kMaxPacket = 0xFFFFFF;
constexpr int kSliceMs = 100;  // how often a blocked read looks at the stop flag
}  // namespace

void PutLenenc(std::string* out, uint64_t v) {
  if (v < 251) {
    PutInt(out, v, 1);
  } else if (v < (1u << 16)) {
    out->push_back('\xfc');
    PutInt(out, v, 2);
  } else if (v < (1u << 24)) {
    out->push_back('\xfd');
    PutInt(out, v, 3);
  } else {
    out->push_back('\xfe');
    PutInt(out, v, 8);
  }
}

void PutLenencString(std::string* out, std::string_view s) {
  PutLenenc(out, s.size());
  out->append(s);
}

PacketConn::~PacketConn() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

bool PacketConn::ReadExactly(char* dst, size_t n, int timeout_ms) {
  size_t done = 0;
  int waited = 0;
  while (done < n) {
    if (stop_->load()) return false;
    if (ssl_ == nullptr || SSL_pending(ssl_) == 0) {
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, kSliceMs);
      if (r < 0) return false;
      if (r == 0) {
        waited += kSliceMs;
        if (timeout_ms >= 0 && waited >= timeout_ms) return false;
        continue;
      }
    }
    const ssize_t got = ssl_ != nullptr ? SSL_read(ssl_, dst + done, static_cast<int>(n - done))
                                        : ::recv(fd_, dst + done, n - done, 0);
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

bool PacketConn::Read(std::string* payload, int timeout_ms, size_t limit) {
  payload->clear();
  for (;;) {
    char h[4];
    if (!ReadExactly(h, 4, timeout_ms)) return false;
    const size_t len = GetInt(std::string_view(h, 3), 0, 3);
    seq_ = static_cast<uint8_t>(h[3] + 1);
    if (payload->size() + len > limit) return false;  // a client never needs that much here
    const size_t at = payload->size();
    payload->resize(at + len);
    if (!ReadExactly(payload->data() + at, len, timeout_ms)) return false;
    if (len < kMaxPacket) return true;
  }
}

bool PacketConn::WriteRaw(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ssl_ != nullptr ? SSL_write(ssl_, bytes.data() + done, static_cast<int>(bytes.size() - done))
                                      : ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool PacketConn::Write(std::string_view payload) {
  size_t off = 0;
  std::string frame;
  for (;;) {
    const size_t chunk = std::min(payload.size() - off, kMaxPacket);
    frame.clear();
    PutInt(&frame, chunk, 3);
    frame.push_back(static_cast<char>(seq_++));
    frame.append(payload.substr(off, chunk));
    if (!WriteRaw(frame)) return false;
    off += chunk;
    if (chunk < kMaxPacket) return true;
  }
}

bool PacketConn::WriteTruncated(std::string_view payload, size_t keep) {
  std::string frame;
  PutInt(&frame, std::min(payload.size(), kMaxPacket), 3);
  frame.push_back(static_cast<char>(seq_++));
  frame.append(payload.substr(0, std::min(keep, payload.size())));
  return WriteRaw(frame);
}

bool PacketConn::StartTls(SSL_CTX* ctx) {
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr) return false;
  SSL_set_fd(ssl_, fd_);
  // The handshake is short; a client that stalls in it is given 10 s.
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 10'000) <= 0) return false;
  return SSL_accept(ssl_) == 1;
}

void PacketConn::WaitInput(int ms, bool* readable, bool* closed) {
  *readable = *closed = false;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) {
    *readable = true;
    return;
  }
  pollfd p{fd_, POLLIN, 0};
  const int r = ::poll(&p, 1, ms);
  if (r < 0) {
    *closed = true;
    return;
  }
  if (r == 0) return;
  if (p.revents & (POLLHUP | POLLERR)) {
    *closed = true;
    return;
  }
  char c;
  const ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) {
    *closed = true;
  } else {
    *readable = true;
  }
}

void PacketConn::Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

}  // namespace canal::testing::replay
