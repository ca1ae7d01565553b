// ClusterConnector against scripted fake Canal servers: a fixed address list
// (no ZooKeeper needed), and the running node and client election in a
// ZooKeeper sandbox on port 12183 (those tests skip without ZooKeeper).
#include "canal/client/cluster_connector.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "canal/coord/canal_layout.h"
#include "canal/coord/zk_client.h"
#include "client/client_test_util.h"
#include "support/test_ports.h"
#include "support/zk_sandbox.h"

using canal::testing::TestPort;

namespace canal::client::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kZkPort = TestPort("zk_client_cluster");
const std::string kFilter = "shop\\..*";

// A loopback address nothing listens on: connecting is refused at once.
std::string DeadAddress() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

std::string AnInsert(int64_t offset) {
  return RowEntry("mysql-bin.000001", offset, "shop", "orders", ce::INSERT, {Row({}, {Col("id", "1")})});
}

ClusterConnectorOptions QuickOptions(std::vector<std::string> addresses = {}) {
  ClusterConnectorOptions o;
  o.addresses = std::move(addresses);
  o.destination = "example";
  o.username = "canal";
  o.password = "canal";
  o.connect_timeout = 2s;
  o.read_timeout = 2s;
  o.retry.max_attempts = 4;
  o.retry.initial_backoff = 20ms;
  o.retry.max_backoff = 100ms;
  o.retry.give_up_after = 5s;
  return o;
}

// What a server sees from a connector that failed over to it: login, the
// subscription (rollback of 0 first), then the rollback that brings back
// every unacked batch.
bool AcceptResubscription(FakeSession& s, pb::Sub* sub) {
  pb::ClientRollback rb;
  if (!s.AcceptLogin() || !s.AcceptSubscribe(sub) || !s.Expect(pb::CLIENTROLLBACK, &rb)) return false;
  EXPECT_EQ(rb.batch_id(), 0) << "the reconnect must roll back every batch";
  return true;
}

// --- options and calls out of order --------------------------------------------

TEST(ClusterConnectorOptionsTest, NeedsExactlyOneOfZooKeeperAndAddressList) {
  ClusterConnectorOptions o = QuickOptions();
  ClusterConnector neither(o);
  Status s = neither.Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "neither")) << s.ToString();

  o.addresses = {"127.0.0.1:1"};
  o.zk_servers = "127.0.0.1:2181";
  ClusterConnector both(o);
  s = both.Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "both")) << s.ToString();
}

TEST(ClusterConnectorOptionsTest, RefusesAddressWithoutPortEmptyDestinationAndZeroAttempts) {
  ClusterConnectorOptions o = QuickOptions();
  o.addresses = {"127.0.0.1"};
  EXPECT_EQ(ClusterConnector(o).Connect().code(), Status::Code::kInvalidArgument);
  o.addresses = {"127.0.0.1:1"};
  o.destination = "";
  EXPECT_EQ(ClusterConnector(o).Connect().code(), Status::Code::kInvalidArgument);
  o.destination = "a/b";
  EXPECT_EQ(ClusterConnector(o).Connect().code(), Status::Code::kInvalidArgument);
  o.destination = "example";
  o.retry.max_attempts = 0;
  Status s = ClusterConnector(o).Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "max_attempts")) << s.ToString();
}

TEST(ClusterConnectorOptionsTest, CallsBeforeConnectSayToConnect) {
  ClusterConnector c(QuickOptions({DeadAddress()}));
  Message m;
  Status s = c.GetWithoutAck(10, &m);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_TRUE(Contains(s.message(), "call Connect()")) << s.ToString();
  EXPECT_EQ(c.Subscribe().code(), Status::Code::kIOError);
  EXPECT_EQ(c.Ack(3).code(), Status::Code::kIOError);
  EXPECT_FALSE(c.connected());
}

// --- a fixed address list --------------------------------------------------------

