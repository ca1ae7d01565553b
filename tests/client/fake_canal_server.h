// FakeCanalServer: a scripted, in-process Canal server for client tests.
//
// It listens on an ephemeral 127.0.0.1 port and, on a thread, runs the test's
// script for each accepted connection in turn. The script speaks the framing
// and packets through FakeSession: it reads what the client sent (checking it
// with gtest expectations) and answers exactly what the test wants, including
// malformed bytes. Every read has a timeout, so a client that sends nothing
// fails the test instead of hanging it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/packet.pb.h"

namespace canal::client::fake {

namespace pb = canal::protocol;

// The handshake seed of the protocol doc's test vector.
inline std::string TestSeed() { return std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8); }

class FakeSession {
 public:
  explicit FakeSession(int fd) : fd_(fd) {}
  ~FakeSession() { Close(); }
  FakeSession(const FakeSession&) = delete;
  FakeSession& operator=(const FakeSession&) = delete;

  bool SendRaw(std::string_view bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  static std::string LengthPrefix(uint32_t n) {
    std::string b;
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<char>((n >> shift) & 0xff));
    return b;
  }

  bool SendFrame(std::string_view payload) {
    return SendRaw(LengthPrefix(static_cast<uint32_t>(payload.size())) + std::string(payload));
  }

  // version < 0 leaves the packet's version absent.
  bool SendPacket(pb::PacketType type, const std::string& body, int version = 1) {
    pb::Packet p;
    if (version >= 0) p.set_version(version);
    p.set_type(type);
    p.set_body(body);
    return SendFrame(p.SerializeAsString());
  }

  bool SendHandshake(const std::string& seed = TestSeed(), int version = 1) {
    pb::Handshake hs;
    hs.set_seeds(seed);
    return SendPacket(pb::HANDSHAKE, hs.SerializeAsString(), version);
  }

  // code 0 sends Canal's success Ack (no fields).
  bool SendAck(int code = 0, const std::string& message = "") {
    pb::Ack ack;
    if (code != 0) {
      ack.set_error_code(code);
      ack.set_error_message(message);
    }
    return SendPacket(pb::ACK, ack.SerializeAsString());
  }

  bool SendMessages(int64_t batch_id, const std::vector<std::string>& entries) {
    pb::Messages m;
    m.set_batch_id(batch_id);
    for (const auto& e : entries) m.add_messages(e);
    return SendPacket(pb::MESSAGES, m.SerializeAsString());
  }

  // Reads one packet; false on end of stream, timeout or a malformed frame.
  bool Read(pb::Packet* p, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::string len;
    if (!ReadExact(4, &len, timeout)) return false;
    const uint32_t n = (uint32_t{static_cast<uint8_t>(len[0])} << 24) | (uint32_t{static_cast<uint8_t>(len[1])} << 16) |
                       (uint32_t{static_cast<uint8_t>(len[2])} << 8) | uint32_t{static_cast<uint8_t>(len[3])};
    if (n == 0 || n > (1u << 20)) return false;
    std::string body;
    if (!ReadExact(n, &body, timeout)) return false;
    return p->ParseFromString(body);
  }

  // Reads a packet of `type` and parses its body into `body`.
  template <typename M>
  bool Expect(pb::PacketType type, M* body) {
    pb::Packet p;
    if (!Read(&p)) {
      ADD_FAILURE() << "fake server: expected a " << pb::PacketType_Name(type) << " packet, got nothing";
      return false;
    }
    if (p.type() != type) {
      ADD_FAILURE() << "fake server: expected " << pb::PacketType_Name(type) << ", got "
                    << pb::PacketType_Name(p.type());
      return false;
    }
    if (!body->ParseFromString(p.body())) {
      ADD_FAILURE() << "fake server: unparsable " << pb::PacketType_Name(type) << " body";
      return false;
    }
    return true;
  }

  // Handshake with the test seed, then accepts any authentication.
  bool AcceptLogin(pb::ClientAuth* auth = nullptr) {
    pb::ClientAuth a;
    if (!SendHandshake() || !Expect(pb::CLIENTAUTHENTICATION, &a)) return false;
    if (auth) *auth = a;
    return SendAck();
  }

  // The rollback of batch 0 and the subscription that Connector::Subscribe sends.
  bool AcceptSubscribe(pb::Sub* sub = nullptr) {
    pb::ClientRollback rb;
    pb::Sub s;
    if (!Expect(pb::CLIENTROLLBACK, &rb) || !Expect(pb::SUBSCRIPTION, &s)) return false;
    EXPECT_EQ(rb.batch_id(), 0);
    if (sub) *sub = s;
    return SendAck();
  }

  bool AcceptLoginAndSubscribe(pb::ClientAuth* auth = nullptr, pb::Sub* sub = nullptr) {
    return AcceptLogin(auth) && AcceptSubscribe(sub);
  }

  // Handshake, then refuses the authentication with Canal's error Ack.
  bool RefuseLogin(int code, const std::string& message) {
    pb::ClientAuth auth;
    return SendHandshake() && Expect(pb::CLIENTAUTHENTICATION, &auth) && SendAck(code, message);
  }

  // Reads a GET (into `get` when given) and answers it with a batch.
  bool AnswerGet(int64_t batch_id, const std::vector<std::string>& entries, pb::Get* get = nullptr) {
    pb::Get g;
    if (!Expect(pb::GET, &g)) return false;
    if (get) *get = g;
    return SendMessages(batch_id, entries);
  }

