// Session: one client connection of the SessionServer, from the handshake to
// the close (see docs/protocol.md for the conversation): Canal's protocol.
// Its two other concerns are parts of their own: the transport
// (client_channel.h: the reader, the inbox, the idle watch, writes, the
// linger) and ack durability (ack_flusher.h). Where the connection is in its
// life is one SessionState (session_state.h), shared with the channel.
//
// Everything runs on the session's strand, so nothing needs a lock and the
// ring's consumer calls are sequenced: the channel's reader and idle watch,
// and the processor (Run), which answers the inbox's requests in order and is
// the only one that writes to the socket or touches the ring and meta manager.
// A GET that must wait arms the ring's NotifyWhen and a timer; the
// ring's callback posts to the strand through a gate that the session closes
// when it ends, so no callback reaches a session (or io_context) that is gone.
#pragma once

#include <utility>  // Boost 1.74's coroutine headers use std::exchange without it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ack_flusher.h"
#include "canal/common/status.h"
#include "canal/meta/meta_types.h"
#include "canal/proto/wire_error.h"
#include "canal/server/session_server.h"
#include "canal/server/users_file.h"
#include "canal/store/ring_store.h"
#include "client_channel.h"
#include "session_context.h"
#include "session_meter.h"
#include "canal/server/session_state.h"

namespace canal::protocol {
class ClientAuth;
class Get;
class ClientAck;
class ClientRollback;
class Sub;
class Unsub;
}  // namespace canal::protocol

namespace canal::server {

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
  boost::asio::awaitable<void> Dispatch(const std::string& frame);
  // Makes the acks so far durable, then writes the reply; false when the
  // write failed (the session is closed then).
  boost::asio::awaitable<bool> WriteReply();

  void HandleAuth(const protocol::ClientAuth& auth);
  void HandleSubscription(const protocol::Sub& sub);
  void HandleUnsubscription(const protocol::Unsub& unsub);
  boost::asio::awaitable<void> HandleGet(const protocol::Get& get);
  void HandleClientAck(const protocol::ClientAck& ack);
  void HandleClientRollback(const protocol::ClientRollback& rollback);

  // Subscribes this session; on failure sends the error (Fail) and returns false.
  bool Subscribe(const std::string& destination, const std::string& client_id, const std::string& filter);
  // Fills *identity from a request's destination and client id; on failure
  // sends 401 (missing), 400 (client id not a number) or 403 (the user may
  // not read it: MayAccess) and returns false.
  bool ParseIdentity(const std::string& destination, const std::string& client_id, std::string_view request,
                     meta::ClientIdentity* identity);
  // Whether this session's subscription is `identity`'s.
  bool Holds(const meta::ClientIdentity& identity) const;
  // Whether the logged-in user may read `identity` (canal.users.file) as the
  // table is now; otherwise sends 403 saying what it may read (Fail) and
  // returns false. One atomic load per call unless the table changed.
  bool MayAccess(const meta::ClientIdentity& identity);
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
  // Writes pending acks now (unsubscription, the end of a subscription).
  Status FlushAcks();

  void ReplyOk();
  // Sends Ack{code, message} and ends the session after it (Canal closes the
  // connection after an error, which also keeps replies and requests paired).
  void Fail(proto::WireError code, std::string message);
  // Fail() for a session whose destination stopped being active here
  // (CloseIfSubscribedTo): 409 when the client holds unacked batches, else 503.
  void FailEvicted();
  std::string Describe() const { return channel_.Describe(); }

  SessionContext* const context_;
  spdlog::logger* const log_;
  const std::string peer_;
  const std::string remote_host_;
  const std::string local_address_;  // "ip:port" the client connected to
  std::shared_ptr<NotifyGate> gate_;

  // All below: touched on the strand only.
  SessionState state_;
  ClientChannel channel_;
  SessionMeter meter_;  // counts requests for metrics
  AckFlusher flusher_;
  Reply reply_;
  std::string evicted_;  // why CloseIfSubscribedTo ended the subscription ("" = it did not)
  std::string seed_;
  std::string username_;
  // canal.users.file: the table the login was checked against and the user
  // in it (null without the file), refreshed when the table's generation moves.
  std::shared_ptr<const ClientUserTable> users_table_;
  const ClientUser* user_ = nullptr;
  uint64_t users_generation_ = 0;
  std::optional<Subscription> subscription_;
  uint64_t wait_generation_ = 0;  // a GET's wait; stale ring callbacks carry an older one
  store::Batch batch_;            // reused by every GET
};

}  // namespace canal::server
