// What the session server says and when: errors name the address
// the client connected to; a restarted or stopped destination says so, with
// why, on a server without ZooKeeper; a clean unsubscribe logs no WARN; an
// ack the server can no longer apply is error 409; the low-latency GET
// returns on the first entry, from the client's Get.low_latency or the
// server's canal.get.low.latency. Real sockets, in-memory destinations, port 0.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "session_fixture.h"
#include "support/wait.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using canal::testing::WaitFor;
using Clock = std::chrono::steady_clock;

constexpr char kDest[] = "example";
constexpr char kClient[] = "1001";
constexpr int32_t kUnitMillis = 2;

// A registry that can drop or replace a destination and says why, like
// InstanceRegistry; `arbitrated` plays a server with ZooKeeper.
class TestRegistry : public DestinationRegistry {
 public:
  void Put(std::shared_ptr<Destination> d, std::string why = "") {
    std::lock_guard lock(mu_);
    if (!why.empty()) why_[d->name()] = std::move(why);
    destinations_[d->name()] = std::move(d);
  }
  void Remove(const std::string& name, std::string why) {
    std::lock_guard lock(mu_);
    destinations_.erase(name);
    why_[name] = std::move(why);
  }
  std::shared_ptr<Destination> Find(std::string_view name) override {
    std::lock_guard lock(mu_);
    auto it = destinations_.find(std::string(name));
    return it == destinations_.end() ? nullptr : it->second;
  }
  std::string WhyNotServed(std::string_view name) override {
    std::lock_guard lock(mu_);
    auto it = why_.find(std::string(name));
    return it == why_.end() ? "" : it->second;
  }
  bool Arbitrated() const override { return arbitrated; }
  bool arbitrated = false;

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Destination>> destinations_;
  std::map<std::string, std::string> why_;
};

store::RingStoreOptions MemSizeRing() {
  store::RingStoreOptions o = testing::MemoryDestination::SmallRing();
  o.batch_mode = store::BatchMode::kMemSize;  // 1024-byte units: a batch of 1000 is ~1 MB
  return o;
}

class SessionMessagesTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    dest_ = std::make_shared<MemoryDestination>(kDest, MemSizeRing());
    registry_.Put(dest_);
  }
  DestinationRegistry* registry() override { return &registry_; }
  void Start(std::string ip = "127.0.0.1", bool low_latency = false) {
    SessionServerOptions o = LoopbackOptions();
    o.ip = std::move(ip);
    o.low_latency_get = low_latency;
    StartSessionServer(o);
  }
  std::unique_ptr<TestClient> Subscribed() { return SubscribedClient(kDest, kClient, "", ""); }
  // A subscribed client holding one batch of `entries` new entries (*reply).
  std::unique_ptr<TestClient> HoldingABatch(int entries, TestClient::GetReply* reply) {
    auto c = Subscribed();
    EXPECT_TRUE(dest_->PutRange(next_offset_, entries).ok());
    next_offset_ += static_cast<uint64_t>(entries);
    *reply = c->Get(kDest, kClient, 10);
    EXPECT_TRUE(reply->is_messages && reply->messages.batch_id() != -1);
    return c;
  }
  std::string Here() const { return "127.0.0.1:" + std::to_string(server_->port()); }

  TestRegistry registry_;  // the server's (hides the fixture's MemoryRegistry)
  std::shared_ptr<MemoryDestination> dest_;
  uint64_t next_offset_ = 0;
};

TEST_F(SessionMessagesTest, ErrorsNameTheAddressTheClientConnectedToNotTheWildcard) {
  Start("0.0.0.0");
  TestClient c(server_->port());
  ASSERT_TRUE(c.Login("", ""));
  std::optional<protocol::Ack> ack = c.Subscribe("nosuch", kClient);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 404);
  EXPECT_NE(ack->error_message().find("does not exist on canal server " + Here()), std::string::npos)
      << ack->error_message();
  EXPECT_EQ(ack->error_message().find("0.0.0.0"), std::string::npos) << ack->error_message();
}

TEST_F(SessionMessagesTest, ARestartedDestinationSaysSoAndWhyWithoutZooKeeperWording) {
  Start();
  auto c = Subscribed();
  registry_.Put(std::make_shared<MemoryDestination>(kDest, MemSizeRing()), "instance.properties changed");
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  ASSERT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), 503);
  EXPECT_EQ(r.ack.error_message(), "get: destination example was restarted on canal server " + Here() +
                                       " (instance.properties changed); subscribe again");
}

