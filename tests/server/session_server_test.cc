// The Canal-protocol session server, driven over real sockets by a tiny
// blocking client (session_test_client.h) against in-memory destinations
// (memory_destination.h). Port 0 only.
#include "canal/server/session_server.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "canal/entry.pb.h"
#include "canal/store/ring_store.h"
#include "canal/server/frame_codec.h"
#include "session_fixture.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using testing::CaptureSink;
using testing::CountingMetaManager;
using testing::MemoryDestination;
using testing::MemoryRegistry;
using testing::TestClient;
using Clock = std::chrono::steady_clock;

constexpr char kDest[] = "example";
constexpr char kClient[] = "1001";
constexpr int32_t kUnitMicros = 1;
constexpr int32_t kUnitMillis = 2;

// The header offsets of a MESSAGES reply's entries.
std::vector<int64_t> Offsets(const protocol::Messages& m) {
  std::vector<int64_t> v;
  for (const std::string& bytes : m.messages()) {
    entry::Entry e;
    EXPECT_TRUE(e.ParseFromString(bytes));
    v.push_back(e.header().logfileoffset());
  }
  return v;
}

std::vector<int64_t> Range(int64_t first, int n) {
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

std::string LocalAddress(const TestClient& c) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(c.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

class SessionServerTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    dest_ = std::make_shared<MemoryDestination>(kDest);
    registry_.Add(dest_);
    logger_->set_level(spdlog::level::debug);
    StartServer();
  }

  void StartServer(std::string password_stored = proto::StoredPasswordForm("canal"), std::string user = "canal") {
    SessionServerOptions o = LoopbackOptions();
    o.user = std::move(user);
    o.password_stored = std::move(password_stored);
    o.max_frame_bytes = 1 << 20;
    StartSessionServer(o);
  }

  std::unique_ptr<TestClient> Connect() { return std::make_unique<TestClient>(server_->port()); }

  // A logged-in client subscribed as kClient to kDest.
  std::unique_ptr<TestClient> Subscribed(const std::string& client_id = kClient) {
    return SubscribedClient(kDest, client_id);
  }

  // Subscribes a new client, retrying while the last holder's session ends.
  std::unique_ptr<TestClient> SubscribedAfterRelease() { return SubscribedWhenReleased(kDest, kClient); }

  meta::ClientIdentity Identity() const { return IdentityOf(kDest, 1001); }

  std::shared_ptr<MemoryDestination> dest_;
};

// ---- frames ----------------------------------------------------------------

TEST(FrameCodecTest, MessagesFrameParsesAsPacketWithRawEntries) {
  std::unique_ptr<store::RingStore> ring;
  ASSERT_TRUE(store::RingStore::Create(MemoryDestination::SmallRing(), &ring).ok());
  store::EntryMeta m;
  m.position = MemoryDestination::Position(4);
  ASSERT_TRUE(ring->Put(MemoryDestination::EntryBytes(4), m).ok());
  ASSERT_TRUE(ring->Put(std::string(300, 'x'), m).ok());  // a multi-byte length varint
  store::Batch batch;
  ASSERT_TRUE(ring->TryGet(10, &batch).ok());

  std::string frame;
  ASSERT_TRUE(EncodeMessagesFrame(123456789012LL, batch, &frame).ok());
  uint8_t h[4];
  std::memcpy(h, frame.data(), 4);
  ASSERT_EQ(DecodeFrameLength(h), frame.size() - 4);
  protocol::Packet p;
  ASSERT_TRUE(p.ParseFromArray(frame.data() + 4, static_cast<int>(frame.size() - 4)));
  EXPECT_EQ(p.type(), protocol::MESSAGES);
  EXPECT_EQ(p.version_present_case(), protocol::Packet::VERSION_PRESENT_NOT_SET) << "Canal's server leaves version unset on a MESSAGES frame with entries";
  EXPECT_EQ(frame.substr(4, 2), std::string("\x18\x07", 2));
  protocol::Messages msgs;
  ASSERT_TRUE(msgs.ParseFromString(p.body()));
  EXPECT_EQ(msgs.batch_id(), 123456789012LL);
  ASSERT_EQ(msgs.messages_size(), 2);
  EXPECT_EQ(msgs.messages(0), MemoryDestination::EntryBytes(4));
  EXPECT_EQ(msgs.messages(1), std::string(300, 'x'));

  store::Batch empty;
  ASSERT_TRUE(EncodeMessagesFrame(-1, empty, &frame).ok());
  ASSERT_TRUE(p.ParseFromArray(frame.data() + 4, static_cast<int>(frame.size() - 4)));
  ASSERT_TRUE(msgs.ParseFromString(p.body()));
  EXPECT_EQ(msgs.batch_id(), -1);
  EXPECT_EQ(msgs.messages_size(), 0);
  EXPECT_EQ(p.version(), 1) << "an empty MESSAGES frame carries version 1, as Canal's";
  EXPECT_EQ(frame, std::string("\x00\x00\x00\x11\x10\x01\x18\x07\x2a\x0b\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 21));
}

TEST(FrameCodecTest, LengthCheckRejectsZeroAndOversizedWithoutAllocating) {
  EXPECT_FALSE(CheckFrameLength(0, 1024).ok());
  EXPECT_FALSE(CheckFrameLength(1025, 1024).ok());
  EXPECT_FALSE(CheckFrameLength(0x80000000u, 64u << 20).ok());
  EXPECT_TRUE(CheckFrameLength(1024, 1024).ok());
  EXPECT_TRUE(CheckFrameLength(1, 1024).ok());
  const uint8_t h[4] = {0x80, 0, 0, 1};
  EXPECT_EQ(DecodeFrameLength(h), 0x80000001u);
}

// ---- handshake and authentication -----------------------------------------

TEST(PasswordTest, DocTestVector) {
  const std::string seed = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(proto::ScramblePassword(seed, "canal"), "7de44690d8e53782cb61804a2455c284a3bbfb06");
  EXPECT_EQ(proto::StoredPasswordForm("canal"), "e3619321c1a937c46a0d8bd1dac39f93b27d4458");
  EXPECT_TRUE(proto::VerifyScrambledPassword(seed, "7de44690d8e53782cb61804a2455c284a3bbfb06",
                                             "e3619321c1a937c46a0d8bd1dac39f93b27d4458"));
}

TEST_F(SessionServerTest, HandshakeHasVersionOneAndEightFreshSeedBytes) {
  auto a = Connect();
  auto b = Connect();
  std::optional<std::string> sa = a->ReadHandshake();
  std::optional<std::string> sb = b->ReadHandshake();
  ASSERT_TRUE(sa && sb);
  EXPECT_EQ(sa->size(), 8u);
  EXPECT_EQ(sb->size(), 8u);
  EXPECT_NE(*sa, *sb);
}

TEST_F(SessionServerTest, AuthWithTheRightPasswordIsAnsweredWithAnEmptyAck) {
  auto c = Connect();
  ASSERT_TRUE(c->ReadHandshake());
  c->SendAuth("canal", "canal");
  protocol::Packet p;
  ASSERT_TRUE(c->ReadPacket(&p));
  EXPECT_EQ(p.type(), protocol::ACK);
  EXPECT_TRUE(p.body().empty());  // Ack{} serialises to nothing, as Canal's
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 1; }));
}

