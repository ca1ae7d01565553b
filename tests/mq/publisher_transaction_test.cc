// Publisher in exactly-once mode (canal.mq.transaction) against a scripted
// transactional broker: transactions end only at safe resume points; a commit
// whose outcome is unknown is settled by reading the committed position back
// (committed: not sent again; not committed: sent again in a new
// transaction), so what the broker committed holds every change once; a
// fenced producer stops; the cursor follows the broker's position on start.
#include <gtest/gtest.h>

#include <deque>
#include <mutex>

#include "canal/meta/memory_meta_manager.h"
#include "canal/meta/meta_json.h"
#include "canal/mq/publisher.h"
#include "canal/store/ring_store.h"
#include "mq/entry_maker.h"
#include "support/wait.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;

// What a commit does.
enum class Commit {
  kOk,
  kLost,            // refused: nothing of the transaction is committed
  kTakenUnanswered,  // committed, but the answer never came (an error to the caller)
  kFenced,
  kRefused,  // InvalidArgument (e.g. not authorised)
};

struct TxnBroker {
  std::mutex mu;
  std::deque<Commit> script;  // commits to play; empty: every commit succeeds
  // What read_committed consumers see, in commit order.
  std::vector<std::string> committed_payloads;
  std::optional<CommittedPosition> position;
  int producers = 0;
  int failing_reads = 0;  // ReadCommittedPosition calls to fail
  std::deque<bool> read_script;  // before failing_reads: each read succeeds (true) or fails
  int begins = 0;
};

class TxnProducer final : public Producer {
 public:
  explicit TxnProducer(TxnBroker* b) : b_(b) {}
  Status Send(const EncodedMessage& m) override {
    if (!open_) return Status::IOError("send outside a transaction");
    pending_.push_back(m.payload);
    return Status::OK();
  }
  Status Confirm(const std::atomic<bool>& stop) override { return ConfirmRound(EndRound(), stop); }
  bool pipelines() const override { return true; }
  uint64_t EndRound() override { return ++round_; }
  Status ConfirmRound(uint64_t, const std::atomic<bool>&) override { return Status::OK(); }
  uint64_t Drain(const std::atomic<bool>&) override { return 0; }
  uint64_t confirmed() const override { return 0; }
  bool broken() const override { return broken_; }
  std::string Describe() const override { return "scripted-transactional"; }

  bool transactional() const override { return true; }
  Status BeginTransaction(std::string* tag) override {
    if (open_) return Status::IOError("a transaction is already open");
    std::lock_guard<std::mutex> lock(b_->mu);
    ++b_->begins;
    open_ = true;
    pending_.clear();
    tag_ = "p" + std::to_string(id_) + "-" + std::to_string(++txns_);
    *tag = tag_;
    return Status::OK();
  }
  Status CommitTransaction(const std::string&, const std::string& cursor_json, const std::atomic<bool>&) override {
    std::lock_guard<std::mutex> lock(b_->mu);
    Commit c = Commit::kOk;
    if (!b_->script.empty()) {
      c = b_->script.front();
      b_->script.pop_front();
    }
    if (c == Commit::kOk || c == Commit::kTakenUnanswered) {
      b_->committed_payloads.insert(b_->committed_payloads.end(), pending_.begin(), pending_.end());
      const uint64_t seq = b_->position ? b_->position->sequence + 1 : 1;
      b_->position = CommittedPosition{tag_, cursor_json, seq};
    }
    switch (c) {
      case Commit::kOk:
        open_ = false;
        return Status::OK();
      case Commit::kLost:
        return Status::IOError("commit refused (abortable)");
      case Commit::kTakenUnanswered:
        broken_ = true;  // a timed-out commit: the producer is rebuilt
        return Status::IOError("commit timed out");
      case Commit::kFenced:
        broken_ = true;
        return Status::IOError("fenced").WithSubcode(kErrorProducerFenced);
      case Commit::kRefused:
        return Status::InvalidArgument("not authorised for transactional.id canal-example");
    }
    return Status::OK();
  }
  Status AbortTransaction(const std::atomic<bool>&) override {
    open_ = false;
    pending_.clear();
    return Status::OK();
  }
  Status ReadCommittedPosition(const std::string&, CommittedPosition* out, bool* found) override {
    std::lock_guard<std::mutex> lock(b_->mu);
    bool fail = false;
    if (!b_->read_script.empty()) {
      fail = !b_->read_script.front();
      b_->read_script.pop_front();
    } else if (b_->failing_reads > 0) {
      --b_->failing_reads;
      fail = true;
    }
    if (fail) {
      return Status::IOError("kafka 127.0.0.1:9 topic canal_positions: Local: Broker transport failure");
    }
    *found = b_->position.has_value();
    if (*found) *out = *b_->position;
    return Status::OK();
  }
  void set_id(int id) { id_ = id; }

