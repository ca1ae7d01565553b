#include "canal/mq/mq_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "canal/common/trim.h"
#include "text.h"

namespace canal::mq {

namespace {

const std::set<std::string, std::less<>> kServerKeys = {
    "canal.mq.flatMessage", "canal.mq.canalBatchSize", "canal.mq.canalGetTimeout", "canal.mq.database.hash",
    "canal.mq.filterTransactionEntry", "canal.mq.maxInFlightBatches", "canal.mq.maxInFlightBytes",
    "canal.mq.transaction.maxBatches"};
const std::set<std::string, std::less<>> kDestinationKeys = {
    "canal.mq.topic",          "canal.mq.dynamicTopic",  "canal.mq.partition",
    "canal.mq.partitionsNum",  "canal.mq.partitionHash", "canal.mq.dynamicTopicPartitionNum",
    "canal.mq.transaction",    "canal.mq.transaction.id", "canal.mq.transaction.positionTopic"};
// Canal's keys this server reads but does not need (its threads, RocketMQ,
// the 1.1.4 spellings of the client settings).
const std::set<std::string, std::less<>> kIgnoredCanalKeys = {
    "canal.mq.accessChannel", "canal.mq.send.thread.size", "canal.mq.build.thread.size",
    "canal.mq.enableDynamicQueuePartition", "canal.mq.producerGroup",
    "canal.mq.servers", "canal.mq.retries", "canal.mq.batchSize", "canal.mq.lingerMs", "canal.mq.maxRequestSize",
    "canal.mq.bufferMemory", "canal.mq.acks", "canal.mq.compressionType", "canal.mq.properties",
    "canal.mq.vhost", "canal.mq.exchange", "canal.mq.username", "canal.mq.password", "canal.mq.aliyunuid",
    "canal.mq.namespace", "canal.mq.flat.message"};

class Reader {
 public:
  explicit Reader(const PropertyResolver& r) : r_(r) {}