TEST(ClusterConnectorFixedListTest, FailsOverInOrderResubscribingWithTheSameFilterAndRollingBack) {
  pb::Sub sub_a, sub_b;
  pb::Get get_b;
  FakeCanalServer a([&](FakeSession& s) {
    if (!s.AcceptLoginAndSubscribe(nullptr, &sub_a) || !s.AnswerGet(1, {AnInsert(100)})) return;
    s.Close();  // the server dies
  });
  FakeCanalServer b([&](FakeSession& s) {
    if (!AcceptResubscription(s, &sub_b) || !s.AnswerGet(2, {AnInsert(100), AnInsert(200)}, &get_b)) return;
    s.WaitForClose();
  });
  ClusterConnectorOptions o = QuickOptions();
  const std::string dead = DeadAddress();
  o.addresses = {dead, a.address(), b.address()};
  ClusterConnector c(o);
  ASSERT_TRUE(c.Connect().ok());
  EXPECT_EQ(c.current_address(), a.address()) << "the dead first address is skipped";
  ASSERT_TRUE(c.Subscribe(kFilter).ok());

  Message m;
  ASSERT_TRUE(c.GetWithoutAck(10, &m).ok());
  EXPECT_EQ(m.batch_id(), 1);
  Status s = c.GetWithoutAck(10, &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m.batch_id(), 2) << "the failed get is retried on the next server";
  EXPECT_EQ(m.raw_entry_count(), 2u);
  EXPECT_EQ(c.current_address(), b.address()) << "after " << a.address() << " comes " << b.address();
  EXPECT_EQ(c.reconnects(), 1);
  c.Disconnect();
  b.Join();
  EXPECT_EQ(sub_a.filter(), kFilter);
  EXPECT_EQ(sub_b.filter(), kFilter) << "resubscribed with the filter given to Subscribe";
  EXPECT_EQ(sub_b.client_id(), "1001");
  EXPECT_EQ(get_b.fetch_size(), 10);
}

TEST(ClusterConnectorFixedListTest, ServesTheCommonConnectorInterface) {
  InterfaceSession session;
  FakeCanalServer server([&](FakeSession& s) { session.Serve(s); });
  ClusterConnector c(QuickOptions({server.address()}));
  Message acked, empty;
  Status st = InterfaceSession::Run(c, kFilter, &acked, &empty);
  ASSERT_TRUE(st.ok()) << st.ToString();
  server.Join();
  session.ExpectRecorded(kFilter, acked, empty);
  EXPECT_EQ(c.reconnects(), 0);
}

TEST(ClusterConnectorFixedListTest, WrapsAroundToTheFirstAddress) {
  FakeCanalServer a(std::vector<FakeCanalServer::Script>{
      [](FakeSession& s) {
        if (s.AcceptLoginAndSubscribe()) s.Close();
      },
      [](FakeSession& s) {
        if (AcceptResubscription(s, nullptr) && s.AnswerGet(9, {AnInsert(4)})) s.WaitForClose();
      }});
  ClusterConnector c(QuickOptions({a.address(), DeadAddress()}));
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  Message m;
  Status s = c.GetWithoutAck(10, &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m.batch_id(), 9);
  EXPECT_EQ(c.current_address(), a.address());
}

TEST(ClusterConnectorFixedListTest, ExhaustedRetryBudgetNamesEveryAddressTried) {
  ClusterConnectorOptions o = QuickOptions();
  const std::string first = DeadAddress();
  const std::string second = DeadAddress();
  o.addresses = {first, second};
  o.retry.max_attempts = 3;
  ClusterConnector c(o);
  Status s = c.Connect();
  ASSERT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "gave up connecting after 3 attempt(s)")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "1: " + first)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "2: " + second)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "3: " + first)) << "wraps around: " << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "max_attempts 3")) << "names the setting: " << s.ToString();
  EXPECT_FALSE(c.connected());
}

TEST(ClusterConnectorFixedListTest, GiveUpTimeBoundsTheAttempts) {
  ClusterConnectorOptions o = QuickOptions();
  o.addresses = {DeadAddress()};
  o.retry.max_attempts = 1000;
  o.retry.initial_backoff = 50ms;
  o.retry.max_backoff = 50ms;
  o.retry.give_up_after = 300ms;
  ClusterConnector c(o);
  const auto start = Clock::now();
  Status s = c.Connect();
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_TRUE(Contains(s.message(), "give_up_after 300 ms")) << s.ToString();
}

TEST(ClusterConnectorFixedListTest, RefusedLoginIsReturnedWithoutRetrying) {
  FakeCanalServer a([](FakeSession& s) { s.RefuseLogin(400, "auth failed for user:canal"); });
  ClusterConnectorOptions o = QuickOptions();
  o.addresses = {a.address()};  // a retry would find no script and fail the fake server
  ClusterConnector c(o);
  Status s = c.Connect();
  EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "auth failed")) << s.ToString();
  EXPECT_FALSE(Contains(s.message(), "gave up")) << s.ToString();
}