 private:
  TxnBroker* b_;
  int id_ = 0;
  bool open_ = false, broken_ = false;
  uint64_t round_ = 0, txns_ = 0;
  std::string tag_;
  std::vector<std::string> pending_;
};

class PublisherTransactionTest : public ::testing::Test {
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

  Status Make(size_t batch_size = 2, size_t batches_per_txn = 8) {
    PublisherOptions o;
    o.transaction_max_batches = batches_per_txn;
    o.destination = "example";
    o.batch_size = batch_size;
    o.get_timeout = 20ms;
    o.retry_backoff = 10ms;
    o.position_wait = 300ms;
    o.transactional = true;
    o.routing.topic = "t";
    o.producer_factory = [this](std::unique_ptr<Producer>* p) {
      std::lock_guard<std::mutex> lock(broker_.mu);
      auto made = std::make_unique<TxnProducer>(&broker_);
      made->set_id(++broker_.producers);
      *p = std::move(made);
      return Status::OK();
    };
    EXPECT_TRUE(Publisher::Create(std::move(o), &meta_, &publisher_).ok());
    return publisher_->Subscribe();
  }

  // A change at `offset`; a safe resume point unless it is inside a binlog transaction.
  void Put(int id, uint64_t offset, bool safe = true) {
    std::string bytes = testing::RowEntry("db", "t", canal::entry::INSERT,
                                          {testing::Row{{}, {{"id", std::to_string(id), false, true}}}},
                                          1700000000000, "bin.000001", static_cast<int64_t>(offset));
    store::EntryMeta m;
    m.safe_resume_point = safe;
    m.position.journal_name = "bin.000001";
    m.position.position = offset;
    ASSERT_TRUE(ring_->Put(bytes, m).ok());
  }
  std::optional<LogPosition> Cursor() {
    std::optional<LogPosition> cursor;
    EXPECT_TRUE(meta_.GetCursor(Client(), &cursor).ok());
    return cursor;
  }
  static meta::ClientIdentity Client() {
    meta::ClientIdentity c;
    c.destination = "example";
    c.client_id = kMqClientId;
    return c;
  }
  // The committed payloads' ids, in commit order.
  std::vector<int> CommittedIds() {
    std::lock_guard<std::mutex> lock(broker_.mu);
    std::vector<int> ids;
    for (const std::string& p : broker_.committed_payloads) {
      const size_t at = p.find("\"id\":\"");
      ids.push_back(at == std::string::npos ? -1 : std::stoi(p.substr(at + 6)));
    }
    return ids;
  }
  uint64_t CommittedOffset() {
    std::lock_guard<std::mutex> lock(broker_.mu);
    if (!broker_.position) return 0;
    LogPosition p;
    meta::LogIdentity id;
    EXPECT_TRUE(meta::DecodeCursor(broker_.position->cursor_json, &p, &id).ok());
    return p.position;
  }
  static std::vector<int> Range(int n) {
    std::vector<int> v;
    for (int i = 0; i < n; ++i) v.push_back(i);
    return v;
  }

  meta::MemoryMetaManager meta_;
  std::unique_ptr<store::RingStore> ring_;
  std::unique_ptr<Publisher> publisher_;
  TxnBroker broker_;
};

TEST_F(PublisherTransactionTest, TransactionsEndOnlyAtSafeResumePoints) {
  ASSERT_TRUE(Make(2).ok());
  // Three binlog transactions of three changes each: only each third change is a safe point,
  // and batches of 2 cut through them.
  for (int i = 0; i < 9; ++i) Put(i, 100 + static_cast<uint64_t>(i), i % 3 == 2);
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 9; }, 10s));
  EXPECT_EQ(CommittedIds(), Range(9));
  EXPECT_EQ(CommittedOffset(), 108u);
  ASSERT_TRUE(Cursor().has_value());
  EXPECT_EQ(Cursor()->position, 108u);
  // Every committed position is a safe one: offsets 102, 105, 108 only.
  EXPECT_EQ((CommittedOffset() - 100) % 3, 2u);
  EXPECT_EQ(publisher_->stats().aborted_transactions, 0u);
  EXPECT_GE(publisher_->stats().transactions, 1u);
}

TEST_F(PublisherTransactionTest, AnOpenBinlogTransactionIsNeitherCommittedNorAcked) {
  ASSERT_TRUE(Make(2).ok());
  Put(0, 100);
  Put(1, 101, false);
  Put(2, 102, false);
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 1; }, 10s));
  std::this_thread::sleep_for(100ms);  // time to (wrongly) commit the rest
  EXPECT_EQ(CommittedIds(), std::vector<int>{0});
  EXPECT_EQ(ring_->stats().ack_sequence, 1u);
  Put(3, 103);  // the binlog transaction ends
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 4; }, 10s));
  EXPECT_EQ(CommittedIds(), Range(4));
  EXPECT_EQ(Cursor()->position, 103u);
}

