#include "canal/mq/rabbitmq_producer.h"

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace canal::mq {

namespace {

constexpr amqp_channel_t kChannel = 1;
constexpr std::chrono::seconds kConfirmTimeout{60};
// The TCP connect and each RPC (channel, confirm mode, declarations).
constexpr int kRpcTimeoutSeconds = 5;
// The login: from the protocol header to connection.open-ok. A broker answers at once; one
// that accepted the connection and says nothing (not RabbitMQ, a hung node) is given up on.
constexpr int kHandshakeTimeoutSeconds = 5;
// The broker's texts in errors: at most this many bytes of them.
constexpr size_t kMaxBrokerText = 256;

// Text from the network, for errors and logs: printable ASCII; anything else, and the
// backslash, escaped (\xNN); at most kMaxBrokerText bytes ("..." when cut).
std::string Printable(const void* data, size_t len) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    if (out.size() >= kMaxBrokerText) {
      out += "...";
      break;
    }
    const unsigned char c = p[i];
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::string BytesText(amqp_bytes_t b) { return b.bytes == nullptr ? std::string() : Printable(b.bytes, b.len); }

amqp_bytes_t Bytes(const std::string& s) {
  amqp_bytes_t b;
  b.len = s.size();
  b.bytes = const_cast<char*>(s.data());
  return b;
}

// A channel.close or connection.close from the broker: its reply code and text.
struct BrokerClose {
  bool connection = false;  // connection.close (else channel.close)
  uint16_t code = 0;
  std::string text;  // Printable
};

bool CloseOf(const amqp_method_t& method, BrokerClose* out) {
  if (method.decoded == nullptr) return false;
  if (method.id == AMQP_CONNECTION_CLOSE_METHOD) {
    const auto* m = static_cast<const amqp_connection_close_t*>(method.decoded);
    *out = {true, m->reply_code, BytesText(m->reply_text)};
    return true;
  }
  if (method.id == AMQP_CHANNEL_CLOSE_METHOD) {
    const auto* m = static_cast<const amqp_channel_close_t*>(method.decoded);
    *out = {false, m->reply_code, BytesText(m->reply_text)};
    return true;
  }
  return false;
}

// What went wrong in an RPC: "the broker closed the channel: 404 NOT_FOUND - no exchange 'x'".
std::string ReplyText(const amqp_rpc_reply_t& r) {
  switch (r.reply_type) {
    case AMQP_RESPONSE_NORMAL: return "ok";
    case AMQP_RESPONSE_NONE: return "no reply";
    case AMQP_RESPONSE_LIBRARY_EXCEPTION: return amqp_error_string2(r.library_error);
    case AMQP_RESPONSE_SERVER_EXCEPTION: {
      BrokerClose c;
      if (!CloseOf(r.reply, &c)) return "the broker answered method " + std::to_string(r.reply.id);
      return std::string("the broker closed the ") + (c.connection ? "connection" : "channel") + ": " +
             std::to_string(c.code) + " " + c.text;
    }
  }
  return "unknown reply";
}

// The decimal number after `label` in `text` ("message size 2000000 is larger than configured
// max size 1048576"), or 0.
uint64_t NumberAfter(const std::string& text, std::string_view label) {
  const size_t at = text.find(label);
  if (at == std::string::npos) return 0;
  uint64_t n = 0;
  for (size_t i = at + label.size(); i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > (UINT64_MAX - 9) / 10) return 0;
    n = n * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  return n;
}

class RabbitMqProducer final : public Producer {
 public:
  explicit RabbitMqProducer(const RabbitMqOptions& o) : o_(o) {}
  ~RabbitMqProducer() override {
    if (conn_ == nullptr) return;
    // A connection that timed out or failed is only dropped: closing it politely would wait
    // for a broker that does not answer.
    if (open_ && !dead_) {
      if (channel_closed_) {
        amqp_channel_close_ok_t ok{};
        amqp_send_method(conn_, kChannel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
      } else {
        amqp_channel_close(conn_, kChannel, AMQP_REPLY_SUCCESS);
      }
      amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    }
    amqp_destroy_connection(conn_);
  }

  Status Connect() {
    conn_ = amqp_new_connection();
    amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
    if (socket == nullptr) return Status::IOError("RabbitMQ: cannot create a socket");
    struct timeval tv = {kRpcTimeoutSeconds, 0};
    amqp_set_rpc_timeout(conn_, &tv);
    struct timeval handshake = {kHandshakeTimeoutSeconds, 0};
    amqp_set_handshake_timeout(conn_, &handshake);
    if (int rc = amqp_socket_open_noblock(socket, o_.host.c_str(), o_.port, &tv); rc != AMQP_STATUS_OK) {
      return Status::IOError("RabbitMQ " + Address() + ": cannot connect (" + amqp_error_string2(rc) +
                             "); check rabbitmq.host and that the broker runs");
    }
    amqp_rpc_reply_t r = amqp_login(conn_, o_.virtual_host.c_str(), 0, 131072, 0, AMQP_SASL_METHOD_PLAIN,
                                    o_.username.c_str(), o_.password.c_str());
    if (r.reply_type != AMQP_RESPONSE_NORMAL) return LoginError(r);
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
      broken_ = dead_ = true;
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
        broken_ = dead_ = true;
        first_error_ = Status::IOError("RabbitMQ " + Address() + ": no confirm for " +
                                       std::to_string(kConfirmTimeout.count()) + " s; reconnecting");
        break;
      }
      amqp_frame_t frame;
      struct timeval tv = {0, 100 * 1000};
      int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &tv);
      if (rc == AMQP_STATUS_TIMEOUT) continue;
      if (rc != AMQP_STATUS_OK) {
        broken_ = dead_ = true;
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
  std::string Who() const {
    return "user '" + o_.username + "' on " + o_.host + ":" + std::to_string(o_.port) + ", virtual host '" +
           o_.virtual_host + "'";
  }

  // The login failed. A refusal of the credentials or of the virtual host is a setting to
  // fix (InvalidArgument: the destination stops, as the replica connection stops on a wrong
  // password); a broker that does not answer, or closes the connection, may be starting or
  // overloaded: retried (IOError).
  Status LoginError(const amqp_rpc_reply_t& r) {
    dead_ = true;
    BrokerClose c;
    if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && CloseOf(r.reply, &c)) {
      const std::string said = std::to_string(c.code) + " " + c.text;
      if (c.code == AMQP_ACCESS_REFUSED) {
        return Status::InvalidArgument("RabbitMQ refused the login of " + Who() + " (" + said +
                                       "): check rabbitmq.username and rabbitmq.password in canal.properties "
                                       "(the broker's log says why; guest may log in only from localhost), "
                                       "then restart canal-server")
            .WithSubcode(c.code);
      }
      if (c.code == AMQP_NOT_ALLOWED) {
        return Status::InvalidArgument("RabbitMQ refused " + Who() + " access to the virtual host (" + said +
                                       "): create it or grant the user access (rabbitmqctl add_vhost " +
                                       o_.virtual_host + "; rabbitmqctl set_permissions -p " + o_.virtual_host +
                                       " " + o_.username + " '.*' '.*' '.*'), or fix rabbitmq.virtual.host; "
                                       "then restart canal-server")
            .WithSubcode(c.code);
      }
      return Status::IOError("RabbitMQ " + Address() + ": login as " + o_.username + " failed (" + said + ")")
          .WithSubcode(c.code);
    }
    if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT) {
      return Status::IOError("RabbitMQ " + o_.host + ":" + std::to_string(o_.port) +
                             " accepted the connection but did not answer the AMQP handshake within " +
                             std::to_string(kHandshakeTimeoutSeconds) +
                             " s (a hung broker, or not RabbitMQ on that port: check rabbitmq.host)");
    }
    if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
        (r.library_error == AMQP_STATUS_BAD_AMQP_DATA || r.library_error == AMQP_STATUS_INCOMPATIBLE_AMQP_VERSION ||
         r.library_error == AMQP_STATUS_UNEXPECTED_STATE || r.library_error == AMQP_STATUS_WRONG_METHOD)) {
      return Status::IOError("RabbitMQ " + o_.host + ":" + std::to_string(o_.port) +
                             " answered the AMQP handshake with something that is not AMQP 0-9-1 (" +
                             amqp_error_string2(r.library_error) + "): check rabbitmq.host");
    }
    // A broker still starting, or one that closes the socket at a bad password (without the
    // authentication_failure_close capability), ends the connection without a word.
    return Status::IOError("RabbitMQ " + Address() + ": login as " + o_.username + " failed (" + ReplyText(r) +
                           "); if this persists, check rabbitmq.username, rabbitmq.password, "
                           "rabbitmq.virtual.host");
  }

  // `permanent`: a refusal of what the settings ask (a declaration) cannot be
  // retried away.
  Status Rpc(const std::string& what, bool permanent = false) {
    amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
    if (r.reply_type == AMQP_RESPONSE_NORMAL) return Status::OK();
    broken_ = true;
    BrokerClose c;
    const bool closed = r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && CloseOf(r.reply, &c);
    if (closed && !c.connection) channel_closed_ = true;
    if (!closed || c.connection) dead_ = true;
    std::string msg = "RabbitMQ " + Address() + ": " + what + " failed (" + ReplyText(r) + ")";
    if (closed && c.code == AMQP_ACCESS_REFUSED) {
      msg += "; give " + o_.username + " the permissions it needs (rabbitmqctl set_permissions -p " +
             o_.virtual_host + " " + o_.username + " ...)";
    }
    return permanent && closed ? Status::InvalidArgument(msg).WithSubcode(c.code) : Status::IOError(msg);
  }

  // The broker closed the channel (or the connection) while messages were unconfirmed. What
  // the settings or a message make impossible stops the destination (InvalidArgument); the
  // rest (a broker shutting down, a forced close) is retried on a new connection.
  Status ClosedWhilePublishing(const BrokerClose& c) const {
    const std::string said = std::to_string(c.code) + " " + c.text;
    const std::string what = std::string("the broker closed the ") + (c.connection ? "connection" : "channel");
    switch (c.code) {
      case AMQP_PRECONDITION_FAILED: {
        // RabbitMQ refuses a message over max_message_size this way: "message size N is larger
        // than configured max size M". The channel carries no delivery tag: the message is the
        // one of that size among the unconfirmed.
        const uint64_t size = NumberAfter(c.text, "message size ");
        const uint64_t limit = NumberAfter(c.text, "max size ");
        if (size > 0) {
          const EncodedMessage* m = nullptr;
          for (const EncodedMessage* p : pending_) {
            if (p->payload.size() == size) {
              m = p;
              break;
            }
          }
          return Status::InvalidArgument(
                     "RabbitMQ " + Address() + " refused a message of " + std::to_string(size) + " bytes" +
                     (m != nullptr ? " for routing key " + m->topic + " (" + m->origin + ")" : std::string()) +
                     ": larger than the broker's max_message_size" +
                     (limit > 0 ? " of " + std::to_string(limit) + " bytes" : std::string()) + " (" + what + ": " +
                     said + "); raise max_message_size in the broker's rabbitmq.conf (at most 536870912), or make "
                     "the transaction smaller")
              .WithSubcode(c.code);
        }
        return Status::InvalidArgument("RabbitMQ " + Address() + " refused " + FirstPending() + " (" + what + ": " +
                                       said + ")")
            .WithSubcode(c.code);
      }
      case AMQP_NOT_FOUND:
        return Status::InvalidArgument("RabbitMQ " + Address() + " has no exchange '" + o_.exchange + "' to take " +
                                       FirstPending() + " (" + what + ": " + said +
                                       "): declare it, or set rabbitmq.deliveryMode to its type (direct, fanout, "
                                       "topic, headers) so that canal-server declares it")
            .WithSubcode(c.code);
      case AMQP_ACCESS_REFUSED:
        return Status::InvalidArgument("RabbitMQ " + Address() + " does not let " + o_.username +
                                       " publish to exchange '" + o_.exchange + "' (" + FirstPending() + "; " + what +
                                       ": " + said + "): grant it write permission (rabbitmqctl set_permissions -p " +
                                       o_.virtual_host + " " + o_.username + " ...)")
            .WithSubcode(c.code);
      default:
        return Status::IOError("RabbitMQ " + Address() + ": " + what + ": " + said).WithSubcode(c.code);
    }
  }
  std::string FirstPending() const { return pending_.empty() ? std::string("a message") : pending_.front()->origin; }

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
        BrokerClose c;
        if (!CloseOf(frame.payload.method, &c)) {
          dead_ = true;
          first_error_ = Status::IOError("RabbitMQ " + Address() + " closed the connection");
          break;
        }
        if (c.connection) {
          dead_ = true;
        } else {
          channel_closed_ = true;
        }
        first_error_ = ClosedWhilePublishing(c);
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
  bool channel_closed_ = false;  // the broker closed the channel (it waits for our close-ok)
  bool dead_ = false;            // the connection failed or timed out: drop it without a word
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
