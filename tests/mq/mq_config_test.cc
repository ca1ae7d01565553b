// The MQ settings: Canal's keys and defaults, the kafka.* mapping to
// librdkafka's names, RabbitMQ's keys, and refusals and warnings for what
// cannot be used.
#include "canal/mq/mq_config.h"

#include "canal/mq/kafka_producer.h"

#include <gtest/gtest.h>

namespace canal::mq {
namespace {

struct Loaded {
  Status status;
  MqSettings settings;
};

Loaded Load(const std::string& text) {
  Properties props("canal.properties");
  Loaded out;
  out.status = Properties::Parse(text, "canal.properties", &props);
  if (!out.status.ok()) return out;
  PropertyResolver r({&props}, [](const std::string&) { return std::optional<std::string>(); });
  out.status = LoadMqSettings(r, props, &out.settings);
  return out;
}

KafkaOptions OptionsOf(const std::map<std::string, std::string>& properties) {
  KafkaOptions o;
  o.properties = properties;
  return o;
}

// One destination's Kafka settings: canal.properties `server`, its instance.properties `instance`.
struct LoadedDestination {
  Status status;
  DestinationKafka kafka;
  std::vector<std::string> warnings;
};
LoadedDestination LoadDestination(const std::string& server, const std::string& instance) {
  LoadedDestination out;
  Loaded base = Load(server);
  if (!base.status.ok()) {
    out.status = base.status;
    return out;
  }
  Properties canal("canal.properties"), props("example/instance.properties");
  out.status = Properties::Parse(server, "canal.properties", &canal);
  if (out.status.ok()) out.status = Properties::Parse(instance, "example/instance.properties", &props);
  if (!out.status.ok()) return out;
  PropertyResolver r({&props, &canal}, [](const std::string&) { return std::optional<std::string>(); });
  out.status = LoadDestinationKafka(r, props, base.settings, "example", &out.kafka, &out.warnings);
  return out;
}

bool HasWarning(const MqSettings& s, const std::string& text) {
  for (const std::string& w : s.warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(MqConfigTest, DefaultsAreTcpAndCanals) {
  Loaded l = Load("");
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  EXPECT_EQ(l.settings.mode, ServerMode::kTcp);
  EXPECT_TRUE(l.settings.encoder.flat_message);
  EXPECT_EQ(l.settings.canal_batch_size, 50u);
  EXPECT_EQ(l.settings.canal_get_timeout_ms, 100);
  EXPECT_TRUE(l.settings.database_hash);
}

// The protobuf form's Packets stay under what the Kafka producer takes (batch_encoder.h):
// kafka.max.request.size (or librdkafka's own name, or its default) less the record's framing.
TEST(MqConfigTest, PacketLimitFollowsTheProducersMessageLimit) {
  Loaded l = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:9092\n");
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  EXPECT_EQ(l.settings.encoder.max_message_bytes, 1000000u - kMessageOverheadBytes);
  l = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:9092\nkafka.max.request.size = 2097152\n");
  EXPECT_EQ(l.settings.encoder.max_message_bytes, 2097152u - kMessageOverheadBytes);
  l = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:9092\nkafka.message.max.bytes = 500000\n");
  EXPECT_EQ(l.settings.encoder.max_message_bytes, 500000u - kMessageOverheadBytes);
  // Too small to leave room for the framing: no splitting, the broker's refusal names the message.
  l = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:9092\nkafka.max.request.size = 1000\n");
  EXPECT_EQ(l.settings.encoder.max_message_bytes, 0u);
  l = Load("canal.serverMode = rabbitMQ\nrabbitmq.exchange = x\n");
  EXPECT_EQ(l.settings.encoder.max_message_bytes, 0u);
}

TEST(MqConfigTest, KafkaKeysMapToLibrdkafka) {
  Loaded l = Load(
      "canal.serverMode = Kafka\nkafka.bootstrap.servers = a:9092,b:9092\nkafka.acks = -1\n"
      "kafka.compression.type = lz4\nkafka.batch.size = 16384\nkafka.linger.ms = 5\n"
      "kafka.max.request.size = 2097152\nkafka.buffer.memory = 33554432\n"
      "kafka.max.in.flight.requests.per.connection = 8\nkafka.retries = 0\n"
      "kafka.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required "
      "username=\"alice\" password=\"s3cret\";\nkafka.sasl.mechanism = SCRAM-SHA-512\n"
      "kafka.security.protocol = SASL_PLAINTEXT\nkafka.message.timeout.ms = 9000\nkafka.kerberos.enable = false\n"
      "canal.mq.flatMessage = false\ncanal.mq.canalBatchSize = 10\ncanal.mq.canalGetTimeout = 5\n"
      "canal.mq.database.hash = false\ncanal.mq.maxInFlightBatches = 3\ncanal.mq.maxInFlightBytes = 1048576\n");
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  EXPECT_EQ(l.settings.max_in_flight_batches, 3u);
  EXPECT_EQ(l.settings.max_in_flight_bytes, 1048576u);
  const auto& k = l.settings.kafka;
  EXPECT_EQ(l.settings.mode, ServerMode::kKafka);
  EXPECT_EQ(k.at("bootstrap.servers"), "a:9092,b:9092");
  EXPECT_EQ(k.at("acks"), "-1");
  EXPECT_EQ(k.count("enable.idempotence"), 0u);  // the producer's default: on
  EXPECT_EQ(k.at("compression.type"), "lz4");
  EXPECT_EQ(k.at("message.max.bytes"), "2097152");
  EXPECT_EQ(k.at("queue.buffering.max.kbytes"), "32768");
  EXPECT_EQ(k.at("max.in.flight"), "5");  // capped for idempotence
  EXPECT_EQ(k.at("sasl.username"), "alice");
  EXPECT_EQ(k.at("sasl.password"), "s3cret");
  EXPECT_EQ(k.at("sasl.mechanisms"), "SCRAM-SHA-512");
  EXPECT_EQ(k.at("message.timeout.ms"), "9000");  // librdkafka's own name passes through
  EXPECT_EQ(k.count("retries"), 0u);
  EXPECT_EQ(k.count("kerberos.enable"), 0u);
  EXPECT_TRUE(HasWarning(l.settings, "kafka.retries"));
  EXPECT_TRUE(HasWarning(l.settings, "lowered to 5"));
  EXPECT_FALSE(l.settings.encoder.flat_message);
  EXPECT_EQ(l.settings.canal_batch_size, 10u);
  EXPECT_EQ(l.settings.canal_get_timeout_ms, 5);
  EXPECT_FALSE(l.settings.database_hash);
}

TEST(MqConfigTest, AcksBelowAllTurnIdempotenceOffWithAWarning) {
  Loaded l = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\nkafka.acks = 1\n");
  ASSERT_TRUE(l.status.ok());
  EXPECT_EQ(l.settings.kafka.at("enable.idempotence"), "false");
  EXPECT_EQ(l.settings.kafka.at("max.in.flight"), "1");
  EXPECT_TRUE(HasWarning(l.settings, "can lose confirmed changes"));
  EXPECT_TRUE(CheckKafkaOptions(OptionsOf(l.settings.kafka)).ok());
}

TEST(MqConfigTest, LibrdkafkaRefusesUnknownPassThroughKeys) {
  Loaded l = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\nkafka.no.such.thing = 1\n");
  ASSERT_TRUE(l.status.ok());
  Status s = CheckKafkaOptions(OptionsOf(l.settings.kafka));
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("no.such.thing"), std::string::npos) << s.ToString();
  l = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\nkafka.compression.type = bogus\n");
  EXPECT_FALSE(CheckKafkaOptions(OptionsOf(l.settings.kafka)).ok());
}

TEST(MqConfigTest, RabbitKeys) {
  Loaded l = Load(
      "canal.serverMode = rabbitMQ\nrabbitmq.host = mq.local:5673\nrabbitmq.virtual.host = /canal\n"
      "rabbitmq.exchange = ex\nrabbitmq.username = u\nrabbitmq.password = p\nrabbitmq.queue = q\n"
      "rabbitmq.deliveryMode = Topic\n");
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  const RabbitMqOptions& r = l.settings.rabbitmq;
  EXPECT_EQ(r.host, "mq.local");
  EXPECT_EQ(r.port, 5673);
  EXPECT_EQ(r.virtual_host, "/canal");
  EXPECT_EQ(r.exchange, "ex");
  EXPECT_EQ(r.queue, "q");
  EXPECT_EQ(r.routing_key, "q");  // defaults to the queue's name
  EXPECT_EQ(r.exchange_type, "topic");
  EXPECT_TRUE(r.persistent);
  l = Load("canal.serverMode = rabbitMQ\nrabbitmq.deliveryMode = 1\nrabbitmq.exchange = ex\n");
  ASSERT_TRUE(l.status.ok());
  EXPECT_FALSE(l.settings.rabbitmq.persistent);
  EXPECT_EQ(l.settings.rabbitmq.port, 5672);
}

TEST(MqConfigTest, RefusedValuesNameKeyAndValue) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"canal.serverMode = rocketMQ\n", "does not publish to rocketMQ"},
      {"canal.serverMode = pulsarMQ\n", "pulsarMQ"},
      {"canal.serverMode = carrier-pigeon\n", "tcp, kafka or rabbitMQ"},
      {"canal.serverMode = kafka\n", "needs kafka.bootstrap.servers"},
      {"canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\ncanal.mq.flatMessage = yes\n",
       "canal.mq.flatMessage = yes"},
      {"canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\ncanal.mq.canalBatchSize = 0\n",
       "canal.mq.canalBatchSize = 0"},
      {"canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\ncanal.mq.canalGetTimeout = soon\n",
       "canal.mq.canalGetTimeout"},
      {"canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\ncanal.mq.maxInFlightBatches = 0\n",
       "canal.mq.maxInFlightBatches = 0"},
      {"canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\ncanal.mq.maxInFlightBytes = 10\n",
       "canal.mq.maxInFlightBytes = 10"},
      {"canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\nkafka.kerberos.enable = true\n", "Kerberos"},
      {"canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\nkafka.buffer.memory = lots\n", "kafka.buffer.memory"},
      {"canal.serverMode = rabbitMQ\nrabbitmq.host = h:99999\n", "rabbitmq.host = h:99999"},
      {"canal.serverMode = rabbitMQ\nrabbitmq.deliveryMode = 3\n", "rabbitmq.deliveryMode = 3"},
  };
  for (const Case& c : cases) {
    Loaded l = Load(c.text);
    ASSERT_FALSE(l.status.ok()) << c.text;
    EXPECT_EQ(l.status.code(), Status::Code::kInvalidArgument) << c.text;
    EXPECT_NE(l.status.ToString().find(c.expect), std::string::npos) << l.status.ToString();
  }
}