TEST_F(SessionMessagesTest, AStoppedDestinationSaysSoAndWhy) {
  Start();
  auto c = Subscribed();
  registry_.Remove(kDest, "its instance.properties is gone");
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_message(),
            "get: destination example was stopped on canal server " + Here() + " (its instance.properties is gone)");

}

TEST_F(SessionMessagesTest, ADestinationStoppedInPlaceIsNotRunningWithoutZooKeeperWording) {
  Start();
  auto c = Subscribed();
  dest_->set_running(false);
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_message(), "get: destination example is not running on canal server " + Here());
}

TEST_F(SessionMessagesTest, WithZooKeeperALostDestinationIsNotActiveHere) {
  registry_.arbitrated = true;
  Start();
  auto c = Subscribed();
  registry_.Remove(kDest, "");
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_message(), "get: destination example is not active on canal server " + Here() +
                                       " any more (another server is active for it, or this one lost ZooKeeper); "
                                       "reconnect to the active server");
}

TEST_F(SessionMessagesTest, ACleanUnsubscribeLogsNoWarning) {
  Start();
  auto c = Subscribed();
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  c->Ack(kDest, kClient, r.messages.batch_id());
  ASSERT_TRUE(dest_->PutRange(2, 1).ok());
  ASSERT_TRUE(c->Get(kDest, kClient, 10).is_messages);  // one outstanding at the unsubscribe
  std::optional<protocol::Ack> ack = c->Unsubscribe(kDest, kClient);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 0);
  c.reset();
  std::this_thread::sleep_for(100ms);  // the session ends
  for (const std::string& line : sink_->LinesAtLeast(spdlog::level::warn)) ADD_FAILURE() << "logged at WARN: " << line;
}

TEST_F(SessionMessagesTest, AnAckTheServerNoLongerAppliesIs409AndTheBatchComesAgain) {
  registry_.arbitrated = true;
  Start();
  TestClient::GetReply r;
  auto c = HoldingABatch(3, &r);
  registry_.Remove(kDest, "");  // HA: another server took over (fenced here)
  c->Ack(kDest, kClient, r.messages.batch_id());
  std::optional<protocol::Ack> ack = c->ReadAck();  // the ack's error, sent at once
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 409);
  EXPECT_NE(ack->error_message().find("ack: destination example is not active"), std::string::npos)
      << ack->error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
  // Not applied: the cursor did not move, and the entries are there again.
  std::optional<LogPosition> cursor;
  meta::ClientIdentity id;
  id.destination = kDest;
  id.client_id = 1001;
  ASSERT_TRUE(dest_->meta()->GetCursor(id, &cursor).ok());
  EXPECT_FALSE(cursor.has_value());
  registry_.Put(dest_);
  auto d = Subscribed();
  r = d->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 3);
}

// The ack was applied just before the destination moved (HA), but the fenced
// meta manager refuses to make it durable: the new active server resumes from
// the durable cursor, so the batch comes again: 409, as for a refused ack.
// A flush failing while the destination is still served here stays 400.
TEST_F(SessionMessagesTest, AnAckThatCouldNotBeMadeDurableBecauseTheDestinationMovedIs409) {
  registry_.arbitrated = true;
  Start();
  TestClient::GetReply r;
  auto c = HoldingABatch(2, &r);
  // (The write begins at the ack: it fails while the destination is still
  // here; the destination is gone when the reply that reports it is sent.)
  dest_->counting_meta()->set_fail_flush(true);
  c->Ack(kDest, kClient, r.messages.batch_id());
  ASSERT_TRUE(c->QuietFor(100ms));  // applied: no answer
  registry_.Remove(kDest, "");
  r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), 409) << r.ack.error_message();
  EXPECT_NE(r.ack.error_message().find("durable"), std::string::npos) << r.ack.error_message();
  EXPECT_NE(r.ack.error_message().find("will be delivered again"), std::string::npos) << r.ack.error_message();
  // The session ends after that answer and only then lets go of the
  // subscription: the next client (same id) waits for it.
  ASSERT_TRUE(WaitFor([&] { return server_->sessions() == 0; }, 10s)) << server_->sessions() << " sessions";

  registry_.Put(dest_);
  dest_->counting_meta()->set_fail_flush(false);
  auto d = HoldingABatch(1, &r);
  dest_->counting_meta()->set_fail_flush(true);
  d->Ack(kDest, kClient, r.messages.batch_id());
  r = d->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), 507) << "not durable, while still served here: " << r.ack.error_message();
}