TEST(ClusterConnectorFixedListTest, DestinationMissingOnOneServerMovesToTheNext) {
  FakeCanalServer a([](FakeSession& s) {
    pb::ClientRollback rb;
    pb::Sub sub;
    if (s.AcceptLogin() && s.Expect(pb::CLIENTROLLBACK, &rb) && s.Expect(pb::SUBSCRIPTION, &sub)) {
      s.SendAck(404, "destination example does not exist on canal server a");
      s.WaitForClose();
    }
  });
  pb::Sub sub_b;
  FakeCanalServer b([&](FakeSession& s) {
    if (s.AcceptLoginAndSubscribe(nullptr, &sub_b)) s.WaitForClose();
  });
  ClusterConnectorOptions o = QuickOptions();
  o.addresses = {a.address(), b.address()};
  o.filter = "crm\\.users";
  ClusterConnector c(o);
  ASSERT_TRUE(c.Connect().ok());
  Status s = c.Subscribe();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.current_address(), b.address());
  c.Disconnect();
  b.Join();
  EXPECT_EQ(sub_b.filter(), "crm\\.users") << "Subscribe() sends ClusterConnectorOptions::filter";
}

TEST(ClusterConnectorFixedListTest, BatchesOfTheReplacedConnectionAreNeitherAckedNorRolledBack) {
  FakeCanalServer a([](FakeSession& s) {
    if (s.AcceptLoginAndSubscribe() && s.AnswerGet(1, {AnInsert(10)}) && s.AnswerGet(2, {AnInsert(20)})) s.Close();
  });
  pb::ClientAck ack_b;
  FakeCanalServer b([&](FakeSession& s) {
    // Anything but the ack of batch 5 after the get fails Expect.
    if (AcceptResubscription(s, nullptr) && s.AnswerGet(5, {AnInsert(10)}) && s.Expect(pb::CLIENTACK, &ack_b)) {
      s.WaitForClose();
    }
  });
  ClusterConnector c(QuickOptions({a.address(), b.address()}));
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  Message m1, m2, m5;
  ASSERT_TRUE(c.GetWithoutAck(10, &m1).ok());
  ASSERT_TRUE(c.GetWithoutAck(10, &m2).ok());
  ASSERT_TRUE(c.GetWithoutAck(10, &m5).ok());
  ASSERT_EQ(m5.batch_id(), 5);

  Status s = c.Ack(m1.batch_id());
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), a.address())) << "names the server that handed it out: " << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "delivers it again")) << s.ToString();
  EXPECT_TRUE(c.Rollback(m2.batch_id()).ok()) << "the reconnect already rolled it back";
  EXPECT_TRUE(c.Ack(m5.batch_id()).ok());
  c.Disconnect();
  b.Join();
  EXPECT_EQ(ack_b.batch_id(), 5);
}

// Error 409 (an ack the server did not apply) answers the get after the ack:
// by its code alone (no "not active" in the text) the connector fails over,
// rolls back and gets the batch again; the caller sees no error.
TEST(ClusterConnectorFixedListTest, AnAckNotAppliedFailsOverAndTheBatchComesAgainWithoutAnError) {
  pb::ClientAck refused;
  FakeCanalServer a([&](FakeSession& s) {
    pb::Get get;
    if (s.AcceptLoginAndSubscribe() && s.AnswerGet(1, {AnInsert(10)}) && s.Expect(pb::CLIENTACK, &refused) &&
        s.Expect(pb::GET, &get) && s.SendAck(409, "the ack was not applied (test)")) {
      s.WaitForClose();
    }
  });
  pb::ClientAck applied;
  FakeCanalServer b([&](FakeSession& s) {
    if (AcceptResubscription(s, nullptr) && s.AnswerGet(7, {AnInsert(10)}) && s.Expect(pb::CLIENTACK, &applied)) {
      s.WaitForClose();
    }
  });
  ClusterConnector c(QuickOptions({a.address(), b.address()}));
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  Message m;
  ASSERT_TRUE(c.GetWithoutAck(10, &m).ok());
  ASSERT_TRUE(c.Ack(m.batch_id()).ok());  // sent; refused later
  Status s = c.GetWithoutAck(10, &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m.batch_id(), 7);
  EXPECT_EQ(c.current_address(), b.address());
  EXPECT_EQ(c.acks_not_applied(), 1);
  EXPECT_TRUE(c.Ack(7).ok());
  c.Disconnect();
  a.Join();
  b.Join();
  EXPECT_EQ(refused.batch_id(), 1);
  EXPECT_EQ(applied.batch_id(), 7);
}

