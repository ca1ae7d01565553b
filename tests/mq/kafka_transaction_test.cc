// The transactional Kafka producer (canal.mq.transaction) against librdkafka's
// mock cluster: transactions commit with their position message, which is read
// back (the newest by number, only the destination's own); every message of a
// transaction carries its tag; an injected EndTxn failure aborts and the
// producer goes on; a fenced commit says so; a damaged position message is
// named, not guessed around.
//
// The mock (librdkafka 2.0.2) cannot show what a real cluster adds: it neither
// hides aborted or open transactions from read_committed readers nor fences an
// older producer of the same transactional.id. Measured here: a commit by a
// producer whose id was taken over succeeds on the mock. So this suite covers
// the producer's side, and KafkaExactlyOnce (kafka_exactly_once_test.cc) judges
// delivery with testing::CommittedView, which applies read_committed by the
// transaction tags.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <atomic>

#include "canal/meta/meta_json.h"
#include "canal/mq/kafka_producer.h"
#include "mq/kafka_mock.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;
using testing::KafkaMock;
using testing::KafkaRecord;

constexpr int16_t kEndTxnApiKey = 26;

class KafkaTransactions : public ::testing::Test {
 protected:
  void SetUp() override {
    mock_ = std::make_unique<KafkaMock>(3);
    ASSERT_TRUE(mock_->ok()) << mock_->error();
    ASSERT_TRUE(mock_->CreateTopic("data", 1));
    ASSERT_TRUE(mock_->CreateTopic("canal_positions", 1));
  }

