#include "mysql/packet_io.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace canal::mysql {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

std::string TlsErrorText() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "no detail from OpenSSL";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

void SetTimeout(int fd, int option, int ms) {
  timeval tv{};
  if (ms > 0) {
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
  }
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv);
}

// SSL_write() writes to the socket with write(), which raises SIGPIPE on a peer
// that is gone; keep it from killing the process without touching global handlers.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    sigpending(&pending_before_);
    pthread_sigmask(SIG_BLOCK, &block, &old_);
  }
  ~ScopedSigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&pending_before_, SIGPIPE)) {
      sigset_t only;
      sigemptyset(&only);
      sigaddset(&only, SIGPIPE);
      timespec zero{};
      sigtimedwait(&only, nullptr, &zero);  // consume the one we caused
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_{}, pending_before_{};
};

}  // namespace

PacketChannel::PacketChannel(std::string address, int read_timeout_ms)
    : address_(std::move(address)), read_timeout_ms_(read_timeout_ms), buf_(new uint8_t[kBufferSize]) {}

PacketChannel::~PacketChannel() { Close(); }

bool PacketChannel::is_open() const {
  std::lock_guard<std::mutex> lock(fd_mu_);
  return fd_ >= 0;
}

Status PacketChannel::Connect(const std::string& host, uint16_t port, int connect_timeout_ms) {
  Close();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(connect_timeout_ms);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addrs = nullptr;
  const std::string port_text = std::to_string(port);
  int gai = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &addrs);
  if (gai != 0) {
    return Status::IOError(address_ + ": cannot resolve host '" + host + "': " + gai_strerror(gai));
  }
  std::string last_error = "no address";
  for (addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last_error = ErrnoText(errno);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(fd_mu_);
      fd_ = fd;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      // Poll in short slices so that Shutdown() ends a connect to a silent host.
      err = ETIMEDOUT;
      while (!shutdown_requested()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fd, POLLOUT, 0};
        int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
        if (n < 0 && errno != EINTR) {
          err = errno;
          break;
        }
        if (n > 0) {
          socklen_t len = sizeof err;
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          break;
        }
      }
      if (shutdown_requested()) err = ECANCELED;
    }
    if (err == 0) {
      // Blocking from here on: reads and writes are bounded by SO_RCVTIMEO/SO_SNDTIMEO.
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
      SetTimeout(fd, SO_RCVTIMEO, read_timeout_ms_);
      SetTimeout(fd, SO_SNDTIMEO, read_timeout_ms_);
      freeaddrinfo(addrs);
      rpos_ = wpos_ = 0;
      seq_ = 0;
      return Status::OK();
    }
    last_error = err == ETIMEDOUT ? "timed out after " + std::to_string(connect_timeout_ms) + " ms"
                 : err == ECANCELED ? std::string("shut down while connecting")
                                    : ErrnoText(err);
    Close();
    if (shutdown_requested() || std::chrono::steady_clock::now() >= deadline) break;
  }
  freeaddrinfo(addrs);
  return Status::IOError(address_ + ": cannot connect: " + last_error);
}

Status PacketChannel::StartTls(const std::string& ca_file) {
  ssl_ctx_ = SSL_CTX_new(TLS_client_method());
  if (ssl_ctx_ == nullptr) return Status::IOError(address_ + ": TLS setup: " + TlsErrorText());
  SSL_CTX_set_min_proto_version(ssl_ctx_, TLS1_2_VERSION);
  if (!ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ssl_ctx_, ca_file.c_str(), nullptr) != 1) {
      return Status::InvalidArgument(address_ + ": cannot load the TLS CA file '" + ca_file + "': " + TlsErrorText());
    }
    SSL_CTX_set_verify(ssl_ctx_, SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(ssl_ctx_, SSL_VERIFY_NONE, nullptr);
  }
  int fd;
  {
    std::lock_guard<std::mutex> lock(fd_mu_);
    fd = fd_;
  }
  if (fd < 0) return Status::IOError(address_ + ": TLS handshake: the connection is closed");
  ssl_ = SSL_new(ssl_ctx_);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd) != 1) return Status::IOError(address_ + ": TLS setup: " + TlsErrorText());
  if (rpos_ != wpos_) {
    // The server must not speak before our ClientHello; bytes here mean a confused peer.
    return Status::Corruption(address_ + ": unexpected bytes from the server before the TLS handshake");
  }
  ScopedSigpipeBlock no_sigpipe;
  if (SSL_connect(ssl_) != 1) {
    std::string detail = TlsErrorText();
    if (!ca_file.empty()) {
      long v = SSL_get_verify_result(ssl_);
      if (v != X509_V_OK) detail += std::string(" (certificate: ") + X509_verify_cert_error_string(v) + ")";
    }
    return Status::IOError(address_ + ": TLS handshake failed: " + detail);
  }
  return Status::OK();
}