TEST_F(SessionServerTest, AuthWithAWrongPasswordGets403AndTheConnectionCloses) {
  auto c = Connect();
  ASSERT_TRUE(c->ReadHandshake());
  c->SendAuth("canal", "wrong");
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 403);
  EXPECT_EQ(ack->error_message(), "auth failed for user:canal");
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionServerTest, AuthIsRefusedForAnotherUserOrAnEmptyPassword) {
  auto c = Connect();
  ASSERT_TRUE(c->ReadHandshake());
  c->SendAuth("root", "canal");
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 403);
  EXPECT_TRUE(c->WaitClosed(5s));

  auto d = Connect();
  ASSERT_TRUE(d->ReadHandshake());
  d->SendAuth("canal", "");
  ack = d->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 403);
}

TEST_F(SessionServerTest, AuthWithTheTokenReplayedFromAnotherSeedFails) {
  auto c = Connect();
  ASSERT_TRUE(c->ReadHandshake());
  protocol::ClientAuth a;
  a.set_username("canal");
  a.set_password("7de44690d8e53782cb61804a2455c284a3bbfb06");  // valid for seed 01..08 only
  c->SendPacket(protocol::CLIENTAUTHENTICATION, a);
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 403);
}

TEST_F(SessionServerTest, WithoutAStoredPasswordAnyPasswordPassesButTheUserMustMatch) {
  server_->Stop();
  StartServer("", "canal");
  auto c = Connect();
  EXPECT_TRUE(c->Login("canal", "anything"));
  auto d = Connect();
  EXPECT_FALSE(d->Login("other", ""));
}

TEST_F(SessionServerTest, ARequestBeforeAuthenticationIs400AndCloses) {
  auto c = Connect();
  ASSERT_TRUE(c->ReadHandshake());
  protocol::Sub s;
  s.set_destination(kDest);
  s.set_client_id(kClient);
  c->SendPacket(protocol::SUBSCRIPTION, s);
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 400);
  EXPECT_NE(ack->error_message().find("CLIENTAUTHENTICATION"), std::string::npos);
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionServerTest, AuthCarryingDestinationAndClientIdSubscribesAtOnce) {
  auto c = Connect();
  ASSERT_TRUE(c->Login("canal", "canal", kDest, kClient));
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 2));
  // And it holds the destination.
  auto d = Connect();
  ASSERT_TRUE(d->Login());
  std::optional<protocol::Ack> ack = d->Subscribe(kDest, kClient);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 423);
}