  KafkaOptions Options(const std::string& destination = "example") const {
    KafkaOptions o;
    o.properties = {{"bootstrap.servers", mock_->bootstraps()}, {"log_level", "3"}, {"linger.ms", "1"}};
    o.destination = destination;
    o.transactional = true;
    o.transactional_id = "canal-" + destination;
    o.position_topic = "canal_positions";
    o.transaction_wait_ms = 10'000;
    return o;
  }
  static std::string CursorAt(uint64_t offset) {
    LogPosition p;
    p.journal_name = "mysql-bin.000003";
    p.position = offset;
    return meta::EncodeCursor(p, {});
  }
  static uint64_t OffsetOf(const std::string& cursor_json) {
    LogPosition p;
    meta::LogIdentity id;
    EXPECT_TRUE(meta::DecodeCursor(cursor_json, &p, &id).ok()) << cursor_json;
    return p.position;
  }
  // One transaction of `rows` messages to topic data, committed at `offset`.
  Status Transaction(Producer* p, int rows, uint64_t offset, std::string* tag,
                     const std::string& destination = "example") {
    CANAL_RETURN_IF_ERROR(p->BeginTransaction(tag));
    std::vector<EncodedMessage> messages(static_cast<size_t>(rows));
    for (int i = 0; i < rows; ++i) {
      messages[i].topic = "data";
      messages[i].payload = "row " + std::to_string(i) + " of " + *tag;
      messages[i].origin = "db.t at mysql-bin.000003:" + std::to_string(offset);
      CANAL_RETURN_IF_ERROR(p->Send(messages[i]));
    }
    CANAL_RETURN_IF_ERROR(p->ConfirmRound(p->EndRound(), stop_));
    return p->CommitTransaction(destination, CursorAt(offset), stop_);
  }
  std::vector<KafkaRecord> Records(const std::string& topic, size_t at_least) const {
    auto all = mock_->ReadAll(topic, 1, 10s, [&](const std::map<int32_t, std::vector<KafkaRecord>>& r) {
      return testing::CountRecords(r) >= at_least;
    });
    return all[0];
  }
  // A message written to the position topic by hand (not by a transaction).
  void ProduceRaw(const std::string& key, const std::string& value) const {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", mock_->bootstraps().c_str(), err, sizeof err);
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    ASSERT_NE(rk, nullptr) << err;
    ASSERT_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("canal_positions"), RD_KAFKA_V_KEY(key.data(), key.size()),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_flush(rk, 10'000);
    rd_kafka_destroy(rk);
  }

  std::unique_ptr<KafkaMock> mock_;
  std::atomic<bool> stop_{false};
};

TEST_F(KafkaTransactions, NothingCommittedYetIsNotAnError) {
  std::unique_ptr<Producer> p;
  KafkaOptions o = Options();
  o.position_topic = "no_such_topic_yet";
  ASSERT_TRUE(MakeKafkaProducer(o, &p).ok());
  ASSERT_TRUE(p->transactional());
  CommittedPosition pos;
  bool found = true;
  ASSERT_TRUE(p->ReadCommittedPosition("example", &pos, &found).ok());
  EXPECT_FALSE(found);
  p.reset();
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  found = true;
  ASSERT_TRUE(p->ReadCommittedPosition("example", &pos, &found).ok()) << "an empty topic";
  EXPECT_FALSE(found);
}

TEST_F(KafkaTransactions, TheCommittedPositionIsReadBackNewestFirstAndNumberingGoesOn) {
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  std::string first, second, other;
  ASSERT_TRUE(Transaction(p.get(), 3, 1000, &first).ok());
  ASSERT_TRUE(Transaction(p.get(), 2, 2000, &second).ok());
  EXPECT_NE(first, second);
  // Another destination's position, later in the same topic, is not this one's.
  std::unique_ptr<Producer> q;
  ASSERT_TRUE(MakeKafkaProducer(Options("orders"), &q).ok());
  ASSERT_TRUE(Transaction(q.get(), 1, 9000, &other, "orders").ok());
  q.reset();
  p.reset();

  // A new producer (a restart, another server) reads the newest position back and goes on
  // numbering after it.
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  CommittedPosition pos;
  bool found = false;
  ASSERT_TRUE(p->ReadCommittedPosition("example", &pos, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(pos.transaction, second);
  EXPECT_EQ(pos.sequence, 2u);
  EXPECT_EQ(OffsetOf(pos.cursor_json), 2000u);
  // An aborted attempt is a transaction of its own (its tag is never used again), and
  // numbering counts only committed ones.
  std::string aborted, third;
  ASSERT_TRUE(p->BeginTransaction(&aborted).ok());
  ASSERT_TRUE(p->AbortTransaction(stop_).ok());
  ASSERT_TRUE(Transaction(p.get(), 1, 3000, &third).ok());
  EXPECT_NE(aborted, third);
  ASSERT_TRUE(p->ReadCommittedPosition("example", &pos, &found).ok());
  EXPECT_EQ(pos.transaction, third);
  EXPECT_EQ(pos.sequence, 3u);
}

TEST_F(KafkaTransactions, EveryMessageOfATransactionCarriesItsTag) {
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  std::string tag;
  ASSERT_TRUE(Transaction(p.get(), 4, 1000, &tag).ok());
  const std::vector<KafkaRecord> data = Records("data", 4);
  ASSERT_EQ(data.size(), 4u);
  for (const KafkaRecord& r : data) EXPECT_EQ(r.transaction, tag);
  const std::vector<KafkaRecord> positions = Records("canal_positions", 1);
  ASSERT_EQ(positions.size(), 1u);
  EXPECT_EQ(positions[0].transaction, tag);
  EXPECT_EQ(positions[0].key, "example");
  EXPECT_NE(positions[0].payload.find("\"sequence\":1"), std::string::npos) << positions[0].payload;

  // Without transactions no message carries a header.
  KafkaOptions plain = Options();
  plain.transactional = false;
  std::unique_ptr<Producer> q;
  ASSERT_TRUE(MakeKafkaProducer(plain, &q).ok());
  EXPECT_FALSE(q->transactional());
  EncodedMessage m;
  m.topic = "data";
  m.payload = "plain";
  ASSERT_TRUE(q->Send(m).ok());
  ASSERT_TRUE(q->Confirm(stop_).ok());
  const std::vector<KafkaRecord> all = Records("data", 5);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[4].transaction, "");
}

TEST_F(KafkaTransactions, AFailedCommitIsAbortedAndTheProducerGoesOn) {
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  std::string tag;
  // The coordinator refuses the commit (not retriable): the transaction must be aborted.
  mock_->FailRequests(kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_TXN_STATE, 1);
  Status s = Transaction(p.get(), 2, 1000, &tag);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("committing transaction " + tag), std::string::npos) << s.ToString();
  if (p->broken()) {
    ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  } else {
    ASSERT_TRUE(p->AbortTransaction(stop_).ok());
  }
  // As the publisher does after any failure: read the position back before going on (on the
  // mock the failed transaction's position shows; on a cluster it would not).
  CommittedPosition before;
  bool any = false;
  ASSERT_TRUE(p->ReadCommittedPosition("example", &before, &any).ok());
  std::string next;
  ASSERT_TRUE(Transaction(p.get(), 2, 2000, &next).ok());
  CommittedPosition pos;
  bool found = false;
  ASSERT_TRUE(p->ReadCommittedPosition("example", &pos, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(OffsetOf(pos.cursor_json), 2000u);
  EXPECT_EQ(pos.transaction, next);
  EXPECT_EQ(pos.sequence, any ? before.sequence + 1 : 1u);
}

TEST_F(KafkaTransactions, RetriableCoordinatorErrorsAreRetriedByTheCommit) {
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  mock_->FailRequests(kEndTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, 3);
  std::string tag;
  ASSERT_TRUE(Transaction(p.get(), 2, 1000, &tag).ok());
}

TEST_F(KafkaTransactions, AFencedCommitStopsWithItsOwnKind) {
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  mock_->FailRequests(kEndTxnApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, 1);
  std::string tag;
  Status s = Transaction(p.get(), 1, 1000, &tag);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.subcode(), kErrorProducerFenced) << s.ToString();
  EXPECT_NE(s.ToString().find("canal-example"), std::string::npos) << s.ToString();
  EXPECT_TRUE(p->broken());
}

TEST_F(KafkaTransactions, ADamagedPositionMessageIsNamedNotSkipped) {
  ProduceRaw("orders", "not json at all");  // another destination's damage is not ours to judge...
  ProduceRaw("example", "{\"destination\":\"example\",\"transaction\":\"x-1\"}");
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  CommittedPosition pos;
  bool found = false;
  Status s = p->ReadCommittedPosition("example", &pos, &found);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_NE(s.ToString().find("canal_positions partition 0 offset 1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("sequence"), std::string::npos) << s.ToString();
  EXPECT_FALSE(p->ReadCommittedPosition("orders", &pos, &found).ok())
      << "...but it is the other destination's to be told about";
}

TEST_F(KafkaTransactions, AnUnreachableClusterFailsTheReadWithinItsWait) {
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(Options(), &p).ok());
  mock_->SetBrokersDown(true);
  CommittedPosition pos;
  bool found = false;
  const auto start = std::chrono::steady_clock::now();
  Status s = p->ReadCommittedPosition("example", &pos, &found);
  const auto took = std::chrono::steady_clock::now() - start;
  mock_->SetBrokersDown(false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.ToString().find("canal_positions"), std::string::npos) << s.ToString();
  EXPECT_LT(took, 15s);
}

}  // namespace
}  // namespace canal::mq
