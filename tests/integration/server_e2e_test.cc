// Acceptance tests of the whole path as a user runs it: a real MariaDB, the
// real canal-server started by bin/startup.sh from an install layout, and the
// C++ client SDK. What a client receives equals what the file decoder reads;
// SIGKILLs, clean restarts, rollbacks, several destinations and misbehaving
// clients lose and repeat nothing beyond what the protocol allows.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "canal/packet.pb.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/client_test_names.h"
#include "support/delivery_ledger.h"
#include "support/fixtures.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/row_render.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

constexpr uint16_t kSandboxPort = TestPort("server_e2e");
// canal-server's client port, one per test so that a socket a test left in
// TIME_WAIT never meets the next test's server.
constexpr uint16_t kAllTypesPort = TestPort("server_e2e", 10);
constexpr uint16_t kKillPort = TestPort("server_e2e", 11);
constexpr uint16_t kRollbackPort = TestPort("server_e2e", 12);
constexpr uint16_t kDestinationsPort = TestPort("server_e2e", 13);
constexpr uint16_t kMisbehavePort = TestPort("server_e2e", 14);
constexpr uint16_t kRestartPort = TestPort("server_e2e", 15);

// SHA1(SHA1("canal")) in hex: canal.passwd for the password "canal".
constexpr const char* kCanalPasswd = "E3619321C1A937C46A0D8BD1DAC39F93B27D4458";

// Text one thread writes and another reads (a client thread's last error).
class SharedText {
 public:
  void Set(std::string text) {
    std::lock_guard<std::mutex> lock(mu_);
    text_ = std::move(text);
  }
  std::string Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }

 private:
  mutable std::mutex mu_;
  std::string text_;
};

// ---- Reading entries -------------------------------------------------------

// A row as RenderRows writes it ("db.table UPDATE before: a=1 after: a=2"),
// from what the client received.
std::string RenderRow(const entry::Header& h, entry::EventType type, const entry::RowData& row) {
  std::string line = h.schemaname() + "." + h.tablename() + " " + client::EventTypeName(type);
  auto image = [&](const google::protobuf::RepeatedPtrField<entry::Column>& columns, const char* tag) {
    line += tag;
    for (const entry::Column& c : columns) line += " " + c.name() + "=" + (client::IsNull(c) ? "NULL" : c.value());
  };
  if (type != entry::INSERT) image(row.beforecolumns(), " before:");
  if (type != entry::DELETE) image(row.aftercolumns(), " after:");
  return line;
}

// ---- Raw sockets, for clients that do not follow the protocol ---------------

class RawSocket {
 public:
  ~RawSocket() { Close(); }
  bool Connect(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Reads exactly n bytes; false on close, error or timeout.
  bool Read(size_t n, std::string* out, std::chrono::milliseconds limit = 5s) {
    out->clear();
    const auto deadline = Clock::now() + limit;
    while (out->size() < n) {
      const int wait = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
      pollfd p{fd_, POLLIN, 0};
      if (wait <= 0 || ::poll(&p, 1, wait) <= 0) return false;
      char buf[4096];
      const ssize_t got = ::recv(fd_, buf, std::min(sizeof buf, n - out->size()), 0);
      if (got <= 0) return false;
      out->append(buf, static_cast<size_t>(got));
    }
    return true;
  }
  // One frame of the server, parsed; false when none arrived whole.
  bool ReadPacket(protocol::Packet* p, std::chrono::milliseconds limit = 5s) {
    std::string header, body;
    if (!Read(4, &header, limit)) return false;
    const uint32_t len = (uint32_t{static_cast<uint8_t>(header[0])} << 24) |
                         (uint32_t{static_cast<uint8_t>(header[1])} << 16) |
                         (uint32_t{static_cast<uint8_t>(header[2])} << 8) | static_cast<uint8_t>(header[3]);
    if (len > (16u << 20) || !Read(len, &body, limit)) return false;
    return p->ParseFromString(body);
  }
  // True when the server closes (end of stream or reset) within `limit`;
  // *extra counts the bytes it sent first.
  bool WaitClosed(std::chrono::milliseconds limit = 5s, size_t* extra = nullptr) {
    const auto deadline = Clock::now() + limit;
    size_t bytes = 0;
    for (;;) {
      const int wait = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
      pollfd p{fd_, POLLIN, 0};
      if (wait <= 0 || ::poll(&p, 1, wait) <= 0) return false;
      char buf[4096];
      const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
      if (got <= 0) break;
      bytes += static_cast<size_t>(got);
    }
    if (extra != nullptr) *extra = bytes;
    return true;
  }
  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }
  // Closes with a reset instead of a FIN.
  void Reset() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    Close();
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

std::string Frame(const std::string& body) {
  const uint32_t n = static_cast<uint32_t>(body.size());
  std::string out{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                  static_cast<char>(n)};
  return out + body;
}

// A CLIENTAUTHENTICATION packet (serialised, unframed) with a password that
// is 40 hex digits but not the right scramble.
std::string WrongAuthPacket() {
  protocol::ClientAuth auth;
  auth.set_username("canal");
  auth.set_password(std::string(40, '0'));
  protocol::Packet p;
  p.set_version(1);
  p.set_type(protocol::CLIENTAUTHENTICATION);
  auth.SerializeToString(p.mutable_body());
  return p.SerializeAsString();
}

// The error Ack of a server packet: its code, and its text in *message; -1
// when the packet is not an ACK.
int AckError(const protocol::Packet& p, std::string* message) {
  protocol::Ack ack;
  if (p.type() != protocol::ACK || !ack.ParseFromString(p.body())) return -1;
  *message = ack.error_message();
  return ack.error_code();
}

// ---- The suite ------------------------------------------------------------

class ServerE2e : public InstalledServerSuite<kSandboxPort> {
 protected:
  ServerE2e() : InstalledServerSuite("server-e2e") {}

