// PacketChannel: MySQL client/server protocol packets over one TCP socket,
// optionally TLS (OpenSSL), for the dump connection.
//
// Reads go through one large buffer (1 MiB): a packet that fits is returned as a
// view into it, so a binlog stream of small events is read in big recv()s and never
// copied. A message of several 0xFFFFFF-byte packets (an event over 16 MiB), or a
// single packet larger than the buffer, is assembled in a separate buffer instead.
// Sequence ids are checked; a message longer than max_message_bytes is an error
// before anything is allocated for it.
//
// Every read fails after read_timeout_ms without a byte (SO_RCVTIMEO), and
// Shutdown() from another thread makes a blocked read or connect return at once.
// Not thread-safe otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "canal/common/status.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace canal::mysql {

// Payload length that means "another packet of this message follows".
constexpr uint32_t kMaxPacketPayload = 0xFFFFFF;

class PacketChannel {
 public:
  // `address` ("host:port") is only for messages.
  PacketChannel(std::string address, int read_timeout_ms);
  ~PacketChannel();
  PacketChannel(const PacketChannel&) = delete;
  PacketChannel& operator=(const PacketChannel&) = delete;

  Status Connect(const std::string& host, uint16_t port, int connect_timeout_ms);
  // TLS client handshake on the open socket (after the SSLRequest packet).
  // `ca_file` empty: the certificate is not verified.
  Status StartTls(const std::string& ca_file);
  bool tls_active() const { return ssl_ != nullptr; }

  // A command starts a new exchange: the next packet written is sequence 0.
  void ResetSequence() { seq_ = 0; }
  // Writes one message (split into 0xFFFFFF-byte packets when it is that long).
  Status WriteMessage(std::string_view payload);
  // Reads one message (packets of 0xFFFFFF bytes joined). The view is valid until
  // the next read. `what` names the exchange for messages ("reading the greeting").
  Status ReadMessage(std::string_view* payload, std::string_view what);

  // Called on the reading thread when a read is about to block: every byte
  // the peer has sent so far has been read (nothing buffered here, in TLS, or
  // in the socket). Set before reading; empty: no call.
  void set_before_block(std::function<void()> f) { before_block_ = std::move(f); }

  void set_max_message_bytes(uint64_t n) { max_message_bytes_ = n; }
  uint64_t max_message_bytes() const { return max_message_bytes_; }

  // Thread-safe: wakes a blocked read/write/connect; later calls fail.
  void Shutdown();
  bool shutdown_requested() const { return shutdown_.load(std::memory_order_acquire); }
  void Close();
  bool is_open() const;

  const std::string& address() const { return address_; }

 private:
  // Makes at least `need` unread bytes available in buf_ (need <= kBufferSize).
  Status Fill(size_t need, std::string_view what);
  // Reads the 4-byte header of the next packet and checks its sequence id.
  Status ReadHeader(uint32_t* length, uint8_t* seq, std::string_view what);
  // Appends `length` payload bytes to large_, from buf_ first, then the socket.
  Status AppendPayloadToLarge(size_t length, std::string_view what);
  // One recv()/SSL_read(): *got > 0, or an IOError (closed, timeout, shut down).
  Status RecvSome(uint8_t* dst, size_t cap, size_t* got, std::string_view what);
  Status SendAll(const uint8_t* data, size_t size);
  Status ReadFailure(std::string_view what, std::string_view detail) const;

  static constexpr size_t kBufferSize = 1 << 20;

  // True when a recv() now would block (a zero-timeout poll; TLS's buffered
  // record bytes first).
  bool NothingToRead() const;

  std::string address_;
  int read_timeout_ms_;
  std::function<void()> before_block_;
  uint64_t max_message_bytes_ = uint64_t{1} << 30;

  mutable std::mutex fd_mu_;  // guards fd_ against Close() racing Shutdown()
  int fd_ = -1;
  std::atomic<bool> shutdown_{false};
  SSL_CTX* ssl_ctx_ = nullptr;
  SSL* ssl_ = nullptr;

  std::unique_ptr<uint8_t[]> buf_;
  size_t rpos_ = 0, wpos_ = 0;  // unread bytes are buf_[rpos_, wpos_)
  // A message over the buffer, assembled from its packets. Grown to the exact
  // size with realloc (glibc moves big blocks with mremap, without a copy or a
  // doubled capacity), and freed at the next read when it held a big message,
  // so a 64 MiB row costs 64 MiB once, only while it is decoded.
  struct LargeMessage {
    char* data = nullptr;
    size_t size = 0, capacity = 0;
    LargeMessage() = default;
    LargeMessage(const LargeMessage&) = delete;
    LargeMessage& operator=(const LargeMessage&) = delete;
    ~LargeMessage() { Release(); }
    bool Resize(size_t n);  // false when out of memory (contents kept)
    void Release();
  };
  LargeMessage large_;
  uint8_t seq_ = 0;
};

// Little-endian writers and a bounds-checked reader for protocol fields.
namespace wire {

void PutInt(std::string* out, uint64_t v, int bytes);
void PutLenenc(std::string* out, uint64_t v);
void PutLenencString(std::string* out, std::string_view s);

// Every getter returns false (and leaves the reader failed) when the bytes run out.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Int(int bytes, uint64_t* v);
  bool U8(uint8_t* v);
  bool Lenenc(uint64_t* v, bool* is_null = nullptr);
  bool LenencString(std::string_view* s, bool* is_null = nullptr);
  bool NulString(std::string_view* s);  // up to a NUL (consumed) or the end
  bool Bytes(size_t n, std::string_view* s);
  bool Skip(size_t n);
  std::string_view Rest();
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace wire
}  // namespace canal::mysql
