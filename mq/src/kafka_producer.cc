#include "canal/mq/kafka_producer.h"

#include <librdkafka/rdkafka.h>

#include <vector>

namespace canal::mq {

namespace {

// librdkafka's configuration: idempotent with acks=all unless told
// otherwise; *out is the caller's on success.
Status MakeConf(const KafkaOptions& options, rd_kafka_conf_t** out) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  std::map<std::string, std::string> props = {{"enable.idempotence", "true"}, {"acks", "all"}};
  for (const auto& [k, v] : options.properties) props[k] = v;
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument("Kafka setting " + k + " = " + v + " refused by librdkafka: " + err +
                                     " (canal.properties: kafka." + k + ", or Canal's name for it; docs/mq.md)");
    }
  }
  *out = conf;
  return Status::OK();
}

class KafkaProducer final : public Producer {
 public:
  ~KafkaProducer() override {
    if (rk_ == nullptr) return;
    // Nothing unconfirmed matters any more (the cursor did not move for it):
    // do not wait for it.
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(rk_, 1000);
    rd_kafka_destroy(rk_);
  }

  static Status Create(const KafkaOptions& options, std::unique_ptr<Producer>* out) {
    std::unique_ptr<KafkaProducer> p(new KafkaProducer());
    rd_kafka_conf_t* conf = nullptr;
    CANAL_RETURN_IF_ERROR(MakeConf(options, &conf));
    char err[512];
    auto servers = options.properties.find("bootstrap.servers");
    p->servers_ = servers != options.properties.end() ? servers->second : "(no bootstrap.servers)";
    rd_kafka_conf_set_opaque(conf, p.get());
    rd_kafka_conf_set_dr_msg_cb(conf, &KafkaProducer::OnDelivery);
    rd_kafka_conf_set_error_cb(conf, &KafkaProducer::OnError);
    p->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);  // takes conf on success
    if (p->rk_ == nullptr) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument(std::string("Kafka producer refused its settings: ") + err);
    }
    *out = std::move(p);
    return Status::OK();
  }

  Status Send(const EncodedMessage& m) override {
    if (origins_.empty()) {
      confirmed_ = 0;
      first_error_ = Status::OK();
    }
    origins_.push_back(&m.origin);
    const auto index = reinterpret_cast<void*>(static_cast<intptr_t>(origins_.size() - 1));
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(
          rk_, RD_KAFKA_V_TOPIC(m.topic.c_str()), RD_KAFKA_V_PARTITION(m.partition),
          RD_KAFKA_V_VALUE(const_cast<char*>(m.payload.data()), m.payload.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(index), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++outstanding_;
        return Status::OK();
      }
      if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk_, 100);  // delivery reports free the queue
        continue;
      }
      origins_.pop_back();
      return Classify(e, m.origin, m.topic, m.partition, m.payload.size());
    }
  }

  Status Confirm(const std::atomic<bool>& stop) override {
    while (outstanding_ > 0) {
      if (stop.load(std::memory_order_acquire)) {
        origins_.clear();
        return Status::Aborted("stopping with " + std::to_string(outstanding_) + " Kafka messages unconfirmed");
      }
      rd_kafka_poll(rk_, 100);
    }
    origins_.clear();
    Status result = first_error_;
    first_error_ = Status::OK();
    return result;
  }

  uint64_t confirmed() const override { return confirmed_; }
  bool broken() const override { return fatal_.load(); }
  std::string Describe() const override { return "kafka " + servers_; }

 private:
  KafkaProducer() = default;

  Status Classify(rd_kafka_resp_err_t e, const std::string& origin, const std::string& topic, int32_t partition,
                  size_t size) {
    const std::string where = "topic " + topic + " partition " + std::to_string(partition) + " (" + origin + ")";
    switch (e) {
      case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
        return Status::InvalidArgument("a message of " + std::to_string(size) + " bytes for " + where +
                                       " is larger than Kafka accepts (" + rd_kafka_err2str(e) +
                                       "); raise kafka.max.request.size and the broker's message.max.bytes, "
                                       "or make the transaction smaller");
      case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
        return Status::InvalidArgument(where + ": no such partition (" + rd_kafka_err2str(e) +
                                       "); give the topic as many partitions as canal.mq.partitionsNum / "
                                       "canal.mq.dynamicTopicPartitionNum say, or lower them");
      case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
      case RD_KAFKA_RESP_ERR__INVALID_ARG:
        return Status::InvalidArgument(where + ": " + rd_kafka_err2str(e));
      case RD_KAFKA_RESP_ERR__FATAL: {
        char reason[512];
        rd_kafka_fatal_error(rk_, reason, sizeof reason);
        fatal_.store(true);
        return Status::IOError(where + ": the Kafka producer failed fatally (" + reason + "); reconnecting");
      }
      default:
        return Status::IOError(where + ": " + rd_kafka_err2str(e));
    }
  }

  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
    auto* self = static_cast<KafkaProducer*>(opaque);
    --self->outstanding_;
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++self->confirmed_;
      return;
    }
    if (!self->first_error_.ok()) return;
    const auto index = static_cast<size_t>(reinterpret_cast<intptr_t>(msg->_private));
    const std::string& origin = index < self->origins_.size() ? *self->origins_[index] : std::string();
    self->first_error_ = self->Classify(msg->err, origin, rd_kafka_topic_name(msg->rkt), msg->partition, msg->len);
  }

  static void OnError(rd_kafka_t*, int err, const char*, void* opaque) {
    if (err == RD_KAFKA_RESP_ERR__FATAL) static_cast<KafkaProducer*>(opaque)->fatal_.store(true);
  }

  rd_kafka_t* rk_ = nullptr;
  std::string servers_;
  // The round in flight (poll runs the callbacks on this thread).
  std::vector<const std::string*> origins_;
  int64_t outstanding_ = 0;
  uint64_t confirmed_ = 0;
  Status first_error_;
  std::atomic<bool> fatal_{false};
};

}  // namespace

Status MakeKafkaProducer(const KafkaOptions& options, std::unique_ptr<Producer>* out) {
  return KafkaProducer::Create(options, out);
}

Status CheckKafkaOptions(const KafkaOptions& options) {
  rd_kafka_conf_t* conf = nullptr;
  CANAL_RETURN_IF_ERROR(MakeConf(options, &conf));
  rd_kafka_conf_destroy(conf);
  return Status::OK();
}

}  // namespace canal::mq
