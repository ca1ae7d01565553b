// Connector against a scripted fake Canal server: the handshake, every request
// and its packet, errors the server sends (including the late answer to a failed
// ack), and bytes no Canal server would send.
#include "canal/client/connector.h"

#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "canal/proto/wire.h"
#include "client/client_test_util.h"

namespace canal::client::test {
namespace {

using std::chrono::milliseconds;

// --- handshake and authentication ---

// The authentication a Connector with adjusted options sends to a server that accepts it.
pb::ClientAuth AuthSentBy(const SubscribedConnector::AdjustOptions& adjust) {
  pb::ClientAuth auth;
  FakeCanalServer server([&](FakeSession& s) { s.AcceptLogin(&auth); s.WaitForClose(); });
  ConnectorOptions o = OptionsFor(server);
  adjust(o);
  Connector c(o);
  Status st = c.Connect();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(c.connected());
  c.Disconnect();
  server.Join();
  return auth;
}

TEST(ConnectorConnect, SendsPasswordScrambledWithTheSeedAndTheIdleTimeout) {
  const pb::ClientAuth auth = AuthSentBy([](ConnectorOptions& o) { o.idle_timeout = milliseconds(120'000); });
  EXPECT_EQ(auth.username(), "canal");
  // The protocol doc's vector: seed 01..08, password "canal".
  EXPECT_EQ(auth.password(), "7de44690d8e53782cb61804a2455c284a3bbfb06");
  EXPECT_EQ(auth.net_read_timeout(), 120'000);
  EXPECT_EQ(auth.net_write_timeout(), 120'000);
  // Subscription is a separate step: the auth names no destination.
  EXPECT_EQ(auth.destination(), "");
}

TEST(ConnectorConnect, EmptyPasswordSendsNoToken) {
  const pb::ClientAuth auth = AuthSentBy([](ConnectorOptions& o) {
    o.username = "";
    o.password = "";
  });
  EXPECT_EQ(auth.password(), "");
}

TEST(ConnectorConnect, HandshakeWithoutVersionFieldMeansVersionOne) {
  FakeCanalServer server([](FakeSession& s) {
    pb::Handshake hs;
    hs.set_seeds(fake::TestSeed());
    s.SendPacket(pb::HANDSHAKE, hs.SerializeAsString(), /*version=*/-1);
    pb::ClientAuth auth;
    s.Expect(pb::CLIENTAUTHENTICATION, &auth);
    s.SendAck();
    s.WaitForClose();
  });
  Connector c(OptionsFor(server));
  EXPECT_TRUE(c.Connect().ok());
}

TEST(ConnectorConnect, RefusesHandshakeVersionOtherThanOne) {
  FakeCanalServer server([](FakeSession& s) {
    s.SendHandshake(fake::TestSeed(), /*version=*/2);
    EXPECT_TRUE(s.WaitForClose()) << "the client must hang up, not authenticate";
  });
  Connector c(OptionsFor(server));
  Status st = c.Connect();
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "version 2")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), server.address())) << st.ToString();
  EXPECT_FALSE(c.connected());
}

TEST(ConnectorConnect, RefusesAFirstPacketThatIsNotAHandshake) {
  FakeCanalServer server([](FakeSession& s) { s.SendAck(); s.WaitForClose(); });
  Connector c(OptionsFor(server));
  Status st = c.Connect();
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_FALSE(c.connected());
}

TEST(ConnectorConnect, AuthenticationErrorCarriesServerCodeAndText) {
  FakeCanalServer server([](FakeSession& s) {
    s.RefuseLogin(400, "auth failed for user:canal");
    s.WaitForClose();
  });
  Connector c(OptionsFor(server));
  Status st = c.Connect();
  EXPECT_EQ(st.code(), Status::Code::kAborted) << st.ToString();
  EXPECT_EQ(ServerErrorCode(st), 400);
  EXPECT_TRUE(Contains(st.message(), "auth failed for user:canal")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "canal.passwd")) << "names the fix: " << st.ToString();
  EXPECT_FALSE(c.connected());
}

TEST(ConnectorConnect, NoListenerIsIOErrorNamingTheAddress) {
  std::string address;
  {
    FakeCanalServer server(std::vector<FakeCanalServer::Script>{});
    address = server.address();
  }  // the port is closed again
  ConnectorOptions o;
  o.address = address;
  o.destination = "example";
  Connector c(o);
  Status st = c.Connect();
  EXPECT_EQ(st.code(), Status::Code::kIOError) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), address)) << st.ToString();
}

