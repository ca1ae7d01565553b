// The MQ mode's settings, read with Canal's keys.
//
// canal.properties (server-wide):
//   canal.serverMode            tcp (default) | kafka | rabbitMQ   (case-insensitive;
//                               rocketMQ and pulsarMQ are refused: not built here)
//   canal.mq.flatMessage        true (default): FlatMessage JSON; false: protobuf Packet
//   canal.mq.canalBatchSize     entries per ring batch (default 50)
//   canal.mq.canalGetTimeout    ms a batch may wait to fill (default 100)
//   canal.mq.maxInFlightBatches, canal.mq.maxInFlightBytes   batches (8) and ring bytes (64 MiB)
//                               sent before the oldest is confirmed (publisher.h)
//   canal.mq.transaction.maxBatches  with canal.mq.transaction: batches per Kafka transaction at
//                               most (32; and canal.mq.maxInFlightBytes of ring entries)
//   canal.mq.database.hash      true (default): partition hashes start from the db name
//   canal.mq.filterTransactionEntry  false (default): protobuf form without begin/end entries
//   kafka.*                     the Kafka client (below)
//   rabbitmq.*                  the RabbitMQ client (below)
// instance.properties (per destination; canal.properties gives defaults):
//   canal.mq.topic, canal.mq.dynamicTopic, canal.mq.partition,
//   canal.mq.partitionsNum, canal.mq.partitionHash,
//   canal.mq.dynamicTopicPartitionNum   (routing.h)
//
// Kafka: Canal's keys are the Java client's; they map to librdkafka's:
//   kafka.bootstrap.servers -> bootstrap.servers      kafka.acks -> acks (default all)
//   kafka.compression.type  -> compression.type       kafka.batch.size -> batch.size
//   kafka.linger.ms         -> linger.ms              kafka.max.request.size -> message.max.bytes
//   kafka.buffer.memory     -> queue.buffering.max.kbytes (bytes / 1024)
//   kafka.max.in.flight.requests.per.connection -> max.in.flight (at most 5: idempotence)
//   kafka.security.protocol -> security.protocol      kafka.sasl.mechanism -> sasl.mechanisms
//   kafka.sasl.jaas.config  -> sasl.username / sasl.password (from username="..." password="...")
//   kafka.sasl.username / kafka.sasl.password -> the same, given directly
//   kafka.retries           ignored with a warning: the idempotent producer retries until
//                           delivery or message.timeout.ms, and the publisher after that
//   kafka.kerberos.*        refused when enabled (not supported)
//   kafka.<anything else>   passed to librdkafka as <anything else> (librdkafka's own names,
//                           e.g. kafka.message.timeout.ms); a name it does not know stops start-up
// RabbitMQ (rabbitmq_producer.h): rabbitmq.host (host[:port], default port 5672),
//   rabbitmq.virtual.host (default /), rabbitmq.exchange, rabbitmq.username,
//   rabbitmq.password, rabbitmq.queue and rabbitmq.routingKey (declare and bind a durable
//   queue), rabbitmq.deliveryMode (an exchange type to declare the exchange as:
//   direct | fanout | topic | headers; or 1 / 2 = transient / persistent messages; default:
//   persistent messages, the exchange must exist).
//
// Unknown canal.mq.* keys, and Canal's keys that do nothing here, come back
// as warnings for the log (a typo must not go unnoticed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "canal/common/properties.h"
#include "canal/common/status.h"
#include "canal/mq/batch_encoder.h"
#include "canal/mq/routing.h"

namespace canal::mq {

enum class ServerMode : uint8_t { kTcp, kKafka, kRabbitMq };
const char* ServerModeName(ServerMode mode);  // Canal's spelling: tcp, kafka, rabbitMQ

struct RabbitMqOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 5672;
  std::string virtual_host = "/";
  std::string exchange;
  std::string username = "guest";
  std::string password = "guest";
  std::string queue;        // declared durable and bound when set
  std::string routing_key;  // the binding's key (default: the queue's name)
  std::string exchange_type;  // declared when set (rabbitmq.deliveryMode = direct|fanout|topic|headers)
  bool persistent = true;     // delivery mode 2
};

struct MqSettings {
  ServerMode mode = ServerMode::kTcp;
  EncoderOptions encoder;
  size_t canal_batch_size = 50;
  int64_t canal_get_timeout_ms = 100;
  // Batches (and bytes of ring entries) sent before the oldest is confirmed (publisher.h).
  size_t max_in_flight_batches = 8;
  uint64_t max_in_flight_bytes = 64ull << 20;
  // Exactly once: batches per Kafka transaction at most (canal.mq.transaction.maxBatches);
  // each commit pauses publishing for a round trip or two, so a catch-up wants them large.
  size_t transaction_max_batches = 32;
  bool database_hash = true;
  std::map<std::string, std::string> kafka;  // librdkafka names
  RabbitMqOptions rabbitmq;
  std::vector<std::string> warnings;  // for the log, one line each
};

// Reads the server-wide keys from `resolver` (environment, canal.properties);
// `canal_properties` lists the keys written there (for the kafka.* pass-through
// and the unknown-key warnings). InvalidArgument naming the key and value.
Status LoadMqSettings(const PropertyResolver& resolver, const Properties& canal_properties, MqSettings* out);

// One destination's Kafka producer: canal.properties' kafka.* keys with those
// written in its instance.properties over them (a destination on its own
// cluster: kafka.bootstrap.servers, credentials, ...), and exactly-once:
//   canal.mq.transaction                 false (default) | true: Kafka transactions (publisher.h)
//   canal.mq.transaction.id              the transactional.id (default canal-<destination>; the same
//                                        on every server that may run the destination)
//   canal.mq.transaction.positionTopic   where each transaction's position is committed
//                                        (default canal_positions; compacted, kafka_producer.h)
struct DestinationKafka {
  std::map<std::string, std::string> properties;  // librdkafka names
  bool transactional = false;
  std::string transactional_id;
  std::string position_topic = "canal_positions";
};
// InvalidArgument naming the key (transactions without Kafka, one transactional.id for all).
Status LoadDestinationKafka(const PropertyResolver& resolver, const Properties& instance_properties,
                            const MqSettings& settings, const std::string& destination, DestinationKafka* out,
                            std::vector<std::string>* warnings);
// The largest protobuf Packet the encoder may make under Kafka's message.max.bytes.
size_t KafkaPacketLimit(const std::map<std::string, std::string>& kafka);

// Reads one destination's routing keys (instance.properties over
// canal.properties); adds warnings for unknown canal.mq.* keys written in
// `instance_properties`.
Status LoadRoutingConfig(const PropertyResolver& resolver, const Properties& instance_properties,
                         const MqSettings& settings, RoutingConfig* out, std::vector<std::string>* warnings);

}  // namespace canal::mq
