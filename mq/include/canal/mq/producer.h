// Producer: one connection to a broker that publishes a batch's messages and
// says whether the broker confirmed every one of them. The publisher moves a
// destination's cursor only after Confirm() returned OK.
//
// Errors: InvalidArgument for a message the broker can never accept (too
// large, a topic or partition that cannot exist): the publisher stops the
// destination rather than drop it. Any other error is transient: the
// publisher sends the whole batch again (after Reset() when the producer
// says it must be rebuilt), counting the messages the broker had confirmed
// before the failure as duplicates.
//
// Threads: one publisher thread calls every method.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "canal/common/status.h"
#include "canal/mq/batch_encoder.h"

namespace canal::mq {

class Producer {
 public:
  virtual ~Producer() = default;

  // Queues one message (its bytes are copied). May block while the client's
  // queue is full.
  virtual Status Send(const EncodedMessage& message) = 0;

  // Waits until the broker confirmed or refused every message sent since the
  // last Confirm, or `stop` becomes true (Aborted). OK only when all were
  // confirmed; otherwise the first error, naming the message's origin.
  virtual Status Confirm(const std::atomic<bool>& stop) = 0;

  // Messages of the last Send/Confirm round the broker confirmed (also when
  // Confirm failed: they will be published again).
  virtual uint64_t confirmed() const = 0;

  // True after an error that leaves this producer unusable (librdkafka's
  // fatal idempotence errors, a closed AMQP channel): build a new one.
  virtual bool broken() const = 0;

  // "kafka 127.0.0.1:9092", for logs.
  virtual std::string Describe() const = 0;

  // Pipelining (publisher.h): the messages sent since the last EndRound are a round, and the
  // publisher sends the next rounds while earlier ones wait for the broker. A producer that
  // cannot tell rounds apart says false here and is driven a round at a time (Confirm).
  virtual bool pipelines() const { return false; }
  // Closes the round being sent (empty or not) and names it: 1, 2, ... in order.
  virtual uint64_t EndRound() { return 0; }
  // Waits until the broker confirmed or refused every message of the rounds up to `round`
  // (or `stop`: Aborted). OK: those rounds are done and forgotten. Otherwise the first
  // error of the oldest of them that failed, naming the message's origin; nothing is
  // forgotten (Drain next).
  virtual Status ConfirmRound(uint64_t /*round*/, const std::atomic<bool>& /*stop*/) { return Status::OK(); }
  // After a failed round: waits for every message in flight (or `stop`), forgets every round,
  // and says how many of their messages the broker had confirmed (they will be sent again).
  virtual uint64_t Drain(const std::atomic<bool>& /*stop*/) { return confirmed(); }

 protected:
  // Confirm() of a producer that pipelines: everything sent is one round; after a failure
  // *confirmed is how many of its messages the broker had taken (they will be sent again).
  Status ConfirmAsOneRound(const std::atomic<bool>& stop, uint64_t* confirmed) {
    Status s = ConfirmRound(EndRound(), stop);
    *confirmed = s.ok() ? 0 : Drain(stop);
    return s;
  }
};

}  // namespace canal::mq
