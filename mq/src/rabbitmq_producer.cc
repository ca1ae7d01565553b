#include "canal/mq/rabbitmq_producer.h"

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace canal::mq {

namespace {

constexpr amqp_channel_t kChannel = 1;
constexpr std::chrono::seconds kConfirmTimeout{60};

std::string BytesText(amqp_bytes_t b) { return std::string(static_cast<const char*>(b.bytes), b.len); }

amqp_bytes_t Bytes(const std::string& s) {
  amqp_bytes_t b;
  b.len = s.size();
  b.bytes = const_cast<char*>(s.data());
  return b;
}

// What went wrong in an RPC: "server closed the channel: 404 NOT_FOUND - no exchange 'x'".
std::string ReplyText(const amqp_rpc_reply_t& r) {
  switch (r.reply_type) {
    case AMQP_RESPONSE_NORMAL: return "ok";
    case AMQP_RESPONSE_NONE: return "no reply";
    case AMQP_RESPONSE_LIBRARY_EXCEPTION: return amqp_error_string2(r.library_error);
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
        auto* m = static_cast<amqp_connection_close_t*>(r.reply.decoded);
        return "the broker closed the connection: " + std::to_string(m->reply_code) + " " + BytesText(m->reply_text);
      }
      if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        auto* m = static_cast<amqp_channel_close_t*>(r.reply.decoded);
        return "the broker closed the channel: " + std::to_string(m->reply_code) + " " + BytesText(m->reply_text);
      }
      return "the broker answered method " + std::to_string(r.reply.id);
  }
  return "unknown reply";
}

class RabbitMqProducer final : public Producer {
 public:
  explicit RabbitMqProducer(const RabbitMqOptions& o) : o_(o) {}
  ~RabbitMqProducer() override {
    if (conn_ == nullptr) return;
    if (open_) {
      amqp_channel_close(conn_, kChannel, AMQP_REPLY_SUCCESS);
      amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    }
    amqp_destroy_connection(conn_);
  }

  Status Connect() {
    conn_ = amqp_new_connection();
    amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
    if (socket == nullptr) return Status::IOError("RabbitMQ: cannot create a socket");
    struct timeval tv = {5, 0};
    amqp_set_rpc_timeout(conn_, &tv);
    if (int rc = amqp_socket_open_noblock(socket, o_.host.c_str(), o_.port, &tv); rc != AMQP_STATUS_OK) {
      return Status::IOError("RabbitMQ " + Address() + ": cannot connect (" + amqp_error_string2(rc) + ")");
    }
    amqp_rpc_reply_t r = amqp_login(conn_, o_.virtual_host.c_str(), 0, 131072, 0, AMQP_SASL_METHOD_PLAIN,
                                    o_.username.c_str(), o_.password.c_str());
    if (r.reply_type != AMQP_RESPONSE_NORMAL) {
      const bool refused = r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION ||
                           r.library_error == AMQP_STATUS_SOCKET_CLOSED;  // a bad password closes the socket
      std::string why = "RabbitMQ " + Address() + ": login as " + o_.username + " to virtual host " + o_.virtual_host +
                        " failed (" + ReplyText(r) + "); check rabbitmq.username, rabbitmq.password, "
                        "rabbitmq.virtual.host";
      // A broker still starting also closes the socket: retry those.
      return refused && r.library_error != AMQP_STATUS_SOCKET_CLOSED ? Status::InvalidArgument(why)
                                                                     : Status::IOError(why);
    }
    open_ = true;
    amqp_channel_open(conn_, kChannel);
    CANAL_RETURN_IF_ERROR(Rpc("opening a channel"));
    amqp_confirm_select(conn_, kChannel);
    CANAL_RETURN_IF_ERROR(Rpc("turning on publisher confirms"));
    if (!o_.exchange_type.empty() && !o_.exchange.empty()) {
      amqp_exchange_declare(conn_, kChannel, Bytes(o_.exchange), Bytes(o_.exchange_type), 0, 1, 0, 0,
                            amqp_empty_table);
      CANAL_RETURN_IF_ERROR(Rpc("declaring exchange " + o_.exchange + " (" + o_.exchange_type + ")", true));
    }
    if (!o_.queue.empty()) {
      amqp_queue_declare(conn_, kChannel, Bytes(o_.queue), 0, 1, 0, 0, amqp_empty_table);
      CANAL_RETURN_IF_ERROR(Rpc("declaring queue " + o_.queue, true));
      if (!o_.exchange.empty()) {
        amqp_queue_bind(conn_, kChannel, Bytes(o_.queue), Bytes(o_.exchange), Bytes(o_.routing_key), amqp_empty_table);
        CANAL_RETURN_IF_ERROR(Rpc("binding queue " + o_.queue + " to " + o_.exchange + " by " + o_.routing_key, true));
      }
    }
    return Status::OK();
  }