// ---- subscription -----------------------------------------------------------

TEST_F(SessionServerTest, SubscribingAnUnknownDestinationIs404AndCloses) {
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  std::optional<protocol::Ack> ack = c->Subscribe("nosuch", kClient);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 404);
  EXPECT_NE(ack->error_message().find("destination nosuch does not exist"), std::string::npos)
      << ack->error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionServerTest, MissingDestinationOrClientIdIs401) {
  for (auto [dest, client] : {std::pair<std::string, std::string>{"", kClient}, {kDest, ""}}) {
    auto c = Connect();
    ASSERT_TRUE(c->Login());
    std::optional<protocol::Ack> ack = c->Subscribe(dest, client);
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->error_code(), 401);
    EXPECT_NE(ack->error_message().find("destination or clientId is null"), std::string::npos);
    EXPECT_TRUE(c->WaitClosed(5s));
  }
}

TEST_F(SessionServerTest, AClientIdThatIsNotAShortIs400) {
  for (const char* id : {"abc", "70000", "12x"}) {
    auto c = Connect();
    ASSERT_TRUE(c->Login());
    std::optional<protocol::Ack> ack = c->Subscribe(kDest, id);
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->error_code(), 400) << id;
    EXPECT_NE(ack->error_message().find(id), std::string::npos);
  }
}

TEST_F(SessionServerTest, ASecondSubscriberIsRefusedNamingTheHolderWhoIsStillServed) {
  auto holder = Subscribed();
  auto other = Connect();
  ASSERT_TRUE(other->Login());
  std::optional<protocol::Ack> ack = other->Subscribe(kDest, "1002");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 423);
  EXPECT_NE(ack->error_message().find("client 1001"), std::string::npos) << ack->error_message();
  EXPECT_NE(ack->error_message().find(LocalAddress(*holder)), std::string::npos) << ack->error_message();
  EXPECT_TRUE(other->WaitClosed(5s));

  ASSERT_TRUE(dest_->PutRange(0, 3).ok());
  TestClient::GetReply r = holder->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 3));

  // Once the holder leaves, the destination is free again.
  holder->Close();
  auto next = SubscribedAfterRelease();
  ASSERT_TRUE(next);
}

TEST_F(SessionServerTest, SubscribingTwiceOnOneConnectionReplacesTheFilter) {
  auto c = Subscribed();
  std::optional<protocol::Ack> ack = c->Subscribe(kDest, kClient, "db\\..*");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0);
  EXPECT_EQ(dest_->filter(), "db\\..*");
  // Another destination or client id on the same connection is refused.
  ack = c->Subscribe(kDest, "1002");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 400);
}

TEST_F(SessionServerTest, ABadFilterIs400QuotingItAndDoesNotHoldTheDestination) {
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  std::optional<protocol::Ack> ack = c->Subscribe(kDest, kClient, "db\\.(unclosed");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 400);
  EXPECT_NE(ack->error_message().find("\"db\\.(unclosed\""), std::string::npos) << ack->error_message();
  auto d = Connect();
  ASSERT_TRUE(d->Login());
  ack = d->Subscribe(kDest, kClient, "db\\.t1,db\\.t2");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0) << ack->error_message();
  EXPECT_EQ(dest_->filter(), "db\\.t1,db\\.t2");
}

TEST_F(SessionServerTest, AStoppedDestinationCannotBeSubscribed) {
  dest_->set_running(false);
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  std::optional<protocol::Ack> ack = c->Subscribe(kDest, kClient);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 503);
  EXPECT_NE(ack->error_message().find("not running"), std::string::npos);
}

TEST_F(SessionServerTest, RollbackBeforeSubscribingIsIgnoredSilently) {
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  c->Rollback(kDest, kClient, 0);  // what Canal's Java client does on connect
  std::optional<protocol::Ack> ack = c->Subscribe(kDest, kClient);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0);
}

TEST_F(SessionServerTest, GetBeforeSubscribingIs412) {
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), 412);
  EXPECT_NE(r.ack.error_message().find("should subscribe first"), std::string::npos);
}

TEST_F(SessionServerTest, UnsubscribeIsAnsweredAndFreesTheDestinationAtOnce) {
  auto a = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  ASSERT_TRUE(a->Get(kDest, kClient, 10).is_messages);  // outstanding, never acked
  std::optional<protocol::Ack> ack = a->Unsubscribe(kDest, kClient);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0);
  bool subscribed = true;
  ASSERT_TRUE(dest_->meta()->HasSubscribe(Identity(), &subscribed).ok());
  EXPECT_FALSE(subscribed);

  auto b = Subscribed();  // no retry needed: released before the reply
  TestClient::GetReply r = b->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 2));  // the unacked batch comes again
}

// ---- get ----------------------------------------------------------------------

