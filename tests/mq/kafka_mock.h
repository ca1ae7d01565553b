// KafkaMock: librdkafka's mock cluster (rdkafka_mock.h) in the test process,
// so it outlives any canal-server the test kills; and a consumer that reads
// a topic's partitions from the beginning.
//
// The mock brokers listen on loopback ports the kernel assigns (librdkafka
// 2.0 offers no way to choose them), so they never collide with the fixed
// ports of other tests. A mock partition keeps its newest 5 MiB (and 100,000
// message sets): a test that publishes more must read while it publishes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;

namespace canal::mq::testing {

struct KafkaRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string payload;
  std::string key;
  std::string transaction;  // the canal.txn header (exactly-once mode), "" without
};

class KafkaMock {
 public:
  // Starts `brokers` brokers; ok() says whether it worked (error() why).
  explicit KafkaMock(int brokers = 3);
  ~KafkaMock();
  KafkaMock(const KafkaMock&) = delete;
  KafkaMock& operator=(const KafkaMock&) = delete;

  bool ok() const { return cluster_ != nullptr; }
  const std::string& error() const { return error_; }
  // "127.0.0.1:p1,127.0.0.1:p2,..."
  std::string bootstraps() const;

  bool CreateTopic(const std::string& topic, int partitions);
  // Metadata requests for `topic` answer `error` (an rd_kafka_resp_err_t): a topic that does not
  // exist on a cluster that creates none, or one this client may not write.
  void SetTopicError(const std::string& topic, int error);
  // The next `count` Produce requests fail with `error` (an rd_kafka_resp_err_t),
  // on whichever broker gets them.
  void FailProduceRequests(int error, int count);
  // The next `count` requests of Kafka API `api_key` (e.g. 26 EndTxn, 24 AddPartitionsToTxn)
  // fail with `error`.
  void FailRequests(int16_t api_key, int error, int count);
  // The next `count` Produce requests on every broker answer after `rtt_ms`
  // (a slow broker: batches stay in flight longer).
  void SlowProduceRequests(int rtt_ms, int count);
  // Every broker: down (connections refused and closed) or up again.
  void SetBrokersDown(bool down);

  // Reads every partition of `topic` from the beginning until `until`
  // returns true for the records so far or `limit` passes; records of one
  // partition in offset order.
  std::map<int32_t, std::vector<KafkaRecord>> ReadAll(
      const std::string& topic, int partitions, std::chrono::milliseconds limit,
      const std::function<bool(const std::map<int32_t, std::vector<KafkaRecord>>&)>& until) const;

  // Reads `partitions` of `topic` from the beginning, handing each record to
  // `on` (and nullptr after each 100 ms without one, so `on` can decide to
  // stop while the topic is quiet) until `on` returns false or `limit`
  // passes; one partition's records in offset order. Several may run at once
  // (a consumer per partition).
  void Consume(const std::string& topic, const std::vector<int32_t>& partitions, std::chrono::milliseconds limit,
               const std::function<bool(const KafkaRecord*)>& on) const;

 private:
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  int brokers_ = 0;
  std::string error_;
};

// What a read_committed consumer would see, for the mock, which shows every record
// whatever became of its transaction (librdkafka 2.0's mock neither filters aborted
// transactions nor holds back open ones): exactly-once messages carry their transaction's
// tag (canal.txn), and a transaction committed when its position message (the last thing
// it sends, after every other message of it was confirmed) is in the position topic. A
// transaction whose position message landed but whose commit failed is found so by the
// server too (it reads the position back before sending anything again), so both sides
// agree on what counts.
class CommittedView {
 public:
  // A position topic record (its canal.txn header names the transaction).
  void AddPosition(const KafkaRecord& r) { committed_.insert(r.transaction); }
  bool Committed(const std::string& transaction) const { return committed_.count(transaction) != 0; }
  size_t transactions() const { return committed_.size(); }

 private:
  std::set<std::string> committed_;
};

// Total records in a ReadAll result.
size_t CountRecords(const std::map<int32_t, std::vector<KafkaRecord>>& records);

}  // namespace canal::mq::testing
