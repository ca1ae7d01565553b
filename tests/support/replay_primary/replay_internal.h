// Internals of the replay primary shared by its source files.
#pragma once

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/common/status.h"
#include "support/replay_primary/replay_primary.h"

namespace canal::testing::replay {

// ---- one client socket, plain or TLS, framed as MySQL packets ---------------

class PacketConn {
 public:
  PacketConn(int fd, const std::atomic<bool>* stop) : fd_(fd), stop_(stop) {}
  ~PacketConn();
  PacketConn(const PacketConn&) = delete;
  PacketConn& operator=(const PacketConn&) = delete;

  // One message (packets of 0xFFFFFF joined); false on close, stop, or after
  // `timeout_ms` of silence (< 0: wait until stop). At most `limit` bytes.
  bool Read(std::string* payload, int timeout_ms, size_t limit = 1 << 24);
  // One message, split the protocol's way, with the next sequence numbers.
  bool Write(std::string_view payload);
  // The packet header and only the first `keep` bytes of the payload (a
  // connection cut in the middle of a message).
  bool WriteTruncated(std::string_view payload, size_t keep);
  void ResetSequence() { seq_ = 0; }
  bool StartTls(SSL_CTX* ctx);
  bool tls() const { return ssl_ != nullptr; }
  // Waits up to `ms` for input; *closed when the peer has gone away.
  void WaitInput(int ms, bool* readable, bool* closed);
  void Shutdown();

 private:
  bool ReadExactly(char* dst, size_t n, int timeout_ms);
  bool WriteRaw(std::string_view bytes);

