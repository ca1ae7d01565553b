// What a client gets before it logs in, and what any client can do to the
// log: the pre-login frame limit, the login deadline, the connection limits
// (total and per address), escaped and bounded client text, and
// rate-limited warnings. Real sockets against in-memory destinations, port 0.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "canal/proto/password_scramble.h"
#include "canal/server/client_text.h"
#include "canal/server/connection_limits.h"
#include "canal/server/log_limiter.h"
#include "session_fixture.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ---- ClientText -------------------------------------------------------------

TEST(ClientTextTest, EscapesWhatCouldForgeOrBreakALine) {
  EXPECT_EQ(ClientText("plain name_1"), "plain name_1");
  EXPECT_EQ(ClientText("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(ClientText(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(ClientText("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(ClientText("back\\slash"), "back\\\\slash");
  EXPECT_EQ(ClientText("say \"hi\""), "say \\\"hi\\\"");
  EXPECT_EQ(ClientText("say \"hi\"", 100, /*escape_quotes=*/false), "say \"hi\"");
  EXPECT_EQ(ClientText("\xc3\xa9\xff"), "\\xc3\\xa9\\xff");
  EXPECT_EQ(ClientText(""), "");
}

TEST(ClientTextTest, CutsLongTextAndSaysHowLongItWas) {
  const std::string huge(63u << 20, 'u');
  const std::string shown = ClientText(huge);
  EXPECT_EQ(shown, std::string(kClientTextMax, 'u') + "...(" + std::to_string(huge.size()) + " bytes)");
  EXPECT_EQ(ClientText("abcdef", 3), "abc...(6 bytes)");
  EXPECT_EQ(ClientText("abc", 3), "abc");
  // Escapes grow the text; the cut is on the input, so the bound is 4x + the suffix.
  EXPECT_LE(ClientText(std::string(10'000, '\n'), 100).size(), 4u * 100 + 32);
}

// ---- LogLimiter -------------------------------------------------------------

TEST(LogLimiterTest, LetsABurstThroughThenCountsAndReportsTheRest) {
  LogLimiter limiter(3, 10s);
  const Clock::time_point t0 = Clock::now();
  std::string note;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(limiter.Allow("auth failed", &note, t0));
    EXPECT_EQ(note, "");
  }
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.Allow("auth failed", &note, t0 + 1s));
  // Other keys have their own budget.
  EXPECT_TRUE(limiter.Allow("accept failed", &note, t0 + 1s));
  // The next window lets lines through again and says what was left out.
  EXPECT_TRUE(limiter.Allow("auth failed", &note, t0 + 11s));
  EXPECT_EQ(note, " (100 similar lines suppressed)");
  EXPECT_TRUE(limiter.Allow("auth failed", &note, t0 + 11s));
  EXPECT_EQ(note, "");
}

TEST(LogLimiterTest, KeysFromClientsCannotGrowItWithoutBound) {
  LogLimiter limiter(1, 10s, /*max_keys=*/8);
  const Clock::time_point t0 = Clock::now();
  std::string note;
  int allowed = 0;
  for (int i = 0; i < 10'000; ++i) allowed += limiter.Allow("key " + std::to_string(i), &note, t0);
  // 8 distinct keys, then every new key shares one budget of 1.
  EXPECT_LE(allowed, 9);
  // Later, finished windows are forgotten and new keys get their own again.
  EXPECT_TRUE(limiter.Allow("fresh", &note, t0 + 20s));
}

// ---- ConnectionLimits ---------------------------------------------------------

TEST(ConnectionLimitsTest, RefusesPastTheTotalAndPerAddressLimitsNamingTheKey) {
  ConnectionLimits limits(5, 2);
  EXPECT_EQ(limits.Admit("10.0.0.1"), "");
  EXPECT_EQ(limits.Admit("10.0.0.1"), "");
  const std::string per = limits.Admit("10.0.0.1");
  EXPECT_NE(per.find("canal.connections.max.per.address = 2"), std::string::npos) << per;
  EXPECT_NE(per.find("10.0.0.1"), std::string::npos) << per;
  EXPECT_EQ(limits.Admit("10.0.0.2"), "");
  EXPECT_EQ(limits.Admit("10.0.0.2"), "");
  EXPECT_EQ(limits.Admit("10.0.0.3"), "");
  EXPECT_EQ(limits.total(), 5u);
  const std::string total = limits.Admit("10.0.0.4");
  EXPECT_NE(total.find("canal.connections.max = 5"), std::string::npos) << total;
  limits.Release("10.0.0.1");
  EXPECT_EQ(limits.Admit("10.0.0.4"), "");
  limits.Release("10.0.0.9");  // never admitted: nothing changes
  EXPECT_EQ(limits.total(), 5u);
}

TEST(ConnectionLimitsTest, ZeroMeansNoLimit) {
  ConnectionLimits limits(0, 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(limits.Admit("10.0.0.1"), "");
  EXPECT_EQ(limits.total(), 1000u);
}

// ---- the server -------------------------------------------------------------

class PreLoginTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    registry_.Add(std::make_shared<MemoryDestination>("example"));
    logger_->set_level(spdlog::level::debug);
  }

  void Start(const std::function<void(SessionServerOptions*)>& tune = {}) {
    SessionServerOptions o = LoopbackOptions();
    o.user = "canal";
    o.password_stored = proto::StoredPasswordForm("canal");
    o.max_frame_bytes = 4u << 20;
    if (tune) tune(&o);
    StartSessionServer(o);
  }
  std::unique_ptr<TestClient> Connect() { return std::make_unique<TestClient>(server_->port(), 5s); }
};

TEST_F(PreLoginTest, AFrameOverThePreLoginLimitClosesTheConnectionBeforeItIsRead) {
  Start();
  auto c = Connect();
  ASSERT_TRUE(c->ReadHandshake());
  // Announces 63 MiB (under the frame limit after login) and sends a little.
  const uint32_t n = 63u << 20;
  const char header[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                          static_cast<char>(n)};
  ASSERT_TRUE(c->SendRaw(std::string(header, 4) + std::string(1000, 'x')));
  EXPECT_TRUE(c->WaitClosed(5s));
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 0; }));
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "exceeds the limit of 65536 bytes allowed before login"));
}

