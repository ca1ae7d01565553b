#include "kafka_position.h"

#include <librdkafka/rdkafka.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace canal::mq {

std::string EncodePositionMessage(const std::string& destination, const CommittedPosition& position) {
  nlohmann::json doc;
  doc["cursor"] = nlohmann::json::parse(position.cursor_json, nullptr, /*allow_exceptions=*/false);
  doc["destination"] = destination;
  doc["sequence"] = position.sequence;
  doc["transaction"] = position.transaction;
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status DecodePositionMessage(std::string_view value, std::string* destination, CommittedPosition* out) {
  nlohmann::json doc = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return Status::Corruption("a position message that is not a JSON object");
  auto text = [&](const char* key, std::string* to) {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_string()) return false;
    *to = it->get<std::string>();
    return true;
  };
  if (!text("destination", destination)) return Status::Corruption("a position message without \"destination\"");
  if (!text("transaction", &out->transaction)) {
    return Status::Corruption("the position message of " + *destination + " has no \"transaction\"");
  }
  auto seq = doc.find("sequence");
  if (seq == doc.end() || !seq->is_number_unsigned()) {
    return Status::Corruption("the position message of " + *destination + " has no \"sequence\"");
  }
  out->sequence = seq->get<uint64_t>();
  auto cursor = doc.find("cursor");
  if (cursor == doc.end() || !cursor->is_object()) {
    return Status::Corruption("the position message of " + *destination + " has no \"cursor\" object");
  }
  out->cursor_json = cursor->dump();
  return Status::OK();
}

namespace {

// The consumer takes the connection's settings from the producer's, nothing that only a
// producer knows (librdkafka would warn about each).
bool ConnectionProperty(const std::string& name) {
  static const char* const kPrefixes[] = {"bootstrap.servers", "metadata.broker.list", "security.protocol", "sasl.",
                                          "ssl.", "client.id", "socket.", "broker.address.", "reconnect.backoff",
                                          "api.version", "log_level", "debug"};
  for (const char* p : kPrefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

struct Consumer {
  rd_kafka_t* rk = nullptr;
  ~Consumer() {
    if (rk != nullptr) {
      rd_kafka_consumer_close(rk);
      rd_kafka_destroy(rk);
    }
  }
};

}  // namespace

Status ReadKafkaPosition(const std::map<std::string, std::string>& properties, const std::string& topic,
                         const std::string& destination, std::chrono::milliseconds timeout, CommittedPosition* out,
                         bool* found) {
  *found = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left_ms = [&] {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    return static_cast<int>(std::max<int64_t>(left, 1));
  };
  auto servers = properties.find("bootstrap.servers");
  const std::string where =
      "kafka " + (servers != properties.end() ? servers->second : std::string("?")) + " topic " + topic;
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::map<std::string, std::string> props;
  for (const auto& [k, v] : properties) {
    if (ConnectionProperty(k)) props[k] = v;
  }
  props["group.id"] = "canal-position-reader";
  props["enable.auto.commit"] = "false";
  props["enable.auto.offset.store"] = "false";
  props["isolation.level"] = "read_committed";
  props["enable.partition.eof"] = "true";
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument("reading the position topic: Kafka setting " + k + " refused: " + err);
    }
  }
  Consumer c;
  c.rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (c.rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("reading the position topic: Kafka consumer refused: ") + err);
  }

  // Which partitions, and where each ends now.
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(c.rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(c.rk, 0, rkt, &md, left_ms());
  rd_kafka_topic_destroy(rkt);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::IOError(where + ": " + rd_kafka_err2str(e));
  int partitions = 0;
  rd_kafka_resp_err_t topic_error = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (topic == md->topics[i].topic) {
      topic_error = md->topics[i].err;
      partitions = md->topics[i].partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  if (topic_error == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) return Status::OK();  // nothing committed yet
  if (topic_error != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::IOError(where + ": " + rd_kafka_err2str(topic_error));

  std::vector<int64_t> end(static_cast<size_t>(partitions), 0);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    int64_t low = 0, high = 0;
    e = rd_kafka_query_watermark_offsets(c.rk, topic.c_str(), p, &low, &high, left_ms());
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_topic_partition_list_destroy(list);
      return Status::IOError(where + " partition " + std::to_string(p) + ": " + rd_kafka_err2str(e));
    }
    end[p] = high;
    if (high > low) rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  int pending = list->cnt;
  if (pending > 0) rd_kafka_assign(c.rk, list);
  rd_kafka_topic_partition_list_destroy(list);

  std::vector<bool> done(static_cast<size_t>(partitions), false);
  bool have = false;
  while (pending > 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::IOError(where + ": not read to its end within " + std::to_string(timeout.count()) +
                             " ms (a transaction left open, by another destination or a stopped server, holds "
                             "read_committed readers back until it ends or times out: transaction.timeout.ms)");
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c.rk, 100);
    if (m == nullptr) continue;
    const int32_t p = m->partition;
    const bool in_range = p >= 0 && p < partitions;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // At the end it had when the read began, or past it: every committed message before it was seen.
      if (in_range && !done[p] && m->offset >= end[p]) {
        done[p] = true;
        --pending;
      }
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const std::string text = rd_kafka_message_errstr(m);
      rd_kafka_message_destroy(m);
      return Status::IOError(where + " partition " + std::to_string(p) + ": " + text);
    } else if (m->key_len == destination.size() &&
               std::string_view(static_cast<const char*>(m->key), m->key_len) == destination) {
      std::string name;
      CommittedPosition candidate;
      Status s = DecodePositionMessage(std::string_view(static_cast<const char*>(m->payload), m->len), &name,
                                       &candidate);
      if (!s.ok()) {
        rd_kafka_message_destroy(m);
        return s.WithContext(where + " partition " + std::to_string(p) + " offset " + std::to_string(m->offset));
      }
      // Ties (never between transactions of one transactional.id): the later offset.
      if (name == destination && (!have || candidate.sequence >= out->sequence)) {
        *out = std::move(candidate);
        have = true;
      }
    }
    rd_kafka_message_destroy(m);
  }
  *found = have;
  return Status::OK();
}

}  // namespace canal::mq
