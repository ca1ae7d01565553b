#include "mq/kafka_mock.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <functional>
#include <thread>

namespace canal::mq::testing {

constexpr int16_t kProduceApiKey = 0;  // Kafka protocol ApiKey of ProduceRequest

KafkaMock::KafkaMock(int brokers) : brokers_(brokers) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk_ == nullptr) {
    error_ = err;
    rd_kafka_conf_destroy(conf);
    return;
  }
  cluster_ = rd_kafka_mock_cluster_new(rk_, brokers);
  if (cluster_ == nullptr) error_ = "rd_kafka_mock_cluster_new failed";
}

KafkaMock::~KafkaMock() {
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
  if (rk_ != nullptr) rd_kafka_destroy(rk_);
}

std::string KafkaMock::bootstraps() const { return cluster_ ? rd_kafka_mock_cluster_bootstraps(cluster_) : ""; }

void KafkaMock::SetTopicError(const std::string& topic, int error) {
  rd_kafka_mock_topic_set_error(cluster_, topic.c_str(), static_cast<rd_kafka_resp_err_t>(error));
}

bool KafkaMock::CreateTopic(const std::string& topic, int partitions) {
  return rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, std::min(3, brokers_)) ==
         RD_KAFKA_RESP_ERR_NO_ERROR;
}

void KafkaMock::FailProduceRequests(int error, int count) {
  std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(count), static_cast<rd_kafka_resp_err_t>(error));
  rd_kafka_mock_push_request_errors_array(cluster_, kProduceApiKey, errors.size(), errors.data());
}

void KafkaMock::FailRequests(int16_t api_key, int error, int count) {
  std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(count), static_cast<rd_kafka_resp_err_t>(error));
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, errors.size(), errors.data());
}

void KafkaMock::SlowProduceRequests(int rtt_ms, int count) {
  for (int id = 1; id <= brokers_; ++id) {
    for (int i = 0; i < count; ++i) {
      rd_kafka_mock_broker_push_request_error_rtts(cluster_, id, kProduceApiKey, 1, RD_KAFKA_RESP_ERR_NO_ERROR, rtt_ms);
    }
  }
}

void KafkaMock::SetBrokersDown(bool down) {
  for (int id = 1; id <= brokers_; ++id) {
    if (down) {
      rd_kafka_mock_broker_set_down(cluster_, id);
    } else {
      rd_kafka_mock_broker_set_up(cluster_, id);
    }
  }
}

std::map<int32_t, std::vector<KafkaRecord>> KafkaMock::ReadAll(
    const std::string& topic, int partitions, std::chrono::milliseconds limit,
    const std::function<bool(const std::map<int32_t, std::vector<KafkaRecord>>&)>& until) const {
  std::map<int32_t, std::vector<KafkaRecord>> out;
  std::vector<int32_t> all;
  for (int p = 0; p < partitions; ++p) all.push_back(p);
  if (until(out)) return out;
  Consume(topic, all, limit, [&](const KafkaRecord* r) {
    if (r != nullptr) out[r->partition].push_back(*r);
    return !until(out);
  });
  return out;
}

void KafkaMock::Consume(const std::string& topic, const std::vector<int32_t>& partitions,
                        std::chrono::milliseconds limit, const std::function<bool(const KafkaRecord*)>& on) const {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps().c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", ("reader-" + topic).c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  // Records as soon as they land (the default waits up to 500 ms for more).
  rd_kafka_conf_set(conf, "fetch.wait.max.ms", "10", err, sizeof err);
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  rd_kafka_t* c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (c == nullptr) {
    rd_kafka_conf_destroy(conf);
    return;
  }
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  for (int32_t p : partitions) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(c, list);
  rd_kafka_topic_partition_list_destroy(list);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  KafkaRecord record;
  bool more = true;
  while (more && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 100);
    if (m == nullptr) {
      more = on(nullptr);
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      record.partition = m->partition;
      record.offset = m->offset;
      record.payload.assign(static_cast<const char*>(m->payload), m->len);
      record.key.assign(m->key != nullptr ? static_cast<const char*>(m->key) : "", m->key_len);
      record.transaction.clear();
      rd_kafka_headers_t* headers = nullptr;
      const void* value = nullptr;
      size_t size = 0;
      if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR &&
          rd_kafka_header_get_last(headers, "canal.txn", &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR &&
          value != nullptr) {
        record.transaction.assign(static_cast<const char*>(value), size);
      }
      more = on(&record);
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(c);
  rd_kafka_destroy(c);
}

size_t CountRecords(const std::map<int32_t, std::vector<KafkaRecord>>& records) {
  size_t n = 0;
  for (const auto& [p, rs] : records) n += rs.size();
  return n;
}

}  // namespace canal::mq::testing
