// Client users in the session (canal.users.file, users_file.h) over real
// sockets against in-memory destinations: who logs in, what each may read
// (destinations and client ids), and a users-file change reaching sessions
// that are logged in already. Port 0 only.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "canal/proto/password_scramble.h"
#include "canal/server/users_file.h"
#include "session_fixture.h"

namespace canal::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::MemoryDestination;
using testing::TestClient;

constexpr int32_t kAuthFailed = 403;

class SessionUsersTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    for (const char* name : {"orders", "users", "payments"}) {
      auto d = std::make_shared<MemoryDestination>(name);
      ASSERT_TRUE(d->PutRange(4, 3).ok());
      registry_.Add(d);
    }
    dir_ = fs::path(::testing::TempDir()) / ("session_users_test_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    file_ = (dir_ / "users.txt").string();
  }
  void TearDown() override {
    SessionFixture::TearDown();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void WriteUsers(const std::string& text) {
    const std::string tmp = file_ + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
    }
    fs::rename(tmp, file_);
  }
  static std::string User(const std::string& name, const std::string& destinations, const std::string& extra = "") {
    return name + " password=" + proto::StoredPasswordForm(name + "-pw") + " destinations=" + destinations + extra +
           "\n";
  }
  // Starts the server with the users file as written (no watcher thread:
  // the test applies changes with Apply()), and canal.user `legacy` if set.
  void Start(const std::string& legacy = "") {
    ClientUsersOptions o;
    o.file = file_;
    o.settle = 0ms;
    o.legacy_user = legacy;
    if (!legacy.empty()) o.legacy_password_stored = proto::StoredPasswordForm(legacy + "-pw");
    Status s = ClientUsers::Create(o, logger_, &users_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    SessionServerOptions so = LoopbackOptions();
    so.users = users_;
    StartSessionServer(so);
  }
  void Apply() {
    std::string message;
    ASSERT_EQ(users_->CheckNow(&message), ClientUsers::Check::kApplied) << message;
  }
  std::unique_ptr<TestClient> LoggedIn(const std::string& user, const std::string& password) {
    auto c = std::make_unique<TestClient>(server_->port());
    EXPECT_TRUE(c->Login(user, password)) << user;
    return c;
  }
  // The error Ack of a login with these credentials (nullopt: accepted or no answer).
  std::optional<protocol::Ack> RefusedLogin(const std::string& user, const std::string& password) {
    TestClient c(server_->port());
    if (!c.ReadHandshake()) return std::nullopt;
    c.SendAuth(user, password);
    std::optional<protocol::Ack> ack = c.ReadAck();
    if (!ack || ack->error_code() == 0) return std::nullopt;
    EXPECT_TRUE(c.WaitClosed(5s));
    return ack;
  }

  fs::path dir_;
  std::string file_;
  std::shared_ptr<ClientUsers> users_;
};

TEST_F(SessionUsersTest, EachUserLogsInWithItsOwnPasswordOnly) {
  WriteUsers(User("alice", "orders") + User("bob", "*"));
  Start();
  LoggedIn("alice", "alice-pw");
  LoggedIn("bob", "bob-pw");
  for (auto [user, password] : {std::pair{"alice", "bob-pw"}, {"alice", ""}, {"carol", "carol-pw"}, {"", ""}}) {
    std::optional<protocol::Ack> ack = RefusedLogin(user, password);
    ASSERT_TRUE(ack) << user << "/" << password;
    EXPECT_EQ(ack->error_code(), kAuthFailed);
    EXPECT_EQ(ack->error_message(),
              "auth failed for user:" + std::string(user) + " (no such user, or a wrong password)");
  }
  // Logged at WARN, the client's text escaped.
  ASSERT_TRUE(RefusedLogin("mal\nlory", "x"));
  EXPECT_TRUE(WaitUntil([&] { return sink_->Contains(spdlog::level::warn, "auth failed for user:mal\\", "nlory"); }))
      << ::testing::PrintToString(sink_->Lines());
  for (const std::string& line : sink_->Lines()) EXPECT_EQ(line.find("mal\nlory"), std::string::npos) << line;
}