  int fd_;
  const std::atomic<bool>* stop_;
  SSL* ssl_ = nullptr;
  uint8_t seq_ = 0;
};

// ---- little-endian helpers ---------------------------------------------------

inline void PutInt(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline uint64_t GetInt(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}
// "8.0.28-log" -> 80028; 0 when there is no leading number.
inline int VersionNumber(std::string_view v) {
  int parts[3] = {0, 0, 0};
  size_t i = 0;
  for (int k = 0; k < 3 && i < v.size(); ++k) {
    if (v[i] < '0' || v[i] > '9') break;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && parts[k] < 10000) parts[k] = parts[k] * 10 + (v[i++] - '0');
    if (i < v.size() && v[i] == '.') ++i;
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

void PutLenenc(std::string* out, uint64_t v);
void PutLenencString(std::string* out, std::string_view s);

// ---- crypto -------------------------------------------------------------------

struct KeyMaterial {
  EVP_PKEY* key = nullptr;   // RSA 2048, for TLS and caching_sha2_password
  SSL_CTX* tls = nullptr;    // server context with a self-signed certificate
  std::string public_pem;    // "-----BEGIN PUBLIC KEY-----..."
  std::string cert_pem;
  ~KeyMaterial();
};
Status MakeKeyMaterial(KeyMaterial* km);
std::string Sha1(std::string_view a, std::string_view b = {});
std::string Sha256(std::string_view a, std::string_view b = {});
std::string RandomBytes(size_t n);  // printable, no NUL, as servers send nonces
// RSA-OAEP decryption of a caching_sha2_password full-auth message.
bool RsaDecrypt(EVP_PKEY* key, std::string_view cipher, std::string* plain);

// ---- binlog files ---------------------------------------------------------------

struct BinlogFile {
  std::string name;   // base name
  std::string bytes;  // the whole file
  size_t fde_offset = 4, fde_size = 0;
  bool fde_has_checksum = false;  // the FDE carries an algorithm byte and a CRC32
  bool crc32 = false;             // the FDE's checksum algorithm is CRC32
  std::vector<size_t> event_offsets;  // every framed event (FDE included)
};
Status LoadBinlogFile(const std::string& path, BinlogFile* file);
// CRC32 of an event's bytes before its checksum, written over its last 4 bytes.
void FixChecksum(std::string* event);

// ---- GTID sets (gtid_set.cc) ------------------------------------------------------

// A MySQL GTID set: per source (16-byte uuid, tag; "" = untagged) its
// transactions as sorted, merged [start, end) intervals. The primary's own, not
// the product's binlog::GtidSet: it is the oracle the product's failover is
// tested against.
class GtidSet {
 public:
  // COM_BINLOG_DUMP_GTID's data: MySQL's untagged form (8-byte source count) or
  // 8.4's tagged one (format byte 1 at both ends of the count word, a varlen
  // tag length and the tag after each uuid). False, with *error, when
  // malformed; every count is checked against the bytes before it is used.
  bool Decode(std::string_view data, std::string* error = nullptr);
  // MySQL's text: "uuid:1-5:7,uuid2:1-3:tag:1-9" (tags 8.4 on; spaces and
  // newlines around elements allowed). Empty text: the empty set.
  static bool Parse(std::string_view text, GtidSet* out, std::string* error);

  bool Contains(std::string_view sid16, std::string_view tag, uint64_t gno) const;
  // The transactions of this set that `other` lacks.
  GtidSet Minus(const GtidSet& other) const;
  // This set's transactions of one source.
  GtidSet Only(std::string_view sid16, std::string_view tag) const;
  bool empty() const { return sources_.empty(); }
  // "uuid:1-5:tag:1-3,uuid2:7" (uuids sorted, untagged before tags).
  std::string ToString() const;

 private:
  using Key = std::pair<std::string, std::string>;  // sid (16 bytes), tag
  using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;
  void Normalize();  // sorts and merges, drops empty sources
  std::map<Key, Intervals> sources_;
};
// "3e11fa47-71ca-11e1-9e33-c80aa9429562" (or its 32 hex digits) to 16 bytes.
bool ParseUuid(std::string_view text, std::string* sid16);
std::string UuidText(std::string_view sid16);
// A GTID_TAGGED event's body (no header, no checksum): its uuid, tag and gno.
// False when it cannot be read (it is then streamed, never skipped).
bool ReadTaggedGtid(std::string_view body, std::string* sid16, std::string* tag, uint64_t* gno);

// ---- state shared by the sessions ---------------------------------------------

struct Shared {
  ReplayPrimaryOptions options;
  std::vector<BinlogFile> files;
  KeyMaterial keys;
  std::atomic<bool> stop{false};

  mutable std::mutex mu;  // guards what follows
  ReplayPrimaryStats stats;
  std::set<std::string> sha2_cache;  // users cached by caching_sha2_password
  int64_t drop_at = -1, corrupt_at = -1;
  bool unknown_plugin = false, purged = false;
  std::vector<int> open_fds;
  // The server's role and GTID state: from the options (and `variables`) at
  // construction, then from the setters.
  bool read_only = false;
  std::string replicating_from;
  std::string gtid_executed, gtid_purged;

  template <typename F>
  void Count(F f) {
    std::lock_guard<std::mutex> lock(mu);
    f(stats);
  }
  // Takes the armed event fault for this event index, if any.
  bool TakeFault(int64_t* armed, uint64_t index) {
    std::lock_guard<std::mutex> lock(mu);
    if (*armed < 0 || static_cast<uint64_t>(*armed) != index) return false;
    *armed = -1;
    ++stats.faults_fired;
    return true;
  }
};

// Runs one client connection to its end.
void ServeClient(Shared* shared, int fd);

// The replica side, after COM_BINLOG_DUMP(_GTID): streams until the client goes.
struct DumpRequest {
  std::string file;
  uint64_t position = 4;
  bool gtid = false;
  GtidSet executed;
  bool checksum_aware = false;
  int64_t heartbeat_ns = 0;
};
void StreamBinlog(Shared* shared, PacketConn* conn, const DumpRequest& req);

// An ERR packet; an OK packet (autocommit, nothing affected).
std::string ErrPacket(uint16_t code, std::string_view state, std::string_view message);
std::string OkPacket();
// Printable for an error message: a client's bytes are never echoed raw.
std::string Printable(std::string_view s);

// Answers one COM_QUERY (statements.cc); false when the connection failed. The
// SETs a dump depends on (@master_binlog_checksum, @master_heartbeat_period)
// land in *dump.
bool AnswerStatement(Shared* sh, PacketConn* conn, DumpRequest* dump, std::string_view sql);

}  // namespace canal::testing::replay
