#include "canal/mq/kafka_producer.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <string>

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "kafka_position.h"

namespace canal::mq {

namespace {

constexpr const char* kTransactionHeader = kKafkaTransactionHeader;

// librdkafka's configuration: idempotent with acks=all unless told
// otherwise; *out is the caller's on success.
Status MakeConf(const KafkaOptions& options, rd_kafka_conf_t** out) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  std::map<std::string, std::string> props = {{"enable.idempotence", "true"}, {"acks", "all"}};
  for (const auto& [k, v] : options.properties) props[k] = v;
  if (options.transactional) props["transactional.id"] = options.transactional_id;
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
    // A transaction left open would hold read_committed readers back until it times out.
    if (in_transaction_ && !fatal_.load()) {
      if (rd_kafka_error_t* e = rd_kafka_abort_transaction(rk_, 2000)) rd_kafka_error_destroy(e);
    }
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
    p->options_ = options;
    p->logger_ = options.logger;
    // A topic check waits at most as long as a message may (10 s at most).
    if (auto t = options.properties.find("message.timeout.ms"); t != options.properties.end()) {
      const long ms = std::strtol(t->second.c_str(), nullptr, 10);
      if (ms > 0 && ms < p->metadata_timeout_ms_) p->metadata_timeout_ms_ = static_cast<int>(ms);
    }
    p->destination_ = options.destination;
    if (p->logger_) rd_kafka_conf_set_log_cb(conf, &KafkaProducer::OnLog);
    rd_kafka_conf_set_dr_msg_cb(conf, &KafkaProducer::OnDelivery);
    rd_kafka_conf_set_error_cb(conf, &KafkaProducer::OnError);
    p->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);  // takes conf on success
    if (p->rk_ == nullptr) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument(std::string("Kafka producer refused its settings: ") + err);
    }
    if (options.transactional) {
      p->transactional_ = true;
      std::random_device random;
      char session[17];
      std::snprintf(session, sizeof session, "%08x%08x", random(), random());
      p->session_ = session;
      // Fences any older producer of this transactional.id and ends its open transaction.
      if (rd_kafka_error_t* e = rd_kafka_init_transactions(p->rk_, options.transaction_wait_ms)) {
        return p->TransactionError(e, "starting transactions (transactional.id " + options.transactional_id + ")");
      }
    }
    *out = std::move(p);
    return Status::OK();
  }

  Status Send(const EncodedMessage& m) override {
    if (known_topics_.count(m.topic) == 0) CANAL_RETURN_IF_ERROR(CheckTopic(m.topic, m.partition, m.origin));
    Round& round = OpenRound();
    round.origins.push_back(&m.origin);
    // The opaque names the round (its low 32 bits: rounds in flight are few) and the message.
    const uint64_t tag = (round.id << 32) | (round.origins.size() - 1);
    for (;;) {
      // In a transaction every message carries its tag (a reader can tell transactions apart).
      rd_kafka_resp_err_t e =
          in_transaction_
              ? rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(m.topic.c_str()), RD_KAFKA_V_PARTITION(m.partition),
                                  RD_KAFKA_V_VALUE(const_cast<char*>(m.payload.data()), m.payload.size()),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                  RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(tag)),
                                  RD_KAFKA_V_HEADER(kTransactionHeader, tag_.data(), static_cast<ssize_t>(tag_.size())),
                                  RD_KAFKA_V_END)
              : rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(m.topic.c_str()), RD_KAFKA_V_PARTITION(m.partition),
                                  RD_KAFKA_V_VALUE(const_cast<char*>(m.payload.data()), m.payload.size()),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                  RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(tag)), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++round.outstanding;
        return Status::OK();
      }
      if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk_, 100);  // delivery reports free the queue
        continue;
      }
      round.origins.pop_back();
      Status error = Classify(e, m.origin, m.topic, m.partition, m.payload.size());
      if (round.first_error.ok()) round.first_error = error;
      return error;
    }
  }

  Status Confirm(const std::atomic<bool>& stop) override { return ConfirmAsOneRound(stop, &confirmed_); }

  bool pipelines() const override { return true; }

  uint64_t EndRound() override {
    Round& round = OpenRound();
    round.closed = true;
    return round.id;
  }

  Status ConfirmRound(uint64_t id, const std::atomic<bool>& stop) override {
    for (;;) {
      bool waiting = false;
      for (const Round& r : rounds_) {
        if (r.id > id) break;
        if (!r.first_error.ok() && r.outstanding == 0) return r.first_error;  // the oldest failure, whole
        waiting = waiting || r.outstanding > 0;
      }
      if (!waiting) break;
      if (stop.load(std::memory_order_acquire)) {
        return Status::Aborted("stopping with Kafka messages of batch round " + std::to_string(id) + " unconfirmed");
      }
      rd_kafka_poll(rk_, 100);
    }
    while (!rounds_.empty() && rounds_.front().id <= id) rounds_.pop_front();
    return Status::OK();
  }

  uint64_t Drain(const std::atomic<bool>& stop) override {
    auto outstanding = [this] {
      int64_t n = 0;
      for (const Round& r : rounds_) n += r.outstanding;
      return n;
    };
    while (outstanding() > 0 && !stop.load(std::memory_order_acquire)) rd_kafka_poll(rk_, 100);
    uint64_t confirmed = 0;
    for (const Round& r : rounds_) confirmed += r.confirmed;
    rounds_.clear();
    return confirmed;
  }

  uint64_t confirmed() const override { return confirmed_; }
  bool broken() const override { return fatal_.load(); }
  std::string Describe() const override { return "kafka " + servers_; }

  bool transactional() const override { return transactional_; }

  Status BeginTransaction(std::string* tag) override {
    if (rd_kafka_error_t* e = rd_kafka_begin_transaction(rk_)) return TransactionError(e, "beginning a transaction");
    in_transaction_ = true;
    // Unique per attempt: a transaction aborted and sent again is another transaction.
    tag_ = session_ + "-" + std::to_string(++begun_);
    *tag = tag_;
    return Status::OK();
  }

  Status CommitTransaction(const std::string& destination, const std::string& cursor_json,
                           const std::atomic<bool>& stop) override {
    const std::string& topic = options_.position_topic;
    const std::string origin = "the position of destination " + destination;
    if (known_topics_.count(topic) == 0) CANAL_RETURN_IF_ERROR(CheckTopic(topic, RD_KAFKA_PARTITION_UA, origin));
    CommittedPosition position{tag_, cursor_json, next_sequence_};
    const std::string value = EncodePositionMessage(destination, position);
    // Opaque 0 names no round: the commit reports this message's fate.
    rd_kafka_resp_err_t e = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(destination.data(), destination.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADER(kTransactionHeader, tag_.data(), static_cast<ssize_t>(tag_.size())), RD_KAFKA_V_END);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return Classify(e, origin, topic, RD_KAFKA_PARTITION_UA, value.size());
    // Retriable errors (a coordinator moving, a timeout) leave the outcome to a retry of the commit.
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_commit_transaction(rk_, options_.transaction_wait_ms);
      if (error == nullptr) break;
      if (rd_kafka_error_is_retriable(error) && !stop.load(std::memory_order_acquire)) {
        rd_kafka_error_destroy(error);
        continue;
      }
      return TransactionError(error, "committing transaction " + tag_ + " (" + origin + ")");
    }
    in_transaction_ = false;
    ++next_sequence_;
    return Status::OK();
  }

  Status AbortTransaction(const std::atomic<bool>& stop) override {
    if (!in_transaction_) return Status::OK();
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_abort_transaction(rk_, options_.transaction_wait_ms);
      if (error == nullptr) break;
      if (rd_kafka_error_is_retriable(error) && !stop.load(std::memory_order_acquire)) {
        rd_kafka_error_destroy(error);
        continue;
      }
      return TransactionError(error, "aborting transaction " + tag_);
    }
    in_transaction_ = false;
    return Status::OK();
  }

  Status ReadCommittedPosition(const std::string& destination, CommittedPosition* out, bool* found) override {
    std::map<std::string, std::string> props = options_.properties;
    CANAL_RETURN_IF_ERROR(ReadKafkaPosition(props, options_.position_topic, destination,
                                            std::chrono::milliseconds(options_.transaction_wait_ms), out, found));
    // Numbering goes on from the newest committed transaction, whichever server wrote it.
    if (*found && out->sequence >= next_sequence_) next_sequence_ = out->sequence + 1;
    return Status::OK();
  }

 private:
  KafkaProducer() = default;

  // A topic's first message: ask the cluster for it, so a topic that does not exist (with
  // auto-creation off) or that this client may not write stops the destination at once with
  // the fix, instead of after librdkafka's timeouts. The request creates it where the broker
  // auto-creates topics, as a first produce would.
  Status CheckTopic(const std::string& topic, int32_t partition, const std::string& origin) {
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
    if (rkt == nullptr) return Status::InvalidArgument("topic name '" + topic + "' refused by librdkafka");
    const rd_kafka_metadata_t* md = nullptr;
    // In slices, serving librdkafka's error callback between them: a refused login is known
    // within a second (OnError), not after the whole wait.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(metadata_timeout_ms_);
    rd_kafka_resp_err_t e;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      e = rd_kafka_metadata(rk_, 0, rkt, &md, static_cast<int>(std::clamp<int64_t>(left, 1, 1000)));
      rd_kafka_poll(rk_, 0);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) auth_error_.clear();  // a refusal since overcome
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR || !auth_error_.empty() || std::chrono::steady_clock::now() >= deadline ||
          (e != RD_KAFKA_RESP_ERR__TIMED_OUT && e != RD_KAFKA_RESP_ERR__TRANSPORT)) {
        break;
      }
    }
    rd_kafka_topic_destroy(rkt);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR && !auth_error_.empty()) {
      // Credentials only the operator can fix, as RabbitMQ's refused login and a wrong
      // replication password: the destination stops.
      return Status::InvalidArgument("kafka " + servers_ + ": asking for topic " + topic + " (" + origin +
                                     "): the cluster refused the SASL login (" + auth_error_ +
                                     "): check kafka.security.protocol, kafka.sasl.mechanism and "
                                     "kafka.sasl.jaas.config (or kafka.sasl.username / kafka.sasl.password), "
                                     "then restart canal-server");
    }
    if (e == RD_KAFKA_RESP_ERR__TIMED_OUT || e == RD_KAFKA_RESP_ERR__TRANSPORT) {
      return Status::IOError("kafka " + servers_ + ": asking for topic " + topic + " (" + origin +
                             "): no broker answered within " + Seconds(metadata_timeout_ms_) + " (" +
                             rd_kafka_err2str(e) + "; refusing connections, accepting them and saying nothing, or "
                             "expecting another kafka.security.protocol: librdkafka's lines above say which); check "
                             "kafka.bootstrap.servers");
    }
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::IOError("kafka " + servers_ + ": asking for topic " + topic + " (" + origin +
                             "): " + rd_kafka_err2str(e));
    }
    rd_kafka_resp_err_t topic_error = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    int partitions = 0;
    for (int i = 0; i < md->topic_cnt; ++i) {
      if (topic == md->topics[i].topic) {
        topic_error = md->topics[i].err;
        partitions = md->topics[i].partition_cnt;
      }
    }
    rd_kafka_metadata_destroy(md);
    switch (topic_error) {
      case RD_KAFKA_RESP_ERR_NO_ERROR:
        if (partition >= partitions) break;  // librdkafka's own error names it (Classify)
        known_topics_.insert(topic);
        return Status::OK();
      case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
        return Status::InvalidArgument("topic " + topic + " does not exist on kafka " + servers_ + " (" +
                                       origin + ") and the cluster does not create it: create it with as many "
                                       "partitions as canal.mq.partitionsNum says (kafka-topics.sh --create --topic " +
                                       topic + "), or point canal.mq.topic / canal.mq.dynamicTopic at one that "
                                       "exists");
      case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
        return Status::InvalidArgument("kafka " + servers_ + " does not let this client write topic " + topic +
                                       " (" + origin + "): grant it WRITE and DESCRIBE on the topic, or check "
                                       "kafka.sasl.* / kafka.security.protocol");
      case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
        // A topic just created: its leader is being elected. The produce waits for it.
        known_topics_.insert(topic);
        return Status::OK();
      default:
        return Status::IOError("kafka " + servers_ + ": topic " + topic + " (" + origin +
                               "): " + rd_kafka_err2str(topic_error));
    }
    known_topics_.insert(topic);
    return Status::OK();
  }

  // "10 s", "1.5 s".
  static std::string Seconds(int ms) {
    std::string s = std::to_string(ms / 1000);
    if (ms % 1000 != 0) s += "." + std::to_string(ms % 1000 / 100);
    return s + " s";
  }

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

  // A transactional call's error as a Status (and the error freed). Fatal ones break the
  // producer; a fenced one says another producer of the transactional.id took over.
  Status TransactionError(rd_kafka_error_t* error, const std::string& what) {
    const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
    const std::string text = rd_kafka_error_string(error);
    const bool fatal = rd_kafka_error_is_fatal(error);
    const bool abortable = rd_kafka_error_txn_requires_abort(error);
    rd_kafka_error_destroy(error);
    const std::string message = "kafka " + servers_ + ": " + what + ": " + text;
    if (code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
        code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH) {
      fatal_.store(true);
      return Status::IOError(message + "; another producer with transactional.id " + options_.transactional_id +
                             " (another canal-server running this destination) has taken over: this one stops")
          .WithSubcode(kErrorProducerFenced);
    }
    if (code == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
        code == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
      fatal_.store(true);
      return Status::InvalidArgument(message + "; grant this client WRITE and DESCRIBE on transactional.id " +
                                     options_.transactional_id + " (and IDEMPOTENT_WRITE on the cluster)");
    }
    if (fatal) fatal_.store(true);
    return Status::IOError(message + (abortable ? " (the transaction is aborted and sent again)" : ""));
  }

  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
    auto* self = static_cast<KafkaProducer*>(opaque);
    const auto tag = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(msg->_private));
    Round* round = nullptr;
    for (Round& r : self->rounds_) {
      if ((r.id & 0xFFFFFFFF) == tag >> 32) round = &r;
    }
    if (round == nullptr) return;  // a round already drained
    --round->outstanding;
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++round->confirmed;
      return;
    }
    if (!round->first_error.ok()) return;
    const size_t index = tag & 0xFFFFFFFF;
    const std::string& origin = index < round->origins.size() ? *round->origins[index] : std::string();
    round->first_error = self->Classify(msg->err, origin, rd_kafka_topic_name(msg->rkt), msg->partition, msg->len);
  }

  // librdkafka's threads call this: the logger is thread-safe, the budget is atomic.
  static void OnLog(const rd_kafka_t* rk, int level, const char* facility, const char* text) {
    auto* self = static_cast<KafkaProducer*>(rd_kafka_opaque(rk));
    if (self == nullptr || !self->logger_) return;
    const int64_t second = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
    int64_t current = self->log_second_.load();
    if (current != second && self->log_second_.compare_exchange_strong(current, second)) {
      const uint64_t dropped = self->log_dropped_.exchange(0);
      self->log_lines_.store(0);
      if (dropped > 0) {
        self->logger_->warn("[{}] librdkafka: {} more line(s) in the last second not logged (at most {} a second)",
                            self->destination_, dropped, kLibraryLogLinesPerSecond);
      }
    }
    if (self->log_lines_.fetch_add(1) >= kLibraryLogLinesPerSecond) {
      self->log_dropped_.fetch_add(1);
      return;
    }
    // Broker names, topics and errors come from the network: printable ASCII only, bounded.
    std::string line;
    for (const char* c = text; c != nullptr && *c != '\0' && line.size() < 512; ++c) {
      line.push_back(*c >= 0x20 && *c < 0x7F ? *c : '?');
    }
    const std::string fac = facility != nullptr ? std::string(facility).substr(0, 32) : std::string();
    // syslog levels: 0-3 errors, 4 warnings, 5-6 notices and info, 7 debug.
    const spdlog::level::level_enum to = level <= 3   ? spdlog::level::err
                                         : level == 4 ? spdlog::level::warn
                                         : level <= 6 ? spdlog::level::info
                                                      : spdlog::level::debug;
    self->logger_->log(to, "[{}] librdkafka {}: {}", self->destination_, fac, line);
  }

  // Served by rd_kafka_poll on the publisher's thread.
  static void OnError(rd_kafka_t*, int err, const char* reason, void* opaque) {
    auto* self = static_cast<KafkaProducer*>(opaque);
    if (err == RD_KAFKA_RESP_ERR__FATAL) self->fatal_.store(true);
    if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION && self->auth_error_.empty()) {
      // From the network (the broker's words): printable ASCII only, bounded.
      for (const char* c = reason; c != nullptr && *c != '\0' && self->auth_error_.size() < 300; ++c) {
        self->auth_error_.push_back(*c >= 0x20 && *c < 0x7F ? *c : '?');
      }
    }
  }

  rd_kafka_t* rk_ = nullptr;
  std::string servers_;
  // Transactions: the producer's session (random, in every tag), whether one is open, its
  // tag, and the destination's next transaction number.
  bool transactional_ = false;
  KafkaOptions options_;
  std::string session_;
  bool in_transaction_ = false;
  std::string tag_;
  uint64_t next_sequence_ = 1;
  uint64_t begun_ = 0;
  // The rounds in flight, oldest first (poll runs the callbacks on this thread). A message's
  // origin is the publisher's (its encoder keeps a round's messages until the round is done).
  struct Round {
    uint64_t id = 0;
    bool closed = false;
    std::vector<const std::string*> origins;
    int64_t outstanding = 0;
    uint64_t confirmed = 0;
    Status first_error;
  };
  Round& OpenRound() {
    if (rounds_.empty() || rounds_.back().closed) {
      rounds_.emplace_back();
      rounds_.back().id = next_round_++;
    }
    return rounds_.back();
  }
  std::deque<Round> rounds_;
  uint64_t next_round_ = 1;
  uint64_t confirmed_ = 0;  // of the last failed Confirm
  std::atomic<bool> fatal_{false};
  std::shared_ptr<spdlog::logger> logger_;
  std::string destination_;
  std::set<std::string, std::less<>> known_topics_;  // asked for and there
  int metadata_timeout_ms_ = 10'000;
  std::string auth_error_;  // the first SASL failure librdkafka reported (OnError)
  std::atomic<int64_t> log_second_{0};
  std::atomic<int> log_lines_{0};
  std::atomic<uint64_t> log_dropped_{0};
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