  // Answers every GET with an empty batch until the client unsubscribes (true)
  // or sends something else or nothing (false).
  bool AnswerGetsWithEmptyBatchesUntilUnsubscribe() {
    pb::Packet p;
    while (Read(&p)) {
      if (p.type() == pb::UNSUBSCRIPTION) return SendAck();
      if (p.type() != pb::GET) {
        ADD_FAILURE() << "fake server: expected GET or UNSUBSCRIPTION, got " << pb::PacketType_Name(p.type());
        return false;
      }
      if (!SendMessages(-1, {})) return false;
    }
    return false;
  }

  // True when the client closes its end within the timeout.
  bool WaitForClose(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::string ignored;
    while (ReadExact(1, &ignored, timeout)) ignored.clear();
    return eof_;
  }

  bool open() const { return fd_ >= 0; }

  // Whether bytes are waiting on the socket right now (no wait).
  bool ReadableNow() const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  bool ReadExact(size_t n, std::string* out, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out->size() < n) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[4096];
      const ssize_t r = ::recv(fd_, buf, std::min(sizeof buf, n - out->size()), 0);
      if (r <= 0) {
        eof_ = r == 0;
        return false;
      }
      out->append(buf, static_cast<size_t>(r));
    }
    return true;
  }

  int fd_;
  bool eof_ = false;
};

class FakeCanalServer {
 public:
  using Script = std::function<void(FakeSession&)>;

  // Runs scripts[i] for the i-th accepted connection, then stops accepting.
  explicit FakeCanalServer(std::vector<Script> scripts) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    const bool ok = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                    ::listen(listen_fd_, 8) == 0;
    EXPECT_TRUE(ok) << "fake server cannot listen on 127.0.0.1";
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, scripts = std::move(scripts)] {
      for (const auto& script : scripts) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (::poll(&p, 1, 10'000) <= 0) {
          ADD_FAILURE() << "fake server: no client connected";
          break;
        }
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) break;
        FakeSession session(fd);
        script(session);
      }
      finished_ = true;
    });
  }
  explicit FakeCanalServer(Script script) : FakeCanalServer(std::vector<Script>{std::move(script)}) {}

  ~FakeCanalServer() {
    Join();
    ::close(listen_fd_);
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  uint16_t port() const { return port_; }

  // Waits until every script has run.
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  bool finished() const { return finished_; }

 private:
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> finished_{false};
};

// Entry builders for scripted batches.

// An entry of `type` whose header places it in the binlog.
inline canal::entry::Entry EntryAt(canal::entry::EntryType type, const std::string& file, int64_t offset,
                                   int64_t execute_time_ms = 1'700'000'000'123) {
  canal::entry::Entry e;
  auto* h = e.mutable_header();
  h->set_logfilename(file);
  h->set_logfileoffset(offset);
  h->set_executetime(execute_time_ms);
  e.set_entrytype(type);
  return e;
}

inline std::string RowEntry(const std::string& file, int64_t offset, const std::string& schema, const std::string& table,
                            canal::entry::EventType type, const std::vector<canal::entry::RowData>& rows,
                            int64_t execute_time_ms = 1'700'000'000'123, const std::string& gtid = "") {
  canal::entry::RowChange rc;
  rc.set_eventtype(type);
  for (const auto& r : rows) *rc.add_rowdatas() = r;
  canal::entry::Entry e = EntryAt(canal::entry::ROWDATA, file, offset, execute_time_ms);
  auto* h = e.mutable_header();
  h->set_schemaname(schema);
  h->set_tablename(table);
  h->set_eventtype(type);
  h->set_gtid(gtid);
  e.set_storevalue(rc.SerializeAsString());
  return e.SerializeAsString();
}

inline std::string DdlEntry(const std::string& file, int64_t offset, const std::string& schema, const std::string& sql,
                            int64_t execute_time_ms = 1'700'000'000'123) {
  canal::entry::RowChange rc;
  rc.set_eventtype(canal::entry::CREATE);
  rc.set_isddl(true);
  rc.set_sql(sql);
  canal::entry::Entry e = EntryAt(canal::entry::ROWDATA, file, offset, execute_time_ms);
  e.mutable_header()->set_schemaname(schema);
  e.mutable_header()->set_eventtype(canal::entry::CREATE);
  e.set_storevalue(rc.SerializeAsString());
  return e.SerializeAsString();
}

inline std::string TransactionEntry(canal::entry::EntryType type, const std::string& file, int64_t offset,
                                    const std::string& id_or_thread = "7") {
  canal::entry::Entry e = EntryAt(type, file, offset);
  if (type == canal::entry::TRANSACTIONBEGIN) {
    canal::entry::TransactionBegin b;
    b.set_threadid(std::stoll(id_or_thread));
    e.set_storevalue(b.SerializeAsString());
  } else {
    canal::entry::TransactionEnd end;
    end.set_transactionid(id_or_thread);
    e.set_storevalue(end.SerializeAsString());
  }
  return e.SerializeAsString();
}

// A column; a null `value` pointer makes it SQL NULL.
inline canal::entry::Column Col(const std::string& name, const char* value, bool updated = false) {
  canal::entry::Column c;
  c.set_name(name);
  if (value) {
    c.set_value(value);
  } else {
    c.set_isnull(true);
  }
  c.set_updated(updated);
  return c;
}

inline canal::entry::RowData Row(const std::vector<canal::entry::Column>& before,
                                 const std::vector<canal::entry::Column>& after) {
  canal::entry::RowData r;
  for (const auto& c : before) *r.add_beforecolumns() = c;
  for (const auto& c : after) *r.add_aftercolumns() = c;
  return r;
}

}  // namespace canal::client::fake