TEST_F(SessionServerTest, GetWithoutTimeoutReturnsNowAndAnEmptyGetConsumesNoId) {
  auto c = Subscribed();
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), -1);
  EXPECT_EQ(r.messages.messages_size(), 0);

  ASSERT_TRUE(dest_->PutRange(0, 3).ok());
  r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), 1);  // ids count from 1
  EXPECT_EQ(Offsets(r.messages), Range(0, 3));

  r = c->Get(kDest, kClient, 10, -5, kUnitMillis);  // negative: also now
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), -1);

  ASSERT_TRUE(dest_->PutRange(3, 2).ok());
  r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), 2);
  EXPECT_EQ(Offsets(r.messages), Range(3, 2));
}

TEST_F(SessionServerTest, GetReturnsAtMostFetchSizeEntries) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 7).ok());
  TestClient::GetReply r = c->Get(kDest, kClient, 5);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 5));
  r = c->Get(kDest, kClient, 5);
  EXPECT_EQ(Offsets(r.messages), Range(5, 2));
}

TEST_F(SessionServerTest, FetchSizeZeroOrNegativeMeansOneThousand) {
  auto big = std::make_shared<MemoryDestination>("big", MemoryDestination::SmallRing(2048));
  registry_.Add(big);
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  ASSERT_TRUE(c->Subscribe("big", kClient)->error_code() == 0);
  ASSERT_TRUE(big->PutRange(0, 1500).ok());
  TestClient::GetReply r = c->Get("big", kClient, 0);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 1000);
  r = c->Get("big", kClient, -3);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 500);
}

TEST_F(SessionServerTest, GetWithTimeoutZeroWaitsForAFullBatch) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  const Clock::time_point start = Clock::now();
  c->SendGet(kDest, kClient, 5, 0, kUnitMillis);
  std::thread producer([&] {
    std::this_thread::sleep_for(300ms);
    ASSERT_TRUE(dest_->PutRange(2, 3).ok());
  });
  TestClient::GetReply r = c->ReadGetReply();
  producer.join();
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 5));
  EXPECT_GE(Clock::now() - start, 250ms);
}

TEST_F(SessionServerTest, GetWithAPositiveTimeoutReturnsWhatIsThereWhenItExpires) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  Clock::time_point start = Clock::now();
  TestClient::GetReply r = c->Get(kDest, kClient, 10, 300, kUnitMillis);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 2));
  EXPECT_GE(Clock::now() - start, 250ms);
  EXPECT_LT(Clock::now() - start, 5s);

  // The unit is Canal's TimeUnit numbering: 300000 microseconds.
  start = Clock::now();
  r = c->Get(kDest, kClient, 10, 300'000, kUnitMicros);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), -1);
  EXPECT_GE(Clock::now() - start, 250ms);
  EXPECT_LT(Clock::now() - start, 5s);

  // Without a unit the timeout is in milliseconds.
  start = Clock::now();
  r = c->Get(kDest, kClient, 10, 200);
  ASSERT_TRUE(r.is_messages);
  EXPECT_GE(Clock::now() - start, 150ms);
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST_F(SessionServerTest, GetWithAPositiveTimeoutReturnsAsSoonAsTheBatchIsFull) {
  auto c = Subscribed();
  const Clock::time_point start = Clock::now();
  c->SendGet(kDest, kClient, 4, 20, /*seconds*/ 3);
  std::thread producer([&] {
    std::this_thread::sleep_for(200ms);
    ASSERT_TRUE(dest_->PutRange(0, 4).ok());
  });
  TestClient::GetReply r = c->ReadGetReply();
  producer.join();
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 4));
  EXPECT_LT(Clock::now() - start, 10s);
}

TEST_F(SessionServerTest, AWaitingGetDoesNotHoldUpOtherSessions) {
  // Two I/O threads; more waiting clients than threads on other destinations.
  std::vector<std::shared_ptr<MemoryDestination>> others;
  std::vector<std::unique_ptr<TestClient>> waiters;
  for (int i = 0; i < 4; ++i) {
    others.push_back(std::make_shared<MemoryDestination>("w" + std::to_string(i)));
    registry_.Add(others.back());
    auto w = Connect();
    ASSERT_TRUE(w->Login());
    ASSERT_EQ(w->Subscribe(others.back()->name(), kClient)->error_code(), 0);
    w->SendGet(others.back()->name(), kClient, 10, 0);  // waits forever
    waiters.push_back(std::move(w));
  }
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 1).ok());
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 1);
}

TEST_F(SessionServerTest, PipelinedRequestsAreAllAnsweredInOrder) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 50).ok());
  for (int i = 0; i < 50; ++i) c->SendGet(kDest, kClient, 1);
  for (int i = 0; i < 50; ++i) {
    TestClient::GetReply r = c->ReadGetReply();
    ASSERT_TRUE(r.is_messages) << i;
    EXPECT_EQ(r.messages.batch_id(), i + 1);
    EXPECT_EQ(Offsets(r.messages), Range(i, 1));
  }
}

// ---- ack and rollback -----------------------------------------------------------

