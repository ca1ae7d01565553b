// ConnectorOptions::prefetch against the scripted fake server: the next GET
// goes as soon as a batch arrives and answers the next get (whatever its
// parameters); an ack given with the next get goes before its reply is read;
// a rollback does not wait for the prefetched reply and that reply answers
// nobody; errors keep their owners (an ack's error read after the prefetched
// reply is the ack's, a refused prefetched GET is the get's).
#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "client/client_test_util.h"

namespace canal::client::test {
namespace {

void Prefetch(ConnectorOptions& o) { o.prefetch = true; }

std::vector<std::string> OneRow(int64_t offset) {
  return {RowEntry("f", offset, "d", "t", ce::INSERT, {Row({}, {Col("id", "1", true)})})};
}

// Batch 1, then the two requests that follow it: the GET sent ahead, then
// the ack of batch 1 (false when either did not come).
bool AnswerFirstThenTakeGetAheadAndAck(FakeSession& s) {
  pb::Get get;
  pb::ClientAck ack;
  return s.AnswerGet(1, OneRow(1)) && s.Expect(pb::GET, &get) && s.Expect(pb::CLIENTACK, &ack) &&
         ack.batch_id() == 1;
}

// True when the client sent another request within `wait`, or false when it
// sent nothing (or hung up).
bool SentMore(FakeSession& s, std::chrono::milliseconds wait, pb::Packet* p) { return s.Read(p, wait); }

TEST(ConnectorPrefetch, TheNextGetGoesAsSoonAsABatchArrivesAndAnswersTheNextGet) {
  pb::Get ahead;
  pb::ClientAck ack;
  bool get_after_empty = false;
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.AnswerGet(1, OneRow(1));
        // The second GET comes before the caller's ack of batch 1.
        s.Expect(pb::GET, &ahead);
        s.Expect(pb::CLIENTACK, &ack);
        s.SendMessages(2, OneRow(2));
        s.Expect(pb::GET, &ahead);  // sent ahead after batch 2
        s.SendMessages(-1, {});
        // An empty batch sends no GET ahead.
        pb::Packet p;
        get_after_empty = SentMore(s, std::chrono::milliseconds(300), &p) && p.type() == pb::GET;
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
  st = t.client.GetWithoutAck(100, 500, TimeUnit::kMilliseconds, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(m.batch_id(), -1);
  t.Finish();
  EXPECT_EQ(ahead.fetch_size(), 100);  // the caller's parameters
  EXPECT_EQ(ahead.timeout(), 500);
  EXPECT_EQ(ack.batch_id(), 1);
  EXPECT_FALSE(get_after_empty);
}

TEST(ConnectorPrefetch, AnAckGivenWithTheNextGetIsSentBeforeThePrefetchedReplyIsRead) {
  std::vector<int64_t> acks;
  SubscribedConnector t(
      [&](FakeSession& s) {
        pb::Get get;
        pb::ClientAck ack;
        s.AnswerGet(1, OneRow(1));
        s.Expect(pb::GET, &get);
        // Batch 2 is sent only once the ack of batch 1 is here: a client that
        // read the reply first would wait for it forever.
        if (s.Expect(pb::CLIENTACK, &ack)) acks.push_back(ack.batch_id());
        s.SendMessages(2, OneRow(2));
        s.Expect(pb::GET, &get);
        if (s.Expect(pb::CLIENTACK, &ack)) acks.push_back(ack.batch_id());
        s.SendMessages(-1, {});
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, 500, TimeUnit::kMilliseconds, &m).ok());
  ASSERT_EQ(m.batch_id(), 1);
  Status st = t.client.AckAndGetWithoutAck(1, 10, 500, TimeUnit::kMilliseconds, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(m.batch_id(), 2);
  st = t.client.AckAndGetWithoutAck(2, 10, 500, TimeUnit::kMilliseconds, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(m.batch_id(), -1);
  t.Finish();
  EXPECT_EQ(acks, (std::vector<int64_t>{1, 2}));
}

TEST(ConnectorPrefetch, ARollbackDoesNotWaitForThePrefetchedReplyAndThatReplyAnswersNobody) {
  pb::ClientRollback rb;
  SubscribedConnector t(
      [&](FakeSession& s) {
        pb::Get get;
        s.AnswerGet(1, OneRow(1));
        s.Expect(pb::GET, &get);
        // The GET sent ahead is not answered before the rollback is here: a
        // rollback that read its reply first would wait forever.
        s.Expect(pb::CLIENTROLLBACK, &rb);
        s.SendMessages(2, OneRow(2));  // the reply to the GET sent ahead: dropped
        s.AnswerGet(1, OneRow(1));     // batch 1 again, after the rollback
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  ASSERT_TRUE(t.client.Rollback(1).ok());
  Status st = t.client.GetWithoutAck(10, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(m.batch_id(), 1) << "the prefetched batch was rolled back: its reply must not be returned";
  t.Finish();
  EXPECT_EQ(rb.batch_id(), 1);
}

TEST(ConnectorPrefetch, AGetWithOtherParametersIsAnsweredByThePrefetchedGetAndTheNextOneHasItsOwn) {
  pb::Get first_ahead, second_ahead;
  SubscribedConnector t(
      [&](FakeSession& s) {
        s.AnswerGet(1, OneRow(1));
        s.AnswerGet(2, OneRow(2), &first_ahead);  // sent ahead with size 10
        s.AnswerGet(-1, {}, &second_ahead);       // sent ahead with size 3
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  ASSERT_TRUE(t.client.GetWithoutAck(3, &m).ok());
  EXPECT_EQ(m.batch_id(), 2) << "batch 2 was handed out: skipping it would lose it";
  ASSERT_TRUE(t.client.GetWithoutAck(3, &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
  t.Finish();
  EXPECT_EQ(first_ahead.fetch_size(), 10);
  EXPECT_EQ(second_ahead.fetch_size(), 3);
}

TEST(ConnectorPrefetch, AnAckErrorAfterThePrefetchedReplyIsTheAcksAndReportedByTheGetAfter) {
  SubscribedConnector t(
      [&](FakeSession& s) {
        if (!AnswerFirstThenTakeGetAheadAndAck(s)) return;
        s.SendMessages(2, OneRow(2));  // the GET came first: its reply first
        pb::Get get;
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

TEST(ConnectorPrefetch, ARefusalOfThePrefetchedGetIsTheGetsOwnNotTheAckSentAfterIt) {
  SubscribedConnector t(
      [&](FakeSession& s) {
        if (AnswerFirstThenTakeGetAheadAndAck(s)) s.SendAck(503, "destination example is not active");
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, 100, TimeUnit::kMilliseconds, &m).ok());
  Status st = t.client.AckAndGetWithoutAck(1, 10, 100, TimeUnit::kMilliseconds, &m);
  EXPECT_EQ(ServerErrorCode(st), 503) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "not active")) << st.ToString();
  EXPECT_FALSE(Contains(st.message(), "earlier")) << st.ToString();
}

TEST(ConnectorPrefetch, UnsubscribeReadsAndDropsThePrefetchedReplyFirst) {
  bool unsubscribed = false;
  SubscribedConnector t(
      [&](FakeSession& s) {
        pb::Unsub unsub;
        s.AnswerGet(1, OneRow(1));
        s.AnswerGet(2, OneRow(2));  // sent ahead
        unsubscribed = s.Expect(pb::UNSUBSCRIPTION, &unsub) && s.SendAck();
      },
      Prefetch);
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  ASSERT_TRUE(t.client.GetWithoutAck(10, &m).ok());
  Status st = t.client.Unsubscribe();
  EXPECT_TRUE(st.ok()) << st.ToString();
  t.Finish();
  EXPECT_TRUE(unsubscribed);
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
