// Publisher: the cursor moves only behind the broker's confirmation of a
// whole batch; failed rounds are published again and counted; a permanent
// refusal stops publishing with the change's origin, leaving ring and cursor
// where they were. A scripted producer stands in for the broker.
#include "canal/mq/publisher.h"

#include <gtest/gtest.h>

#include <deque>
#include <mutex>

#include "canal/meta/memory_meta_manager.h"
#include "canal/store/ring_store.h"
#include "mq/entry_maker.h"
#include "support/wait.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;

// What the scripted broker does with a round (one Send...Confirm).
struct Round {
  Status result;            // Confirm's answer
  uint64_t confirmed = 0;   // messages confirmed in a failed round
  bool broken = false;
};

struct Broker {
  std::mutex mu;
  std::deque<Round> script;         // rounds to play; empty: every round succeeds
  std::vector<std::string> payloads;  // every message sent, in order
  int producers = 0;
  int refuse_connects = 0;  // factory calls to fail before one succeeds
  size_t max_in_flight = 0;  // rounds a pipelining producer had in flight at once
};

class ScriptedProducer final : public Producer {
 public:
  explicit ScriptedProducer(Broker* b) : b_(b) {}
  Status Send(const EncodedMessage& m) override {
    std::lock_guard<std::mutex> lock(b_->mu);
    b_->payloads.push_back(m.payload);
    ++sent_;
    return Status::OK();
  }
  Status Confirm(const std::atomic<bool>&) override {
    std::lock_guard<std::mutex> lock(b_->mu);
    Round r;
    r.confirmed = sent_;
    if (!b_->script.empty()) {
      r = b_->script.front();
      b_->script.pop_front();
    }
    confirmed_ = r.result.ok() ? sent_ : r.confirmed;
    broken_ = r.broken;
    sent_ = 0;
    return r.result;
  }
  uint64_t confirmed() const override { return confirmed_; }
  bool broken() const override { return broken_; }
  std::string Describe() const override { return "scripted"; }

 private:
  Broker* b_;
  uint64_t sent_ = 0, confirmed_ = 0;
  bool broken_ = false;
};

// A producer that pipelines (publisher.h): rounds stay in flight until ConfirmRound, which
// plays the script (a failed entry fails the oldest round in flight).
class PipelinedProducer final : public Producer {
 public:
  explicit PipelinedProducer(Broker* b) : b_(b) {}
  Status Send(const EncodedMessage& m) override {
    std::lock_guard<std::mutex> lock(b_->mu);
    b_->payloads.push_back(m.payload);
    ++open_;
    return Status::OK();
  }
  Status Confirm(const std::atomic<bool>& stop) override { return ConfirmRound(EndRound(), stop); }
  bool pipelines() const override { return true; }
  uint64_t EndRound() override {
    rounds_.push_back(open_);
    open_ = 0;
    std::lock_guard<std::mutex> lock(b_->mu);
    b_->max_in_flight = std::max(b_->max_in_flight, rounds_.size());
    return ++last_round_;
  }
  Status ConfirmRound(uint64_t round, const std::atomic<bool>&) override {
    std::lock_guard<std::mutex> lock(b_->mu);
    if (!b_->script.empty()) {
      const Round r = b_->script.front();
      b_->script.pop_front();
      if (!r.result.ok()) {
        drained_ = r.confirmed;
        broken_ = r.broken;
        return r.result;
      }
    }
    while (!rounds_.empty() && last_round_ - rounds_.size() + 1 <= round) rounds_.pop_front();
    return Status::OK();
  }
  uint64_t Drain(const std::atomic<bool>&) override {
    rounds_.clear();
    return drained_;
  }
  uint64_t confirmed() const override { return drained_; }
  bool broken() const override { return broken_; }
  std::string Describe() const override { return "pipelined"; }

 private:
  Broker* b_;
  uint64_t open_ = 0, last_round_ = 0, drained_ = 0;
  std::deque<uint64_t> rounds_;  // messages per round in flight, oldest first
  bool broken_ = false;
};

class PublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(meta_.Start().ok());
    store::RingStoreOptions o;
    o.batch_mode = store::BatchMode::kItemSize;
    ASSERT_TRUE(store::RingStore::Create(o, &ring_).ok());
  }
  void TearDown() override {
    if (publisher_) publisher_->Stop();
    ring_->Stop();
  }

  void Make(size_t batch_size = 2, bool pipelined = false, size_t in_flight = 8) {
    PublisherOptions o;
    o.max_in_flight_batches = in_flight;
    o.destination = "example";
    o.batch_size = batch_size;
    o.get_timeout = 20ms;
    o.retry_backoff = 10ms;
    o.routing.topic = "t";
    o.producer_factory = [this, pipelined](std::unique_ptr<Producer>* p) {
      std::lock_guard<std::mutex> lock(broker_.mu);
      if (broker_.refuse_connects > 0) {
        --broker_.refuse_connects;
        return Status::IOError("connection refused");
      }
      ++broker_.producers;
      if (pipelined) {
        *p = std::make_unique<PipelinedProducer>(&broker_);
      } else {
        *p = std::make_unique<ScriptedProducer>(&broker_);
      }
      return Status::OK();
    };
    ASSERT_TRUE(Publisher::Create(std::move(o), &meta_, &publisher_).ok());
    ASSERT_TRUE(publisher_->Subscribe().ok());
  }

  // One transaction's change as a safe resume point at `offset`.
  void Put(int id, uint64_t offset) {
    std::string bytes = testing::RowEntry("db", "t", canal::entry::INSERT,
                                          {testing::Row{{}, {{"id", std::to_string(id), false, true}}}},
                                          1700000000000, "bin.000001", static_cast<int64_t>(offset));
    store::EntryMeta m;
    m.safe_resume_point = true;
    m.position.journal_name = "bin.000001";
    m.position.position = offset;
    ASSERT_TRUE(ring_->Put(bytes, m).ok());
  }

  std::optional<LogPosition> Cursor() {
    meta::ClientIdentity c;
    c.destination = "example";
    c.client_id = kMqClientId;
    std::optional<LogPosition> cursor;
    EXPECT_TRUE(meta_.GetCursor(c, &cursor).ok());
    return cursor;
  }
  size_t Sent() {
    std::lock_guard<std::mutex> lock(broker_.mu);
    return broker_.payloads.size();
  }

  meta::MemoryMetaManager meta_;
  std::unique_ptr<store::RingStore> ring_;
  std::unique_ptr<Publisher> publisher_;
  Broker broker_;
};

TEST_F(PublisherTest, CursorFollowsConfirmedBatches) {
  Make(2);
  for (int i = 0; i < 5; ++i) Put(i, 100 + static_cast<uint64_t>(i));
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 5; }, 10s));
  ASSERT_TRUE(Cursor().has_value());
  EXPECT_EQ(Cursor()->position, 104u);
  const PublisherStats st = publisher_->stats();
  EXPECT_EQ(st.messages, 5u);
  EXPECT_EQ(st.republished, 0u);
  EXPECT_FALSE(st.failed);
  EXPECT_EQ(Sent(), 5u);
}

TEST_F(PublisherTest, FailedRoundIsPublishedAgainAndCounted) {
  Make(3);
  broker_.script.push_back({Status::IOError("broker gone"), 2, true});  // 2 of 3 confirmed, then broken
  for (int i = 0; i < 3; ++i) Put(i, 200 + static_cast<uint64_t>(i));
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 3; }, 10s));
  const PublisherStats st = publisher_->stats();
  EXPECT_EQ(st.republished, 2u);
  EXPECT_EQ(st.failed_rounds, 1u);
  EXPECT_EQ(Sent(), 6u);  // the batch twice, in order
  EXPECT_EQ(broker_.payloads[0], broker_.payloads[3]);
  EXPECT_EQ(broker_.producers, 2);  // the broken producer was replaced
  EXPECT_EQ(Cursor()->position, 202u);
}