TEST(ClientErrorsTest, IsAckNotAppliedIsTheServersCode409Only) {
  EXPECT_TRUE(IsAckNotApplied(Status::Aborted("x: the earlier ack of batch 1 failed: gone").WithSubcode(409)));
  EXPECT_FALSE(IsAckNotApplied(Status::Aborted("x: get refused: destination is not active").WithSubcode(400)));
  // The code decides, not the words: text that names 409 is not a 409.
  EXPECT_FALSE(IsAckNotApplied(Status::Aborted("x: the earlier ack failed: server error 409: gone")));
  EXPECT_FALSE(IsAckNotApplied(Status::IOError("x: server error 409: but not from the server").WithSubcode(409)));
  EXPECT_FALSE(IsAckNotApplied(Status::OK()));
}

TEST(ClientErrorsTest, IsAcksNotDurableIsTheServersCode507Only) {
  EXPECT_TRUE(IsAcksNotDurable(Status::Aborted("x: reworded, no mention of anything").WithSubcode(507)));
  EXPECT_FALSE(IsAcksNotDurable(Status::Aborted("x: the earlier ack of batch 1 failed: not durable").WithSubcode(400)));
  EXPECT_FALSE(IsAcksNotDurable(Status::Aborted("x: could not make the acks durable").WithSubcode(409)))
      << "409 is its own kind (not applied)";
  EXPECT_FALSE(IsAcksNotDurable(Status::IOError("x: server error 507").WithSubcode(507)));
  EXPECT_FALSE(IsAcksNotDurable(Status::OK()));
  EXPECT_FALSE(canal::proto::MeansNotServedHere(kErrorAcksNotDurable)) << "no failover on 507: reconnect";
}

// Canal's own Java server sends 400 for everything: its "not started here"
// phrase is the one text a failover is decided on.
TEST(ClusterConnectorFixedListTest, CanalJavaServersShouldStartFirstMovesToTheNext) {
  FakeCanalServer a([](FakeSession& s) {
    pb::ClientRollback rb;
    pb::Sub sub;
    if (s.AcceptLogin() && s.Expect(pb::CLIENTROLLBACK, &rb) && s.Expect(pb::SUBSCRIPTION, &sub)) {
      s.SendAck(400, "something goes wrong with channel:[id: 0x1], exception=...: destination:example should start first");
      s.WaitForClose();
    }
  });
  FakeCanalServer b([&](FakeSession& s) {
    if (s.AcceptLoginAndSubscribe()) s.WaitForClose();
  });
  ClusterConnector c(QuickOptions({a.address(), b.address()}));
  ASSERT_TRUE(c.Connect().ok());
  Status s = c.Subscribe();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.current_address(), b.address());
  c.Disconnect();
}

TEST(ClusterConnectorFixedListTest, ServerErrorNotAboutServingIsReturnedWithoutFailingOver) {
  FakeCanalServer a([](FakeSession& s) {
    pb::Get get;
    if (s.AcceptLoginAndSubscribe() && s.Expect(pb::GET, &get) && s.SendAck(400, "get refused for a reason of its own") &&
        s.AnswerGet(3, {AnInsert(1)})) {
      s.WaitForClose();
    }
  });
  ClusterConnector c(QuickOptions({a.address(), DeadAddress()}));
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  Message m;
  Status s = c.GetWithoutAck(10, &m);
  EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "of its own")) << s.ToString();
  s = c.GetWithoutAck(10, &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m.batch_id(), 3) << "the same connection serves the next get";
  EXPECT_EQ(c.reconnects(), 0);
}

// --- ZooKeeper: the running node and the client election ---------------------------

class ClusterConnectorZkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { zk_ = canal::testing::StartSuiteZk(kZkPort, &zk_error_); }
  static void TearDownTestSuite() { zk_.reset(); }

  void SetUp() override {
    CANAL_REQUIRE_ZK(zk_, zk_error_);
    coord::ZkOptions zo;
    zo.servers = zk_->servers();
    ASSERT_TRUE(coord::ZkClient::Create(zo, &admin_).ok());
    ASSERT_TRUE(admin_->WaitConnected(10s).ok());
    ASSERT_TRUE(admin_->Delete("/otter", /*recursive=*/true).ok());
  }

  void TearDown() override {
    if (admin_) admin_->Close();
  }

  void SetRunning(const std::string& destination, const std::string& address) {
    ASSERT_TRUE(admin_->SetOrCreate(coord::layout::ServerRunningPath(destination),
                                    R"({"active":true,"address":")" + address + R"(","cid":1})")
                    .ok());
  }

  // Another client ("x:1") is the active client of example/1001 while the
  // admin session lasts.
  void HoldClientNodeAsAnotherClient() {
    bool created = false;
    ASSERT_TRUE(admin_
                    ->CreateNode(coord::layout::ClientRunningPath("example", "1001"),
                                 R"({"active":true,"address":"x:1","clientId":1001})", coord::ZkCreateMode::kEphemeral,
                                 true, &created)
                    .ok());
    ASSERT_TRUE(created);
  }

  ClusterConnectorOptions ZkOptions(bool client_ha) const {
    ClusterConnectorOptions o = QuickOptions();
    o.zk_servers = zk_->servers();
    o.client_ha = client_ha;
    o.zk_session_timeout_ms = 2000;
    return o;
  }

  static std::unique_ptr<canal::testing::ZkSandbox> zk_;
  static std::string zk_error_;
  std::unique_ptr<coord::ZkClient> admin_;
};

std::unique_ptr<canal::testing::ZkSandbox> ClusterConnectorZkTest::zk_;
std::string ClusterConnectorZkTest::zk_error_;

TEST_F(ClusterConnectorZkTest, FollowsTheRunningNodeAndMovesWithItWhenTheServerGoes) {
  std::promise<void> moved;
  auto moved_future = moved.get_future();
  pb::Sub sub_b;
  FakeCanalServer a([&](FakeSession& s) {
    if (!s.AcceptLoginAndSubscribe() || !s.AnswerGet(1, {AnInsert(100)})) return;
    moved_future.wait_for(5s);
    s.Close();
  });
  FakeCanalServer b([&](FakeSession& s) {
    if (AcceptResubscription(s, &sub_b) && s.AnswerGet(2, {AnInsert(100)})) s.WaitForClose();
  });
  SetRunning("example", a.address());
  ClusterConnector c(ZkOptions(false));
  ASSERT_TRUE(c.Connect().ok());
  EXPECT_EQ(c.current_address(), a.address());
  ASSERT_TRUE(c.Subscribe(kFilter).ok());
  Message m;
  ASSERT_TRUE(c.GetWithoutAck(10, &m).ok());
  EXPECT_EQ(m.batch_id(), 1);

  SetRunning("example", b.address());
  moved.set_value();
  Status s = c.GetWithoutAck(10, &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m.batch_id(), 2) << "served by B";
  EXPECT_EQ(c.current_address(), b.address());
  c.Disconnect();
  b.Join();
  EXPECT_EQ(sub_b.filter(), kFilter);
}

TEST_F(ClusterConnectorZkTest, MovedRunningNodeTakesTheNextGetToTheNewServerEvenIfTheOldOneLives) {
  bool a_saw_close = false;
  FakeCanalServer a([&](FakeSession& s) {
    if (s.AcceptLoginAndSubscribe()) a_saw_close = s.WaitForClose();
  });
  FakeCanalServer b([&](FakeSession& s) {
    if (AcceptResubscription(s, nullptr) && s.AnswerGet(8, {AnInsert(1)})) s.WaitForClose();
  });
  SetRunning("example", a.address());
  ClusterConnector c(ZkOptions(false));
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  SetRunning("example", b.address());
  std::this_thread::sleep_for(200ms);  // the watch arrives asynchronously
  Message m;
  Status s = c.GetWithoutAck(10, &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m.batch_id(), 8);
  EXPECT_EQ(c.current_address(), b.address());
  a.Join();
  EXPECT_TRUE(a_saw_close) << "the old server's connection is closed";
}