TEST(ConnectorConnect, UnusableOptionsAreInvalidArgument) {
  for (const char* address : {"", "localhost", "localhost:", ":11111", "localhost:0", "localhost:70000", "h:1x"}) {
    ConnectorOptions o;
    o.address = address;
    o.destination = "example";
    Connector c(o);
    EXPECT_EQ(c.Connect().code(), Status::Code::kInvalidArgument) << address;
  }
  ConnectorOptions o;
  o.address = "127.0.0.1:11111";
  Connector c(o);
  Status st = c.Connect();
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(st.message(), "destination")) << st.ToString();
}

TEST(ConnectorConnect, CallsBeforeConnectAreIOErrorsThatSayConnectFirst) {
  ConnectorOptions o;
  o.address = "127.0.0.1:1";
  o.destination = "example";
  Connector c(o);
  Message m;
  for (Status st : {c.Subscribe(), c.GetWithoutAck(10, &m), c.Ack(1), c.Rollback(), c.Unsubscribe(),
                    c.AckAndGetWithoutAck(5, 10, 100, TimeUnit::kMilliseconds, &m)}) {
    EXPECT_EQ(st.code(), Status::Code::kIOError) << st.ToString();
    EXPECT_TRUE(Contains(st.message(), "Connect()")) << st.ToString();
  }
  EXPECT_EQ(m.batch_id(), -1);
}

// --- subscribe / unsubscribe ---

TEST(ConnectorSubscribe, SendsRollbackOfBatchZeroThenSubscriptionWithFilter) {
  pb::ClientRollback rb;
  pb::Sub sub;
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLogin();
    s.Expect(pb::CLIENTROLLBACK, &rb);
    s.Expect(pb::SUBSCRIPTION, &sub);
    s.SendAck();
    s.WaitForClose();
  });
  Connector c(OptionsFor(server));
  ASSERT_TRUE(c.Connect().ok());
  Status st = c.Subscribe("shop\\..*");
  EXPECT_TRUE(st.ok()) << st.ToString();
  c.Disconnect();
  server.Join();
  EXPECT_EQ(rb.destination(), "example");
  EXPECT_EQ(rb.client_id(), "1001");
  EXPECT_EQ(rb.batch_id(), 0);
  EXPECT_EQ(sub.destination(), "example");
  EXPECT_EQ(sub.client_id(), "1001");
  EXPECT_EQ(sub.filter(), "shop\\..*");
}

TEST(ConnectorSubscribe, ServerRefusalIsReturnedWithItsCodeAndTextAndClosesTheConnection) {
  FakeCanalServer server({[](FakeSession& s) {
                            s.AcceptLogin();
                            pb::ClientRollback rb;
                            pb::Sub sub;
                            s.Expect(pb::CLIENTROLLBACK, &rb);
                            s.Expect(pb::SUBSCRIPTION, &sub);
                            // Canal refuses both the rollback and the subscription.
                            s.SendAck(401, "destination:nope should start first");
                            s.SendAck(401, "destination:nope should start first");
                            s.WaitForClose();
                          },
                          [](FakeSession& s) {
                            s.AcceptLoginAndSubscribe();
                            s.WaitForClose();
                          }});
  Connector c(OptionsFor(server));
  ASSERT_TRUE(c.Connect().ok());
  Status st = c.Subscribe();
  EXPECT_EQ(st.code(), Status::Code::kAborted);
  EXPECT_EQ(ServerErrorCode(st), 401);
  EXPECT_TRUE(Contains(st.message(), "destination:nope should start first")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "subscription")) << st.ToString();
  // A second answer may be in flight: the stream is given up, a new one works.
  EXPECT_FALSE(c.connected());
  ASSERT_TRUE(c.Connect().ok());
  EXPECT_TRUE(c.Subscribe().ok());
}