TEST_F(SessionServerTest, AckingTheOldestBatchIsSilentAndFreesTheRing) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 4).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 2);
  c->Ack(kDest, kClient, 1);
  EXPECT_TRUE(c->QuietFor(200ms));  // no reply to a good ack
  c->Ack(kDest, kClient, 2);
  EXPECT_TRUE(WaitUntil([&] { return dest_->store()->stats().ack_sequence == 4; }));
  std::vector<meta::Batch> batches;
  ASSERT_TRUE(dest_->meta()->ListBatches(Identity(), &batches).ok());
  EXPECT_TRUE(batches.empty());
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), -1);
}

TEST_F(SessionServerTest, AnOutOfOrderAckErrorIsTheAnswerToTheNextRequest) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 4).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 2);
  c->Ack(kDest, kClient, 2);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), 400);
  EXPECT_NE(r.ack.error_message().find("batchId:2 is not the firstly:1"), std::string::npos) << r.ack.error_message();
  EXPECT_TRUE(c->WaitClosed(5s));

  // Both batches go to the next subscriber.
  auto next = SubscribedAfterRelease();
  ASSERT_TRUE(next);
  r = next->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 4));
}

TEST_F(SessionServerTest, AckOfAnUnknownBatchIsCanalsNotExistError) {
  auto c = Subscribed();
  c->Ack(kDest, kClient, 7);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), 400);
  EXPECT_NE(r.ack.error_message().find("ack error , clientId:1001 batchId:7 is not exist , please check"),
            std::string::npos)
      << r.ack.error_message();
}

TEST_F(SessionServerTest, AckOfBatchZeroIs402) {
  auto c = Subscribed();
  c->Ack(kDest, kClient, 0);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), 402);
  EXPECT_NE(r.ack.error_message().find("batchId should assign value"), std::string::npos);
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionServerTest, AckOfMinusOneIsIgnored) {
  auto c = Subscribed();
  c->Ack(kDest, kClient, -1);
  c->Rollback(kDest, kClient, -1);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), -1);
}

TEST_F(SessionServerTest, RollbackOfZeroRedeliversTheSameEntriesUnderANewId) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 5).ok());
  TestClient::GetReply first = c->Get(kDest, kClient, 2);
  TestClient::GetReply second = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(first.is_messages && second.is_messages);
  c->Rollback(kDest, kClient, 0);
  TestClient::GetReply again = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(again.is_messages);
  EXPECT_EQ(again.messages.batch_id(), 3);  // ids are never reused
  EXPECT_EQ(Offsets(again.messages), Range(0, 5));
  std::vector<meta::Batch> batches;
  ASSERT_TRUE(dest_->meta()->ListBatches(Identity(), &batches).ok());
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].id, 3);
}

TEST_F(SessionServerTest, RollbackOfTheOldestIdDropsItAndLaterBatches) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 6).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  c->Ack(kDest, kClient, 1);
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 2);
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 3);
  c->Rollback(kDest, kClient, 2);
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(2, 4));  // from the acked position on
  EXPECT_EQ(r.messages.batch_id(), 4);
}

TEST_F(SessionServerTest, RollbackOfANewerOrUnknownIdIsAnError) {
  {
    auto c = Subscribed();
    ASSERT_TRUE(dest_->PutRange(0, 4).ok());
    ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
    ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 2);
    c->Rollback(kDest, kClient, 2);
    TestClient::GetReply r = c->Get(kDest, kClient, 2);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.ack.error_code(), 400);
    EXPECT_NE(r.ack.error_message().find("batchId:2 is not the firstly:1"), std::string::npos);
  }
  auto c = SubscribedAfterRelease();
  ASSERT_TRUE(c);
  c->Rollback(kDest, kClient, 99);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), 400);
  EXPECT_NE(r.ack.error_message().find("rollback error, clientId:1001 batchId:99 is not exist"), std::string::npos);
}

TEST_F(SessionServerTest, AutoAckAcksTheBatchBeforeAnswering) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 3).ok());
  const int flushes = dest_->counting_meta()->flushes();
  TestClient::GetReply r = c->Get(kDest, kClient, 10, std::nullopt, std::nullopt, /*auto_ack=*/true);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 3));
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 3u);
  EXPECT_EQ(dest_->counting_meta()->flushes(), flushes + 1);
  EXPECT_EQ(dest_->counting_meta()->flushed_cursor(1001), MemoryDestination::Position(2));
  std::vector<meta::Batch> batches;
  ASSERT_TRUE(dest_->meta()->ListBatches(Identity(), &batches).ok());
  EXPECT_TRUE(batches.empty());
  // Acking it again is an unknown batch.
  c->Ack(kDest, kClient, r.messages.batch_id());
  r = c->Get(kDest, kClient, 10);
  EXPECT_EQ(r.ack.error_code(), 400);
}

// ---- durability -------------------------------------------------------------------