TEST_F(PreLoginTest, AfterLoginTheFullFrameLimitApplies) {
  Start();
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  // A 200 KiB client id in a SUBSCRIPTION: past the pre-login limit, under
  // the frame limit: read and answered (it is not a number).
  std::optional<protocol::Ack> ack = c->Subscribe("example", std::string(200 << 10, '1'));
  ASSERT_TRUE(ack.has_value()) << "closed instead of answered";
  EXPECT_EQ(ack->error_code(), 400);
  EXPECT_TRUE(WaitUntil([&] { return sink_->Contains(spdlog::level::warn, "is not a number"); }));
  for (const std::string& line : sink_->Lines()) EXPECT_LT(line.size(), 2048u);
}

TEST_F(PreLoginTest, APreLoginLimitAboveTheFrameLimitIsRefused) {
  SessionServerOptions o;
  o.port = 0;
  o.max_frame_bytes = 1000;
  o.pre_auth_max_frame_bytes = 2000;
  std::unique_ptr<SessionServer> server;
  const Status s = SessionServer::Create(o, &registry_, logger_, &server);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("frame limit before login"), std::string::npos) << s.ToString();
}

TEST_F(PreLoginTest, ConnectionsThatDoNotLogInInTimeAreClosed) {
  Start([](SessionServerOptions* o) { o->login_timeout_ms = 300; });
  auto silent = Connect();  // handshake, then silence
  ASSERT_TRUE(silent->ReadHandshake());
  auto slow = Connect();    // slowloris: a byte now and then, never a whole frame
  ASSERT_TRUE(slow->ReadHandshake());
  auto good = Connect();
  ASSERT_TRUE(good->Login());
  std::thread drip([&] {
    for (int i = 0; i < 20 && slow->SendRaw(std::string_view("\0", 1)); ++i) std::this_thread::sleep_for(100ms);
  });
  EXPECT_TRUE(silent->WaitClosed(5s));
  EXPECT_TRUE(slow->WaitClosed(5s));
  drip.join();
  // Logged in before the deadline: served on, long after it.
  EXPECT_TRUE(good->QuietFor(600ms));
  std::optional<protocol::Ack> ack = good->Subscribe("example", "1001");
  ASSERT_TRUE(ack && ack->error_code() == 0) << (ack ? ack->error_message() : "no reply");
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "not logged in within 300 ms",
                              "canal.connections.login.timeout"));
}