void PacketChannel::Shutdown() {
  shutdown_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(fd_mu_);
  // shutdown(), not close(): it wakes a thread blocked in recv() on this fd, and
  // the descriptor number stays ours until Close() so it cannot be reused under it.
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void PacketChannel::Close() {
  if (ssl_ != nullptr) {
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  if (ssl_ctx_ != nullptr) {
    SSL_CTX_free(ssl_ctx_);
    ssl_ctx_ = nullptr;
  }
  std::lock_guard<std::mutex> lock(fd_mu_);
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  rpos_ = wpos_ = 0;
}

Status PacketChannel::ReadFailure(std::string_view what, std::string_view detail) const {
  return Status::IOError(address_ + ": " + std::string(what) + ": " + std::string(detail));
}

Status PacketChannel::RecvSome(uint8_t* dst, size_t cap, size_t* got, std::string_view what) {
  if (shutdown_requested()) return ReadFailure(what, "the connection was shut down locally");
  int fd;
  {
    std::lock_guard<std::mutex> lock(fd_mu_);
    fd = fd_;
  }
  if (fd < 0) return ReadFailure(what, "the connection is closed");
  const std::string timeout_text =
      "no data from the server for " + std::to_string(read_timeout_ms_) + " ms (read timeout)";
  if (ssl_ != nullptr) {
    int n = SSL_read(ssl_, dst, static_cast<int>(std::min<size_t>(cap, 1 << 30)));
    if (n > 0) {
      *got = static_cast<size_t>(n);
      return Status::OK();
    }
    int err = SSL_get_error(ssl_, n);
    int saved_errno = errno;
    if (shutdown_requested()) return ReadFailure(what, "the connection was shut down locally");
    if (err == SSL_ERROR_WANT_READ || (err == SSL_ERROR_SYSCALL && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK))) {
      return ReadFailure(what, timeout_text);
    }
    if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
      ERR_clear_error();
      return ReadFailure(what, "the server closed the connection");
    }
    return ReadFailure(what, "TLS read failed: " + TlsErrorText());
  }
  for (;;) {
    ssize_t n = ::recv(fd, dst, cap, 0);
    if (n > 0) {
      *got = static_cast<size_t>(n);
      return Status::OK();
    }
    if (shutdown_requested()) return ReadFailure(what, "the connection was shut down locally");
    if (n == 0) return ReadFailure(what, "the server closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReadFailure(what, timeout_text);
    return ReadFailure(what, ErrnoText(errno));
  }
}

bool PacketChannel::NothingToRead() const {
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return false;
  pollfd p{};
  {
    std::lock_guard<std::mutex> lock(fd_mu_);
    p.fd = fd_;
  }
  if (p.fd < 0) return false;  // (the read reports the closed connection)
  p.events = POLLIN;
  return ::poll(&p, 1, 0) == 0;
}

Status PacketChannel::Fill(size_t need, std::string_view what) {
  if (wpos_ - rpos_ >= need) return Status::OK();
  if (rpos_ + need > kBufferSize) {
    std::memmove(buf_.get(), buf_.get() + rpos_, wpos_ - rpos_);
    wpos_ -= rpos_;
    rpos_ = 0;
  }
  while (wpos_ - rpos_ < need) {
    if (before_block_ && NothingToRead()) before_block_();
    size_t got = 0;
    CANAL_RETURN_IF_ERROR(RecvSome(buf_.get() + wpos_, kBufferSize - wpos_, &got, what));
    wpos_ += got;
  }
  return Status::OK();
}

Status PacketChannel::ReadHeader(uint32_t* length, uint8_t* seq, std::string_view what) {
  CANAL_RETURN_IF_ERROR(Fill(4, what));
  const uint8_t* h = buf_.get() + rpos_;
  *length = h[0] | (uint32_t{h[1]} << 8) | (uint32_t{h[2]} << 16);
  *seq = h[3];
  rpos_ += 4;
  return Status::OK();
}

bool PacketChannel::LargeMessage::Resize(size_t n) {
  if (n > capacity) {
    void* grown = std::realloc(data, n);
    if (grown == nullptr) return false;
    data = static_cast<char*>(grown);
    capacity = n;
  }
  size = n;
  return true;
}

void PacketChannel::LargeMessage::Release() {
  std::free(data);
  data = nullptr;
  size = capacity = 0;
}

Status PacketChannel::AppendPayloadToLarge(size_t length, std::string_view what) {
  const size_t start = large_.size;
  if (!large_.Resize(start + length)) {
    return Status::IOError(address_ + ": " + std::string(what) + ": out of memory for a message of more than " +
                           std::to_string(start + length) + " bytes");
  }
  auto* dst = reinterpret_cast<uint8_t*>(large_.data) + start;
  size_t have = std::min(length, wpos_ - rpos_);
  std::memcpy(dst, buf_.get() + rpos_, have);
  rpos_ += have;
  // The rest goes straight from the socket into place: no second copy.
  while (have < length) {
    size_t got = 0;
    CANAL_RETURN_IF_ERROR(RecvSome(dst + have, length - have, &got, what));
    have += got;
  }
  return Status::OK();
}

Status PacketChannel::ReadMessage(std::string_view* payload, std::string_view what) {
  uint32_t length = 0;
  uint8_t seq = 0;
  // The previous message's view ends here: a big one's memory goes back now
  // rather than stay for the life of the connection.
  if (large_.capacity > 4 * kBufferSize) large_.Release();
  CANAL_RETURN_IF_ERROR(ReadHeader(&length, &seq, what));
  const uint8_t expected = seq_;
  seq_ = static_cast<uint8_t>(seq + 1);
  if (length > max_message_bytes_) {
    return Status::Corruption(address_ + ": " + std::string(what) + ": packet of " + std::to_string(length) +
                              " bytes exceeds the limit of " + std::to_string(max_message_bytes_));
  }
  auto check_sequence = [&](std::string_view first_bytes) -> Status {
    // An ERR packet is accepted out of order: a killed or shutting-down server
    // sends it from a fresh context, and its text is worth more than a sequence error.
    if (seq == expected || (!first_bytes.empty() && static_cast<uint8_t>(first_bytes[0]) == 0xFF)) return Status::OK();
    return Status::Corruption(address_ + ": " + std::string(what) + ": packet sequence " + std::to_string(seq) +
                              " where " + std::to_string(expected) + " was expected (out of sync with the server)");
  };

  if (length < kMaxPacketPayload && length <= kBufferSize) {
    CANAL_RETURN_IF_ERROR(Fill(length, what));
    *payload = std::string_view(reinterpret_cast<const char*>(buf_.get() + rpos_), length);
    rpos_ += length;
    return check_sequence(*payload);
  }

  // Over the buffer, or split over several packets: assemble in large_.
  large_.size = 0;
  uint64_t total = 0;
  bool first = true;
  for (;;) {
    total += length;
    if (total > max_message_bytes_) {
      return Status::Corruption(address_ + ": " + std::string(what) + ": message of more than " +
                                std::to_string(total) + " bytes exceeds the limit of " +
                                std::to_string(max_message_bytes_));
    }
    CANAL_RETURN_IF_ERROR(AppendPayloadToLarge(length, what));
    if (first) {
      CANAL_RETURN_IF_ERROR(check_sequence(std::string_view(large_.data, large_.size)));
      first = false;
    }
    if (length < kMaxPacketPayload) break;
    uint8_t expected_next = seq_;
    CANAL_RETURN_IF_ERROR(ReadHeader(&length, &seq, what));
    seq_ = static_cast<uint8_t>(seq + 1);
    if (seq != expected_next) {
      return Status::Corruption(address_ + ": " + std::string(what) + ": continuation packet sequence " +
                                std::to_string(seq) + " where " + std::to_string(expected_next) + " was expected");
    }
  }
  *payload = std::string_view(large_.data, large_.size);
  return Status::OK();
}

Status PacketChannel::SendAll(const uint8_t* data, size_t size) {
  if (shutdown_requested()) return Status::IOError(address_ + ": write: the connection was shut down locally");
  int fd;
  {
    std::lock_guard<std::mutex> lock(fd_mu_);
    fd = fd_;
  }
  if (fd < 0) return Status::IOError(address_ + ": write: the connection is closed");
  size_t done = 0;
  if (ssl_ != nullptr) {
    ScopedSigpipeBlock no_sigpipe;
    while (done < size) {
      int n = SSL_write(ssl_, data + done, static_cast<int>(std::min<size_t>(size - done, 1 << 30)));
      if (n <= 0) return Status::IOError(address_ + ": TLS write failed: " + TlsErrorText());
      done += static_cast<size_t>(n);
    }
    return Status::OK();
  }
  while (done < size) {
    ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return Status::IOError(address_ + ": write timed out after " + std::to_string(read_timeout_ms_) + " ms");
      }
      return Status::IOError(address_ + ": write failed: " + ErrnoText(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

Status PacketChannel::WriteMessage(std::string_view payload) {
  std::string frame;
  size_t offset = 0;
  // A message of exactly k * 0xFFFFFF bytes ends with an empty packet.
  for (;;) {
    size_t chunk = std::min<size_t>(payload.size() - offset, kMaxPacketPayload);
    frame.clear();
    wire::PutInt(&frame, chunk, 3);
    frame.push_back(static_cast<char>(seq_++));
    frame.append(payload.substr(offset, chunk));
    CANAL_RETURN_IF_ERROR(SendAll(reinterpret_cast<const uint8_t*>(frame.data()), frame.size()));
    offset += chunk;
    if (chunk < kMaxPacketPayload) break;
  }
  return Status::OK();
}

namespace wire {

void PutInt(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutLenenc(std::string* out, uint64_t v) {
  if (v < 251) {
    out->push_back(static_cast<char>(v));
  } else if (v < (1u << 16)) {
    out->push_back(static_cast<char>(0xFC));
    PutInt(out, v, 2);
  } else if (v < (1u << 24)) {
    out->push_back(static_cast<char>(0xFD));
    PutInt(out, v, 3);
  } else {
    out->push_back(static_cast<char>(0xFE));
    PutInt(out, v, 8);
  }
}

void PutLenencString(std::string* out, std::string_view s) {
  PutLenenc(out, s.size());
  out->append(s);
}

bool Reader::Int(int bytes, uint64_t* v) {
  if (remaining() < static_cast<size_t>(bytes)) {
    pos_ = data_.size();
    return false;
  }
  uint64_t r = 0;
  for (int i = 0; i < bytes; ++i) r |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
  pos_ += bytes;
  *v = r;
  return true;
}

bool Reader::U8(uint8_t* v) {
  uint64_t r;
  if (!Int(1, &r)) return false;
  *v = static_cast<uint8_t>(r);
  return true;
}

bool Reader::Lenenc(uint64_t* v, bool* is_null) {
  uint8_t first;
  if (is_null) *is_null = false;
  if (!U8(&first)) return false;
  if (first < 0xFB) {
    *v = first;
    return true;
  }
  switch (first) {
    case 0xFB:
      if (is_null == nullptr) return false;
      *is_null = true;
      *v = 0;
      return true;
    case 0xFC: return Int(2, v);
    case 0xFD: return Int(3, v);
    case 0xFE: return Int(8, v);
    default: return false;
  }
}

bool Reader::LenencString(std::string_view* s, bool* is_null) {
  uint64_t n;
  if (!Lenenc(&n, is_null)) return false;
  if (is_null && *is_null) {
    *s = {};
    return true;
  }
  if (n > remaining()) return false;
  return Bytes(static_cast<size_t>(n), s);
}

bool Reader::NulString(std::string_view* s) {
  size_t end = data_.find('\0', pos_);
  if (end == std::string_view::npos) {
    *s = data_.substr(pos_);
    pos_ = data_.size();
    return true;
  }
  *s = data_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return true;
}

bool Reader::Bytes(size_t n, std::string_view* s) {
  if (n > remaining()) {
    pos_ = data_.size();
    return false;
  }
  *s = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool Reader::Skip(size_t n) {
  std::string_view ignored;
  return Bytes(n, &ignored);
}

std::string_view Reader::Rest() {
  std::string_view r = data_.substr(pos_);
  pos_ = data_.size();
  return r;
}

}  // namespace wire
}  // namespace canal::mysql