TEST_F(SessionServerTest, TheCursorMovesToTheSafePositionOnAckAndIsFlushedBeforeTheNextReply) {
  auto c = Subscribed();
  CountingMetaManager* meta = dest_->counting_meta();
  ASSERT_TRUE(dest_->PutEntry(10, false).ok());
  ASSERT_TRUE(dest_->PutEntry(11, true).ok());  // transaction end
  ASSERT_TRUE(dest_->PutEntry(12, false).ok());
  ASSERT_TRUE(dest_->PutEntry(13, true).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 3).messages.batch_id(), 1);  // 10, 11, 12: safe point 11
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(meta->GetCursor(Identity(), &cursor).ok());
  EXPECT_FALSE(cursor);  // not before the ack

  const int before = meta->flushes();
  TestClient::GetReply r = c->Get(kDest, kClient, 3);  // no ack pending: no flush
  ASSERT_EQ(r.messages.batch_id(), 2);
  EXPECT_EQ(meta->flushes(), before);

  c->Ack(kDest, kClient, 1);
  c->Ack(kDest, kClient, 2);
  r = c->Get(kDest, kClient, 3);
  ASSERT_TRUE(r.is_messages);
  // The first ack's write begins at once; the second ack, if it came while
  // that write ran, gets one more: at most two writes, both before the reply.
  EXPECT_GE(meta->flushes(), before + 1);
  EXPECT_LE(meta->flushes(), before + 2);
  EXPECT_EQ(meta->flushed_cursor(1001), MemoryDestination::Position(13));
  ASSERT_TRUE(meta->GetCursor(Identity(), &cursor).ok());
  EXPECT_EQ(cursor, MemoryDestination::Position(13));
}

TEST_F(SessionServerTest, ABatchWithoutASafePointLeavesTheCursorWhereItWas) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2, /*safe=*/false).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  c->Ack(kDest, kClient, 1);
  ASSERT_TRUE(c->Get(kDest, kClient, 2).is_messages);
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(dest_->meta()->GetCursor(Identity(), &cursor).ok());
  EXPECT_FALSE(cursor);
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 2u);  // the ring is freed all the same
}

TEST_F(SessionServerTest, AFailedFlushIsReportedInsteadOfTheReply) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  dest_->counting_meta()->set_fail_flush(true);
  c->Ack(kDest, kClient, 1);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), 507) << "acks not durable";
  EXPECT_NE(r.ack.error_message().find("durable"), std::string::npos) << r.ack.error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionServerTest, AcksAreFlushedWhenTheClientDisconnects) {
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  const int before = dest_->counting_meta()->flushes();
  c->Ack(kDest, kClient, 1);
  c->Close();
  EXPECT_TRUE(WaitUntil([&] { return dest_->counting_meta()->flushes() == before + 1; }));
  EXPECT_EQ(dest_->counting_meta()->flushed_cursor(1001), MemoryDestination::Position(1));
}

// ---- session end --------------------------------------------------------------------

TEST_F(SessionServerTest, ADisconnectRollsBackOutstandingBatchesForTheNextSubscriber) {
  auto a = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 5).ok());
  ASSERT_EQ(a->Get(kDest, kClient, 2).messages.batch_id(), 1);
  a->Ack(kDest, kClient, 1);
  ASSERT_EQ(a->Get(kDest, kClient, 2).messages.batch_id(), 2);
  a->Abort();  // a crash: reset, no unsubscribe

  auto b = SubscribedAfterRelease();
  ASSERT_TRUE(b);
  TestClient::GetReply r = b->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(2, 3));  // batch 2 again, batch 1 stays acked
  EXPECT_EQ(r.messages.batch_id(), 3);
}

TEST_F(SessionServerTest, AClientLeavingDuringAWaitingGetEndsItsSessionCleanly) {
  auto a = Subscribed();
  a->SendGet(kDest, kClient, 10, 0);  // waits for a full batch
  ASSERT_TRUE(WaitUntil([&] { return server_->sessions() == 1; }));
  std::this_thread::sleep_for(50ms);
  a->Close();
  ASSERT_TRUE(WaitUntil([&] { return server_->sessions() == 0; }));
  ASSERT_TRUE(dest_->PutRange(0, 10).ok());  // a stale callback must not matter
  auto b = SubscribedAfterRelease();
  ASSERT_TRUE(b);
  TestClient::GetReply r = b->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(Offsets(r.messages), Range(0, 10));
  EXPECT_TRUE(sink_->Contains(spdlog::level::info, "disconnected", "1001"));
}

TEST_F(SessionServerTest, AnIdleClientIsDisconnectedAfterItsNetReadTimeout) {
  auto c = Connect();
  ASSERT_TRUE(c->Login("canal", "canal", kDest, kClient, /*net_read_timeout_ms=*/200));
  const Clock::time_point start = Clock::now();
  EXPECT_TRUE(c->WaitClosed(5s));
  EXPECT_GE(Clock::now() - start, 150ms);
  EXPECT_TRUE(SubscribedAfterRelease());  // and the destination is free
}