TEST_F(PreLoginTest, GarbageBeforeLoginEndsOnlyThatConnection) {
  Start();
  auto good = Connect();
  ASSERT_TRUE(good->Login());
  for (int i = 0; i < 20; ++i) {
    auto bad = Connect();
    ASSERT_TRUE(bad->ReadHandshake());
    std::string junk(64, '\0');
    for (size_t k = 0; k < junk.size(); ++k) junk[k] = static_cast<char>((i * 131 + k * 17) & 0xff);
    junk[0] = 0;  // a length under the limit, then junk as the packet
    junk[1] = 0;
    junk[2] = 0;
    junk[3] = 60;
    bad->SendRaw(junk);
    EXPECT_TRUE(bad->WaitClosed(5s)) << i;
  }
  std::optional<protocol::Ack> ack = good->Subscribe("example", "1001");
  ASSERT_TRUE(ack && ack->error_code() == 0) << (ack ? ack->error_message() : "no reply");
}

TEST_F(PreLoginTest, ConnectionsPastThePerAddressLimitAreClosedBeforeTheHandshake) {
  Start([](SessionServerOptions* o) { o->max_connections_per_address = 3; });
  std::vector<std::unique_ptr<TestClient>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(Connect());
    ASSERT_TRUE(held.back()->ReadHandshake()) << i;
  }
  auto refused = Connect();
  EXPECT_FALSE(refused->ReadHandshake());
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "refusing the connection", "canal.connections.max.per.address = 3"));
  // A closed connection makes room.
  held.front()->Close();
  EXPECT_TRUE(WaitUntil([&] {
    auto c = Connect();
    return c->ReadHandshake().has_value();
  }));
}

TEST_F(PreLoginTest, ConnectionsPastTheTotalLimitAreClosedBeforeTheHandshake) {
  Start([](SessionServerOptions* o) {
    o->max_connections = 2;
    o->max_connections_per_address = 0;
  });
  auto a = Connect();
  auto b = Connect();
  ASSERT_TRUE(a->ReadHandshake());
  ASSERT_TRUE(b->ReadHandshake());
  auto refused = Connect();
  EXPECT_FALSE(refused->ReadHandshake());
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "refusing the connection", "canal.connections.max = 2"));
}

TEST_F(PreLoginTest, FailedLoginsWithHugeForgedNamesCostAFewShortEscapedLines) {
  Start();
  // Just under the pre-login frame limit, with a forged log line inside.
  const std::string name = "x\n2026-01-01 [info] forged line\n" + std::string(60'000, 'n');
  for (int i = 0; i < 40; ++i) {
    auto c = Connect();
    ASSERT_TRUE(c->ReadHandshake());
    c->SendAuth(name, "wrong");
    std::optional<protocol::Ack> ack = c->ReadAck();
    ASSERT_TRUE(ack.has_value()) << i;
    EXPECT_EQ(ack->error_code(), 403);
    // The client is told, with its name cut too.
    EXPECT_LT(ack->error_message().size(), 400u);
    EXPECT_NE(ack->error_message().find("auth failed for user:x\\n2026"), std::string::npos) << ack->error_message();
  }
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 0; }));
  size_t auth_lines = 0;
  size_t bytes = 0;
  for (const std::string& line : sink_->Lines()) {
    EXPECT_EQ(line.find('\n'), std::string::npos) << line.substr(0, 200);
    EXPECT_LT(line.size(), 2048u);
    bytes += line.size();
  }
  for (const std::string& line : sink_->LinesAtLeast(spdlog::level::warn)) {
    if (line.find("auth failed") != std::string::npos) ++auth_lines;
  }
  EXPECT_GE(auth_lines, 1u);
  EXPECT_LE(auth_lines, 5u);  // the limiter's burst
  EXPECT_LT(bytes, 40u * 1024) << sink_->Lines().size() << " lines";
}

}  // namespace
}  // namespace canal::server