  Status Text(const char* key, std::string* out) {
    std::optional<std::string> v;
    CANAL_RETURN_IF_ERROR(r_.Get(key, &v, &source_));
    if (v) *out = std::string(canal::Trim(*v));
    return Status::OK();
  }
  Status Bool(const char* key, bool* out) {
    std::string v;
    CANAL_RETURN_IF_ERROR(Text(key, &v));
    if (v.empty()) return Status::OK();
    if (AsciiEqualsIgnoreCase(v, "true")) {
      *out = true;
    } else if (AsciiEqualsIgnoreCase(v, "false")) {
      *out = false;
    } else {
      return Bad(key, v, "true or false");
    }
    return Status::OK();
  }
  Status Int(const char* key, int64_t lo, int64_t hi, int64_t* out) {
    std::string v;
    CANAL_RETURN_IF_ERROR(Text(key, &v));
    if (v.empty()) return Status::OK();
    char* end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    if (*end != '\0' || n < lo || n > hi) {
      return Bad(key, v, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    }
    *out = n;
    return Status::OK();
  }
  Status Bad(std::string_view key, std::string_view value, std::string_view accepted) const {
    return Status::InvalidArgument(std::string(key) + " = " + std::string(value) + " (" + source_.where +
                                   "): expected " + std::string(accepted));
  }
  const PropertySource& source() const { return source_; }

 private:
  const PropertyResolver& r_;
  PropertySource source_;
};

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// username="alice" password="secret" out of a JAAS line.
std::string JaasValue(const std::string& jaas, const std::string& name) {
  size_t at = jaas.find(name + "=");
  if (at == std::string::npos) return "";
  size_t start = at + name.size() + 1;
  if (start < jaas.size() && (jaas[start] == '"' || jaas[start] == '\'')) {
    const char quote = jaas[start++];
    size_t end = jaas.find(quote, start);
    return jaas.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  size_t end = jaas.find_first_of(" ;\t", start);
  return jaas.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The kafka.* keys written in `props` (values through `resolver`) into *kafka by librdkafka's names.
Status ReadKafkaKeys(const PropertyResolver& resolver, const Properties& props, std::map<std::string, std::string>* kafka,
                     std::vector<std::string>* warnings) {
  Reader r(resolver);
  // Canal's Java-client names; the rest pass through by librdkafka's name.
  const std::map<std::string, std::string, std::less<>> renamed = {
      {"kafka.bootstrap.servers", "bootstrap.servers"},
      {"kafka.acks", "acks"},
      {"kafka.compression.type", "compression.type"},
      {"kafka.batch.size", "batch.size"},
      {"kafka.linger.ms", "linger.ms"},
      {"kafka.max.request.size", "message.max.bytes"},
      {"kafka.max.in.flight.requests.per.connection", "max.in.flight"},
      {"kafka.security.protocol", "security.protocol"},
      {"kafka.sasl.mechanism", "sasl.mechanisms"},
      {"kafka.sasl.username", "sasl.username"},
      {"kafka.sasl.password", "sasl.password"},
  };
  for (const std::string& key : props.keys()) {
    if (!StartsWith(key, "kafka.")) continue;
    std::string value;
    CANAL_RETURN_IF_ERROR(r.Text(key.c_str(), &value));
    if (value.empty()) continue;  // Canal's shipped file leaves many keys blank
    if (auto it = renamed.find(key); it != renamed.end()) {
      (*kafka)[it->second] = value;
    } else if (key == "kafka.buffer.memory") {
      int64_t bytes = 0;
      CANAL_RETURN_IF_ERROR(r.Int(key.c_str(), 1024, int64_t{1} << 40, &bytes));
      (*kafka)["queue.buffering.max.kbytes"] = std::to_string(bytes / 1024);
    } else if (key == "kafka.retries") {
      warnings->push_back("kafka.retries = " + value + " (" + r.source().where +
                              ") has no effect: the idempotent producer retries until delivery or "
                              "message.timeout.ms, then the whole batch is published again");
    } else if (key == "kafka.sasl.jaas.config") {
      (*kafka)["sasl.username"] = JaasValue(value, "username");
      (*kafka)["sasl.password"] = JaasValue(value, "password");
    } else if (StartsWith(key, "kafka.kerberos.")) {
      if (key == "kafka.kerberos.enable" && AsciiEqualsIgnoreCase(value, "true")) {
        return r.Bad(key, value, "false: Kerberos is not supported by this server (use SASL/SCRAM or PLAIN)");
      }
    } else {
      (*kafka)[key.substr(6)] = value;
    }
  }
  return Status::OK();
}

// librdkafka's idempotent producer needs acks=all; with fewer acks Canal's
// behaviour (no idempotence) is kept, and one request in flight keeps order
// across retries.
void SettleKafka(std::map<std::string, std::string>* kafka, std::vector<std::string>* warnings) {
  if (auto acks = kafka->find("acks"); acks != kafka->end() && acks->second != "all" && acks->second != "-1") {
    (*kafka)["enable.idempotence"] = "false";
    (*kafka)["max.in.flight"] = "1";
    warnings->push_back("kafka.acks = " + acks->second +
                        ": the broker confirms before its replicas have a message, so a broker failure can lose "
                        "confirmed changes; the default (all) cannot");
  }
  if (auto it = kafka->find("max.in.flight"); it != kafka->end() && std::atoi(it->second.c_str()) > 5) {
    warnings->push_back("kafka.max.in.flight.requests.per.connection = " + it->second +
                        " lowered to 5: the idempotent producer keeps order only up to 5");
    it->second = "5";
  }
}

Status LoadKafka(const PropertyResolver& resolver, const Properties& props, MqSettings* out) {
  CANAL_RETURN_IF_ERROR(ReadKafkaKeys(resolver, props, &out->kafka, &out->warnings));
  if (out->mode == ServerMode::kKafka && out->kafka.count("bootstrap.servers") == 0) {
    return Status::InvalidArgument("canal.serverMode = kafka needs kafka.bootstrap.servers (host:port[,host:port]) in " +
                                   props.origin());
  }
  SettleKafka(&out->kafka, &out->warnings);
  return Status::OK();
}

Status LoadRabbit(const PropertyResolver& resolver, MqSettings* out) {
  Reader r(resolver);
  RabbitMqOptions& o = out->rabbitmq;
  std::string host;
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.host", &host));
  if (!host.empty()) {
    size_t colon = host.rfind(':');
    if (colon != std::string::npos) {
      char* end = nullptr;
      long port = std::strtol(host.c_str() + colon + 1, &end, 10);
      if (*end != '\0' || port < 1 || port > 65535) return r.Bad("rabbitmq.host", host, "host or host:port");
      o.port = static_cast<uint16_t>(port);
      host.resize(colon);
    }
    o.host = host;
  }
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.virtual.host", &o.virtual_host));
  if (o.virtual_host.empty()) o.virtual_host = "/";
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.exchange", &o.exchange));
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.username", &o.username));
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.password", &o.password));
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.queue", &o.queue));
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.routingKey", &o.routing_key));
  if (o.routing_key.empty()) o.routing_key = o.queue;
  std::string mode;
  CANAL_RETURN_IF_ERROR(r.Text("rabbitmq.deliveryMode", &mode));
  if (mode == "1" || mode == "2") {
    o.persistent = mode == "2";
  } else if (AsciiEqualsIgnoreCase(mode, "direct") || AsciiEqualsIgnoreCase(mode, "fanout") || AsciiEqualsIgnoreCase(mode, "topic") ||
             AsciiEqualsIgnoreCase(mode, "headers")) {
    o.exchange_type = mode;
    std::transform(o.exchange_type.begin(), o.exchange_type.end(), o.exchange_type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  } else if (!mode.empty()) {
    return r.Bad("rabbitmq.deliveryMode", mode, "direct, fanout, topic or headers (the exchange type), or 1 / 2");
  }
  if (out->mode == ServerMode::kRabbitMq && o.exchange.empty()) {
    // Canal publishes to an exchange; "" is the default exchange, which
    // routes by queue name: allowed, but say so.
    out->warnings.push_back("rabbitmq.exchange is empty: messages go to the default exchange, routed to the queue "
                            "named by the topic (canal.mq.topic)");
  }
  return Status::OK();
}

void WarnUnknown(const Properties& props, bool destination_keys_allowed, std::vector<std::string>* warnings) {
  for (const std::string& key : props.keys()) {
    if (!StartsWith(key, "canal.mq.")) continue;
    if (kServerKeys.count(key) || kDestinationKeys.count(key)) {
      if (!destination_keys_allowed && kServerKeys.count(key) == 0) continue;  // defaults for every destination
      if (destination_keys_allowed && kServerKeys.count(key)) {
        warnings->push_back(key + " (" + props.origin() + ") is a server-wide key: set it in canal.properties");
      }
      continue;
    }
    if (kIgnoredCanalKeys.count(key)) {
      warnings->push_back(key + " (" + props.origin() + ") is one of Canal's keys this server does not use; it has no "
                          "effect");
    } else {
      warnings->push_back("unknown key " + key + " (" + props.origin() + "): not a Canal MQ setting, ignored; "
                          "check the spelling (docs/mq.md lists the keys)");
    }
  }
}

}  // namespace

const char* ServerModeName(ServerMode mode) {
  switch (mode) {
    case ServerMode::kTcp: return "tcp";
    case ServerMode::kKafka: return "kafka";
    case ServerMode::kRabbitMq: return "rabbitMQ";
  }
  return "?";
}

Status LoadMqSettings(const PropertyResolver& resolver, const Properties& props, MqSettings* out) {
  *out = MqSettings();
  Reader r(resolver);
  std::string mode;
  CANAL_RETURN_IF_ERROR(r.Text("canal.serverMode", &mode));
  if (mode.empty() || AsciiEqualsIgnoreCase(mode, "tcp")) {
    out->mode = ServerMode::kTcp;
  } else if (AsciiEqualsIgnoreCase(mode, "kafka")) {
    out->mode = ServerMode::kKafka;
  } else if (AsciiEqualsIgnoreCase(mode, "rabbitMQ")) {
    out->mode = ServerMode::kRabbitMq;
  } else if (AsciiEqualsIgnoreCase(mode, "rocketMQ") || AsciiEqualsIgnoreCase(mode, "pulsarMQ")) {
    return r.Bad("canal.serverMode", mode, "tcp, kafka or rabbitMQ: this server does not publish to " + mode);
  } else {
    return r.Bad("canal.serverMode", mode, "tcp, kafka or rabbitMQ");
  }
  CANAL_RETURN_IF_ERROR(r.Bool("canal.mq.flatMessage", &out->encoder.flat_message));
  CANAL_RETURN_IF_ERROR(r.Bool("canal.mq.filterTransactionEntry", &out->encoder.filter_transaction_entry));
  int64_t n = static_cast<int64_t>(out->canal_batch_size);
  CANAL_RETURN_IF_ERROR(r.Int("canal.mq.canalBatchSize", 1, 1 << 20, &n));
  out->canal_batch_size = static_cast<size_t>(n);
  CANAL_RETURN_IF_ERROR(r.Int("canal.mq.canalGetTimeout", 1, 3600 * 1000, &out->canal_get_timeout_ms));
  n = static_cast<int64_t>(out->max_in_flight_batches);
  CANAL_RETURN_IF_ERROR(r.Int("canal.mq.maxInFlightBatches", 1, 1024, &n));
  out->max_in_flight_batches = static_cast<size_t>(n);
  n = static_cast<int64_t>(out->max_in_flight_bytes);
  CANAL_RETURN_IF_ERROR(r.Int("canal.mq.maxInFlightBytes", 1 << 16, int64_t{1} << 34, &n));
  out->max_in_flight_bytes = static_cast<uint64_t>(n);
  n = static_cast<int64_t>(out->transaction_max_batches);
  CANAL_RETURN_IF_ERROR(r.Int("canal.mq.transaction.maxBatches", 1, 4096, &n));
  out->transaction_max_batches = static_cast<size_t>(n);
  CANAL_RETURN_IF_ERROR(r.Bool("canal.mq.database.hash", &out->database_hash));
  CANAL_RETURN_IF_ERROR(LoadKafka(resolver, props, out));
  if (out->mode == ServerMode::kKafka) {
    // The protobuf form keeps its Packets under what the producer takes (batch_encoder.h);
    // 1000000 is librdkafka's default. A value that does not parse stops start-up in librdkafka.
    out->encoder.max_message_bytes = KafkaPacketLimit(out->kafka);
  }
  CANAL_RETURN_IF_ERROR(LoadRabbit(resolver, out));
  if (out->mode != ServerMode::kTcp) WarnUnknown(props, false, &out->warnings);
  return Status::OK();
}

size_t KafkaPacketLimit(const std::map<std::string, std::string>& kafka) {
  uint64_t max_bytes = 1000000;
  if (auto it = kafka.find("message.max.bytes"); it != kafka.end()) {
    max_bytes = std::strtoull(it->second.c_str(), nullptr, 10);
  }
  return max_bytes > 2 * kMessageOverheadBytes ? static_cast<size_t>(max_bytes) - kMessageOverheadBytes : 0;
}

Status LoadDestinationKafka(const PropertyResolver& resolver, const Properties& instance_properties,
                            const MqSettings& settings, const std::string& destination, DestinationKafka* out,
                            std::vector<std::string>* warnings) {
  *out = DestinationKafka();
  out->properties = settings.kafka;
  bool overridden = false;
  for (const std::string& key : instance_properties.keys()) overridden = overridden || StartsWith(key, "kafka.");
  if (overridden) {
    CANAL_RETURN_IF_ERROR(ReadKafkaKeys(resolver, instance_properties, &out->properties, warnings));
    SettleKafka(&out->properties, warnings);
    if (settings.mode == ServerMode::kKafka && out->properties.count("bootstrap.servers") == 0) {
      return Status::InvalidArgument("canal.serverMode = kafka needs kafka.bootstrap.servers in " +
                                     instance_properties.origin() + " or canal.properties");
    }
  }
  Reader r(resolver);
  CANAL_RETURN_IF_ERROR(r.Bool("canal.mq.transaction", &out->transactional));
  out->transactional_id = "canal-" + destination;
  std::string text;
  CANAL_RETURN_IF_ERROR(r.Text("canal.mq.transaction.id", &text));
  if (!text.empty()) out->transactional_id = text;
  text.clear();
  CANAL_RETURN_IF_ERROR(r.Text("canal.mq.transaction.positionTopic", &text));
  if (!text.empty()) out->position_topic = text;
  if (auto it = out->properties.find("transactional.id"); it != out->properties.end()) {
    // One id for every destination would have each fence the others.
    if (settings.kafka.count("transactional.id") != 0) {
      return Status::InvalidArgument(
          "kafka.transactional.id is set in canal.properties, so every destination would share it and fence the "
          "others: remove it (each destination uses canal-<destination>, or canal.mq.transaction.id in its "
          "instance.properties)");
    }
    out->transactional_id = it->second;
    out->properties.erase(it);
  }
  if (out->transactional) {
    if (settings.mode != ServerMode::kKafka) {
      return Status::InvalidArgument("canal.mq.transaction = true (" + instance_properties.origin() +
                                     " or canal.properties) needs canal.serverMode = kafka: exactly-once publishing "
                                     "uses Kafka's transactions");
    }
  }
  return Status::OK();
}

Status LoadRoutingConfig(const PropertyResolver& resolver, const Properties& instance_properties,
                         const MqSettings& settings, RoutingConfig* out, std::vector<std::string>* warnings) {
  *out = RoutingConfig();
  Reader r(resolver);
  CANAL_RETURN_IF_ERROR(r.Text("canal.mq.topic", &out->topic));
  if (out->topic.empty()) {
    return Status::InvalidArgument("canal.serverMode = " + std::string(ServerModeName(settings.mode)) +
                                   " needs canal.mq.topic (the default topic" +
                                   (settings.mode == ServerMode::kRabbitMq ? std::string(", the routing key") : "") +
                                   ") in " + instance_properties.origin());
  }
  CANAL_RETURN_IF_ERROR(r.Text("canal.mq.dynamicTopic", &out->dynamic_topic));
  int64_t partition = -1;
  CANAL_RETURN_IF_ERROR(r.Int("canal.mq.partition", 0, INT32_MAX, &partition));
  if (partition >= 0) out->partition = static_cast<int32_t>(partition);
  int64_t partitions = 1;
  CANAL_RETURN_IF_ERROR(r.Int("canal.mq.partitionsNum", 1, 1000000, &partitions));
  out->partitions_num = static_cast<int32_t>(partitions);
  CANAL_RETURN_IF_ERROR(r.Text("canal.mq.partitionHash", &out->partition_hash));
  CANAL_RETURN_IF_ERROR(r.Text("canal.mq.dynamicTopicPartitionNum", &out->dynamic_topic_partition_num));
  out->database_hash = settings.database_hash;
  if (settings.mode == ServerMode::kRabbitMq && (!out->partition_hash.empty() || out->partition)) {
    warnings->push_back("canal.mq.partition / canal.mq.partitionHash (" + instance_properties.origin() +
                        ") have no effect with RabbitMQ, which has no partitions");
    out->partition_hash.clear();
    out->partition.reset();
  }
  WarnUnknown(instance_properties, true, warnings);
  return Status::OK();
}

}  // namespace canal::mq
