// ConnectorOptions::prefetch against the scripted fake server: the next GET
// goes as soon as a batch arrives, acks follow it on the wire, a rollback or
// a get with other parameters reads and drops the prefetched reply, and
// errors keep their owners (an ack's error after the prefetched reply is the
// ack's, not the get's).
#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "client/client_test_util.h"

namespace canal::client::test {
namespace {

void Prefetch(ConnectorOptions& o) { o.prefetch = true; }

std::vector<std::string> OneRow(int64_t offset) {
  return {RowEntry("f", offset, "d", "t", ce::INSERT, {Row({}, {Col("id", "1", true)})})};
}

TEST(ConnectorPrefetch, TheNextGetIsSentBeforeTheCallerAcksAndItsReplyIsTheNextBatch) {
  pb::Get second;
  pb::ClientAck ack;
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.AnswerGet(1, OneRow(1));
        // The second GET comes before the ack of batch 1.
        s.Expect(pb::GET, &second);
        s.Expect(pb::CLIENTACK, &ack);
        s.SendMessages(2, OneRow(2));
        s.Expect(pb::GET, &second);  // prefetched after batch 2
        s.SendMessages(-1, {});
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(100, 500, TimeUnit::kMilliseconds, &m).ok());
  EXPECT_EQ(m.batch_id(), 1);
  ASSERT_TRUE(t.client.Ack(1).ok());
  Status st = t.client.GetWithoutAck(100, 500, TimeUnit::kMilliseconds, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(m.batch_id(), 2);
  ASSERT_EQ(m.raw_entry_count(), 1u);
  // An empty batch sends no further GET ahead.
  ASSERT_TRUE(t.client.GetWithoutAck(100, 500, TimeUnit::kMilliseconds, &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
  t.Finish();
  EXPECT_EQ(second.fetch_size(), 100);  // (the last GET's: the same parameters)
  EXPECT_EQ(second.timeout(), 500);
  EXPECT_EQ(ack.batch_id(), 1);
}

TEST(ConnectorPrefetch, RollbackReadsAndDropsThePrefetchedReplyFirst) {
  pb::ClientRollback rb;
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.AnswerGet(1, OneRow(1));
        s.AnswerGet(2, OneRow(2));  // the prefetched one: dropped by the client
        s.Expect(pb::CLIENTROLLBACK, &rb);
        s.AnswerGet(1, OneRow(1));  // the server sends batch 1 again
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  ASSERT_TRUE(t.client.Rollback(1).ok());
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  EXPECT_EQ(m.batch_id(), 1) << "the dropped prefetched batch must not be returned";
  t.Finish();
  EXPECT_EQ(rb.batch_id(), 1);
}

TEST(ConnectorPrefetch, AGetWithOtherParametersDropsThePrefetchedReplyAndSendsItsOwn) {
  pb::Get own;
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.AnswerGet(1, OneRow(1));
        s.AnswerGet(2, OneRow(2));  // prefetched with size 10
        s.AnswerGet(-1, {}, &own);
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  ASSERT_TRUE(t.client.GetWithoutAck(3, &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
  t.Finish();
  EXPECT_EQ(own.fetch_size(), 3);
}

TEST(ConnectorPrefetch, AnAckErrorAfterThePrefetchedReplyIsTheAcksAndReportedByTheGetAfter) {
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.AnswerGet(1, OneRow(1));
        pb::Get get;
        pb::ClientAck ack;
        s.Expect(pb::GET, &get);
        s.Expect(pb::CLIENTACK, &ack);
        s.SendMessages(2, OneRow(2));  // the GET came first: its reply first
        s.Expect(pb::GET, &get);
        s.SendAck(400, "batchId:1 is not exist");  // then the ack's error
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  ASSERT_TRUE(t.client.Ack(1).ok());
  Status st = t.client.GetWithoutAck(10, &m);
  ASSERT_TRUE(st.ok()) << "the reply to the GET sent before the ack is no error of the ack: " << st.ToString();
  EXPECT_EQ(m.batch_id(), 2);
  st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(ServerErrorCode(st), 400) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "earlier ack of batch 1")) << st.ToString();
  EXPECT_FALSE(t.client.connected());
}

TEST(ConnectorPrefetch, AnErrorAnsweringThePrefetchedGetIsTheGetsOwn) {
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.AnswerGet(1, OneRow(1));
        pb::Get get;
        s.Expect(pb::GET, &get);
        s.SendAck(400, "destination example is not active");
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  Status st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(ServerErrorCode(st), 400) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "not active")) << st.ToString();
  EXPECT_FALSE(Contains(st.message(), "earlier")) << st.ToString();
}

TEST(ConnectorPrefetch, ReconnectingForgetsThePrefetchedGet) {
  SubscribedConnector t([&](FakeSession& s) { s.AnswerGet(1, OneRow(1)); }, Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  t.client.Disconnect();
  EXPECT_EQ(t.client.GetWithoutAck(10, &m).code(), Status::Code::kIOError);
}

}  // namespace
}  // namespace canal::client::test