  // bin/startup.sh, with its output and the server log on failure.

  static ConnectorOptions ClientOptions(uint16_t port, const std::string& destination) {
    ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(port);
    o.destination = destination;
    o.connect_timeout = 2s;
    o.read_timeout = 20s;
    return o;
  }
  // Connects and subscribes, retrying while the server or the destination is
  // not there yet, or the server has not yet noticed our previous connection end.
  static Status Open(Connector& c, std::chrono::milliseconds limit = 20s, const std::string& filter = "") {
    const auto deadline = Clock::now() + limit;
    for (;;) {
      Status s = c.Connect();
      if (s.ok()) s = c.Subscribe(filter);
      if (s.ok() || Clock::now() > deadline) return s;
      c.Disconnect();
      std::this_thread::sleep_for(50ms);
    }
  }

};

// 1. Every value of the all-types workload reaches a client through
// canal-server and the SDK as the file decoder renders it from the binlogs.
TEST_F(ServerE2e, AllTypesWorkloadReachesTheClientEqualToTheFileDecoder) {
  std::string file;
  uint64_t pos = 0;
  ASSERT_TRUE(PrimaryEnd(*sandbox_, &file, &pos)) << "SHOW MASTER STATUS: " << sandbox_->error();
  install_->WriteServerProperties(CanalInstall::ServerProperties(kAllTypesPort));
  install_->WriteInstance("example", StartPositionProperties(file, pos));
  ASSERT_TRUE(Startup());
  Connector c(ClientOptions(kAllTypesPort, "example"));
  Status s = Open(c);
  ASSERT_TRUE(s.ok()) << s.ToString();

  std::vector<std::string> workloads = {std::string(CANAL_SOURCE_DIR) + "/tests/integration/sql/workload.sql"};
  const std::string shared_sql = SharedDir().empty() ? "" : SharedDir() + "/fixtures/sql/all_types.sql";
  if (!shared_sql.empty() && std::ifstream(shared_sql).good()) {
    workloads.push_back(shared_sql);
  } else {
    std::printf("[ note ] ../shared/fixtures/sql/all_types.sql not found: our own workload only\n");
  }
  for (const auto& w : workloads) {
    std::string out;
    ASSERT_TRUE(sandbox_->SqlFile(w, &out)) << w << ": " << sandbox_->error();
  }
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS marker; CREATE TABLE IF NOT EXISTS marker.done (id INT PRIMARY KEY, "
                  "n INT); INSERT INTO marker.done VALUES (1, -7)"));

