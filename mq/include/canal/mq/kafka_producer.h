// KafkaProducer: Producer over librdkafka. Idempotent (enable.idempotence,
// so retries neither duplicate nor reorder within a partition), acks=all
// unless kafka.acks says otherwise; messages go to the partition the routing
// chose, with no key, as Canal sends them.
//
// Settings come from canal.properties' kafka.* keys (see mq_config.h for the
// mapping of Canal's Java client names to librdkafka's).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "canal/common/status.h"
#include "canal/mq/producer.h"

namespace spdlog {
class logger;
}

namespace canal::mq {

struct KafkaOptions {
  // librdkafka properties, by librdkafka's names (bootstrap.servers, acks, ...).
  std::map<std::string, std::string> properties;
  // Where librdkafka's own log lines go (its syslog levels mapped to spdlog's, prefixed
  // "[destination] librdkafka", escaped and at most kLibraryLogLinesPerSecond a second, the
  // rest counted); null: librdkafka's default (stderr).
  std::shared_ptr<spdlog::logger> logger;
  std::string destination;
  // Exactly once (canal.mq.transaction): a transactional producer with this transactional.id
  // (one per destination, the same on every server that may run it: a new producer fences
  // the old through Kafka's epoch), committing each transaction's position to position_topic.
  bool transactional = false;
  std::string transactional_id;
  std::string position_topic;
  // How long start-up, a commit or a read of the position topic may wait for the cluster.
  int transaction_wait_ms = 30'000;
};

inline constexpr int kLibraryLogLinesPerSecond = 20;

// The header every message of a transaction carries: "<producer session>-<transaction number>",
// the same on the transaction's position message (kafka_position.h's JSON "transaction").
inline constexpr const char* kKafkaTransactionHeader = "canal.txn";

// InvalidArgument naming the property librdkafka refused.
Status MakeKafkaProducer(const KafkaOptions& options, std::unique_ptr<Producer>* out);

// Checks every property with librdkafka without connecting, so a bad one
// stops start-up rather than the first batch.
Status CheckKafkaOptions(const KafkaOptions& options);

}  // namespace canal::mq
