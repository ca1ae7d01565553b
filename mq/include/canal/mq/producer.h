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
// Transactions (Kafka with canal.mq.transaction, publisher.h): every message
// sent between BeginTransaction and CommitTransaction, and the position
// message the commit adds, become visible to read_committed consumers
// together or not at all.
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

// Status::subcode() of a transactional producer's error when another producer
// with the same transactional.id (another canal-server running the
// destination) has taken over: this one must stop publishing, not retry.
inline constexpr int32_t kErrorProducerFenced = -201;

// The position a transaction committed, as read back from the broker.
struct CommittedPosition {
  std::string transaction;  // the tag of the transaction that wrote it
  std::string cursor_json;  // meta's cursor JSON (meta_json.h EncodeCursor)
  uint64_t sequence = 0;    // 1, 2, ...: the destination's committed transactions so far
};

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

  // ---- transactions (only where transactional() says true) ----
  virtual bool transactional() const { return false; }
  // Opens a transaction and names it: a tag unique to this producer and attempt
  // ("<session>-<n>"; sent again after an abort it is another), which every message sent
  // in it carries (header canal.txn).
  virtual Status BeginTransaction(std::string* /*tag*/) { return Status::NotSupported("transactions"); }
  // Every message of the transaction must have been confirmed (ConfirmRound). Sends the
  // position message (`cursor_json` for `destination`, tagged as the transaction) and commits.
  // On an error the outcome may be unknown (a commit the broker took but did not answer):
  // the caller aborts (AbortTransaction, or a new producer when broken()) and reads the
  // committed position back to learn it. kErrorProducerFenced: another producer took over.
  virtual Status CommitTransaction(const std::string& /*destination*/, const std::string& /*cursor_json*/,
                                   const std::atomic<bool>& /*stop*/) {
    return Status::NotSupported("transactions");
  }
  // Aborts the open transaction, if any (after any failure that left the producer usable).
  virtual Status AbortTransaction(const std::atomic<bool>& /*stop*/) { return Status::NotSupported("transactions"); }
  // The newest position committed for `destination` (read_committed); *found false when
  // none was ever committed.
  virtual Status ReadCommittedPosition(const std::string& /*destination*/, CommittedPosition* /*out*/,
                                       bool* /*found*/) {
    return Status::NotSupported("transactions");
  }

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