  std::vector<std::string> received;
  uint64_t batches = 0;
  const auto deadline = Clock::now() + 90s;
  while (received.empty() || received.back().rfind("marker.done INSERT", 0) != 0) {
    ASSERT_LT(Clock::now(), deadline) << "no marker row after " << received.size() << " rows";
    Message m;
    s = c.GetWithoutAck(1000, 200, TimeUnit::kMilliseconds, &m);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (m.batch_id() == -1) continue;
    ++batches;
    s = ForEachRow(m, [&](const entry::Header& h, entry::EventType type, const entry::RowData& row) {
      received.push_back(RenderRow(h, type, row));
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(c.Ack(m.batch_id()).ok());
  }

  const std::vector<std::string> from_files = DecodeFiles(sandbox_->binlog_dir(), file, pos);
  for (size_t i = 0; i < std::min(received.size(), from_files.size()); ++i) {
    ASSERT_EQ(received[i], from_files[i]) << "row change " << i;
  }
  ASSERT_EQ(received.size(), from_files.size());
  uint64_t values = 0;
  for (const auto& r : received) values += std::count(r.begin(), r.end(), '=');
  std::printf("[ e2e ] all types: %zu row changes, %llu values in %llu batches through canal-server and the SDK "
              "equal the file decoder's\n",
              received.size(), static_cast<unsigned long long>(values), static_cast<unsigned long long>(batches));
  EXPECT_GT(received.size(), 400u);
}

// 2. SIGKILL of the server twice while 2,000 transactions stream, each time
// restarted with startup.sh: an acking client that reconnects receives every
// row in order, once — only the batch it acked just before a kill, without an
// answer since, may come once more (its ack may not have reached meta.dat).
TEST_F(ServerE2e, TwoSigkillsLoseNothingAndRepeatAtMostTheUnansweredAckedBatch) {
  constexpr int kTxns = 2000, kRowsPerTxn = 100, kChunks = 10;
  const std::string table = "kill_db.t";
  ASSERT_TRUE(CreateLoadTable(table));
  install_->WriteServerProperties(CanalInstall::ServerProperties(kKillPort));
  install_->WriteInstance("example", StartHere());
  const std::vector<std::string> chunks =
      WriteLoadChunks(sandbox_->dir() + "/e2e-kill-", table, kTxns, kRowsPerTxn, kChunks);
  ASSERT_TRUE(Startup());
  const auto start = Clock::now();

  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  uint64_t batches = 0, sessions = 0, lost_connections = 0;
  SharedText last_error;
  // jthreads: a failed ASSERT below still stops and joins them.
  std::jthread client([&](std::stop_token stop) {
    Connector c(ClientOptions(kKillPort, "example"));
    while (!stop.stop_requested()) {
      if (!c.connected()) {
        Status s = c.Connect();
        if (s.ok()) s = c.Subscribe();
        if (!s.ok()) {
          c.Disconnect();
          std::this_thread::sleep_for(50ms);
          continue;
        }
        ++sessions;
      }
      Message m;
      Status s = c.GetWithoutAck(64, 100, TimeUnit::kMilliseconds, &m);
      if (!s.ok()) {
        last_error.Set(s.ToString());
        ++lost_connections;
        ledger.Reconnected();
        c.Disconnect();
        continue;
      }
      ledger.Answered();  // the server wrote our acks to meta.dat before this reply
      if (m.batch_id() == -1) continue;
      ++batches;
      std::vector<int64_t> rows;
      s = AppendLoadRows(m, ledger, &rows);
      ledger.Received(rows);
      if (!s.ok()) {
        last_error.Set(s.ToString());
        break;
      }
      ledger.Acked();
      (void)c.Ack(m.batch_id());  // a failure shows in the next call
    }
  });
  std::jthread writer([&] {
    for (const auto& f : chunks) {
      if (!sandbox_->SqlFile(f)) {
        ADD_FAILURE() << sandbox_->error();
        return;
      }
    }
  });

  int kills = 0;
  std::string killed_at;
  for (int at : {500, 1200}) {
    EXPECT_TRUE(WaitFor([&] { return ledger.transactions_complete() >= at; }, 60s))
        << ledger.transactions_complete() << " transactions; " << last_error.Get();
    if (install_->Kill9()) ++kills;
    killed_at += (killed_at.empty() ? "" : " and ") + std::to_string(ledger.transactions_complete());
    EXPECT_TRUE(Startup());
  }
  writer.join();
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 90s))
      << ledger.distinct() << " rows; " << last_error.Get();
  std::this_thread::sleep_for(1500ms);  // room for a late duplicate
  client.request_stop();
  client.join();

  std::printf("[ e2e ] SIGKILLs at %s transactions received: %lld of %d rows (%d transactions) in %.1f s, "
              "%llu batches, %llu sessions, "
              "%llu lost connections; %s\n",
              killed_at.c_str(), static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn, kTxns, SecondsSince(start),
              static_cast<unsigned long long>(batches), static_cast<unsigned long long>(sessions),
              static_cast<unsigned long long>(lost_connections), ledger.Tally().c_str());
  EXPECT_EQ(kills, 2);
  EXPECT_GE(sessions, 3u);
  EXPECT_EQ(ledger.Faults(), "");
}