TEST_F(SessionServerTest, AnIdleTimeoutAlsoEndsAWaitingGet) {
  auto c = Connect();
  ASSERT_TRUE(c->Login("canal", "canal", kDest, kClient, 300));
  c->SendGet(kDest, kClient, 10, 0);
  EXPECT_TRUE(c->WaitClosed(5s));
}

// ---- bad input ----------------------------------------------------------------------------

TEST_F(SessionServerTest, UnsupportedPacketTypesAre400NotSupported) {
  const std::pair<protocol::PacketType, std::string> cases[] = {
      {protocol::HEARTBEAT, "HEARTBEAT"}, {protocol::DUMP, "DUMP"}, {protocol::SHUTDOWN, "SHUTDOWN"},
      {protocol::MESSAGES, "MESSAGES"}};
  for (const auto& [type, name] : cases) {
    auto c = Connect();
    ASSERT_TRUE(c->Login());
    c->SendPacket(type, protocol::HeartBeat());
    std::optional<protocol::Ack> ack = c->ReadAck();
    ASSERT_TRUE(ack) << name;
    EXPECT_EQ(ack->error_code(), 400);
    EXPECT_EQ(ack->error_message(), "packet type: " + name + " is NOT supported!");
  }
  auto c = Connect();
  ASSERT_TRUE(c->Login());
  protocol::Packet p;
  p.set_type(static_cast<protocol::PacketType>(77));
  c->SendRaw(TestClient::Frame(p.SerializeAsString()));
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_message(), "packet type: 77 is NOT supported!");
}

TEST_F(SessionServerTest, BadFramesCloseOnlyTheirConnection) {
  auto good = Subscribed();
  int next_offset = 0;
  const auto served = [&] {
    EXPECT_TRUE(dest_->PutRange(static_cast<uint64_t>(next_offset), 2).ok());
    TestClient::GetReply r = good->Get(kDest, kClient, 10);
    EXPECT_TRUE(r.is_messages);
    EXPECT_EQ(Offsets(r.messages), Range(next_offset, 2));
    good->Ack(kDest, kClient, r.messages.batch_id());
    next_offset += 2;
  };

  const std::string zero("\0\0\0\0", 4);
  const std::string two_gib("\x80\0\0\0", 4);
  const std::string above_limit = TestClient::Frame(std::string((1 << 20) + 1, 'x')).substr(0, 4);
  for (const std::string& bytes : {zero, two_gib, above_limit, std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")}) {
    for (bool logged_in : {false, true}) {
      auto bad = Connect();
      if (logged_in) {
        ASSERT_TRUE(bad->Login());
      } else {
        ASSERT_TRUE(bad->ReadHandshake());
      }
      bad->SendRaw(bytes);
      EXPECT_TRUE(bad->WaitClosed(5s));
      served();
    }
  }
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "frame length 0", "127.0.0.1:"));
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "frame length 2147483648", "127.0.0.1:"));

  // Truncated: the header promises more than ever comes.
  auto truncated = Connect();
  ASSERT_TRUE(truncated->Login());
  truncated->SendRaw(std::string("\0\0\0\x64", 4) + "only ten b");
  truncated->ShutdownWrite();
  EXPECT_TRUE(truncated->WaitClosed(5s));
  served();

  // A frame that is not a Packet: error Ack 400, then closed.
  for (bool logged_in : {false, true}) {
    auto garbage = Connect();
    if (logged_in) {
      ASSERT_TRUE(garbage->Login());
    } else {
      ASSERT_TRUE(garbage->ReadHandshake());
    }
    garbage->SendRaw(TestClient::Frame("\xff\xff\xff\xff\xff"));
    std::optional<protocol::Ack> ack = garbage->ReadAck();
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->error_code(), 400);
    EXPECT_NE(ack->error_message().find("unparsable packet"), std::string::npos);
    EXPECT_TRUE(garbage->WaitClosed(5s));
    served();
  }

  // A Packet whose body is not what its type says.
  auto bad_body = Connect();
  ASSERT_TRUE(bad_body->Login());
  protocol::Packet p;
  p.set_type(protocol::GET);
  p.set_body("\xff\xff\xff");
  bad_body->SendRaw(TestClient::Frame(p.SerializeAsString()));
  std::optional<protocol::Ack> ack = bad_body->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 400);
  EXPECT_TRUE(bad_body->WaitClosed(5s));
  served();
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 1; }));
}

// ---- lifecycle ------------------------------------------------------------------------------