TEST(MqConfigTest, UnknownAndUnusedMqKeysAreWarnedAbout) {
  Loaded l = Load(
      "canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\ncanal.mq.flatMesage = true\n"
      "canal.mq.send.thread.size = 8\ncanal.mq.topic = default_topic\n");
  ASSERT_TRUE(l.status.ok());
  EXPECT_TRUE(HasWarning(l.settings, "unknown key canal.mq.flatMesage"));
  EXPECT_TRUE(HasWarning(l.settings, "canal.mq.send.thread.size"));
  EXPECT_FALSE(HasWarning(l.settings, "canal.mq.topic"));  // a default for every destination
  // In tcp mode nothing is read, so nothing is warned about.
  EXPECT_TRUE(Load("canal.mq.whatever = 1\n").settings.warnings.empty());
}

TEST(MqConfigTest, RoutingPerDestination) {
  Loaded server = Load("canal.serverMode = kafka\nkafka.bootstrap.servers = a:1\ncanal.mq.partitionsNum = 2\n");
  ASSERT_TRUE(server.status.ok());
  Properties canal("canal.properties");
  ASSERT_TRUE(Properties::Parse("canal.mq.partitionsNum = 2\n", "canal.properties", &canal).ok());
  Properties inst("instance.properties");
  ASSERT_TRUE(Properties::Parse("canal.mq.topic = t\ncanal.mq.partition = 1\ncanal.mq.partitionHash = a.b:id\n"
                                "canal.mq.dynamicTopic = x:a\\\\..*\ncanal.mq.canalBatchSize = 9\ncanal.mq.tpoic = y\n",
                                "instance.properties", &inst)
                  .ok());
  PropertyResolver r({&inst, &canal}, [](const std::string&) { return std::optional<std::string>(); });
  RoutingConfig rc;
  std::vector<std::string> warnings;
  ASSERT_TRUE(LoadRoutingConfig(r, inst, server.settings, &rc, &warnings).ok());
  EXPECT_EQ(rc.topic, "t");
  EXPECT_EQ(rc.partition, 1);
  EXPECT_EQ(rc.partitions_num, 2);  // from canal.properties
  EXPECT_EQ(rc.partition_hash, "a.b:id");
  EXPECT_EQ(rc.dynamic_topic, "x:a\\..*");
  std::string all;
  for (const auto& w : warnings) all += w + "\n";
  EXPECT_NE(all.find("canal.mq.canalBatchSize (instance.properties) is a server-wide key"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown key canal.mq.tpoic"), std::string::npos) << all;

  Properties empty("instance.properties");
  PropertyResolver r2({&empty}, [](const std::string&) { return std::optional<std::string>(); });
  Status s = LoadRoutingConfig(r2, empty, server.settings, &rc, &warnings);
  EXPECT_NE(s.ToString().find("needs canal.mq.topic"), std::string::npos) << s.ToString();
}

}  // namespace

constexpr const char* kKafkaServer = "canal.serverMode = kafka\nkafka.bootstrap.servers = a:9092\nkafka.linger.ms = 5\n";

TEST(MqConfigTest, ADestinationMayPublishToItsOwnKafkaCluster) {
  LoadedDestination d = LoadDestination(kKafkaServer,
                                        "kafka.bootstrap.servers = b:9092,c:9092\nkafka.sasl.username = alice\n"
                                        "kafka.max.request.size = 2000000\n");
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(d.kafka.properties["bootstrap.servers"], "b:9092,c:9092");
  EXPECT_EQ(d.kafka.properties["sasl.username"], "alice");
  EXPECT_EQ(d.kafka.properties["message.max.bytes"], "2000000");
  EXPECT_EQ(d.kafka.properties["linger.ms"], "5") << "canal.properties' keys stay where the instance says nothing";
  EXPECT_GT(KafkaPacketLimit(d.kafka.properties), KafkaPacketLimit({}));
  EXPECT_FALSE(d.kafka.transactional);

  LoadedDestination same = LoadDestination(kKafkaServer, "canal.mq.topic = t\n");
  ASSERT_TRUE(same.status.ok());
  EXPECT_EQ(same.kafka.properties["bootstrap.servers"], "a:9092");
}

TEST(MqConfigTest, TransactionKeysHaveDefaultsPerDestination) {
  LoadedDestination d = LoadDestination(std::string(kKafkaServer) + "canal.mq.transaction = true\n", "");
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_TRUE(d.kafka.transactional);
  EXPECT_EQ(d.kafka.transactional_id, "canal-example");
  EXPECT_EQ(d.kafka.position_topic, "canal_positions");

  LoadedDestination own = LoadDestination(kKafkaServer,
                                          "canal.mq.transaction = true\ncanal.mq.transaction.id = shop-eu\n"
                                          "canal.mq.transaction.positionTopic = shop_positions\n");
  ASSERT_TRUE(own.status.ok()) << own.status.ToString();
  EXPECT_EQ(own.kafka.transactional_id, "shop-eu");
  EXPECT_EQ(own.kafka.position_topic, "shop_positions");
  EXPECT_EQ(own.kafka.properties.count("transactional.id"), 0u);
}

TEST(MqConfigTest, TransactionsAreRefusedWhereTheyCannotBeExact) {
  // One transactional.id for every destination: each would fence the others.
  LoadedDestination shared =
      LoadDestination(std::string(kKafkaServer) + "canal.mq.transaction = true\nkafka.transactional.id = x\n", "");
  ASSERT_FALSE(shared.status.ok());
  EXPECT_NE(shared.status.ToString().find("fence"), std::string::npos) << shared.status.ToString();

  LoadedDestination rabbit = LoadDestination("canal.serverMode = rabbitMQ\nrabbitmq.host = h\n",
                                             "canal.mq.transaction = true\n");
  ASSERT_FALSE(rabbit.status.ok());
  EXPECT_NE(rabbit.status.ToString().find("canal.serverMode = kafka"), std::string::npos) << rabbit.status.ToString();

  LoadedDestination bad = LoadDestination(kKafkaServer, "canal.mq.transaction = yes please\n");
  ASSERT_FALSE(bad.status.ok());
  EXPECT_NE(bad.status.ToString().find("canal.mq.transaction"), std::string::npos) << bad.status.ToString();

  LoadedDestination empty = LoadDestination(kKafkaServer, "canal.mq.transaction = true\n"
                                                          "canal.mq.transaction.positionTopic =\n");
  ASSERT_TRUE(empty.status.ok()) << "an empty value keeps the default, as Canal's shipped files leave keys blank";
  EXPECT_EQ(empty.kafka.position_topic, "canal_positions");
}

TEST(MqConfigTest, TheTransactionKeyIsNoLongerReportedAsUnused) {
  Loaded l = Load(std::string(kKafkaServer) + "canal.mq.transaction = true\n");
  ASSERT_TRUE(l.status.ok());
  EXPECT_FALSE(HasWarning(l.settings, "canal.mq.transaction"));
  EXPECT_EQ(l.settings.transaction_max_batches, 32u);
}

TEST(MqConfigTest, TransactionSizeIsBounded) {
  Loaded l = Load(std::string(kKafkaServer) + "canal.mq.transaction.maxBatches = 64\n");
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  EXPECT_EQ(l.settings.transaction_max_batches, 64u);
  for (const char* bad : {"0", "5000", "many"}) {
    Loaded b = Load(std::string(kKafkaServer) + "canal.mq.transaction.maxBatches = " + bad + "\n");
    ASSERT_FALSE(b.status.ok()) << bad;
    EXPECT_NE(b.status.ToString().find("canal.mq.transaction.maxBatches"), std::string::npos) << b.status.ToString();
  }
}

}  // namespace canal::mq