TEST_F(ClusterConnectorZkTest, MissingOrMalformedRunningNodeGivesUpSayingWhatWasRead) {
  ClusterConnectorOptions o = ZkOptions(false);
  o.retry.max_attempts = 2;
  Status s = ClusterConnector(o).Connect();
  ASSERT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "/otter/canal/destinations/example/running does not exist")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "2 attempt(s)")) << s.ToString();

  o.retry.max_attempts = 1;
  ASSERT_TRUE(admin_->SetOrCreate(coord::layout::ServerRunningPath("example"), "{\"active\":true,\"address\":5").ok());
  s = ClusterConnector(o).Connect();
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "not a JSON object")) << s.ToString();
  ASSERT_TRUE(admin_->SetOrCreate(coord::layout::ServerRunningPath("example"), R"({"active":true,"address":7})").ok());
  s = ClusterConnector(o).Connect();
  EXPECT_TRUE(Contains(s.message(), "no \"address\"")) << s.ToString();
  ASSERT_TRUE(admin_->SetOrCreate(coord::layout::ServerRunningPath("example"), R"({"active":false,"address":"127.0.0.1:1"})").ok());
  s = ClusterConnector(o).Connect();
  EXPECT_TRUE(Contains(s.message(), "active:false")) << s.ToString();
}

TEST_F(ClusterConnectorZkTest, ARunningNodeThatAppearsLaterWakesTheRetryEarly) {
  FakeCanalServer a([](FakeSession& s) {
    if (s.AcceptLogin()) s.WaitForClose();
  });
  ClusterConnectorOptions o = ZkOptions(false);
  o.retry.max_attempts = 3;
  o.retry.initial_backoff = 4s;  // without the watch, the second attempt would come after 4 s
  o.retry.max_backoff = 4s;
  o.retry.give_up_after = 20s;
  ClusterConnector c(o);
  std::thread writer([&] {
    std::this_thread::sleep_for(300ms);
    SetRunning("example", a.address());
  });
  const auto start = Clock::now();
  Status s = c.Connect();
  writer.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_EQ(c.current_address(), a.address());
}

TEST_F(ClusterConnectorZkTest, OnlyOneClientPerClientIdIsActiveAndTheOtherTakesOverWhenItCloses) {
  FakeCanalServer a(std::vector<FakeCanalServer::Script>{
      [](FakeSession& s) {
        if (s.AcceptLoginAndSubscribe()) s.WaitForClose();
      },
      [](FakeSession& s) {
        if (s.AcceptLoginAndSubscribe() && s.AnswerGet(4, {AnInsert(1)})) s.WaitForClose();
      }});
  SetRunning("example", a.address());
  ClusterConnectorOptions o1 = ZkOptions(true);
  o1.client_address = "10.0.0.1:1";
  ClusterConnectorOptions o2 = ZkOptions(true);
  o2.client_address = "10.0.0.2:2";
  o2.election_wait = 300ms;
  ClusterConnector first(o1), second(o2);

  ASSERT_TRUE(first.Connect().ok());
  ASSERT_TRUE(first.Subscribe().ok());
  EXPECT_TRUE(first.is_active_client());
  std::string body;
  ASSERT_TRUE(admin_->Get(coord::layout::ClientRunningPath("example", "1001"), &body).ok());
  EXPECT_EQ(body, R"({"active":true,"address":"10.0.0.1:1","clientId":1001})");

  Status s = second.Connect();
  EXPECT_TRUE(IsNotActiveClient(s)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "10.0.0.1:1")) << "names the holder: " << s.ToString();
  EXPECT_FALSE(second.is_active_client());
  EXPECT_FALSE(second.connected()) << "a standby does not connect";
  Message m;
  EXPECT_TRUE(IsNotActiveClient(second.GetWithoutAck(10, &m)));

  // A standby waiting without a limit takes over as soon as the first closes.
  o2.election_wait = std::chrono::milliseconds(-1);
  ClusterConnector waiting(o2);
  std::promise<Status> result;
  std::thread t([&] { result.set_value(waiting.Connect()); });
  std::this_thread::sleep_for(200ms);
  const auto closed = Clock::now();
  first.Disconnect();
  auto f = result.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  t.join();
  s = f.get();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_LT(Clock::now() - closed, 2s) << "the watch, not the session timeout, hands over";
  EXPECT_TRUE(waiting.is_active_client());
  ASSERT_TRUE(admin_->Get(coord::layout::ClientRunningPath("example", "1001"), &body).ok());
  EXPECT_EQ(body, R"({"active":true,"address":"10.0.0.2:2","clientId":1001})");
  ASSERT_TRUE(waiting.Subscribe().ok());
  ASSERT_TRUE(waiting.GetWithoutAck(10, &m).ok());
  EXPECT_EQ(m.batch_id(), 4);
}