// 3. A rolled-back batch comes again whole under a new id; an ack that skips
// the oldest outstanding batch is refused with Canal's words, as the answer to
// the next request.
TEST_F(ServerE2e, RollbackRedeliversTheBatchAndAnOutOfOrderAckIsRefused) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS rb_db; DROP TABLE IF EXISTS rb_db.t;"
                  "CREATE TABLE rb_db.t (id INT PRIMARY KEY, v VARCHAR(10))"));
  install_->WriteServerProperties(CanalInstall::ServerProperties(kRollbackPort));
  install_->WriteInstance("example", StartHere() + "canal.instance.memory.batch.mode = ITEMSIZE\n");
  ASSERT_TRUE(Startup());
  ASSERT_TRUE(Sql("INSERT INTO rb_db.t VALUES (1, 'a'); INSERT INTO rb_db.t VALUES (2, 'b');"
                  "INSERT INTO rb_db.t VALUES (3, 'c')"));  // 9 entries: BEGIN, row, END each
  Connector c(ClientOptions(kRollbackPort, "example"));
  Status s = Open(c);
  ASSERT_TRUE(s.ok()) << s.ToString();

  Message first, again, next;
  ASSERT_TRUE((s = c.GetWithoutAck(2, 10, TimeUnit::kSeconds, &first)).ok()) << s.ToString();
  ASSERT_EQ(first.raw_entry_count(), 2u);
  ASSERT_TRUE(c.Rollback(first.batch_id()).ok());
  ASSERT_TRUE((s = c.GetWithoutAck(2, 10, TimeUnit::kSeconds, &again)).ok()) << s.ToString();
  EXPECT_EQ(again.raw_entries(), first.raw_entries()) << "the rolled-back batch did not come again as it was";
  EXPECT_NE(again.batch_id(), first.batch_id());

  // Two outstanding batches; acking the second first is refused.
  ASSERT_TRUE((s = c.GetWithoutAck(2, 10, TimeUnit::kSeconds, &next)).ok()) << s.ToString();
  ASSERT_EQ(next.raw_entry_count(), 2u);
  EXPECT_NE(next.raw_entries(), again.raw_entries());
  ASSERT_TRUE(c.Ack(next.batch_id()).ok());  // not answered: the error comes with the next call
  Message after;
  s = c.GetWithoutAck(2, 1, TimeUnit::kSeconds, &after);
  ASSERT_FALSE(s.ok());
  const std::string expected =
      "batchId:" + std::to_string(next.batch_id()) + " is not the firstly:" + std::to_string(again.batch_id());
  EXPECT_NE(s.ToString().find(expected), std::string::npos) << s.ToString();
  EXPECT_EQ(client::ServerErrorCode(s), 400) << s.ToString();
  // An error ends the session on our server. The client learns it with this
  // error when the error came in place of the get's reply, or on its next call
  // when the error was already waiting (it then keeps the connection, as a
  // Canal server that keeps the session needs): either way it is over.
  if (c.connected()) {
    Message none;
    EXPECT_FALSE(c.GetWithoutAck(2, 1, TimeUnit::kSeconds, &none).ok()) << "the session outlived an error";
    c.Disconnect();
  }
  const std::string refusal = s.ToString();

  // Nothing was acked: a new session starts again at the first entries.
  Message redo;
  ASSERT_TRUE((s = Open(c)).ok()) << s.ToString();
  ASSERT_TRUE((s = c.GetWithoutAck(2, 10, TimeUnit::kSeconds, &redo)).ok()) << s.ToString();
  EXPECT_EQ(redo.raw_entries(), first.raw_entries());
  std::printf("[ e2e ] rollback: batch %lld (%zu entries) came again as batch %lld; ack of %lld before %lld: \"%s\"\n",
              static_cast<long long>(first.batch_id()), first.raw_entry_count(),
              static_cast<long long>(again.batch_id()), static_cast<long long>(next.batch_id()),
              static_cast<long long>(again.batch_id()), refusal.c_str());
}