TEST_F(PublisherTest, PipelinedBatchesGoOutWhileEarlierOnesWaitAndAreAckedInOrder) {
  Make(1, true, 4);
  for (int i = 0; i < 10; ++i) Put(i, 300 + static_cast<uint64_t>(i));
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 10; }, 10s));
  EXPECT_EQ(Cursor()->position, 309u);
  EXPECT_EQ(Sent(), 10u);
  std::lock_guard<std::mutex> lock(broker_.mu);
  EXPECT_GE(broker_.max_in_flight, 2u) << "batches went out before the oldest was confirmed";
  EXPECT_LE(broker_.max_in_flight, 4u) << "canal.mq.maxInFlightBatches bounds them";
  EXPECT_EQ(publisher_->stats().batches, 10u);
}

TEST_F(PublisherTest, APipelinedFailureSendsEveryBatchInFlightAgainInOrder) {
  Make(1, true, 4);
  broker_.script.push_back({Status::IOError("broker gone"), 3, true});  // 3 confirmed, then broken
  for (int i = 0; i < 6; ++i) Put(i, 400 + static_cast<uint64_t>(i));
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 6; }, 10s));
  EXPECT_EQ(Cursor()->position, 405u);
  const PublisherStats st = publisher_->stats();
  EXPECT_EQ(st.republished, 3u);
  EXPECT_EQ(st.failed_rounds, 1u);
  std::lock_guard<std::mutex> lock(broker_.mu);
  EXPECT_EQ(broker_.producers, 2) << "the broken producer was replaced";
  // The four in flight, then those four again from the oldest, then the last two: each
  // message's last copy is in binlog order.
  ASSERT_EQ(broker_.payloads.size(), 10u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(broker_.payloads[i], broker_.payloads[4 + i]) << i;
  EXPECT_NE(broker_.payloads[7], broker_.payloads[8]);
}

TEST_F(PublisherTest, UnreachableBrokerIsRetried) {
  broker_.refuse_connects = 3;
  Make(1);
  Put(1, 300);
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 1; }, 10s));
  EXPECT_EQ(Cursor()->position, 300u);
}

TEST_F(PublisherTest, PermanentRefusalStopsWithoutMovingAnything) {
  Make(1);
  broker_.script.push_back({Status::InvalidArgument("too large (db.t at bin.000001:400)"), 0, false});
  Put(1, 400);
  Put(2, 401);
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return publisher_->stats().failed; }, 10s));
  const PublisherStats st = publisher_->stats();
  EXPECT_NE(st.last_error.find("db.t at bin.000001:400"), std::string::npos) << st.last_error;
  EXPECT_NE(st.last_error.find("bin.000001:400"), std::string::npos);
  EXPECT_EQ(ring_->stats().ack_sequence, 0u);
  EXPECT_FALSE(Cursor().has_value());
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(Sent(), 1u);  // the entry behind it was not published
  EXPECT_NE(publisher_->StatusLine().find("FAILED"), std::string::npos);
}

TEST_F(PublisherTest, CorruptEntryStopsPublishing) {
  Make(1);
  store::EntryMeta m;
  m.safe_resume_point = true;
  m.position.journal_name = "bin.000001";
  m.position.position = 500;
  ASSERT_TRUE(ring_->Put(std::string("\x0a\xff\xff", 3), m).ok());
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return publisher_->stats().failed; }, 10s));
  EXPECT_NE(publisher_->stats().last_error.find("cannot be encoded"), std::string::npos);
  EXPECT_EQ(Sent(), 0u);
  EXPECT_FALSE(Cursor().has_value());
}

TEST_F(PublisherTest, BadSettingsAreRefused) {
  std::unique_ptr<Publisher> p;
  PublisherOptions o;
  o.routing.topic = "t";
  EXPECT_FALSE(Publisher::Create(o, &meta_, &p).ok());  // no producer factory
  o.producer_factory = [](std::unique_ptr<Producer>*) { return Status::OK(); };
  o.batch_size = 0;
  EXPECT_NE(Publisher::Create(o, &meta_, &p).ToString().find("canalBatchSize"), std::string::npos);
  o.batch_size = 1;
  o.routing.topic.clear();
  EXPECT_NE(Publisher::Create(o, &meta_, &p).ToString().find("canal.mq.topic"), std::string::npos);
}

}  // namespace
}  // namespace canal::mq