TEST_F(ClusterConnectorZkTest, DisconnectEndsAConnectWaitingForTheElection) {
  ASSERT_NO_FATAL_FAILURE(HoldClientNodeAsAnotherClient());
  SetRunning("example", DeadAddress());
  ClusterConnector c(ZkOptions(true));  // election_wait: forever
  std::promise<Status> result;
  std::thread t([&] { result.set_value(c.Connect()); });
  std::this_thread::sleep_for(200ms);
  c.Disconnect();
  auto f = result.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  t.join();
  const Status s = f.get();
  EXPECT_TRUE(IsNotActiveClient(s)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "Disconnect() ended the wait")) << s.ToString();
}

TEST_F(ClusterConnectorZkTest, ClientRunningNodeHoldsHostnamePidByDefaultAndAStringForANonNumericId) {
  FakeCanalServer a(std::vector<FakeCanalServer::Script>{[](FakeSession& s) {
                                                           if (s.AcceptLogin()) s.WaitForClose();
                                                         },
                                                         [](FakeSession& s) {
                                                           if (s.AcceptLogin()) s.WaitForClose();
                                                         }});
  SetRunning("example", a.address());
  {
    ClusterConnector c(ZkOptions(true));
    ASSERT_TRUE(c.Connect().ok());
    std::string body;
    ASSERT_TRUE(admin_->Get(coord::layout::ClientRunningPath("example", "1001"), &body).ok());
    const auto json = nlohmann::json::parse(body, nullptr, false);
    ASSERT_TRUE(json.is_object()) << body;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    EXPECT_EQ(json.value("address", ""), std::string(host) + ":" + std::to_string(::getpid()));
  }
  ClusterConnectorOptions o = ZkOptions(true);
  o.client_id = "etl-7";
  o.client_address = "host:42";
  ClusterConnector c(o);
  ASSERT_TRUE(c.Connect().ok());
  std::string body;
  ASSERT_TRUE(admin_->Get(coord::layout::ClientRunningPath("example", "etl-7"), &body).ok());
  EXPECT_EQ(body, R"({"active":true,"address":"host:42","clientId":"etl-7"})");
}

TEST_F(ClusterConnectorZkTest, LosingTheClientNodeStopsConsumingUntilReElected) {
  FakeCanalServer a(std::vector<FakeCanalServer::Script>{
      [](FakeSession& s) {
        if (s.AcceptLoginAndSubscribe() && s.AnswerGet(1, {AnInsert(1)})) s.WaitForClose();
      },
      [](FakeSession& s) {
        if (s.AcceptLoginAndSubscribe() && s.AnswerGet(1, {AnInsert(1)})) s.WaitForClose();
      }});
  SetRunning("example", a.address());
  ClusterConnector c(ZkOptions(true));
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  Message m;
  ASSERT_TRUE(c.GetWithoutAck(10, &m).ok());

  ASSERT_TRUE(admin_->Delete(coord::layout::ClientRunningPath("example", "1001")).ok());
  Status s;
  for (int i = 0; i < 50 && s.ok(); ++i) {  // the watch arrives asynchronously
    std::this_thread::sleep_for(20ms);
    s = c.Ack(m.batch_id());
  }
  ASSERT_TRUE(IsNotActiveClient(s)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "was deleted")) << s.ToString();
  EXPECT_FALSE(c.connected());
  EXPECT_FALSE(c.is_active_client());
  EXPECT_TRUE(IsNotActiveClient(c.GetWithoutAck(10, &m))) << "stays stopped until Connect()";

  ASSERT_TRUE(c.Connect().ok());
  EXPECT_TRUE(c.is_active_client());
  ASSERT_TRUE(c.Subscribe().ok());
  ASSERT_TRUE(c.GetWithoutAck(10, &m).ok());
  EXPECT_EQ(m.batch_id(), 1) << "served again after the re-election";
}