// 4. Two destinations of one server, each with its own table filter and
// client, deliver exactly their own rows; a destination folder added while
// the server runs serves clients within the scan interval (1 s).
TEST_F(ServerE2e, TwoDestinationsDoNotInterfereAndAnAddedOneServesWithinTheScanInterval) {
  constexpr int kRows = 200;
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS dest_a; CREATE DATABASE IF NOT EXISTS dest_b;"
                  "CREATE DATABASE IF NOT EXISTS dest_c; DROP TABLE IF EXISTS dest_a.t; DROP TABLE IF EXISTS dest_b.t;"
                  "DROP TABLE IF EXISTS dest_c.t; CREATE TABLE dest_a.t (id INT PRIMARY KEY, v INT);"
                  "CREATE TABLE dest_b.t (id INT PRIMARY KEY, v INT); CREATE TABLE dest_c.t (id INT PRIMARY KEY, v INT)"));
  install_->WriteServerProperties(CanalInstall::ServerProperties(kDestinationsPort, "canal.destinations = a,b\n"));
  const std::string start = StartHere();
  // A regex's backslash is written twice in a .properties file.
  install_->WriteInstance("a", start + "canal.instance.filter.regex = dest_a\\\\..*\n");
  install_->WriteInstance("b", start + "canal.instance.filter.regex = dest_b\\\\..*\n");
  ASSERT_TRUE(Startup());

  // Receives until `want` rows arrived and a second more; "schema.table id" per row.
  auto receive = [](Connector& c, size_t want, std::vector<std::string>* rows, std::string* error) {
    const auto deadline = Clock::now() + 30s;
    auto quiet_until = Clock::time_point::max();
    while (Clock::now() < std::min(deadline, quiet_until)) {
      Message m;
      Status s = c.GetWithoutAck(1000, 100, TimeUnit::kMilliseconds, &m);
      if (s.ok() && m.batch_id() != -1) {
        s = ForEachRow(m, [&](const entry::Header& h, entry::EventType, const entry::RowData& row) {
          rows->push_back(h.schemaname() + "." + h.tablename() + " " + ColumnText(row, "id"));
        });
        if (s.ok()) s = c.Ack(m.batch_id());
      }
      if (!s.ok()) {
        *error = s.ToString();
        return;
      }
      if (rows->size() >= want && quiet_until == Clock::time_point::max()) quiet_until = Clock::now() + 1s;
    }
  };
  auto expected = [](const std::string& table, int first, int last) {
    std::vector<std::string> out;
    for (int i = first; i <= last; ++i) out.push_back(table + " " + std::to_string(i));
    return out;
  };

  Connector ca(ClientOptions(kDestinationsPort, "a")), cb(ClientOptions(kDestinationsPort, "b"));
  Status s = Open(ca);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE((s = Open(cb)).ok()) << s.ToString();
  std::string sql;
  for (int i = 1; i <= kRows; ++i) {
    for (const char* db : {"dest_a", "dest_b", "dest_c"}) {
      sql += "INSERT INTO " + std::string(db) + ".t VALUES (" + std::to_string(i) + ", " + std::to_string(i) + ");";
    }
  }
  ASSERT_TRUE(Sql(sql));
  std::vector<std::string> rows_a, rows_b;
  std::string error_a, error_b;
  std::jthread ta([&] { receive(ca, kRows, &rows_a, &error_a); });
  receive(cb, kRows, &rows_b, &error_b);
  ta.join();
  EXPECT_EQ(error_a, "");
  EXPECT_EQ(error_b, "");
  EXPECT_EQ(rows_a, expected("dest_a.t", 1, kRows));
  EXPECT_EQ(rows_b, expected("dest_b.t", 1, kRows));

  // A third destination appears while the server runs.
  const std::string here = StartHere();
  const auto added = Clock::now();
  install_->WriteInstance("c", here + "canal.instance.filter.regex = dest_c\\\\..*\n");
  Connector cc(ClientOptions(kDestinationsPort, "c"));
  ASSERT_TRUE((s = Open(cc, 10s)).ok()) << s.ToString();
  const double serving_after = SecondsSince(added);
  ASSERT_TRUE(Sql("INSERT INTO dest_c.t VALUES (1001, 1); INSERT INTO dest_a.t VALUES (1001, 1);"
                  "INSERT INTO dest_c.t VALUES (1002, 2)"));
  std::vector<std::string> rows_c;
  std::string error_c;
  receive(cc, 2, &rows_c, &error_c);
  const double first_rows_after = SecondsSince(added);
  EXPECT_EQ(error_c, "");
  EXPECT_EQ(rows_c, expected("dest_c.t", 1001, 1002));
  std::printf("[ e2e ] destinations: a got %zu rows, b got %zu, each only its own; c added while running served "
              "a client after %.2f s (its rows after %.2f s, scan interval 1 s)\n",
              rows_a.size(), rows_b.size(), serving_after, first_rows_after);
  EXPECT_LT(serving_after, 3.0) << "the new destination was not served within the scan interval (+2 s to start)";
}

