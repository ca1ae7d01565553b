// The replay primary against a client that sends nonsense: a short login, a
// malformed dump request, an unknown command, an oversized packet. Each gets
// an ERR packet or a closed connection, within a bounded wait, and the primary
// keeps serving the next client.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "canal/parser/mysql/dump_connection.h"
#include "replay_test_util.h"
#include "support/fixtures.h"

namespace canal::testing {
namespace {

// A bare socket speaking just enough of the protocol to misbehave.
class RawClient : public RawMysqlClient {
 public:
  using RawMysqlClient::RawMysqlClient;
  void Send(uint8_t seq, std::string_view payload) { ASSERT_TRUE(TrySend(seq, payload)); }
  void LogIn() {
    std::string why;
    ASSERT_TRUE(RawMysqlClient::LogIn(&why)) << why;
  }
};

class ReplayBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    CANAL_REQUIRE_FIXTURES();
    o_.binlog_files = {FixturePath("rust_mysql_common/mysql_type_bit.000001")};
    o_.account_plugin = "mysql_native_password";
    o_.password = "";
    primary_ = StartPrimary(o_);
    ASSERT_TRUE(primary_);
  }
  // The primary still serves a well-behaved client.
  void ExpectStillServing() {
    mysql::DumpConnection c(ReplicaOptions(*primary_, o_));
    Status s = c.Connect();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  ReplayPrimaryOptions o_;
  std::unique_ptr<ReplayPrimary> primary_;
};

TEST_F(ReplayBadInput, ShortLoginIsRefused) {
  RawClient c(primary_->port());
  ASSERT_TRUE(c.connected());
  std::string greeting;
  ASSERT_TRUE(c.Read(&greeting));
  c.Send(1, "garbage");
  EXPECT_EQ(c.ReadError(), 1043);  // Bad handshake
  ExpectStillServing();
}

TEST_F(ReplayBadInput, LoginWithAnOverlongScrambleLengthIsRefused) {
  RawClient c(primary_->port());
  std::string greeting;
  ASSERT_TRUE(c.Read(&greeting));
  std::string login("\x00\x82\x28\x00", 4);  // protocol 41 | secure | plugin auth | lenenc auth data
  login.append(4, '\0');
  login.push_back(45);
  login.append(23, '\0');
  login.append("repl");
  login.push_back('\0');
  login.push_back('\xfc');  // a 2-byte length no scramble has
  login.append("\xff\xff", 2);
  c.Send(1, login);
  EXPECT_EQ(c.ReadError(), 1043);
  ExpectStillServing();
}

TEST_F(ReplayBadInput, MalformedCommandsAreRefused) {
  RawClient c(primary_->port());
  c.LogIn();
  if (HasFatalFailure()) return;
  c.Send(0, std::string("\x15\x01", 2));  // COM_REGISTER_SLAVE without its server id
  EXPECT_EQ(c.ReadError(), 1835);
  RawClient d(primary_->port());
  d.LogIn();
  if (HasFatalFailure()) return;
  d.Send(0, std::string("\x63", 1));  // no such command
  EXPECT_EQ(d.ReadError(), 1047);
  d.Send(0, std::string("\x0e", 1));  // the session goes on: COM_PING
  std::string ok;
  ASSERT_TRUE(d.Read(&ok));
  EXPECT_EQ(static_cast<uint8_t>(ok[0]), 0x00);
  ExpectStillServing();
}

TEST_F(ReplayBadInput, MalformedGtidDumpIsRefused) {
  // flags THROUGH_GTID, server id, a file name longer than the packet.
  std::string cmd("\x1e\x04\x00\x01\x00\x00\x00\xff\xff\x00\x00", 11);
  RawClient c(primary_->port());
  c.LogIn();
  if (HasFatalFailure()) return;
  c.Send(0, cmd);
  EXPECT_EQ(c.ReadError(), 1835);
  // A GTID set claiming more SIDs than it holds.
  std::string set("\x1e\x04\x00\x01\x00\x00\x00\x00\x00\x00\x00", 11);
  set.append(8, '\0');                            // position
  set.append(std::string("\x08\x00\x00\x00", 4));  // data size 8
  set.append(std::string("\x09\x00\x00\x00\x00\x00\x00\x00", 8));  // 9 SIDs, none there
  RawClient d(primary_->port());
  d.LogIn();
  if (HasFatalFailure()) return;
  d.Send(0, set);
  EXPECT_EQ(d.ReadError(), 1835);
  ExpectStillServing();
}

TEST_F(ReplayBadInput, OversizedCommandClosesTheConnection) {
  RawClient c(primary_->port());
  c.LogIn();
  if (HasFatalFailure()) return;
  c.TrySend(0, "\x03" + std::string((2u << 20), 'x'));  // a 2 MiB statement: over the primary's bound
  std::string p;
  EXPECT_FALSE(c.Read(&p));
  ExpectStillServing();
}

}  // namespace
}  // namespace canal::testing
