// AckFlusher: makes a session's acks durable (the cursor flush: an fsync of
// meta.dat, or a ZooKeeper write) under the protocol's rule that acks made
// before a reply are durable before the client can see that reply.
//
// An ack marks the acks pending (Acked). Start() begins writing them on the
// blocking pool at once, so that the disk overlaps the client's next GET
// (or, when the meta says nothing is unwritten, clears them at once);
// BeforeReply() waits for a write in flight and writes what is still pending;
// FlushNow() writes on the calling thread (the end of a subscription). A
// failed background write is kept and returned by the next BeforeReply(),
// with the acks pending again. Without a blocking pool every write is inline.
// On the session's strand only.
#pragma once

#include <utility>  // Boost 1.74's coroutine headers use std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>

#include "canal/common/status.h"
#include "canal/server/destination.h"
#include "session_context.h"
#include "session_meter.h"

namespace canal::server {

class AckFlusher {
 public:
  AckFlusher(SessionContext* context, boost::asio::any_io_executor strand, SessionMeter* meter,
             std::string local_address);

  // The subscription whose acks these are (null: none), and the client it
  // is, for messages. A write that ends after the subscription changed owes
  // nothing to the new one.
  void Attach(std::shared_ptr<Destination> destination, std::string destination_name, std::string client);
  void Detach();

  void Acked() { pending_ = true; }
  // Whether a reply must wait for a flush (pending, in flight, or failed).
  bool owed() const { return pending_ || running_ || !failure_.ok(); }

  // Begins writing the pending acks on the blocking pool; `keep_alive` (the
  // session) lives until the write is back on the strand.
  void Start(const std::shared_ptr<void>& keep_alive);
  boost::asio::awaitable<Status> BeforeReply(std::shared_ptr<void> keep_alive);
  Status FlushNow();

 private:
  boost::asio::awaitable<void> Run(std::shared_ptr<void> keep_alive, std::shared_ptr<Destination> destination,
                                   std::string name);
  Status NotDurable(const Status& flush_error) const;
  // Meters a flush that began at `started`, and warns (rate-limited per destination) when it
  // took canal.file.flush.warn or longer.
  void Flushed(SessionMeter::Clock::time_point started, const std::string& destination_name);

  SessionContext* const context_;
  boost::asio::any_io_executor strand_;
  SessionMeter* const meter_;
  const std::string local_address_;
  boost::asio::steady_timer done_;  // BeforeReply waits here for Run

  std::shared_ptr<Destination> destination_;
  std::string destination_name_;
  std::string client_;       // the client identity, for messages
  bool pending_ = false;     // acked since the last write began
  bool running_ = false;     // Run is writing on the blocking pool
  Status failure_;           // Run's failure, for the next reply
};

}  // namespace canal::server
