// Publisher's pipelined loop (publisher.h): batches go out while earlier ones wait for the
// broker; they are confirmed, acked and their cursors written in ring order.
#include <deque>

#include <spdlog/spdlog.h>

#include "canal/mq/publisher.h"
#include "canal/store/ring_store.h"
#include "publisher_util.h"

namespace canal::mq {


void Publisher::RunPipelined(store::RingStore* store) {
  // One encoder per batch in flight: a batch's messages (and the origins the producer names in
  // its errors) stay put until the batch is confirmed, and are there to send again.
  struct InFlight {
    store::Batch batch;
    int64_t id = 0;
    uint64_t round = 0;
    std::unique_ptr<BatchEncoder> encoder;
  };
  std::deque<InFlight> flight;
  std::vector<std::unique_ptr<BatchEncoder>> spare;
  uint64_t flight_bytes = 0;
  int64_t batch_id = 0;
  log_->info("[{}] MQ publishing pipelined: up to {} batches and {} bytes in flight", options_.destination,
             options_.max_in_flight_batches, options_.max_in_flight_bytes);

  // Sends one batch's messages as a round; the error of the first that could not be queued.
  auto send = [&](InFlight& f) -> Status {
    Status s;
    for (const EncodedMessage& m : f.encoder->messages()) {
      s = producer_->Send(m);
      if (!s.ok()) break;
    }
    f.round = producer_->EndRound();
    return s;
  };
  // A failed round: everything in flight goes again, in order, after the backoff; a failure
  // while sending it again is another failed round.
  auto recover = [&](Status error, const InFlight& failed) -> bool {
    int64_t id = failed.id;
    std::string range = RangeOf(failed.batch);
    for (;;) {
      const uint64_t again = producer_->Drain(stop_);
      if (stop_.load()) return false;
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        stats_.republished += again;
        ++stats_.failed_rounds;
      }
      if (error.code() == Status::Code::kInvalidArgument) {
        Fail("batch " + std::to_string(id) + " at " + range + ": " + error.ToString());
        return false;
      }
      log_->warn("[{}] batch {} at {} not confirmed by {}: {}; the {} batch(es) in flight will be published again "
                 "({} of their messages were confirmed: duplicates); retrying in {} ms",
                 options_.destination, id, range, producer_->Describe(), error.ToString(), flight.size(), again,
                 options_.retry_backoff.count());
      if (producer_->broken()) producer_.reset();
      if (!Sleep(options_.retry_backoff) || !EnsureProducer()) return false;
      Status s;
      for (InFlight& f : flight) {
        s = send(f);
        if (!s.ok()) break;
      }
      if (s.ok()) return true;
      error = std::move(s);
      id = flight.front().id;
      range = RangeOf(flight.front().batch);
    }
  };

  while (!stop_.load()) {
    StatusTick();
    const bool room = flight.size() < options_.max_in_flight_batches && flight_bytes < options_.max_in_flight_bytes;
    if (room) {
      InFlight f;
      // With batches in flight, only what the ring has now: their confirmations wait otherwise.
      Status s = store->Get(options_.batch_size, flight.empty() ? std::chrono::nanoseconds(options_.get_timeout) : store::RingStore::kNoWait,
                            &f.batch);
      if (!s.ok()) {
        if (s.code() != Status::Code::kAborted) Fail("reading the ring: " + s.ToString());
        return;
      }
      if (!f.batch.empty()) {
        f.id = ++batch_id;
        if (spare.empty()) {
          f.encoder = std::make_unique<BatchEncoder>(router_.get(), options_.encoder);
        } else {
          f.encoder = std::move(spare.back());
          spare.pop_back();
        }
        entries_.clear();
        for (const store::EntryView& e : f.batch.entries) entries_.push_back(e.bytes);
        const uint64_t rows_before = f.encoder->rows_encoded();
        if (Status e = f.encoder->Encode(entries_, f.id, WallMs()); !e.ok()) {
          Fail("entries at " + RangeOf(f.batch) + " cannot be encoded: " + e.ToString());
          return;
        }
        {
          std::lock_guard<std::mutex> lock(stats_mu_);
          stats_.rows += f.encoder->rows_encoded() - rows_before;
        }
        flight_bytes += f.batch.bytes;
        {
          std::lock_guard<std::mutex> lock(stats_mu_);
          stats_.peak_in_flight_bytes = std::max(stats_.peak_in_flight_bytes, flight_bytes);
        }
        flight.push_back(std::move(f));
        if (Status sent = send(flight.back()); !sent.ok()) {
          if (!recover(sent, flight.back())) return;
        }
        continue;
      }
      if (flight.empty()) continue;
    }
    // The oldest batch: confirmed, then acked and its cursor written.
    InFlight& oldest = flight.front();
    Status c = producer_->ConfirmRound(oldest.round, stop_);
    if (!c.ok()) {
      if (stop_.load()) return;
      if (!recover(c, oldest)) return;
      continue;
    }
    if (!Confirmed(store, oldest.batch, oldest.id, oldest.encoder->messages().size())) return;
    flight_bytes -= oldest.batch.bytes;
    spare.push_back(std::move(oldest.encoder));
    flight.pop_front();
  }
}

}  // namespace canal::mq
