// ClientChannel: the transport of one client connection (a Session's socket
// side). It cuts frames off the socket into a small inbox, watches for an
// idle client and for one that does not log in in time, writes replies
// (whole, or gathered from the ring's slots), lingers after an error Ack and
// closes. It knows frames, never what is in them.
//
// Everything runs on the socket's strand. The reader and the idle watch are
// coroutines of their own (Start); the session's processor calls the rest.
// Lifecycle facts (logged in, ending, draining, closed, input over) are the
// session's SessionState, which the channel reads and moves: EOF moves it to
// kInputClosed (or closes an ending session), Close() to kClosed.
//
// With TLS (SessionContext::tls) the reader first does the server's
// handshake, within the login deadline; writes wait for it. Without, the
// socket is read and written directly, as before.
#pragma once

#include <utility>  // Boost 1.74's coroutine headers use std::exchange without it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/store/ring_store.h"
#include "session_context.h"
#include "canal/server/session_state.h"

namespace canal::server {

// The reply a request produced, written by ClientChannel::Write.
struct Reply {
  std::string out;  // the frame (gathered: its framing and the small entries)
  // A MESSAGES reply written straight from the ring's slots: the frame's
  // pieces in order (into `out` and the batch's entries), and the ring they
  // point into. The ownership rule: while they are set, the batch is neither
  // acked nor rolled back and the ring is not let go; Write clears them once
  // the write has completed (or failed), and only then does the processor
  // touch the ring again.
  std::vector<std::string_view> pieces;
  std::vector<boost::asio::const_buffer> gather;
  std::shared_ptr<store::RingStore> gather_store;
  bool ready = false;  // a reply is waiting to be written

  // Forgets a gathered reply before `out` is reused for another one.
  void DropGather() {
    pieces.clear();
    gather.clear();
    gather_store.reset();
  }
  size_t Bytes() const { return gather.empty() ? out.size() : boost::asio::buffer_size(gather); }
  // The frame in `out` alone is the reply.
  void Set() {
    DropGather();
    ready = true;
  }
  // `out` and `pieces` (filled by EncodeMessagesFrameGathered) are the
  // reply, `ring` holding the slots the pieces point into.
  void SetGathered(std::shared_ptr<store::RingStore> ring);
};

class ClientChannel {
 public:
  using Clock = std::chrono::steady_clock;

  // `socket` bound to a strand of its own; `state` is the session's, which
  // outlives the channel's coroutines (they hold the session).
  ClientChannel(SessionContext* context, SessionState* state, boost::asio::ip::tcp::socket socket, std::string peer,
                std::string local_address);
  ~ClientChannel();

  boost::asio::any_io_executor executor() { return socket_.get_executor(); }
  // Starts the reader and the idle watch; `keep_alive` (the session) lives
  // as long as either runs.
  void Start(const std::shared_ptr<void>& keep_alive);

  // Waits until a request is in the inbox (true, *frame set), or the input
  // is over, or Interrupt() was called and none is waiting (false).
  boost::asio::awaitable<bool> NextRequest(std::string* frame);
  // From now on NextRequest returns false instead of waiting on an empty
  // inbox (the session has something to say first: eviction).
  void Interrupt();

  // Writes the reply and clears it; false when the write failed (the
  // channel is closed then, the reason logged).
  boost::asio::awaitable<bool> Write(Reply* reply);
  bool writing() const { return writing_; }

  // Waits until `deadline`, Wake(), the end of the input or Close().
  boost::asio::awaitable<void> WaitUntil(Clock::time_point deadline);
  void Wake();

  // After an error Ack was written: shut our side, discard input (kDraining)
  // and give the client a moment to close, so that it reads the Ack.
  boost::asio::awaitable<void> Linger();

  // Login accepted: the frame limit after login applies and the idle watch
  // takes the client's own timeout (0: keep the default).
  void LoggedIn(std::chrono::milliseconds idle_timeout);

  // Closes the socket and cancels every wait (kClosed); the coroutines then end.
  void Close(std::string_view reason);
  // The first reason the session ended for (empty while it has not).
  const std::string& close_reason() const { return close_reason_; }
  void SetCloseReasonIfEmpty(std::string reason);

  // "client 1.2.3.4:5 (client id 1001, destination example)".
  std::string Describe() const { return "client " + peer_ + label_; }
  // The part after the address, once subscribed ("" before).
  void SetLabel(std::string label) { label_ = std::move(label); }
  // A warning about this client, with client text escaped; rate-limited by
  // `key` (the kind of warning) so that no client can flood the log.
  void WarnLimited(std::string_view key, const std::string& text);

 private:
  boost::asio::awaitable<void> ReadLoop(std::shared_ptr<void> keep_alive);
  boost::asio::awaitable<void> IdleWatch(std::shared_ptr<void> keep_alive);
  bool InboxFull() const;
  void EndOfInput(const std::string& reason);
  // The TLS handshake; false (closed, the reason logged) when it failed.
  boost::asio::awaitable<bool> TlsHandshake();
  // Until the TLS handshake has ended; false when the channel closed instead.
  boost::asio::awaitable<bool> TlsReady();
  boost::asio::awaitable<void> WriteTls(Reply* reply, boost::system::error_code* ec);

  SessionContext* const context_;
  SessionState* const state_;
  spdlog::logger* const log_;
  boost::asio::ip::tcp::socket socket_;
  // Over socket_ when TLS is on (declared after it: it refers to it).
  using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>;
  std::unique_ptr<TlsStream> tls_;
  bool tls_ready_ = false;      // the handshake has completed
  std::string tls_stage_;       // a gathered reply is copied through this in TLS records
  const std::string peer_;
  const std::string local_address_;
  std::string label_;

  boost::asio::steady_timer request_ready_;  // the processor waits here for the inbox
  boost::asio::steady_timer inbox_space_;    // the reader waits here when the inbox is full
  boost::asio::steady_timer wake_;           // WaitUntil and the linger
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer tls_done_;       // Write waits here for the TLS handshake

  std::deque<std::string> inbox_;
  size_t inbox_bytes_ = 0;
  bool interrupted_ = false;  // Interrupt() was called
  bool writing_ = false;      // a Write's socket write is in flight
  std::string close_reason_;
  Clock::time_point last_receive_;
  const Clock::time_point connected_at_;  // the login deadline counts from here
  std::chrono::milliseconds idle_timeout_;
};

}  // namespace canal::server