  Status Send(const EncodedMessage& m) override {
    amqp_basic_properties_t props;
    props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
    props.delivery_mode = o_.persistent ? 2 : 1;
    amqp_bytes_t body;
    body.len = m.payload.size();
    body.bytes = const_cast<char*>(m.payload.data());
    int rc = amqp_basic_publish(conn_, kChannel, Bytes(o_.exchange), Bytes(m.topic), /*mandatory=*/1, 0, &props, body);
    if (rc != AMQP_STATUS_OK) {
      broken_ = true;
      return Status::IOError("RabbitMQ " + Address() + ": publishing " + m.origin + " failed (" +
                             amqp_error_string2(rc) + ")");
    }
    pending_.push_back(&m);
    ++sent_;
    return Status::OK();
  }

  // Rounds (producer.h): delivery tags run from 1 per channel, so a round is the tags up to
  // its last message's, and it is confirmed once the broker acked that tag.
  bool pipelines() const override { return true; }

  uint64_t EndRound() override {
    rounds_.push_back({++last_round_, sent_});
    return last_round_;
  }

  Status ConfirmRound(uint64_t round, const std::atomic<bool>& stop) override {
    uint64_t last = acked_;
    for (const auto& [id, tag] : rounds_) {
      if (id <= round) last = tag;
    }
    // No heartbeats: a connection that died silently shows as confirms that stop coming.
    auto progress = std::chrono::steady_clock::now();
    uint64_t acked_before = acked_;
    while (acked_ < last && first_error_.ok()) {
      if (stop.load(std::memory_order_acquire)) return Status::Aborted("stopping with RabbitMQ messages unconfirmed");
      if (acked_ != acked_before) {
        acked_before = acked_;
        progress = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - progress > kConfirmTimeout) {
        broken_ = true;
        first_error_ = Status::IOError("RabbitMQ " + Address() + ": no confirm for " +
                                       std::to_string(kConfirmTimeout.count()) + " s; reconnecting");
        break;
      }
      amqp_frame_t frame;
      struct timeval tv = {0, 100 * 1000};
      int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &tv);
      if (rc == AMQP_STATUS_TIMEOUT) continue;
      if (rc != AMQP_STATUS_OK) {
        broken_ = true;
        first_error_ = Status::IOError("RabbitMQ " + Address() + ": connection lost waiting for confirms (" +
                                       amqp_error_string2(rc) + ")");
        break;
      }
      if (frame.frame_type != AMQP_FRAME_METHOD) continue;
      HandleMethod(frame);
    }
    if (!first_error_.ok()) return first_error_;
    while (!rounds_.empty() && rounds_.front().first <= round) {
      released_ = rounds_.front().second;
      rounds_.pop_front();
    }
    return Status::OK();
  }

  uint64_t Drain(const std::atomic<bool>&) override {
    // Every unconfirmed message counts as not published; those acked since the last round
    // that went through will be published again.
    const uint64_t again = acked_ > released_ ? acked_ - released_ : 0;
    pending_.clear();
    rounds_.clear();
    acked_ = released_ = sent_;
    first_error_ = Status::OK();
    return again;
  }

  Status Confirm(const std::atomic<bool>& stop) override { return ConfirmAsOneRound(stop, &confirmed_); }

  uint64_t confirmed() const override { return confirmed_; }
  bool broken() const override { return broken_; }
  std::string Describe() const override { return "rabbitmq " + Address(); }

 private:
  std::string Address() const { return o_.host + ":" + std::to_string(o_.port) + o_.virtual_host; }

  // `permanent`: a refusal of what the settings ask (a declaration) cannot be
  // retried away.
  Status Rpc(const std::string& what, bool permanent = false) {
    amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
    if (r.reply_type == AMQP_RESPONSE_NORMAL) return Status::OK();
    broken_ = true;
    std::string msg = "RabbitMQ " + Address() + ": " + what + " failed (" + ReplyText(r) + ")";
    return permanent && r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION ? Status::InvalidArgument(msg)
                                                                        : Status::IOError(msg);
  }

  std::string OriginOf(uint64_t tag) const {
    const uint64_t first = acked_ + 1;
    return tag >= first && tag - first < pending_.size() ? pending_[tag - first]->origin : std::string("a message");
  }
  // A returned message carries no delivery tag: the oldest unconfirmed one
  // sent with that routing key is it (returns come before that message's ack).
  std::string OriginOfReturned(const std::string& routing_key) const {
    for (const EncodedMessage* m : pending_) {
      if (m->topic == routing_key) return m->origin;
    }
    return "a message";
  }

  void Acked(uint64_t tag, bool multiple) {
    const uint64_t upto = multiple ? tag : std::max(tag, acked_);
    if (upto > acked_) {
      // Drop the acked origins from the front.
      pending_.erase(pending_.begin(),
                     pending_.begin() + static_cast<ptrdiff_t>(std::min<uint64_t>(upto - acked_, pending_.size())));
      acked_ = upto;
    }
  }

  void HandleMethod(const amqp_frame_t& frame) {
    switch (frame.payload.method.id) {
      case AMQP_BASIC_ACK_METHOD: {
        auto* ack = static_cast<amqp_basic_ack_t*>(frame.payload.method.decoded);
        Acked(ack->delivery_tag, ack->multiple != 0);
        break;
      }
      case AMQP_BASIC_NACK_METHOD: {
        auto* nack = static_cast<amqp_basic_nack_t*>(frame.payload.method.decoded);
        first_error_ = Status::IOError("RabbitMQ " + Address() + " refused (nack) " + OriginOf(nack->delivery_tag));
        break;
      }
      case AMQP_BASIC_RETURN_METHOD: {
        auto* ret = static_cast<amqp_basic_return_t*>(frame.payload.method.decoded);
        const std::string key = BytesText(ret->routing_key), why = BytesText(ret->reply_text);
        amqp_message_t message;  // the returned body follows: read it off the wire
        amqp_rpc_reply_t r = amqp_read_message(conn_, frame.channel, &message, 0);
        if (r.reply_type == AMQP_RESPONSE_NORMAL) amqp_destroy_message(&message);
        first_error_ = Status::InvalidArgument(
            "RabbitMQ " + Address() + " has no queue for routing key " + key + " on exchange '" + o_.exchange +
            "' to take " + OriginOfReturned(key) + " (" + why +
            "): it would be lost; bind a queue (rabbitmq.queue / rabbitmq.routingKey) or fix "
            "canal.mq.topic / canal.mq.dynamicTopic");
        break;
      }
      case AMQP_CHANNEL_CLOSE_METHOD:
      case AMQP_CONNECTION_CLOSE_METHOD: {
        broken_ = true;
        amqp_rpc_reply_t r;
        r.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
        r.reply = frame.payload.method;
        const std::string text = ReplyText(r);
        // 406 PRECONDITION_FAILED is how RabbitMQ refuses an oversized message.
        const uint16_t reply_code =
            frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD
                ? static_cast<const amqp_channel_close_t*>(frame.payload.method.decoded)->reply_code
                : static_cast<const amqp_connection_close_t*>(frame.payload.method.decoded)->reply_code;
        const bool permanent = reply_code == AMQP_PRECONDITION_FAILED;
        std::string msg = "RabbitMQ " + Address() + ": " + text;
        first_error_ = permanent ? Status::InvalidArgument(msg) : Status::IOError(msg);
        break;
      }
      default:
        break;
    }
  }

  const RabbitMqOptions o_;
  amqp_connection_state_t conn_ = nullptr;
  bool open_ = false;
  bool broken_ = false;
  uint64_t acked_ = 0;     // highest delivery tag confirmed (or given up)
  uint64_t sent_ = 0;      // highest delivery tag sent
  uint64_t released_ = 0;  // last tag of the last round confirmed whole (or given up)
  std::deque<const EncodedMessage*> pending_;  // unconfirmed messages, by tag from acked_ + 1
  std::deque<std::pair<uint64_t, uint64_t>> rounds_;  // (round, its last tag) in flight
  uint64_t last_round_ = 0;
  uint64_t confirmed_ = 0;  // of the last failed Confirm
  Status first_error_;
};

}  // namespace

Status MakeRabbitMqProducer(const RabbitMqOptions& options, std::unique_ptr<Producer>* out) {
  auto p = std::make_unique<RabbitMqProducer>(options);
  CANAL_RETURN_IF_ERROR(p->Connect());
  *out = std::move(p);
  return Status::OK();
}

}  // namespace canal::mq