TEST_F(SessionServerTest, StopClosesEverySessionFlushesAndIsIdempotent) {
  auto waiting = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  ASSERT_EQ(waiting->Get(kDest, kClient, 2).messages.batch_id(), 1);
  waiting->Ack(kDest, kClient, 1);
  waiting->SendGet(kDest, kClient, 10, 0);  // waits for a full batch
  auto idle = Connect();
  ASSERT_TRUE(idle->ReadHandshake());
  ASSERT_TRUE(WaitUntil([&] { return server_->sessions() == 2; }));
  ASSERT_TRUE(WaitUntil([&] { return dest_->store()->stats().ack_sequence == 2; }));  // the ack is in
  const int before = dest_->counting_meta()->flushes();

  server_->Stop();
  EXPECT_EQ(server_->sessions(), 0u);
  EXPECT_TRUE(waiting->WaitClosed(5s));
  EXPECT_TRUE(idle->WaitClosed(5s));
  // The ack is durable once Stop returns (written at the ack, or by the
  // session's end if it came later), and Stop leaves no write behind.
  EXPECT_EQ(dest_->counting_meta()->flushed_cursor(1001), MemoryDestination::Position(1));
  EXPECT_LE(dest_->counting_meta()->flushes(), before + 1);
  server_->Stop();
  TestClient late(server_->port());
  EXPECT_FALSE(late.connected() && late.ReadHandshake());
}

TEST_F(SessionServerTest, CreateNamesTheAddressItCannotListenOn) {
  SessionServerOptions o;
  o.ip = "127.0.0.1";
  o.port = server_->port();  // taken
  std::unique_ptr<SessionServer> other;
  Status s = SessionServer::Create(o, &registry_, logger_, &other);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("127.0.0.1:" + std::to_string(server_->port())), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("another process uses canal.port"), std::string::npos) << s.ToString();

  o.ip = "not-an-ip";
  o.port = 0;
  s = SessionServer::Create(o, &registry_, logger_, &other);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("canal.ip \"not-an-ip\" is not an IP address"), std::string::npos) << s.ToString();
}

// 200 clients come and go at random (some half-way through the handshake,
// some mid-frame, some trying to steal the destination) while one client gets
// and acks 10,000 entries: every entry arrives exactly once, in order.
TEST_F(SessionServerTest, ChurningClientsDoNotDisturbAConsumerOfTenThousandEntries) {
  constexpr int kEntries = 10'000;
  constexpr int kChurners = 200;
  auto consumer = Subscribed();
  std::atomic<bool> producer_ok{true};
  std::thread producer([&] {
    for (int i = 0; i < kEntries; ++i) {
      if (!dest_->PutEntry(static_cast<uint64_t>(i), i % 3 == 2).ok()) {
        producer_ok = false;
        return;
      }
    }
  });
  std::atomic<int> churned{0};
  std::vector<std::thread> churners;
  for (int t = 0; t < 4; ++t) {
    churners.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t * 7919 + 1));
      for (int i = 0; i < kChurners / 4; ++i) {
        TestClient c(server_->port());
        if (!c.connected()) continue;
        switch (rng() % 7) {
          case 0:
            break;  // connect and vanish
          case 1:
            c.ReadHandshake();
            c.Abort();
            break;
          case 2:
            c.Login();
            break;
          case 3:
            if (c.Login()) c.Subscribe(kDest, "1002");  // refused: held
            break;
          case 4:
            c.ReadHandshake();
            c.SendRaw(std::string("\0\0\0\x40", 4) + "half a frame");
            c.Abort();
            break;
          case 5:
            c.ReadHandshake();
            c.SendRaw("\xff\xff\xff\xff garbage");
            break;
          case 6:
            if (c.Login()) c.SendGet(kDest, "1002", 10, 0);  // not subscribed
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 5));
            c.Abort();
            break;
        }
        churned.fetch_add(1);
      }
    });
  }

  std::mt19937 rng(42);
  int64_t expected = 0;
  int64_t last_batch = 0;
  const Clock::time_point deadline = Clock::now() + 120s;
  while (expected < kEntries && Clock::now() < deadline) {
    const int fetch = 1 + static_cast<int>(rng() % 100);
    TestClient::GetReply r = consumer->Get(kDest, kClient, fetch, 100, kUnitMillis);
    ASSERT_TRUE(r.is_messages) << r.ack.error_message();
    if (r.messages.batch_id() == -1) continue;
    EXPECT_EQ(r.messages.batch_id(), last_batch + 1);
    last_batch = r.messages.batch_id();
    for (int64_t offset : Offsets(r.messages)) ASSERT_EQ(offset, expected++);
    consumer->Ack(kDest, kClient, r.messages.batch_id());
  }
  producer.join();
  for (std::thread& t : churners) t.join();
  EXPECT_TRUE(producer_ok);
  EXPECT_EQ(expected, kEntries);
  EXPECT_EQ(churned.load(), kChurners);
  TestClient::GetReply r = consumer->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), -1);  // nothing twice
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(dest_->meta()->GetCursor(Identity(), &cursor).ok());
  uint64_t last_safe = kEntries - 1;
  while (last_safe % 3 != 2) --last_safe;
  EXPECT_EQ(cursor, MemoryDestination::Position(last_safe));
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 1; }));
}

}  // namespace
}  // namespace canal::server
