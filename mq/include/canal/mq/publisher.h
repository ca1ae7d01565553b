// Publisher: the internal consumer of one destination's ring in MQ mode.
//
//   loop: Get a batch (canal.mq.canalBatchSize, waiting canal.mq.canalGetTimeout)
//         -> encode (batch_encoder.h) -> Send every message -> Confirm
//         -> Ack the ring -> move the cursor to the batch's safe position and
//            make it durable (MetaManager::Flush)
//
// Pipelined (a producer that pipelines(): Kafka, RabbitMQ): up to max_in_flight_batches batches (and
// max_in_flight_bytes of entries) are sent before the oldest is confirmed, so publishing is
// not one round trip per batch. Batches are confirmed, acked and their cursors written in
// ring order, each only once every message of it and of the batches before it is confirmed.
// A failed round sends every batch in flight again, in order (Kafka's idempotent producer
// keeps each partition's order); the messages the broker had confirmed count as republished.
//
// The cursor moves only behind the broker's confirmation of every message of
// the batch, so after a crash of the server (kill -9) or an outage of the
// broker publishing resumes from the cursor and nothing is missing. The only
// duplicates are messages of a batch that was not confirmed as a whole (or
// whose cursor was not yet durable at a crash): a failed round is published
// again in full, and the messages the broker had confirmed in it are counted
// in PublisherStats::republished and logged at WARN.
//
// A message the broker can never accept (Producer's InvalidArgument: too
// large, no such partition) stops the publisher with an ERROR naming the
// table, the binlog position and the fix; the ring then fills and the parser
// waits, so nothing is dropped. Malformed entries stop it the same way.
// Transient errors are retried after `retry_backoff`, for ever.
//
// Exactly once (`transactional`, Kafka's transactions; publisher_transactional.cc): ring
// entries go out in Kafka transactions that each end at a safe resume point and carry, as
// their last message, the destination's position (kafka_position.h's topic). A transaction
// commits the rows and the position together or neither; the cursor in meta follows only
// after the commit, and on start (Subscribe) it is set from the position read back from
// Kafka, never the other way round. After a failure whose outcome is unknown (a commit
// without an answer, a producer rebuilt), the position is read back: if it names the failed
// transaction that transaction committed, otherwise it is sent again in a new one, so a
// read_committed consumer sees every change once. A producer fenced by a newer one of the
// same transactional.id stops publishing (kErrorProducerFenced).
//
// The cursor belongs to client `client_id` (Canal's MQ mode uses 1001) of
// the destination, subscribed by Start() before the instance reads its
// cursor, so the instance resumes where the broker confirmed.
//
// Every `status_interval` in which something happened, the destination's log
// gets "MQ status: published N batches, M messages, R rows; republished D in
// F failed rounds" (the republished count is the duplicates metric).
//
// Threads: its own thread; Start/Stop from one controlling thread; stats()
// from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/mq/batch_encoder.h"
#include "canal/mq/producer.h"
#include "canal/mq/routing.h"

namespace spdlog {
class logger;
}
namespace canal::store {
class RingStore;
struct Batch;
}
namespace canal::meta {
class MetaManager;
}