// HA closes the sessions of a destination this server stopped serving
// (fenced): the client is told why, 409 when it holds unacked batches (its
// acks cannot be applied any more), 400 otherwise; a waiting GET gets the
// error, never data.
TEST_F(SessionMessagesTest, ClosingADestinationsSessionsTellsTheClientWhy) {
  Start();
  TestClient::GetReply r;
  auto c = HoldingABatch(2, &r);
  server_->CloseDestination(kDest, "fenced (test)");
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 409);
  EXPECT_EQ(ack->error_message(), "destination example is not active on canal server " + Here() +
                                      " any more (fenced (test)); batch 1 was not acked here and will be delivered "
                                      "again: reconnect to the active server");
  EXPECT_TRUE(c->WaitClosed(5s));

  std::unique_ptr<TestClient> d;
  for (int i = 0; i < 100 && !d; ++i) {  // the first session releases the destination
    auto attempt = std::make_unique<TestClient>(server_->port());
    ASSERT_TRUE(attempt->Login("", ""));
    std::optional<protocol::Ack> sub = attempt->Subscribe(kDest, kClient);
    if (sub && sub->error_code() == 0) d = std::move(attempt);
    else std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(d);
  d->SendGet(kDest, kClient, 1000, 20'000, kUnitMillis);  // waits: a MEMSIZE batch is never full here
  std::this_thread::sleep_for(100ms);
  server_->CloseDestination(kDest, "fenced again (test)");
  r = d->ReadGetReply();
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages) << "a fenced server delivered data";
  EXPECT_EQ(r.ack.error_code(), 503);
  EXPECT_NE(r.ack.error_message().find("get: destination example is not active on canal server " + Here() +
                                       " any more (fenced again (test))"),
            std::string::npos)
      << r.ack.error_message();
  EXPECT_TRUE(d->WaitClosed(5s));
}

// A MEMSIZE batch of 1000 units is never full here: Canal's rule waits out
// the timeout; low latency returns on the first entry.
TEST_F(SessionMessagesTest, LowLatencyGetReturnsOnTheFirstEntryCanalsRuleWaitsTheTimeout) {
  Start();
  auto c = Subscribed();
  auto timed_get = [&](bool low_latency, int64_t timeout_ms, Clock::duration* took) {
    protocol::Get g;
    g.set_destination(kDest);
    g.set_client_id(kClient);
    g.set_fetch_size(1000);
    g.set_timeout(timeout_ms);
    g.set_unit(kUnitMillis);
    if (low_latency) g.set_low_latency(true);
    const Clock::time_point start = Clock::now();
    c->SendPacket(protocol::GET, g);
    std::thread producer([&] {
      std::this_thread::sleep_for(100ms);
      ASSERT_TRUE(dest_->PutEntry(7).ok());
    });
    TestClient::GetReply r = c->ReadGetReply();
    *took = Clock::now() - start;
    producer.join();
    return r;
  };
  Clock::duration took{};
  TestClient::GetReply r = timed_get(/*low_latency=*/true, 20'000, &took);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 1);
  EXPECT_LT(took, 10s) << "the low-latency get waited for the timeout";
  c->Ack(kDest, kClient, r.messages.batch_id());

  r = timed_get(/*low_latency=*/false, 1'000, &took);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 1);
  EXPECT_GE(took, 900ms) << "Canal's rule: a get waits for a full batch or its timeout";
}

TEST_F(SessionMessagesTest, TheServerKeyMakesEveryGetLowLatency) {
  Start("127.0.0.1", /*low_latency=*/true);
  auto c = Subscribed();
  const Clock::time_point start = Clock::now();
  c->SendGet(kDest, kClient, 1000, 20'000, kUnitMillis);
  std::thread producer([&] {
    std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(dest_->PutEntry(3).ok());
  });
  TestClient::GetReply r = c->ReadGetReply();
  producer.join();
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 1);
  EXPECT_LT(Clock::now() - start, 10s);
  // Timeout 0 (wait for a full batch) also ends on the first entry.
  c->Ack(kDest, kClient, r.messages.batch_id());
  c->SendGet(kDest, kClient, 1000, 0, kUnitMillis);
  std::thread later([&] {
    std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(dest_->PutEntry(4).ok());
  });
  r = c->ReadGetReply();
  later.join();
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.messages_size(), 1);
}

}  // namespace
}  // namespace canal::server