TEST_F(SessionUsersTest, AUserReadsItsDestinationsAndIsToldWhatElseItMayRead) {
  WriteUsers(User("alice", "orders,users"));
  Start();
  auto c = LoggedIn("alice", "alice-pw");
  std::optional<protocol::Ack> ack = c->Subscribe("orders", "1001");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0) << ack->error_message();
  TestClient::GetReply r = c->Get("orders", "1001", 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 3);

  auto d = LoggedIn("alice", "alice-pw");
  ack = d->Subscribe("payments", "1001");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), kAuthFailed);
  EXPECT_EQ(ack->error_message(), "user alice may not read destination payments; it may read: orders, users");
  EXPECT_TRUE(d->WaitClosed(5s));
  EXPECT_TRUE(WaitUntil([&] {
    return sink_->Contains(spdlog::level::warn, "user alice may not read destination payments");
  }));

  // A GET (or any request) naming it is refused the same way.
  auto e = LoggedIn("alice", "alice-pw");
  r = e->Get("payments", "1001", 10);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), kAuthFailed);
  EXPECT_NE(r.ack.error_message().find("may not read destination payments"), std::string::npos);

  // Subscribing at login too.
  TestClient f(server_->port());
  ASSERT_TRUE(f.ReadHandshake());
  f.SendAuth("alice", "alice-pw", "payments", "1001");
  ack = f.ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), kAuthFailed);
}

TEST_F(SessionUsersTest, ClientIdsAreLimitedWhenTheLineSaysSo) {
  WriteUsers(User("alice", "orders", " clients=1001,1002"));
  Start();
  auto c = LoggedIn("alice", "alice-pw");
  std::optional<protocol::Ack> ack = c->Subscribe("orders", "1002");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0) << ack->error_message();
  auto d = LoggedIn("alice", "alice-pw");
  ack = d->Subscribe("orders", "1003");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), kAuthFailed);
  EXPECT_EQ(ack->error_message(), "user alice may not use client id 1003 (destination orders); it may use: 1001, 1002");
}

TEST_F(SessionUsersTest, CanalUserBesideTheFileMayReadEverything) {
  WriteUsers(User("alice", "orders"));
  Start("canal");
  auto c = LoggedIn("canal", "canal-pw");
  std::optional<protocol::Ack> ack = c->Subscribe("payments", "7");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0) << ack->error_message();
  ASSERT_TRUE(RefusedLogin("canal", "alice-pw"));
}

TEST_F(SessionUsersTest, AChangeReachesSessionsAlreadyLoggedIn) {
  WriteUsers(User("alice", "orders") + User("bob", "orders,users") + User("carol", "*"));
  Start();
  auto alice = SubscribedClient("orders", "1001", "alice", "alice-pw");
  auto bob = SubscribedClient("users", "1001", "bob", "bob-pw");
  auto carol = SubscribedClient("payments", "1001", "carol", "carol-pw");
  // alice gains users; bob loses users; carol is removed.
  WriteUsers(User("alice", "orders,users") + User("bob", "orders"));
  Apply();

  TestClient::GetReply r = alice->Get("orders", "1001", 10);
  EXPECT_TRUE(r.is_messages);

  r = bob->Get("users", "1001", 10);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), kAuthFailed);
  EXPECT_EQ(r.ack.error_message(), "user bob may not read destination users; it may read: orders");
  EXPECT_TRUE(bob->WaitClosed(5s));

  r = carol->Get("payments", "1001", 10);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), kAuthFailed);
  EXPECT_NE(r.ack.error_message().find("user carol was removed from the users"), std::string::npos)
      << r.ack.error_message();
  EXPECT_TRUE(carol->WaitClosed(5s));
  ASSERT_TRUE(RefusedLogin("carol", "carol-pw"));

  // bob's destination is free again, for alice now.
  auto alice2 = SubscribedWhenReleased("users", "2", "alice", "alice-pw");
  ASSERT_NE(alice2, nullptr);
}

TEST_F(SessionUsersTest, APasswordChangeEndsTheSessionsOfTheOldOne) {
  WriteUsers(User("alice", "orders"));
  Start();
  auto alice = SubscribedClient("orders", "1001", "alice", "alice-pw");
  WriteUsers("alice password=" + proto::StoredPasswordForm("new-pw") + " destinations=orders\n");
  Apply();
  TestClient::GetReply r = alice->Get("orders", "1001", 10);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), kAuthFailed);
  EXPECT_NE(r.ack.error_message().find("the password of user alice changed"), std::string::npos)
      << r.ack.error_message();
  LoggedIn("alice", "new-pw");
}

TEST_F(SessionUsersTest, AWaitingGetEndsWithTheRefusalWhenItsAccessWasRevoked) {
  WriteUsers(User("alice", "users"));
  Start();
  auto alice = SubscribedClient("users", "1001", "alice", "alice-pw");
  TestClient::GetReply r = alice->Get("users", "1001", 10);  // the three entries there
  ASSERT_TRUE(r.is_messages);
  alice->SendGet("users", "1001", 10, 300, 2);  // waits 300 ms for more
  WriteUsers(User("alice", "orders"));
  Apply();
  r = alice->ReadGetReply();
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), kAuthFailed);
  EXPECT_EQ(r.ack.error_message(), "user alice may not read destination users; it may read: orders");
}

}  // namespace
}  // namespace canal::server