TEST_F(ClusterConnectorZkTest, ZooKeeperGoneLongerThanTheSessionTimeoutStopsConsuming) {
  FakeCanalServer a([](FakeSession& s) {
    if (s.AcceptLoginAndSubscribe()) s.WaitForClose(10s);
  });
  SetRunning("example", a.address());
  ClusterConnectorOptions o = ZkOptions(true);
  o.zk_session_timeout_ms = 1000;  // the sandbox's minimum
  ClusterConnector c(o);
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  admin_->Close();
  admin_.reset();
  ASSERT_TRUE(zk_->Stop()) << zk_->error();
  std::this_thread::sleep_for(1500ms);
  Message m;
  Status s = c.GetWithoutAck(10, &m);
  EXPECT_TRUE(IsNotActiveClient(s)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "unreachable")) << s.ToString();
  EXPECT_FALSE(c.connected());
  ASSERT_TRUE(zk_->Start()) << zk_->error();
}

// --- canal-cli --zk ------------------------------------------------------------------

class CanalCliZkTest : public ClusterConnectorZkTest {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BuiltProgramPath("canal-cli"))) GTEST_SKIP() << "canal-cli is not built";
    ClusterConnectorZkTest::SetUp();
  }

  // A server that serves one row, expects its ack, and waits for the hang-up.
  static void ServeOneRow(FakeSession& s) {
    pb::ClientAck ack;
    if (s.AcceptLoginAndSubscribe() && s.AnswerGet(1, {AnInsert(100)}) && s.Expect(pb::CLIENTACK, &ack)) {
      EXPECT_EQ(ack.batch_id(), 1);
      s.WaitForClose();
    }
  }
};

TEST_F(CanalCliZkTest, FollowsTheRunningNode) {
  FakeCanalServer a(ServeOneRow);
  SetRunning("example", a.address());
  BuiltProgram cli("canal-cli", {"--zk", zk_->servers(), "--destination", "example", "--count", "1", "--json"});
  ASSERT_EQ(cli.Wait(), 0) << cli.err();
  EXPECT_TRUE(Contains(cli.out(), R"("table":"orders","type":"INSERT")")) << cli.out();
}

TEST_F(CanalCliZkTest, WaitsAsStandbyWhileAnotherClientIsActive) {
  ASSERT_NO_FATAL_FAILURE(HoldClientNodeAsAnotherClient());
  FakeCanalServer a(ServeOneRow);
  SetRunning("example", a.address());
  BuiltProgram cli("canal-cli", {"--zk", zk_->servers(), "--destination", "example", "--count", "1"});
  std::string err;
  for (int i = 0; i < 100 && !Contains(err, "standby"); ++i) {
    std::this_thread::sleep_for(20ms);
    err = cli.err();
  }
  EXPECT_TRUE(Contains(err, "standby")) << err;
  EXPECT_TRUE(Contains(err, "x:1")) << "names the active client: " << err;
  ASSERT_TRUE(admin_->Delete(coord::layout::ClientRunningPath("example", "1001")).ok());
  ASSERT_EQ(cli.Wait(), 0) << cli.err();
  EXPECT_TRUE(Contains(cli.out(), "eventType : INSERT")) << cli.out();
}

TEST_F(CanalCliZkTest, NoClientHaConsumesWithoutTheElection) {
  ASSERT_NO_FATAL_FAILURE(HoldClientNodeAsAnotherClient());
  FakeCanalServer a(ServeOneRow);
  SetRunning("example", a.address());
  BuiltProgram cli("canal-cli",
                   {"--zk", zk_->servers(), "--destination", "example", "--count", "1", "--no-client-ha"});
  ASSERT_EQ(cli.Wait(), 0) << cli.err();
  EXPECT_TRUE(Contains(cli.out(), "eventType : INSERT")) << cli.out();
}

TEST(CanalCliClusterOptionsTest, AddressAndZkTogetherOrNeitherIsAUsageError) {
  if (!std::filesystem::exists(BuiltProgramPath("canal-cli"))) GTEST_SKIP() << "canal-cli is not built";
  BuiltProgram both("canal-cli", {"--zk", "127.0.0.1:1", "--address", "127.0.0.1:1", "--destination", "example"});
  EXPECT_EQ(both.Wait(), 1);
  EXPECT_TRUE(Contains(both.err(), "excludes")) << both.err();
  BuiltProgram neither("canal-cli", {"--destination", "example"});
  EXPECT_EQ(neither.Wait(), 1);
  EXPECT_TRUE(Contains(neither.err(), "--address or --zk")) << neither.err();
}

}  // namespace
}  // namespace canal::client::test
