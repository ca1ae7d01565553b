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
#include <string>
#include <vector>

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;

namespace canal::mq::testing {

struct KafkaRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string payload;
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

// Total records in a ReadAll result.
size_t CountRecords(const std::map<int32_t, std::vector<KafkaRecord>>& records);

}  // namespace canal::mq::testing
