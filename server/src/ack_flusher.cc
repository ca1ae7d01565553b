#include "ack_flusher.h"

#include <utility>  // before the Asio coroutine headers (Boost 1.74)

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>

#include <spdlog/spdlog.h>

#include "canal/meta/meta_manager.h"
#include "canal/server/client_text.h"

namespace canal::server {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;

namespace {

// The cursor flush as a coroutine of its own, for the blocking pool
// (parameters by value: they live in its frame; GCC 12 mishandles a
// capturing coroutine lambda here).
awaitable<Status> FlushMeta(std::shared_ptr<Destination> destination, std::string name) {
  co_return destination->meta()->Flush(name);
}

}  // namespace

AckFlusher::AckFlusher(SessionContext* context, asio::any_io_executor strand, SessionMeter* meter,
                       std::string local_address)
    : context_(context),
      strand_(std::move(strand)),
      meter_(meter),
      local_address_(std::move(local_address)),
      done_(strand_) {}

void AckFlusher::Attach(std::shared_ptr<Destination> destination, std::string destination_name, std::string client) {
  destination_ = std::move(destination);
  destination_name_ = std::move(destination_name);
  client_ = std::move(client);
}

void AckFlusher::Detach() {
  destination_.reset();
  pending_ = false;
  failure_ = Status::OK();
}

Status AckFlusher::NotDurable(const Status& s) const {
  return Status::IOError("canal server " + local_address_ + " could not make the acks of " + client_ +
                         " durable: " + s.ToString());
}

void AckFlusher::Flushed(SessionMeter::Clock::time_point started, const std::string& destination_name) {
  meter_->Flushed(started);
  const int limit_ms = context_->options.slow_flush_warn_ms;
  if (limit_ms <= 0 || !context_->logger) return;
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(SessionMeter::Clock::now() - started).count();
  if (took < limit_ms) return;
  std::string note;
  if (!context_->log_limiter.Allow("slow cursor flush " + destination_name, &note)) return;
  context_->logger->warn(
      "canal server {}: making the acks of {} durable took {} ms (canal.file.flush.warn: {} ms); "
      "its next reply waited for it. The cursor write is an fsync of the destination's meta.dat (or a ZooKeeper "
      "write): look for other heavy writers on that disk, or put the data folder (--data) on a faster one{}",
      local_address_, ClientText(client_), took, limit_ms, note);
}

Status AckFlusher::FlushNow() {
  if (!pending_ || !destination_) return Status::OK();
  const SessionMeter::Clock::time_point flush_start = SessionMeter::Clock::now();
  Status s = destination_->meta()->Flush(destination_name_);
  Flushed(flush_start, destination_name_);
  if (!s.ok()) return NotDurable(s);
  pending_ = false;
  return Status::OK();
}

void AckFlusher::Start(const std::shared_ptr<void>& keep_alive) {
  if (running_ || !pending_ || !destination_ || !context_->blocking) return;
  if (!destination_->meta()->MayNeedFlush(destination_name_)) {
    // The acks left the cursor where it was (the entries of one snapshot chunk): nothing to
    // write, so no trip to the blocking pool for the reply to wait on.
    pending_ = false;
    return;
  }
  running_ = true;
  pending_ = false;  // the write covers every ack so far
  // (What to write is taken now: the coroutine starts after this request.)
  asio::co_spawn(strand_, Run(keep_alive, destination_, destination_name_), [](std::exception_ptr) {});
}

awaitable<Status> AckFlusher::BeforeReply(std::shared_ptr<void> keep_alive) {
  if (!context_->blocking) co_return FlushNow();
  for (;;) {
    boost::system::error_code ec;
    while (running_) {
      // (Closing the session does not end this wait early: the write finishes.)
      done_.expires_at(asio::steady_timer::clock_type::time_point::max());
      co_await done_.async_wait(asio::redirect_error(use_awaitable, ec));
    }
    if (!failure_.ok()) {
      Status s = std::move(failure_);
      failure_ = Status::OK();
      co_return s;
    }
    // Acks after the write began (or none written yet): write them now.
    if (!pending_ || !destination_) co_return Status::OK();
    Start(keep_alive);
  }
}

awaitable<void> AckFlusher::Run(std::shared_ptr<void> /*keep_alive*/, std::shared_ptr<Destination> destination,
                                std::string name) {
  // Keeps the I/O threads running until this coroutine is back on its strand.
  auto work = asio::make_work_guard(strand_);
  const SessionMeter::Clock::time_point flush_start = SessionMeter::Clock::now();
  Status s;
  try {
    // Run on the blocking pool; the result comes back to this strand.
    s = co_await asio::co_spawn(*context_->blocking, FlushMeta(destination, name), use_awaitable);
  } catch (const std::exception& e) {
    s = Status::IOError(std::string("cursor write failed: ") + e.what());
  }
  work.reset();
  Flushed(flush_start, name);
  running_ = false;
  // A subscription that ended meanwhile flushed (Detach after FlushNow) or
  // was taken over: nothing is owed to it.
  if (!s.ok() && destination_ == destination) {
    pending_ = true;  // not written: written again (or failed) at the next reply
    failure_ = NotDurable(s);
  }
  done_.cancel();
}

}  // namespace canal::server