TEST_F(PublisherTransactionTest, ACommitThatFailedIsSentAgainInANewTransaction) {
  ASSERT_TRUE(Make(1, 2).ok());
  broker_.script = {Commit::kLost, Commit::kLost};
  for (int i = 0; i < 6; ++i) Put(i, 200 + static_cast<uint64_t>(i));
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 6; }, 10s));
  EXPECT_EQ(CommittedIds(), Range(6)) << "each change once, in order";
  EXPECT_EQ(publisher_->stats().aborted_transactions, 2u);
  EXPECT_EQ(Cursor()->position, 205u);
}

TEST_F(PublisherTransactionTest, ACommitTheBrokerTookWithoutAnsweringIsNotSentAgain) {
  ASSERT_TRUE(Make(1, 2).ok());
  broker_.script = {Commit::kTakenUnanswered};
  for (int i = 0; i < 6; ++i) Put(i, 300 + static_cast<uint64_t>(i));
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 6; }, 10s));
  EXPECT_EQ(CommittedIds(), Range(6)) << "the position read back named the transaction: it committed";
  EXPECT_EQ(publisher_->stats().aborted_transactions, 1u);
  std::lock_guard<std::mutex> lock(broker_.mu);
  EXPECT_EQ(broker_.producers, 3) << "Subscribe's, the first, and the one rebuilt after the timed-out commit";
}

TEST_F(PublisherTransactionTest, AFencedProducerStopsWithoutMovingTheCursor) {
  ASSERT_TRUE(Make(1, 1).ok());
  Put(0, 400);
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 1; }, 10s));
  {
    std::lock_guard<std::mutex> lock(broker_.mu);
    broker_.script = {Commit::kFenced};
  }
  Put(1, 401);
  ASSERT_TRUE(canal::testing::WaitFor([&] { return publisher_->stats().failed; }, 10s));
  EXPECT_NE(publisher_->stats().last_error.find("fenced"), std::string::npos) << publisher_->stats().last_error;
  EXPECT_EQ(Cursor()->position, 400u);
  EXPECT_EQ(ring_->stats().ack_sequence, 1u);
  EXPECT_EQ(CommittedIds(), std::vector<int>{0});
}

TEST_F(PublisherTransactionTest, ARefusalStopsPublishingNamingIt) {
  ASSERT_TRUE(Make(1, 1).ok());
  broker_.script = {Commit::kRefused};
  Put(0, 500);
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return publisher_->stats().failed; }, 10s));
  EXPECT_NE(publisher_->stats().last_error.find("transactional.id"), std::string::npos);
  EXPECT_FALSE(Cursor().has_value());
  EXPECT_TRUE(CommittedIds().empty());
}

TEST_F(PublisherTransactionTest, SubscribeSetsTheCursorFromTheCommittedPosition) {
  // The local cursor says 100, Kafka committed up to 777 (a crash between the commit and the
  // cursor write): Kafka's wins.
  ASSERT_TRUE(meta_.Subscribe(Client()).ok());
  LogPosition local;
  local.journal_name = "bin.000001";
  local.position = 100;
  ASSERT_TRUE(meta_.UpdateCursor(Client(), local).ok());
  LogPosition committed = local;
  committed.position = 777;
  broker_.position = CommittedPosition{"p9-4", meta::EncodeCursor(committed, {}), 4};
  ASSERT_TRUE(Make().ok());
  ASSERT_TRUE(Cursor().has_value());
  EXPECT_EQ(Cursor()->position, 777u);
}

TEST_F(PublisherTransactionTest, SubscribeRetriesAReadThenFailsNamingKafka) {
  broker_.failing_reads = 2;
  ASSERT_TRUE(Make().ok()) << "two failed reads are retried within position_wait";
  broker_.failing_reads = 1000;
  publisher_.reset();
  Status s = Make();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("canal.mq.transaction"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("canal_positions"), std::string::npos) << s.ToString();
}

TEST_F(PublisherTransactionTest, AnUnreadablePositionAfterAFailureWaitsInsteadOfGuessing) {
  // Subscribe's read and the publisher's first succeed; after the failed commit the position
  // cannot be read five times: nothing is sent again until it can (a guess could duplicate
  // or lose the transaction), then the read shows the transaction committed.
  broker_.script = {Commit::kTakenUnanswered};
  broker_.read_script = {true, true, false, false, false, false, false};
  ASSERT_TRUE(Make(1, 1).ok());
  Put(0, 600);
  publisher_->Start(ring_.get());
  ASSERT_TRUE(canal::testing::WaitFor([&] { return ring_->stats().ack_sequence == 1; }, 10s));
  EXPECT_EQ(CommittedIds(), std::vector<int>{0});
  std::lock_guard<std::mutex> lock(broker_.mu);
  EXPECT_TRUE(broker_.read_script.empty()) << "every failed read was retried";
  EXPECT_EQ(broker_.begins, 1) << "not sent again";
}

}  // namespace
}  // namespace canal::mq
