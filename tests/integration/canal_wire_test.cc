// Canal's wire bytes: the C->S frames that Canal's own Java client sent
// (../shared/protocol/CAPTURED_FRAMES.md, parsed at test time) are replayed
// against a live canal-server, and every S->C frame is compared byte for
// byte with what Canal's server sends. What differs per connection is
// recomputed, nothing else: the handshake's seed (its shape is pinned), the
// auth token (the scramble of the empty password with this seed), the batch
// id the server assigned (the captured run had acked 11 batches before; so
// does this one, so the id is the captured 12 again), and where the captured
// error names the server's address, ours (the address the client connected
// to). Entries: the frame around them is pinned exactly; each entry equals the
// captured one once the fields of that run (positions, times, ids, GTID) are
// set alike.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "canal/entry.pb.h"
#include "canal/packet.pb.h"
#include "canal/proto/password_scramble.h"
#include "support/canal_install.h"
#include "support/fixtures.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
namespace entry = canal::entry;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kSandboxPort = TestPort("canal_wire");
constexpr uint16_t kSession1Port = TestPort("canal_wire", 1);
constexpr uint16_t kSession2Port = TestPort("canal_wire", 2);

// ---- CAPTURED_FRAMES.md ----------------------------------------------------

struct CapturedFrame {
  int index = 0;
  bool to_server = false;  // C->S
  std::string bytes;       // the whole frame, length prefix included
};

// The frames of each "## Session" section, in order. An empty result (with
// *error) when the file cannot be read or a frame does not parse.
std::vector<std::vector<CapturedFrame>> ParseCapturedFrames(const std::string& path, std::string* error) {
  std::ifstream in(path);
  std::vector<std::vector<CapturedFrame>> sessions;
  if (!in) {
    *error = path + " cannot be read";
    return sessions;
  }
  const std::regex head(R"(^\[(\d+)\] \+[0-9.]+s conn\d+ (C->S|S->C) len=(\d+) .*)");
  const std::regex hex_line(R"(^    ([0-9a-f]{2}( [0-9a-f]{2})*)\s*$)");
  std::string line;
  CapturedFrame* current = nullptr;
  size_t announced = 0;
  auto finish = [&]() -> bool {
    if (current == nullptr) return true;
    if (current->bytes.size() != announced + 4) {
      *error = path + ": frame [" + std::to_string(current->index) + "] has " + std::to_string(current->bytes.size()) +
               " bytes, its header says " + std::to_string(announced) + " + 4";
      return false;
    }
    current = nullptr;
    return true;
  };
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("## Session", 0) == 0) {
      if (!finish()) return {};
      sessions.emplace_back();
    } else if (std::regex_match(line, m, head)) {
      if (!finish()) return {};
      if (sessions.empty()) sessions.emplace_back();
      sessions.back().push_back({std::stoi(m[1].str()), m[2].str() == "C->S", ""});
      current = &sessions.back().back();
      announced = std::stoul(m[3].str());
    } else if (current != nullptr && std::regex_match(line, m, hex_line)) {
      std::istringstream hex(m[1].str());
      std::string byte;
      while (hex >> byte) current->bytes.push_back(static_cast<char>(std::stoi(byte, nullptr, 16)));
    } else if (current != nullptr && !line.empty()) {
      if (!finish()) return {};
    }
  }
  if (!finish()) return {};
  return sessions;
}

std::string FrameLength(size_t n) {
  return {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n)};
}

std::string Framed(const std::string& packet) { return FrameLength(packet.size()) + packet; }

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0) out += (i % 32 == 0) ? '\n' : ' ';
    out += digits[static_cast<uint8_t>(bytes[i]) >> 4];
    out += digits[static_cast<uint8_t>(bytes[i]) & 15];
  }
  return out;
}

protocol::Packet PacketOf(const std::string& frame) {
  protocol::Packet p;
  EXPECT_TRUE(p.ParseFromArray(frame.data() + 4, static_cast<int>(frame.size() - 4))) << Hex(frame);
  return p;
}

