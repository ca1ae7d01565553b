// Session: one client connection of the SessionServer, from the handshake to
// the close (see docs/protocol.md for the conversation).
//
// Three coroutines share the session's strand, so nothing in a session needs
// a lock and the ring's consumer calls are sequenced:
//   - the reader cuts frames off the socket into the inbox (a few frames at
//     most, so a client that pipelines cannot make us buffer without bound)
//     and notices at once when the client goes away, even during a wait;
//   - the processor answers the inbox's requests in order, and is the only
//     one that writes to the socket or touches the ring and meta manager;
//   - the idle watch closes the session when the client has sent nothing
//     for its idle timeout.
// A GET that must wait arms the ring's NotifyWhen and a timer; the
// ring's callback posts to the strand through a gate that the session closes
// when it ends, so no callback reaches a session (or io_context) that is gone.
#pragma once

#include <utility>  // Boost 1.74's coroutine headers use std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/meta/meta_types.h"
#include "canal/proto/wire_error.h"
#include "canal/server/session_server.h"
#include "canal/store/ring_store.h"
#include "canal/server/log_limiter.h"
#include "session_holders.h"
#include "session_meter.h"

namespace canal::protocol {
class ClientAuth;
class Get;
class ClientAck;
class ClientRollback;
class Sub;
class Unsub;
}  // namespace canal::protocol

namespace canal::server {

class Session;

// What the server shares with its sessions; outlives every session.
struct SessionContext {
  SessionServerOptions options;
  DestinationRegistry* registry = nullptr;
  std::shared_ptr<spdlog::logger> logger;
  std::string server_address;  // "ip:port" listened on, for the server's own log lines
  DestinationHolders holders;
  // Warnings a client can repeat at will go through this.
  LogLimiter log_limiter;
  // Where blocking work (the cursor flush: fsync, a ZooKeeper write) runs,
  // so that it never holds an I/O thread; none: on the session's thread.
  std::optional<boost::asio::any_io_executor> blocking;
  // Called on the session's strand when its processor has finished.
  std::function<void(Session*)> on_session_end;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `socket` must be bound to a strand of its own.
  // `peer`: "ip:port" of the client; `remote_host`: its ip alone (the
  // connection limits count by it); `local_address`: the address the client
  // connected to, for messages.
  Session(SessionContext* context, boost::asio::ip::tcp::socket socket, std::string peer, std::string remote_host,
          std::string local_address);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Sends the handshake and serves the client until the session ends.
  void Start();
  // Ends the session from any thread (Stop); acks already processed are
  // flushed and outstanding batches rolled back, as for a disconnect.
  void Close();
  // Ends the session from any thread when it is subscribed to `destination`:
  // the requests already received are answered (GET and ack with an error),
  // then the client is told why (an error Ack) and the connection closes.
  void CloseIfSubscribedTo(std::string destination, std::string reason);

  const std::string& peer() const { return peer_; }
  const std::string& remote_host() const { return remote_host_; }

 private:
  // In-flight batches live in the meta manager only (meta_types.h's
  // PositionRange carries the ring's ack point and the cursor's ack position):
  // the session keeps no copy of them.
  struct Subscription {
    std::shared_ptr<Destination> destination;
    // The ring of the run subscribed to: acks and rollbacks go to it, and it
    // tells whether batches are out even after a new run cleared the meta's.
    std::shared_ptr<store::RingStore> store;
    meta::ClientIdentity identity;
    std::string client_id_text;
  };
  // The ring's callback posts through this; Close() bars further posts.
  struct NotifyGate;

  using Clock = std::chrono::steady_clock;

  boost::asio::awaitable<void> Run(std::shared_ptr<Session> self);
  boost::asio::awaitable<void> ReadLoop(std::shared_ptr<Session> self);
  boost::asio::awaitable<void> IdleWatch(std::shared_ptr<Session> self);

  // Waits until the inbox has a request; false when the session is over.
  boost::asio::awaitable<bool> WaitForRequest();
  boost::asio::awaitable<void> Dispatch(const std::string& frame);
  // Flushes pending acks, then writes out_; false when the write failed.
  boost::asio::awaitable<bool> WriteReply();
  // After an error Ack: stop sending, discard input, wait briefly for the
  // client to close, so that it reads the Ack instead of a reset.
  boost::asio::awaitable<void> Linger();

  void HandleAuth(const protocol::ClientAuth& auth);
  void HandleSubscription(const protocol::Sub& sub);
  void HandleUnsubscription(const protocol::Unsub& unsub);
  boost::asio::awaitable<void> HandleGet(const protocol::Get& get);
  void HandleClientAck(const protocol::ClientAck& ack);
  void HandleClientRollback(const protocol::ClientRollback& rollback);