// 5. Bad clients against the real server each get their error or a closed
// socket, while a well-behaved client streams 20,000 rows, every one once.
TEST_F(ServerE2e, MisbehavingClientsGetErrorsWhileAGoodClientReceivesEveryRowOnce) {
  constexpr int kTxns = 200, kRowsPerTxn = 100, kRandomClients = 200, kRandomThreads = 4;
  const std::string table = "mis_db.t";
  ASSERT_TRUE(CreateLoadTable(table));
  install_->WriteServerProperties(CanalInstall::ServerProperties(
      kMisbehavePort, "canal.user = canal\ncanal.passwd = " + std::string(kCanalPasswd) + "\n"));
  install_->WriteInstance("example", StartHere());
  const std::string load_sql = sandbox_->dir() + "/e2e-misbehave.sql";
  WriteLoadSql(load_sql, table, 1, kTxns, kRowsPerTxn);
  ASSERT_TRUE(Startup());

  auto options = [](const std::string& destination, const std::string& password) {
    ConnectorOptions o = ClientOptions(kMisbehavePort, destination);
    o.username = "canal";
    o.password = password;
    return o;
  };
  // The well-behaved client.
  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  std::atomic<bool> subscribed{false};
  SharedText good_error;
  uint64_t good_batches = 0;
  // jthreads: a failed ASSERT below still stops and joins them.
  std::jthread good([&](std::stop_token stop) {
    Connector c(options("example", "canal"));
    Status s = Open(c);
    subscribed = s.ok();
    while (s.ok() && !stop.stop_requested()) {
      Message m;
      s = c.GetWithoutAck(64, 100, TimeUnit::kMilliseconds, &m);
      if (!s.ok() || m.batch_id() == -1) continue;
      ++good_batches;
      std::vector<int64_t> rows;
      s = AppendLoadRows(m, ledger, &rows);
      ledger.Received(rows);
      if (s.ok()) s = c.Ack(m.batch_id());
    }
    if (!s.ok()) good_error.Set(s.ToString());
  });
  ASSERT_TRUE(WaitFor([&] { return subscribed.load(); }, 20s)) << good_error.Get();
  std::jthread writer([&] { EXPECT_TRUE(sandbox_->SqlFile(load_sql)) << sandbox_->error(); });

  // 200 clients that connect and vanish at random points, some half-way
  // through their authentication packet, some with a reset.
  std::atomic<int> random_unanswered{0}, random_auth_errors{0}, random_closed{0};
  std::vector<std::jthread> randoms;
  for (int t = 0; t < kRandomThreads; ++t) {
    randoms.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      const std::string auth = WrongAuthPacket();
      for (int i = 0; i < kRandomClients / kRandomThreads; ++i) {
        RawSocket sock;
        if (!sock.Connect(kMisbehavePort)) {
          ++random_unanswered;
          continue;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
        const int kind = static_cast<int>(rng() % 6);
        if (kind == 0) continue;  // gone before reading anything
        protocol::Packet hello;
        if (!sock.ReadPacket(&hello) || hello.type() != protocol::HANDSHAKE) {
          ++random_unanswered;
          continue;
        }
        const std::string frame = Frame(auth);
        switch (kind) {
          case 1:  // gone after the handshake
            break;
          case 2:  // half a length prefix
            sock.Send(frame.substr(0, 2));
            break;
          case 3:  // a partial authentication packet, then gone
            sock.Send(frame.substr(0, 4 + auth.size() / 2));
            break;
          case 4:  // a partial authentication packet, then a reset
            sock.Send(frame.substr(0, 4 + auth.size() / 2));
            sock.Reset();
            break;
          case 5: {  // a whole one with the wrong password: the error, then a close
            protocol::Packet reply;
            std::string message;
            if (sock.Send(frame) && sock.ReadPacket(&reply) && AckError(reply, &message) == 403 &&
                message.find("auth failed for user:canal") != std::string::npos && sock.WaitClosed()) {
              ++random_auth_errors;
            } else {
              ++random_unanswered;
            }
            break;
          }
        }
        if (kind == 2 || kind == 3) {
          // Half-closed: the server sees the stream end inside a frame and closes.
          sock.ShutdownWrite();
          if (sock.WaitClosed()) {
            ++random_closed;
          } else {
            ++random_unanswered;
          }
        }
      }
    });
  }

  // The SDK's refusals, with the server's text.
  Connector wrong(options("example", "not-canal"));
  Status s = wrong.Connect();
  EXPECT_EQ(client::ServerErrorCode(s), 403) << s.ToString();
  EXPECT_NE(s.ToString().find("auth failed for user:canal"), std::string::npos) << s.ToString();
  const std::string wrong_password = s.ToString();

  Connector unknown(options("nosuch", "canal"));
  s = unknown.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = unknown.Subscribe();
  EXPECT_EQ(client::ServerErrorCode(s), 404) << s.ToString();
  EXPECT_NE(s.ToString().find("destination nosuch does not exist"), std::string::npos) << s.ToString();
  const std::string unknown_destination = s.ToString();

  Connector second(options("example", "canal"));
  s = second.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = second.Subscribe();
  EXPECT_EQ(client::ServerErrorCode(s), 423) << s.ToString();
  EXPECT_NE(s.ToString().find("destination example is already subscribed by client 1001 from 127.0.0.1:"),
            std::string::npos)
      << s.ToString();
  const std::string held = s.ToString();

  // Raw bytes that are not the protocol.
  int raw_ok = 0;
  {  // a frame whose body is not a Packet: error 400, then a close
    RawSocket sock;
    protocol::Packet hello, reply;
    std::string message;
    ASSERT_TRUE(sock.Connect(kMisbehavePort) && sock.ReadPacket(&hello));
    ASSERT_TRUE(sock.Send(Frame(std::string(16, '\xff'))));
    EXPECT_TRUE(sock.ReadPacket(&reply));
    EXPECT_EQ(AckError(reply, &message), 400) << reply.DebugString();
    EXPECT_NE(message.find("unparsable"), std::string::npos) << message;
    EXPECT_TRUE(sock.WaitClosed());
    raw_ok += message.find("unparsable") != std::string::npos;
  }
  // Text where a length belongs ("GET " announces 1.2 GB), a 2 GiB length,
  // and a frame that ends early: closed at once, nothing sent back.
  const std::vector<std::pair<std::string, std::string>> closers = {
      {"garbage", "GET / HTTP/1.1\r\nHost: canal\r\n\r\n"},
      {"2 GiB length", std::string("\x80\x00\x00\x00", 4) + "tiny"},
      {"truncated frame", std::string("\x00\x00\x00\x64", 4) + "0123456789"},
  };
  for (const auto& [what, bytes] : closers) {
    RawSocket sock;
    protocol::Packet hello;
    ASSERT_TRUE(sock.Connect(kMisbehavePort) && sock.ReadPacket(&hello)) << what;
    ASSERT_TRUE(sock.Send(bytes)) << what;
    if (what == "truncated frame") sock.ShutdownWrite();
    size_t answered = 0;
    const bool closed = sock.WaitClosed(5s, &answered);
    EXPECT_TRUE(closed) << what << ": the server kept the connection open";
    EXPECT_EQ(answered, 0u) << what;
    raw_ok += closed && answered == 0;
  }

  // The server says why it closed: the length, not a parse of the body.
  EXPECT_TRUE(WaitForText(install_->server_log(), "frame length 2147483648 exceeds the limit", 5s));

  for (auto& t : randoms) t.join();
  writer.join();
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 60s))
      << ledger.distinct() << " rows; " << good_error.Get();
  std::this_thread::sleep_for(1s);  // room for a late duplicate
  good.request_stop();
  good.join();
  EXPECT_TRUE(install_->Running()) << ReadAll(install_->server_log());

  std::printf("[ e2e ] misbehaving clients: wrong password, unknown destination, second subscriber refused; "
              "%d of 4 raw protocol violations answered; %d random clients: %d auth errors, %d closed after a "
              "partial frame, %d unanswered; good client: %lld of %d rows in %llu batches, %lld duplicates, "
              "%lld gaps\n",
              raw_ok, kRandomClients, random_auth_errors.load(), random_closed.load(), random_unanswered.load(),
              static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn,
              static_cast<unsigned long long>(good_batches), static_cast<long long>(ledger.duplicates()),
              static_cast<long long>(ledger.gaps()));
  std::printf("[ e2e ]   wrong password: %s\n[ e2e ]   unknown destination: %s\n[ e2e ]   second subscriber: %s\n",
              wrong_password.c_str(), unknown_destination.c_str(), held.c_str());
  EXPECT_EQ(random_unanswered.load(), 0);
  EXPECT_GT(random_auth_errors.load(), 0);
  EXPECT_EQ(good_error.Get(), "");
  EXPECT_EQ(ledger.Faults(), "");
}