// Canal's Java server writes a MESSAGES frame with entries by hand: type and
// body, no version (SessionHandler); the entries are the stored bytes.
std::string CanalMessagesFrame(int64_t batch_id, const std::vector<std::string>& entries) {
  protocol::Messages body;
  body.set_batch_id(batch_id);
  for (const auto& e : entries) body.add_messages(e);
  protocol::Packet p;
  p.set_type(protocol::MESSAGES);
  body.SerializeToString(p.mutable_body());
  return Framed(p.SerializeAsString());
}

// An entry with what depends on the run (binlog file and offsets, times,
// server id, GTID, table id, transaction and thread ids) cleared, and an
// integer type's display width dropped (the captured run's mysqlType had
// none; Canal's has it on MariaDB), re-serialised.
std::string RunIndependent(const std::string& bytes) {
  entry::Entry e;
  EXPECT_TRUE(e.ParseFromString(bytes));
  entry::Header* h = e.mutable_header();
  h->clear_logfilename();
  h->clear_logfileoffset();
  h->clear_serverid();
  h->clear_executetime();
  h->clear_eventlength();
  h->clear_gtid();
  if (e.entrytype() == entry::TRANSACTIONBEGIN) {
    entry::TransactionBegin b;
    EXPECT_TRUE(b.ParseFromString(e.storevalue()));
    b.clear_executetime();
    b.clear_transactionid();
    b.clear_threadid();
    e.set_storevalue(b.SerializeAsString());
  } else if (e.entrytype() == entry::TRANSACTIONEND) {
    entry::TransactionEnd t;
    EXPECT_TRUE(t.ParseFromString(e.storevalue()));
    t.clear_executetime();
    t.clear_transactionid();
    e.set_storevalue(t.SerializeAsString());
  } else if (e.entrytype() == entry::ROWDATA) {
    entry::RowChange rc;
    EXPECT_TRUE(rc.ParseFromString(e.storevalue()));
    rc.clear_tableid();
    const std::regex width(R"(^(tinyint|smallint|mediumint|int|bigint)\(\d+\))");
    for (auto& row : *rc.mutable_rowdatas()) {
      for (auto* columns : {row.mutable_beforecolumns(), row.mutable_aftercolumns()}) {
        for (auto& c : *columns) c.set_mysqltype(std::regex_replace(c.mysqltype(), width, "$1"));
      }
    }
    e.set_storevalue(rc.SerializeAsString());
  }
  return e.SerializeAsString();
}

// ---- A raw connection ----------------------------------------------------------

class Wire {
 public:
  ~Wire() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool Connect(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // One whole frame (length prefix included), or nullopt on close or timeout.
  std::optional<std::string> ReadFrame(std::chrono::milliseconds limit = 10s) {
    std::string header;
    if (!Read(4, &header, limit)) return std::nullopt;
    const uint32_t n = (uint32_t{static_cast<uint8_t>(header[0])} << 24) |
                       (uint32_t{static_cast<uint8_t>(header[1])} << 16) |
                       (uint32_t{static_cast<uint8_t>(header[2])} << 8) | static_cast<uint8_t>(header[3]);
    std::string body;
    if (n > (1u << 20) || !Read(n, &body, limit)) return std::nullopt;
    return header + body;
  }
  // True when the server closes within `limit` without sending more.
  bool ClosedWithoutMore(std::chrono::milliseconds limit = 5s) {
    std::string more;
    return !Read(1, &more, limit) && more.empty();
  }

 private:
  bool Read(size_t n, std::string* out, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (out->size() < n) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
      char buf[4096];
      const ssize_t got = ::recv(fd_, buf, std::min(sizeof buf, n - out->size()), 0);
      if (got <= 0) return false;
      out->append(buf, static_cast<size_t>(got));
    }
    return true;
  }
  int fd_ = -1;
};

// ---- The suite -------------------------------------------------------------------

class CanalWire : public ::testing::Test {
 protected:
  static std::string CapturePath() {
    const std::string shared = SharedDir();
    return shared.empty() ? "" : shared + "/protocol/CAPTURED_FRAMES.md";
  }
  static void SetUpTestSuite() {
    if (!CapturePath().empty() && fs::exists(CapturePath())) sandbox_ = StartSuiteSandbox(kSandboxPort, &setup_error_);
  }
  static void TearDownTestSuite() { sandbox_.reset(); }