  // Subscribes this session; on failure sends the error (Fail) and returns false.
  bool Subscribe(const std::string& destination, const std::string& client_id, const std::string& filter);
  // Fills *identity from a request's destination and client id; on failure
  // sends 401 (missing) or 400 (client id not a number) and returns false.
  bool ParseIdentity(const std::string& destination, const std::string& client_id, std::string_view request,
                     meta::ClientIdentity* identity);
  // Whether this session's subscription is `identity`'s.
  bool Holds(const meta::ClientIdentity& identity) const;
  // Whether the registry still serves the subscribed destination, the same
  // instance (HA: active here; not restarted); otherwise sends error `code`
  // saying what happened (Fail) and returns false.
  bool StillServed(std::string_view request, proto::WireError code = proto::WireError::kNotServing);
  // Whether the registry still serves the subscribed instance here and HA
  // has not ended the subscription.
  bool ServedHere() const;
  // Waits for a full batch of `batch_size` (0: any entry) until `deadline`,
  // a disconnect or Close.
  boost::asio::awaitable<void> WaitForBatch(store::RingStore* store, size_t batch_size, store::RingStore::WaitRule rule,
                                            Clock::time_point deadline);
  void OnBatchReady(uint64_t generation);
  // Acks the oldest outstanding batch, which must be `batch_id`; the error
  // carries the message the client gets.
  Status AckBatch(int64_t batch_id);
  // Forgets every outstanding batch and rewinds the ring to the acked position.
  void RollbackAll();
  // Rolls back, flushes pending acks and releases the destination.
  void EndSubscription();
  Status FlushAcks();
  // FlushAcks with the flush itself on context_->blocking, awaited: a slow
  // disk or ZooKeeper stalls this client only, not the I/O thread.
  // Waits for a write StartFlush began, then writes what is still pending.
  boost::asio::awaitable<Status> FlushAcksOffThread();
  // Begins writing the acks made so far on context_->blocking at once, so
  // that the disk's fsyncs overlap the client's next GET (its wait for the
  // batch, the encoding) instead of delaying the reply after it.
  void StartFlush();
  boost::asio::awaitable<void> RunFlush(std::shared_ptr<Session> self, std::shared_ptr<Destination> dest,
                                       std::string destination);
  Status AcksNotDurable(const Status& flush_error) const;

  // Forgets a gathered reply before out_ is reused for another one.
  void DropGather();
  // The size of the reply about to be written.
  size_t ReplyBytes() const;
  void ReplyOk();
  // Sends Ack{code, message} and ends the session after it (Canal closes the
  // connection after an error, which also keeps replies and requests paired).
  void Fail(proto::WireError code, std::string message);
  // Fail() for a session whose destination stopped being active here
  // (CloseIfSubscribedTo): 409 when the client holds unacked batches, else 503.
  void FailEvicted();
  // Closes the socket and cancels every wait; the coroutines then end.
  void CloseNow(std::string_view reason);
  std::string Describe() const;  // "client 1.2.3.4:5 (client id 1001, destination example)"
  // A warning about this session, with client text escaped; rate-limited by
  // `key` (the kind of warning) so that no client can flood the log.
  void WarnLimited(std::string_view key, const std::string& text);

  SessionContext* const context_;
  spdlog::logger* const log_;
  boost::asio::ip::tcp::socket socket_;
  const std::string peer_;
  const std::string remote_host_;
  const std::string local_address_;  // "ip:port" the client connected to
  std::shared_ptr<NotifyGate> gate_;

  boost::asio::steady_timer request_ready_;  // processor waits here for the inbox
  boost::asio::steady_timer inbox_space_;    // reader waits here when the inbox is full
  boost::asio::steady_timer wake_;           // waiting GET and linger
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer flush_done_;     // FlushAcksOffThread waits here for RunFlush

  // All below: touched on the strand only.
  std::deque<std::string> inbox_;
  size_t inbox_bytes_ = 0;
  bool input_closed_ = false;  // EOF or read error: no more requests
  bool closing_ = false;       // CloseNow ran
  bool draining_ = false;      // lingering after an error: input is discarded
  std::string close_reason_;
  std::string evicted_;        // why CloseIfSubscribedTo ended the subscription ("" = it did not)
  Clock::time_point last_receive_;
  const Clock::time_point connected_at_;  // the login deadline counts from here
  std::chrono::milliseconds idle_timeout_;

  std::string seed_;
  bool authenticated_ = false;
  std::string username_;
  std::optional<Subscription> subscription_;
  std::string client_label_;  // " (client id 1001, destination example)" once subscribed, for logs
  bool acks_pending_ = false;            // acked since the last Flush began
  bool flush_running_ = false;           // RunFlush is writing on the blocking pool
  Status flush_status_;                  // RunFlush's failure, for the next reply
  bool waiting_ = false;                 // a GET waits on wake_
  uint64_t wait_generation_ = 0;         // stale ring callbacks carry an older one

  SessionMeter meter_;  // counts requests for metrics
  store::Batch batch_;  // reused by every GET
  std::string out_;     // the reply being built (with gather_: its framing and small entries)
  // A MESSAGES reply written straight from the ring's slots: the frame's
  // pieces in order (into out_ and the batch's entries), and the ring they
  // point into. The ownership rule: while they are set, the batch is neither
  // acked nor rolled back and the ring is not let go; WriteReply clears them
  // once the write has completed (or failed), and only then does the
  // processor touch the ring again.
  std::vector<std::string_view> pieces_;
  std::vector<boost::asio::const_buffer> gather_;
  std::shared_ptr<store::RingStore> gather_store_;
  bool writing_ = false;  // WriteReply's socket write is in flight
  bool reply_ = false;        // out_ holds a reply to send
  bool end_after_reply_ = false;
};

}  // namespace canal::server