// 6. A client acks about half of the transactions; the server is stopped with
// stop.sh and started again; the client receives exactly the rest.
TEST_F(ServerE2e, ACleanRestartResumesExactlyAfterTheAckedCursor) {
  constexpr int kTxns = 1000, kRowsPerTxn = 10;
  const std::string table = "restart_db.t";
  ASSERT_TRUE(CreateLoadTable(table));
  install_->WriteServerProperties(CanalInstall::ServerProperties(kRestartPort));
  install_->WriteInstance("example", StartHere());
  const std::string load_sql = sandbox_->dir() + "/e2e-restart.sql";
  WriteLoadSql(load_sql, table, 1, kTxns, kRowsPerTxn);
  ASSERT_TRUE(sandbox_->SqlFile(load_sql)) << sandbox_->error();
  ASSERT_TRUE(Startup());

  DeliveryLedger before(kTxns, kRowsPerTxn), after(kTxns, kRowsPerTxn);
  auto consume = [](Connector& c, DeliveryLedger* ledger, const std::function<bool()>& done, bool ack) {
    const auto deadline = Clock::now() + 60s;
    while (!done() && Clock::now() < deadline) {
      Message m;
      Status s = c.GetWithoutAck(16, 100, TimeUnit::kMilliseconds, &m);
      if (!s.ok()) return s;
      if (m.batch_id() == -1) continue;
      std::vector<int64_t> rows;
      const Status parsed = AppendLoadRows(m, *ledger, &rows);
      ledger->Received(rows);
      CANAL_RETURN_IF_ERROR(parsed);
      if (ack) CANAL_RETURN_IF_ERROR(c.Ack(m.batch_id()));
    }
    return Status::OK();
  };
  {
    Connector c(ClientOptions(kRestartPort, "example"));
    Status s = Open(c);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = consume(c, &before, [&] { return before.transactions_complete() >= kTxns / 2; }, true);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // A reply after the last ack: the server wrote the cursor before sending it.
    Message unacked;
    ASSERT_TRUE((s = c.GetWithoutAck(16, 100, TimeUnit::kMilliseconds, &unacked)).ok()) << s.ToString();
  }
  std::string out;
  ASSERT_EQ(install_->Stop(&out), 0) << out;
  const std::string meta = ReadAll(install_->meta_file("example"));
  EXPECT_NE(meta.find("\"clientId\":1001"), std::string::npos) << meta;
  ASSERT_TRUE(Startup());
  EXPECT_TRUE(WaitForText(install_->instance_log("example"), "(stored cursor)", 15s))
      << ReadAll(install_->instance_log("example"));

  Connector c(ClientOptions(kRestartPort, "example"));
  Status s = Open(c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const int64_t rest = int64_t{kTxns} * kRowsPerTxn - before.distinct();
  s = consume(c, &after, [&] { return after.distinct() >= rest; }, true);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Anything more would be a repeat: give it a moment to show.
  s = consume(c, &after, [deadline = Clock::now() + 1s] { return Clock::now() > deadline; }, true);
  ASSERT_TRUE(s.ok()) << s.ToString();

  int64_t both = 0, neither = 0;
  for (int64_t n = 0; n < int64_t{kTxns} * kRowsPerTxn; ++n) {
    both += before.seen(n) && after.seen(n);
    neither += !before.seen(n) && !after.seen(n);
  }
  std::printf("[ e2e ] clean restart: %lld rows (%lld whole transactions) acked before stop.sh, %lld received after "
              "startup.sh; %lld in both, %lld in neither, %lld duplicates, %lld out of order\n",
              static_cast<long long>(before.distinct()), static_cast<long long>(before.transactions_complete()),
              static_cast<long long>(after.distinct()), static_cast<long long>(both), static_cast<long long>(neither),
              static_cast<long long>(before.duplicates() + after.duplicates()),
              static_cast<long long>(before.out_of_order() + after.out_of_order()));
  EXPECT_GE(before.transactions_complete(), kTxns / 2);
  EXPECT_LT(before.distinct(), int64_t{kTxns} * kRowsPerTxn);
  EXPECT_EQ(both, 0);
  EXPECT_EQ(neither, 0);
  EXPECT_EQ(after.duplicates(), 0);
  EXPECT_EQ(after.out_of_order(), 0);
  EXPECT_EQ(before.foreign() + after.foreign(), 0);
}

}  // namespace
}  // namespace canal::testing