TEST(ConnectorSubscribe, UnsubscribeSendsUnsubAndReadsTheAck) {
  pb::Unsub unsub;
  SubscribedConnector t([&](FakeSession& s) {
    s.Expect(pb::UNSUBSCRIPTION, &unsub);
    s.SendAck();
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  EXPECT_TRUE(t.client.Unsubscribe().ok());
  t.Finish();
  EXPECT_EQ(unsub.destination(), "example");
  EXPECT_EQ(unsub.client_id(), "1001");
}

// --- get / ack / rollback ---

TEST(ConnectorGet, ReturnsTheBatchWithRawEntriesAndParsesThemOnDemand) {
  const std::vector<std::string> entries = {
      TransactionEntry(ce::TRANSACTIONBEGIN, "mysql-bin.000003", 100, "42"),
      RowEntry("mysql-bin.000003", 200, "shop", "orders", ce::INSERT, {Row({}, {Col("id", "1", true)})}),
      TransactionEntry(ce::TRANSACTIONEND, "mysql-bin.000003", 300, "9001")};
  pb::Get get;
  SubscribedConnector t([&](FakeSession& s) { s.AnswerGet(7, entries, &get); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(500, 250, TimeUnit::kMilliseconds, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(m.batch_id(), 7);
  ASSERT_EQ(m.raw_entry_count(), 3u);
  EXPECT_EQ(m.raw_entry(1), entries[1]);  // bytes exactly as sent
  const auto& parsed = m.entries();
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(EntryTypeOf(parsed[0]), ce::TRANSACTIONBEGIN);
  EXPECT_EQ(EntryTypeOf(parsed[1]), ce::ROWDATA);
  EXPECT_EQ(parsed[1].header().tablename(), "orders");
  ce::RowChange rc;
  ASSERT_TRUE(rc.ParseFromString(parsed[1].storevalue()));
  EXPECT_EQ(EventTypeOf(rc), ce::INSERT);
  EXPECT_EQ(rc.rowdatas(0).aftercolumns(0).value(), "1");
  t.Finish();
  EXPECT_EQ(get.destination(), "example");
  EXPECT_EQ(get.client_id(), "1001");
  EXPECT_EQ(get.fetch_size(), 500);
  ASSERT_TRUE(get.has_timeout());
  EXPECT_EQ(get.timeout(), 250);
  ASSERT_TRUE(get.has_unit());
  EXPECT_EQ(get.unit(), 2);
  ASSERT_TRUE(get.has_auto_ack());
  EXPECT_FALSE(get.auto_ack());
}

TEST(ConnectorGet, AMessageReusedForEveryGetReadsEachBatchIntoTheBufferTheLastOneHeld) {
  auto batch = [](int n, size_t value_size, char fill) {
    std::vector<std::string> entries;
    for (int i = 0; i < n; ++i) {
      const std::string value(value_size, static_cast<char>(fill + i));
      entries.push_back(RowEntry("f", 100 + i, "d", "t", ce::INSERT, {Row({}, {Col("v", value.c_str())})}));
    }
    return entries;
  };
  const auto big1 = batch(40, 3000, 'a'), small = batch(2, 10, 'k'), big2 = batch(40, 3000, 'p'),
             bigger = batch(60, 5000, 'A');
  SubscribedConnector t([&](FakeSession& s) {
    s.AnswerGet(11, big1);
    s.AnswerGet(12, small);
    s.AnswerGet(13, big2);
    s.AnswerGet(14, bigger);
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  auto expect_batch = [](const Message& m, int64_t id, const std::vector<std::string>& entries) {
    EXPECT_EQ(m.batch_id(), id);
    ASSERT_EQ(m.raw_entry_count(), entries.size());
    for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(m.raw_entry(i), entries[i]) << "batch " << id << " entry " << i;
  };
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(100, &m).ok());
  expect_batch(m, 11, big1);
  const char* first_buffer = m.raw_entry(0).data();
  const Message kept = m;  // a copy keeps its own bytes
  ASSERT_TRUE(t.client.GetWithoutAck(100, &m).ok());
  expect_batch(m, 12, small);
  ASSERT_TRUE(t.client.GetWithoutAck(100, &m).ok());
  expect_batch(m, 13, big2);
  EXPECT_EQ(m.raw_entry(0).data(), first_buffer) << "the third batch is read into the buffer the first one held";
  ASSERT_TRUE(t.client.GetWithoutAck(100, &m).ok());  // larger than the buffer it gets: grows it
  expect_batch(m, 14, bigger);
  expect_batch(kept, 11, big1);
  t.Finish();
}

TEST(ConnectorGet, NoTimeoutFormSendsMinusOneAndBatchSizeZeroMeansThousand) {
  pb::Get get;
  SubscribedConnector t([&](FakeSession& s) { s.AnswerGet(-1, {}, &get); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(0, &m).ok());
  t.Finish();
  EXPECT_EQ(get.fetch_size(), 1000);
  EXPECT_EQ(get.timeout(), -1);
}

TEST(ConnectorGet, EmptyBatchIsIdMinusOneAndGetDoesNotAckIt) {
  SubscribedConnector t([](FakeSession& s) {
    s.AnswerGet(-1, {});
    // Get() must go straight to the next GET: no CLIENTACK for an empty batch.
    s.AnswerGet(-1, {});
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.Get(10, &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
  EXPECT_TRUE(m.empty());
  EXPECT_TRUE(m.entries().empty());
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
}

TEST(ConnectorGet, GetAcksTheBatchItReturns) {
  pb::ClientAck ack;
  SubscribedConnector t([&](FakeSession& s) {
    s.AnswerGet(3, {RowEntry("f", 4, "d", "t", ce::DELETE, {Row({Col("id", "1")}, {})})});
    s.Expect(pb::CLIENTACK, &ack);
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.Get(10, 1, TimeUnit::kSeconds, &m).ok());
  EXPECT_EQ(m.batch_id(), 3);
  t.Finish();
  EXPECT_EQ(ack.batch_id(), 3);
  EXPECT_EQ(ack.destination(), "example");
  EXPECT_EQ(ack.client_id(), "1001");
}

TEST(ConnectorGet, ServesTheCommonConnectorInterface) {
  InterfaceSession session;
  FakeCanalServer server([&](FakeSession& s) { session.Serve(s); });
  Connector c(OptionsFor(server));
  Message acked, empty;
  Status st = InterfaceSession::Run(c, "shop\\..*", &acked, &empty);
  ASSERT_TRUE(st.ok()) << st.ToString();
  server.Join();
  session.ExpectRecorded("shop\\..*", acked, empty);
}

TEST(ConnectorGet, WaitsForTheServerSideTimeoutBeyondTheReadTimeout) {
  SubscribedConnector t(
      [](FakeSession& s) {
        pb::Get get;
        s.Expect(pb::GET, &get);
        std::this_thread::sleep_for(milliseconds(600));  // the server's own wait
        s.SendMessages(-1, {});
      },
      [](ConnectorOptions& o) { o.read_timeout = milliseconds(300); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(10, 500, TimeUnit::kMilliseconds, &m);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(ConnectorGet, AReplyThatNeverComesIsATimeoutIOError) {
  // The server reads the GET and never answers.
  SubscribedConnector t([](FakeSession&) {}, [](ConnectorOptions& o) { o.read_timeout = milliseconds(200); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(st.code(), Status::Code::kIOError) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "timed out")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "get")) << st.ToString();
  EXPECT_FALSE(t.client.connected());
}

TEST(ConnectorGet, ServerErrorForTheGetItselfKeepsTheConnection) {
  SubscribedConnector t([](FakeSession& s) {
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.SendAck(401, "clientId:1001 not subscribed");
    s.AnswerGet(-1, {});
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(ServerErrorCode(st), 401);
  EXPECT_TRUE(Contains(st.message(), "not subscribed")) << st.ToString();
  EXPECT_FALSE(Contains(st.message(), "earlier")) << "no ack was pending: " << st.ToString();
  EXPECT_TRUE(t.client.connected());
  EXPECT_TRUE(t.client.GetWithoutAck(10, &m).ok());
}

TEST(ConnectorAck, AckAndRollbackSendTheirPacketsWithoutWaitingForAReply) {
  pb::ClientAck ack;
  pb::ClientRollback rb_one, rb_all;
  std::promise<void> all_read;
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.Expect(pb::CLIENTACK, &ack);
        s.Expect(pb::CLIENTROLLBACK, &rb_one);
        s.Expect(pb::CLIENTROLLBACK, &rb_all);
        all_read.set_value();  // and never answers any of them
      },
      [](ConnectorOptions& o) { o.read_timeout = milliseconds(5000); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(t.client.Ack(5).ok());
  EXPECT_TRUE(t.client.Rollback(6).ok());
  EXPECT_TRUE(t.client.Rollback().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000)) << "a reply was awaited";
  all_read.get_future().wait();
  t.Finish();
  EXPECT_EQ(ack.batch_id(), 5);
  EXPECT_EQ(ack.destination(), "example");
  EXPECT_EQ(rb_one.batch_id(), 6);
  EXPECT_EQ(rb_one.client_id(), "1001");
  EXPECT_EQ(rb_all.batch_id(), 0);
}

TEST(ConnectorAck, AckOfMinusOneSendsNothing) {
  SubscribedConnector t([](FakeSession& s) { s.AnswerGet(-1, {}); });  // a GET, not a CLIENTACK
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  EXPECT_TRUE(t.client.Ack(-1).ok());
  Message m;
  EXPECT_TRUE(t.client.GetWithoutAck(1, &m).ok());
}

TEST(ConnectorAck, AckAndGetSendsTheAckAndTheGetInOneWrite) {
  pb::ClientAck ack;
  pb::Get get;
  bool get_was_there = false;
  SubscribedConnector t([&](FakeSession& s) {
    s.Expect(pb::CLIENTACK, &ack);
    get_was_there = s.ReadableNow();  // written with the ack: already here
    s.AnswerGet(6, {RowEntry("f", 1, "d", "t", ce::INSERT, {})}, &get);
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.AckAndGetWithoutAck(5, 10, 100, TimeUnit::kMilliseconds, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(m.batch_id(), 6);
  EXPECT_EQ(m.raw_entry_count(), 1u);
  EXPECT_TRUE(t.client.connected());
  t.Finish();
  EXPECT_TRUE(get_was_there) << "the GET did not arrive with the CLIENTACK";
  EXPECT_EQ(ack.batch_id(), 5);
  EXPECT_EQ(ack.destination(), "example");
  EXPECT_EQ(ack.client_id(), "1001");
  EXPECT_EQ(get.fetch_size(), 10);
  EXPECT_EQ(get.timeout(), 100);
}

TEST(ConnectorAck, AckAndGetOfMinusOneSendsOnlyTheGet) {
  SubscribedConnector t([](FakeSession& s) { s.AnswerGet(-1, {}); });  // a GET, not a CLIENTACK
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  EXPECT_TRUE(t.client.AckAndGetWithoutAck(-1, 10, 100, TimeUnit::kMilliseconds, &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
}

// Reads a CLIENTACK and a GET, refuses the ack, then answers the get.
FakeCanalServer::Script RefuseTheAckThenAnswerTheGet(int code, std::string text) {
  return [code, text](FakeSession& s) {
    pb::ClientAck ack;
    pb::Get get;
    s.Expect(pb::CLIENTACK, &ack);
    s.Expect(pb::GET, &get);
    s.SendAck(code, text);
    s.SendMessages(6, {RowEntry("f", 1, "d", "t", ce::INSERT, {})});
  };
}

TEST(ConnectorAck, AckAndGetWithARefusedAckIsAbortedNamingTheAckAndCloses) {
  SubscribedConnector t(RefuseTheAckThenAnswerTheGet(
      kErrorAckNotApplied, "ack of batch 5 not applied: the destination is no longer served here"));
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.AckAndGetWithoutAck(5, 10, 100, TimeUnit::kMilliseconds, &m);
  EXPECT_EQ(st.code(), Status::Code::kAborted) << st.ToString();
  EXPECT_TRUE(IsAckNotApplied(st)) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "earlier ack of batch 5")) << st.ToString();
  EXPECT_EQ(m.batch_id(), -1) << "no batch from a stream out of step";
  EXPECT_FALSE(t.client.connected());
}

TEST(ConnectorAck, AckErrorAnsweringTheNextGetIsReturnedByThatGet) {
  SubscribedConnector t(RefuseTheAckThenAnswerTheGet(400, "batchId:5 is not the firstly:4"));
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  ASSERT_TRUE(t.client.Ack(5).ok());
  Message m;
  Status st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(st.code(), Status::Code::kAborted) << st.ToString();
  EXPECT_EQ(ServerErrorCode(st), 400);
  EXPECT_TRUE(Contains(st.message(), "batchId:5 is not the firstly:4")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "earlier ack of batch 5")) << st.ToString();
  // The get's own reply may follow or not: the stream cannot be trusted any more.
  EXPECT_FALSE(t.client.connected());
  EXPECT_EQ(t.client.GetWithoutAck(10, &m).code(), Status::Code::kIOError);
}

TEST(ConnectorAck, RollbackErrorAnsweringTheNextSubscribeNamesTheRollback) {
  SubscribedConnector t([](FakeSession& s) {
    pb::ClientRollback rb;
    s.Expect(pb::CLIENTROLLBACK, &rb);
    pb::Unsub unsub;
    s.Expect(pb::UNSUBSCRIPTION, &unsub);
    s.SendAck(400, "rollback error, clientId:1001 batchId:9 is not exist , please check");
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  ASSERT_TRUE(t.client.Rollback(9).ok());
  Status st = t.client.Unsubscribe();
  EXPECT_EQ(ServerErrorCode(st), 400);
  EXPECT_TRUE(Contains(st.message(), "earlier rollback of batch 9")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "is not exist")) << st.ToString();
}

TEST(ConnectorAck, AckErrorAlreadyWaitingIsReturnedBeforeSendingAndTheConnectionStays) {
  std::promise<void> error_sent;
  // The failed get is not sent: the get the script answers is the retry.
  SubscribedConnector t([&](FakeSession& s) { RefuseTheAckOfBatch5(s, &error_sent); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  ASSERT_TRUE(t.client.Ack(5).ok());
  error_sent.get_future().wait();
  std::this_thread::sleep_for(milliseconds(50));  // let the loopback deliver it
  Message m;
  Status st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(ServerErrorCode(st), 400) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "earlier ack of batch 5")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "not sent")) << st.ToString();
  EXPECT_TRUE(t.client.connected());
  st = t.client.GetWithoutAck(10, &m);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(ConnectorAck, SuccessfulRepliesClearEarlierAcksSoLaterErrorsAreTheRequestsOwn) {
  SubscribedConnector t([](FakeSession& s) {
    pb::ClientAck ack;
    s.Expect(pb::CLIENTACK, &ack);
    s.AnswerGet(-1, {});  // proves the ack succeeded
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.SendAck(400, "server is shutting down");
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  ASSERT_TRUE(t.client.Ack(1).ok());
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  Status st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(ServerErrorCode(st), 400);
  EXPECT_FALSE(Contains(st.message(), "earlier")) << st.ToString();
  EXPECT_TRUE(t.client.connected());
}

// --- bytes no Canal server sends ---

class ConnectorBadFrames : public ::testing::Test {
 protected:
  // Logs in, then answers the first GET with `reply` (raw bytes) and closes.
  Status GetAnsweredWith(std::string reply, uint32_t max_frame_bytes = 64u << 20) {
    SubscribedConnector t(
        [&](FakeSession& s) {
          pb::Get get;
          s.Expect(pb::GET, &get);
          s.SendRaw(reply);
          s.Close();
        },
        [&](ConnectorOptions& o) { o.max_frame_bytes = max_frame_bytes; });
    EXPECT_TRUE(t.ready.ok()) << t.ready.ToString();
    Message m;
    Status st = t.client.GetWithoutAck(10, &m);
    EXPECT_FALSE(t.client.connected()) << "a broken stream must be closed";
    EXPECT_EQ(m.batch_id(), -1);
    return st;
  }

  // `p` framed as a server would send it.
  static std::string Framed(const pb::Packet& p) {
    const std::string bytes = p.SerializeAsString();
    return FakeSession::LengthPrefix(bytes.size()) + bytes;
  }
};

TEST_F(ConnectorBadFrames, FrameLengthAboveTheLimitIsRefusedBeforeAllocating) {
  Status st = GetAnsweredWith(FakeSession::LengthPrefix(0x7fffffff));
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "2147483647")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "max_frame_bytes")) << st.ToString();
}

TEST_F(ConnectorBadFrames, ConfiguredLimitApplies) {
  pb::Messages big;
  big.set_batch_id(1);
  big.add_messages(std::string(2000, 'x'));
  pb::Packet p;
  p.set_type(pb::MESSAGES);
  p.set_body(big.SerializeAsString());
  Status st = GetAnsweredWith(Framed(p), /*max_frame_bytes=*/1024);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "1024")) << st.ToString();
  // Which options to raise.
  EXPECT_TRUE(Contains(st.message(), "canal-cli --max-frame-bytes")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "CANAL_MAX_FRAME_BYTES")) << st.ToString();
}

TEST(ConnectorOptionsTest, TheDefaultFrameLimitTakesTheLargestFrameAServerSends) {
  // 2^31 - 1: what the server's MESSAGES encoder allows, so a 1 GiB row arrives.
  EXPECT_EQ(ConnectorOptions().max_frame_bytes, 0x7fffffffu);
  EXPECT_GE(ConnectorOptions().max_frame_bytes, (1u << 30) + (1u << 20));
}

TEST_F(ConnectorBadFrames, ZeroLengthFrameIsCorruption) {
  Status st = GetAnsweredWith(FakeSession::LengthPrefix(0));
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
}

TEST_F(ConnectorBadFrames, ServerClosingMidFrameIsIOError) {
  Status st = GetAnsweredWith(FakeSession::LengthPrefix(100) + std::string(10, '\x08'));
  EXPECT_EQ(st.code(), Status::Code::kIOError) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "10 of 100")) << st.ToString();
}

TEST_F(ConnectorBadFrames, ServerClosingInsideTheLengthIsIOError) {
  Status st = GetAnsweredWith(std::string("\x00\x00", 2));
  EXPECT_EQ(st.code(), Status::Code::kIOError) << st.ToString();
}

TEST_F(ConnectorBadFrames, BytesThatAreNotAPacketAreCorruption) {
  const std::string junk = "\xff\xff\xff\xff\xff";
  Status st = GetAnsweredWith(FakeSession::LengthPrefix(junk.size()) + junk);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
}

TEST_F(ConnectorBadFrames, APacketLongerThanItsFrameIsCorruptionSayingWhere) {
  // The body declares 200 bytes; the frame holds 5 of them.
  const std::string packet = std::string("\x18\x07\x2a\xc8\x01", 5) + "abcde";
  Status st = GetAnsweredWith(FakeSession::LengthPrefix(packet.size()) + packet);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "canal.protocol.Packet")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "(200 declared) at byte 2 of 10")) << st.ToString();
}

TEST_F(ConnectorBadFrames, PacketFieldsInAnotherOrderStillReadAsAMessagesReply) {
  pb::Messages body;
  body.set_batch_id(5);
  body.add_messages("entry");
  // The body first, then the type; the connector reads the fields in any order.
  std::string packet;
  canal::proto::wire::AppendBytesField(5, body.SerializeAsString(), &packet);
  canal::proto::wire::AppendVarintField(3, pb::MESSAGES, &packet);
  SubscribedConnector t([&](FakeSession& s) {
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.SendFrame(packet);
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(10, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(m.batch_id(), 5);
  ASSERT_EQ(m.raw_entry_count(), 1u);
  EXPECT_EQ(m.raw_entry(0), "entry");
  t.Finish();
}

TEST_F(ConnectorBadFrames, CompressedPacketIsNotSupported) {
  pb::Packet p;
  p.set_type(pb::MESSAGES);
  p.set_compression(pb::ZLIB);
  p.set_body("x");
  Status st = GetAnsweredWith(Framed(p));
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
}

TEST_F(ConnectorBadFrames, WrongPacketTypeForAGetIsCorruption) {
  pb::Packet p;
  p.set_type(pb::HANDSHAKE);
  Status st = GetAnsweredWith(Framed(p));
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "HANDSHAKE")) << st.ToString();
}

TEST_F(ConnectorBadFrames, UnparsableMessagesBodyIsCorruption) {
  pb::Packet p;
  p.set_type(pb::MESSAGES);
  p.set_body("\x12\x7f");  // entry bytes declared longer than the body
  Status st = GetAnsweredWith(Framed(p));
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
}

// --- threads ---

TEST(ConnectorThreads, ConcurrentGetsFromTwoThreadsAreSerialised) {
  constexpr int kPerThread = 50;
  SubscribedConnector t([](FakeSession& s) {
    // Each reply carries the asking get's fetch size as its batch id, so a
    // reply handed to the wrong thread shows.
    for (int i = 0; i < 2 * kPerThread; ++i) {
      pb::Get get;
      if (!s.Expect(pb::GET, &get)) return;
      s.SendMessages(get.fetch_size(), {RowEntry("f", i, "d", "t", ce::INSERT, {})});
    }
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  auto worker = [&c = t.client](int fetch_size, int* mismatches) {
    for (int i = 0; i < kPerThread; ++i) {
      Message m;
      Status st = c.GetWithoutAck(fetch_size, &m);
      if (!st.ok() || m.batch_id() != fetch_size) ++*mismatches;
    }
  };
  int bad_a = 0, bad_b = 0;
  std::thread a(worker, 11, &bad_a);
  std::thread b(worker, 22, &bad_b);
  a.join();
  b.join();
  EXPECT_EQ(bad_a, 0);
  EXPECT_EQ(bad_b, 0);
}

// --- Message on its own ---

TEST(MessageTest, DefaultIsAnEmptyBatch) {
  Message m;
  EXPECT_EQ(m.batch_id(), -1);
  EXPECT_TRUE(m.empty());
  EXPECT_TRUE(m.ParseEntries().ok());
}

TEST(MessageTest, MalformedEntryIsCorruptionNamingItAndKeepsTheEntriesBefore) {
  Message m(12, {RowEntry("f", 1, "d", "t", ce::INSERT, {}), std::string("\x0a\x7f", 2),
                 RowEntry("f", 3, "d", "t", ce::INSERT, {})});
  EXPECT_EQ(m.raw_entry_count(), 3u);  // nothing parsed yet, raw access works
  Status st = m.ParseEntries();
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_TRUE(Contains(st.message(), "batch 12")) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "entry 1 of 3")) << st.ToString();
  EXPECT_EQ(m.entries().size(), 1u);
  EXPECT_TRUE(m.ParseEntries().IsCorruption()) << "the result is remembered";
}

TEST(MessageTest, TakeRawEntriesHandsTheBytesOver) {
  Message m(4, {"a", "b"});
  auto raw = m.TakeRawEntries();
  EXPECT_EQ(raw, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.batch_id(), 4);
}

TEST(MessageTest, AbsentFieldsReadAsCanalsDefaults) {
  ce::Entry e;
  EXPECT_EQ(EntryTypeOf(e), ce::ROWDATA);
  EXPECT_EQ(EventTypeOf(e.header()), ce::UPDATE);
  ce::RowChange rc;
  EXPECT_EQ(EventTypeOf(rc), ce::UPDATE);
  EXPECT_FALSE(IsDdl(rc));
  EXPECT_FALSE(IsNull(ce::Column()));
  EXPECT_EQ(EventTypeName(ce::INSERT), "INSERT");
  EXPECT_EQ(EventTypeName(static_cast<ce::EventType>(99)), "UNKNOWN(99)");
  EXPECT_EQ(EntryTypeName(ce::TRANSACTIONEND), "TRANSACTIONEND");
}

TEST(ServerErrorCodeTest, ReadsTheCodeOnlyFromServerErrors) {
  EXPECT_EQ(ServerErrorCode(Status::Aborted("canal server h:1: get refused: batch id missing").WithSubcode(402)), 402);
  // The code is the Status's subcode: text that looks like one is not.
  EXPECT_EQ(ServerErrorCode(Status::Aborted("canal server h:1: get refused: server error 402: batch id missing")), 0);
  EXPECT_EQ(ServerErrorCode(Status::IOError("connection closed").WithSubcode(402)), 0);
  EXPECT_EQ(ServerErrorCode(Status::IOError("connection closed")), 0);
  EXPECT_EQ(ServerErrorCode(Status::OK()), 0);
  EXPECT_EQ(ServerErrorCode(Status::Aborted("server error : x")), 0);
}

}  // namespace
}  // namespace canal::client::test