namespace canal::mq {

// Canal's MQ mode acks as this client.
inline constexpr int16_t kMqClientId = 1001;

struct PublisherOptions {
  std::string destination;
  int16_t client_id = kMqClientId;
  size_t batch_size = 50;                         // canal.mq.canalBatchSize
  std::chrono::milliseconds get_timeout{100};     // canal.mq.canalGetTimeout
  std::chrono::milliseconds retry_backoff{1000};  // after a failed round
  std::chrono::milliseconds status_interval{10'000};  // a status line when something changed
  size_t max_in_flight_batches = 8;                  // canal.mq.maxInFlightBatches (1: no pipelining)
  uint64_t max_in_flight_bytes = 64ull << 20;        // canal.mq.maxInFlightBytes (of ring entries)
  // Exactly once (canal.mq.transaction; a producer that is transactional()): see above.
  bool transactional = false;
  size_t transaction_max_batches = 32;  // canal.mq.transaction.maxBatches (and max_in_flight_bytes)
  // With transactions: how long Subscribe may wait for the committed position (Kafka down at start).
  std::chrono::milliseconds position_wait{60'000};
  RoutingConfig routing;
  EncoderOptions encoder;
  // Builds a (new) broker connection; called again after a broken one.
  std::function<Status(std::unique_ptr<Producer>*)> producer_factory;
  std::shared_ptr<spdlog::logger> logger;  // null logs nowhere
};

struct PublisherStats {
  uint64_t batches = 0;       // confirmed and acked
  uint64_t messages = 0;      // confirmed, in confirmed batches
  uint64_t rows = 0;          // rows (flat) or entries (protobuf) encoded
  uint64_t republished = 0;   // messages confirmed in a failed round, hence sent again
  uint64_t failed_rounds = 0;
  uint64_t transactions = 0;          // committed (exactly-once mode)
  uint64_t aborted_transactions = 0;  // aborted and sent again, or found committed
  uint64_t peak_in_flight_bytes = 0;  // ring entry bytes sent and not yet confirmed, at most on reading back
  bool running = false;
  bool failed = false;        // stopped on an error that needs the operator
  std::string last_error;
};

class Publisher {
 public:
  // Checks the routing settings (InvalidArgument naming the key).
  static Status Create(PublisherOptions options, meta::MetaManager* meta, std::unique_ptr<Publisher>* out);
  ~Publisher();  // Stop()s

  // Subscribes the client in meta (before the instance starts, see above); with transactions
  // also sets its cursor from the position committed in Kafka (waiting up to position_wait
  // for the cluster: IOError naming it after that).
  Status Subscribe();
  // Starts publishing from `store`, which must outlive Stop().
  void Start(store::RingStore* store);
  // Stops the thread; unconfirmed messages are abandoned (the cursor did not
  // move for them). Idempotent.
  void Stop();

  PublisherStats stats() const;
  // "published N batches, M messages, R rows, D republished", for status lines.
  std::string StatusLine() const;

 private:
  Publisher(PublisherOptions options, meta::MetaManager* meta, std::unique_ptr<Router> router);
  void Run(store::RingStore* store);
  // One batch until confirmed; false when the publisher must stop.
  bool PublishBatch(const store::Batch& batch, int64_t batch_id);
  // The pipelined loop (publisher_pipeline.cc); returns when the publisher stops.
  void RunPipelined(store::RingStore* store);
  // The exactly-once loop (publisher_transactional.cc).
  void RunTransactional(store::RingStore* store);
  // The position committed in Kafka (retrying until position_wait or stop); *found false when
  // none. False when stopped or failed.
  bool ReadBackPosition(CommittedPosition* out, bool* found, std::chrono::milliseconds wait);
  // A transaction committed: ack the ring up to `end_sequence`, move and flush the cursor.
  bool Committed(store::RingStore* store, uint64_t end_sequence, const LogPosition& position, size_t batches,
                 size_t messages);
  // A batch confirmed: ack the ring, move and flush the cursor, count it. False on an ack error.
  bool Confirmed(store::RingStore* store, const store::Batch& batch, int64_t batch_id, size_t messages);
  bool EnsureProducer();
  void StatusTick();
  void Fail(const std::string& message);
  bool Sleep(std::chrono::milliseconds d);

  const PublisherOptions options_;
  meta::MetaManager* const meta_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<BatchEncoder> encoder_;
  std::chrono::steady_clock::time_point last_status_{};
  uint64_t reported_batches_ = 0, reported_failures_ = 0;
  std::unique_ptr<Producer> producer_;
  std::vector<std::string_view> entries_;  // the batch's bytes, reused
  std::shared_ptr<spdlog::logger> log_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;

  mutable std::mutex stats_mu_;
  PublisherStats stats_;
};

}  // namespace canal::mq