  void SetUp() override {
    const std::string path = CapturePath();
    if (path.empty() || !fs::exists(path)) {
      GTEST_SKIP() << "../shared/protocol/CAPTURED_FRAMES.md not found (../shared is absent): no captured frames to "
                      "replay";
    }
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    ASSERT_TRUE(fs::exists(CanalInstall::ServerProgram()))
        << CanalInstall::ServerProgram() << " is missing: build the canal-server target first";
    std::string error;
    sessions_ = ParseCapturedFrames(path, &error);
    ASSERT_EQ(sessions_.size(), 2u) << path << ": " << error;
  }

  // A server on `port`, destination "example" from the primary's end. With
  // `check_password` the empty password is checked for real (canal.passwd =
  // SHA1(SHA1(""))); without, any password passes (the SDK sends no token
  // for an empty password, Canal's client its scramble).
  ::testing::AssertionResult StartServer(const std::string& name, uint16_t port, bool check_password) {
    if (!sandbox_->Sql("CREATE DATABASE IF NOT EXISTS jcheck; DROP TABLE IF EXISTS jcheck.frames; "
                       "CREATE TABLE jcheck.frames (id INT PRIMARY KEY, v VARCHAR(10))")) {
      return ::testing::AssertionFailure() << "creating jcheck.frames: " << sandbox_->error();
    }
    install_ = std::make_unique<CanalInstall>("canal-wire-" + name, kSandboxPort);
    install_->WriteServerProperties(
        CanalInstall::ServerProperties(port, check_password ? "canal.passwd = " + proto::StoredPasswordForm("") + "\n" : ""));
    install_->WriteInstance("example", StartAtPrimaryEnd(*sandbox_));
    std::string out;
    if (const int rc = install_->Startup(&out); rc != 0) {
      return ::testing::AssertionFailure() << "startup.sh exit " << rc << ":\n"
                                           << out << ReadAll(install_->server_log());
    }
    return ::testing::AssertionSuccess();
  }
  static bool Sql(const std::string& sql) {
    const bool ok = sandbox_->Sql(sql);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }

  // The captured handshake's shape, then the captured auth frame with the
  // token recomputed for this connection's seed; checks the captured token is
  // the same algorithm's (the seed recorded in the capture).
  static void Handshake(Wire& w, const std::vector<CapturedFrame>& frames, std::string* auth) {
    const std::string& captured = frames[0].bytes;
    std::optional<std::string> hs = w.ReadFrame();
    ASSERT_TRUE(hs) << "no handshake";
    ASSERT_EQ(hs->size(), captured.size());
    EXPECT_EQ(Hex(hs->substr(0, 12)), Hex(captured.substr(0, 12))) << "handshake shape";
    const std::string captured_seed = captured.substr(12), seed = hs->substr(12);
    *auth = frames[1].bytes;
    const std::string captured_token = proto::ScramblePassword(captured_seed, "");
    const size_t at = auth->find(captured_token);
    ASSERT_NE(at, std::string::npos) << "the captured auth token is not the scramble of the empty password";
    auth->replace(at, captured_token.size(), proto::ScramblePassword(seed, ""));
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
  std::vector<std::vector<CapturedFrame>> sessions_;
  std::unique_ptr<CanalInstall> install_;
};

// Session 1: subscribe, get (one transaction), ack, empty get, unsubscribe.
TEST_F(CanalWire, Session1ReplayedGetsCanalsBytes) {
  const std::vector<CapturedFrame>& frames = sessions_[0];
  ASSERT_EQ(frames.size(), 14u);
  ASSERT_TRUE(StartServer("session1", kSession1Port, /*check_password=*/false));

  // The captured client had batch ids 1..11 behind it: so does this one, with
  // transactions of its own (ids 101..111), acked by an SDK client.
  client::ConnectorOptions o;
  o.address = "127.0.0.1:" + std::to_string(kSession1Port);
  o.destination = "example";
  o.read_timeout = 20s;
  {
    client::Connector c(o);
    Status s = ConnectAndSubscribe(c, 20s, "jcheck\\.frames");
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int i = 1; i <= 11; ++i) {
      ASSERT_TRUE(Sql("INSERT INTO jcheck.frames VALUES (" + std::to_string(100 + i) + ", 'warm')"));
      client::Message m;
      const auto deadline = Clock::now() + 20s;
      while (m.batch_id() == -1 && Clock::now() < deadline) {
        s = c.GetWithoutAck(1000, 100, client::TimeUnit::kMilliseconds, &m);
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
      ASSERT_EQ(m.batch_id(), i);
      ASSERT_TRUE(c.Ack(m.batch_id()).ok());
    }
    ASSERT_TRUE(c.Rollback().ok());  // (answers any earlier failure before the disconnect)
  }
  // The captured transaction, in the binlog before the replayed get.
  ASSERT_TRUE(Sql("INSERT INTO jcheck.frames VALUES (2, 'hi')"));

  std::unique_ptr<Wire> wire;
  std::optional<std::string> got;
  for (int attempt = 0; attempt < 100; ++attempt) {  // the SDK client's session may still be ending
    wire = std::make_unique<Wire>();
    Wire& w = *wire;
    ASSERT_TRUE(w.Connect(kSession1Port));
    std::string auth;
    Handshake(w, frames, &auth);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(w.Send(auth));
    got = w.ReadFrame();
    ASSERT_TRUE(got);
    EXPECT_EQ(Hex(*got), Hex(frames[2].bytes)) << "frame [2]";
    ASSERT_TRUE(w.Send(frames[3].bytes) && w.Send(frames[4].bytes));
    got = w.ReadFrame();
    ASSERT_TRUE(got);
    if (*got == frames[5].bytes) break;
    const protocol::Packet p = PacketOf(*got);
    protocol::Ack ack;
    ASSERT_TRUE(ack.ParseFromString(p.body()));
    ASSERT_NE(ack.error_message().find("already subscribed"), std::string::npos) << ack.error_message();
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(Hex(*got), Hex(frames[5].bytes)) << "frame [5]";
  Wire& w = *wire;

  // [6] GET -> [7] MESSAGES with the transaction.
  ASSERT_TRUE(w.Send(frames[6].bytes));
  got = w.ReadFrame();
  ASSERT_TRUE(got);
  const protocol::Packet captured_packet = PacketOf(frames[7].bytes);
  protocol::Messages captured, ours;
  ASSERT_TRUE(captured.ParseFromString(captured_packet.body()));
  const protocol::Packet packet = PacketOf(*got);
  ASSERT_EQ(packet.type(), protocol::MESSAGES);
  ASSERT_TRUE(ours.ParseFromString(packet.body()));
  EXPECT_EQ(ours.batch_id(), captured.batch_id());
  ASSERT_EQ(ours.messages_size(), captured.messages_size());
  const std::vector<std::string> our_entries(ours.messages().begin(), ours.messages().end());
  // The frame around the entries is Canal's, byte for byte (no version)...
  EXPECT_EQ(Hex(*got), Hex(CanalMessagesFrame(ours.batch_id(), our_entries))) << "frame [7]";
  // ... which is the captured frame without the `version = 1` our server added then.
  const std::vector<std::string> captured_entries(captured.messages().begin(), captured.messages().end());
  std::string canal_frame7 = frames[7].bytes;
  ASSERT_EQ(Hex(canal_frame7.substr(4, 2)), "10 01");
  canal_frame7 = Framed(canal_frame7.substr(6));
  EXPECT_EQ(Hex(CanalMessagesFrame(captured.batch_id(), captured_entries)), Hex(canal_frame7));
  // And each entry is the captured one, run-dependent fields aside.
  // One deliberate change since the capture: a transaction boundary's header
  // carries no eventType now, as Canal's LogEventConvert writes it
  // (createHeader(..., null)); the capture's QUERY there is taken out.
  for (int i = 0; i < ours.messages_size(); ++i) {
    entry::Entry then;
    ASSERT_TRUE(then.ParseFromString(captured.messages(i)));
    if (then.entrytype() == entry::TRANSACTIONBEGIN || then.entrytype() == entry::TRANSACTIONEND) {
      EXPECT_EQ(then.header().eventtype(), entry::QUERY) << "entry " << i;
      then.mutable_header()->clear_eventType_present();
    }
    EXPECT_EQ(Hex(RunIndependent(ours.messages(i))), Hex(RunIndependent(then.SerializeAsString()))) << "entry " << i;
  }

  // [8] ACK, [9] GET -> [10] empty MESSAGES (version 1, as Canal's), [11] ACK -1, [12] UNSUB -> [13] ACK.
  ASSERT_TRUE(w.Send(frames[8].bytes) && w.Send(frames[9].bytes));
  got = w.ReadFrame();
  ASSERT_TRUE(got);
  EXPECT_EQ(Hex(*got), Hex(frames[10].bytes)) << "frame [10]";
  ASSERT_TRUE(w.Send(frames[11].bytes) && w.Send(frames[12].bytes));
  got = w.ReadFrame();
  ASSERT_TRUE(got);
  EXPECT_EQ(Hex(*got), Hex(frames[13].bytes)) << "frame [13]";

  // A clean unsubscribe logs no WARN ( "clearing batches ... not subscribed").
  EXPECT_TRUE(WaitForText(install_->server_log(), "unsubscribed", 5s));
  std::this_thread::sleep_for(200ms);
  const std::string log = ReadAll(install_->server_log());
  EXPECT_EQ(log.find("clearing batches"), std::string::npos) << log;
  EXPECT_NE(log.find("unsubscribed"), std::string::npos) << log;
}

// Session 2: an ack of a batch that does not exist: Canal's error Ack, then
// the connection closes (the GET after it is not answered).
TEST_F(CanalWire, Session2ReplayedGetsCanalsErrorAck) {
  const std::vector<CapturedFrame>& frames = sessions_[1];
  ASSERT_EQ(frames.size(), 9u);
  ASSERT_TRUE(StartServer("session2", kSession2Port, /*check_password=*/true));
  std::unique_ptr<Wire> wire;
  for (int attempt = 0;; ++attempt) {  // until the server listens
    wire = std::make_unique<Wire>();
    if (wire->Connect(kSession2Port)) break;
    ASSERT_LT(attempt, 200) << "canal-server does not listen on " << kSession2Port;
    std::this_thread::sleep_for(100ms);
  }
  Wire& w = *wire;
  std::string auth;
  Handshake(w, frames, &auth);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(w.Send(auth));
  std::optional<std::string> got = w.ReadFrame();
  ASSERT_TRUE(got);
  EXPECT_EQ(Hex(*got), Hex(frames[2].bytes)) << "frame [2]";
  ASSERT_TRUE(w.Send(frames[3].bytes) && w.Send(frames[4].bytes));
  got = w.ReadFrame();
  ASSERT_TRUE(got);
  ASSERT_EQ(Hex(*got), Hex(frames[5].bytes)) << "frame [5]";
  ASSERT_TRUE(w.Send(frames[6].bytes) && w.Send(frames[7].bytes));
  got = w.ReadFrame();
  ASSERT_TRUE(got);

  // Canal's bytes, with its listen address replaced by the one we connected to.
  protocol::Packet expected_packet = PacketOf(frames[8].bytes);
  protocol::Ack expected_ack;
  ASSERT_TRUE(expected_ack.ParseFromString(expected_packet.body()));
  std::string message = expected_ack.error_message();
  const size_t at = message.find("0.0.0.0:11111");
  ASSERT_NE(at, std::string::npos) << message;
  message.replace(at, 13, "127.0.0.1:" + std::to_string(kSession2Port));
  expected_ack.set_error_message(message);
  expected_packet.set_body(expected_ack.SerializeAsString());
  const std::string expected = Framed(expected_packet.SerializeAsString());
  // (The re-encoding of the captured frame is the captured frame itself.)
  EXPECT_EQ(Framed(PacketOf(frames[8].bytes).SerializeAsString()), frames[8].bytes);
  EXPECT_EQ(Hex(*got), Hex(expected)) << "frame [8]";
  EXPECT_TRUE(w.ClosedWithoutMore()) << "the connection stays open after the error, or the GET was answered";
}

}  // namespace
}  // namespace canal::testing
