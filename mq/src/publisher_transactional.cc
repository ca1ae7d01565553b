// Publisher's exactly-once loop (publisher.h, canal.mq.transaction): ring entries go out in
// Kafka transactions, each ending at a safe resume point with the destination's position.
#include <spdlog/spdlog.h>

#include "canal/meta/meta_json.h"
#include "canal/meta/meta_manager.h"
#include "canal/mq/publisher.h"
#include "canal/store/ring_store.h"
#include "publisher_util.h"

namespace canal::mq {

namespace {

// "Until stopped", without overflowing a time point.
constexpr std::chrono::milliseconds kForever = std::chrono::hours(24 * 365);

}  // namespace

bool Publisher::ReadBackPosition(CommittedPosition* out, bool* found, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (stop_.load()) return false;
    Status s;
    if (!producer_) {
      s = options_.producer_factory(&producer_);
      if (!s.ok()) producer_.reset();
    }
    if (s.ok()) s = producer_->ReadCommittedPosition(options_.destination, out, found);
    if (s.ok()) return true;
    if (s.code() == Status::Code::kInvalidArgument) {
      Fail(s.ToString());
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.last_error = s.ToString();
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    log_->warn("[{}] reading the position committed in Kafka: {}; retrying in {} ms", options_.destination,
               s.ToString(), options_.retry_backoff.count());
    if (producer_ && producer_->broken()) producer_.reset();
    if (!Sleep(options_.retry_backoff)) return false;
  }
}

bool Publisher::Committed(store::RingStore* store, uint64_t end_sequence, const LogPosition& position, size_t batches,
                          size_t messages) {
  if (Status a = store->Ack(end_sequence); !a.ok()) {
    Fail("acking the ring after Kafka committed the transaction up to " + position.ToString() + ": " + a.ToString());
    return false;
  }
  meta::ClientIdentity client;
  client.destination = options_.destination;
  client.client_id = options_.client_id;
  Status c = meta_->UpdateCursor(client, position);
  if (c.ok()) c = meta_->Flush(options_.destination);
  if (!c.ok()) {
    // Harmless for exactness: a restart takes the position from Kafka, not from here.
    log_->warn("[{}] Kafka committed up to {} but the local cursor was not written ({})", options_.destination,
               position.ToString(), c.ToString());
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.batches += batches;
  stats_.messages += messages;
  ++stats_.transactions;
  return true;
}

void Publisher::RunTransactional(store::RingStore* store) {
  // A piece of ring entries sent in the open transaction, with the encoder that keeps its
  // messages (and the origins the producer names in errors) until the commit.
  struct Chunk {
    std::unique_ptr<BatchEncoder> encoder;
    int64_t id = 0;
  };
  std::vector<Chunk> txn;
  std::vector<std::unique_ptr<BatchEncoder>> spare;
  // Entries taken from the ring after the last safe resume point: they wait for one, so a
  // transaction never ends inside what a restart would deliver again.
  std::vector<store::EntryView> carry;
  uint64_t txn_end = 0;  // one past the transaction's last entry
  LogPosition txn_position;
  uint64_t txn_bytes = 0;
  uint64_t last_round = 0;
  std::string tag;  // of the open transaction; empty when none
  int64_t chunk_id = 0;
  store::Batch batch;

  CommittedPosition committed;
  bool found = false;
  if (!ReadBackPosition(&committed, &found, kForever)) return;
  log_->info("[{}] MQ publishing exactly once through {}: transactions of up to {} batches and {} bytes{}",
             options_.destination, producer_->Describe(), options_.transaction_max_batches,
             options_.max_in_flight_bytes, found ? ", after committed transaction " + committed.transaction : "");

  auto messages_of = [&] {
    size_t n = 0;
    for (const Chunk& c : txn) n += c.encoder->messages().size();
    return n;
  };
  auto send = [&](const Chunk& c) -> Status {
    Status s;
    for (const EncodedMessage& m : c.encoder->messages()) {
      s = producer_->Send(m);
      if (!s.ok()) break;
    }
    last_round = producer_->EndRound();
    return s;
  };
  auto send_all = [&]() -> Status {
    tag.clear();
    CANAL_RETURN_IF_ERROR(producer_->BeginTransaction(&tag));
    for (const Chunk& c : txn) CANAL_RETURN_IF_ERROR(send(c));
    return Status::OK();
  };
  auto finish = [&]() -> bool {
    if (!Committed(store, txn_end, txn_position, txn.size(), messages_of())) return false;
    for (Chunk& c : txn) spare.push_back(std::move(c.encoder));
    txn.clear();
    txn_bytes = 0;
    tag.clear();
    return true;
  };
  // A failed transaction: abort it (or rebuild the producer), read the committed position back
  // to learn whether it committed after all, and finish it or send it again.
  auto recover = [&](Status error) -> bool {
    for (;;) {
      if (stop_.load()) return false;
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.aborted_transactions;
      }
      const std::string what = "transaction " + (tag.empty() ? std::string("(not begun)") : tag) + " of " +
                               std::to_string(txn.size()) + " batch(es) up to " + txn_position.ToString();
      if (error.subcode() == kErrorProducerFenced) {
        Fail(what + ": " + error.ToString());
        return false;
      }
      producer_->Drain(stop_);
      if (producer_->broken() || !producer_->AbortTransaction(stop_).ok()) producer_.reset();
      if (error.code() == Status::Code::kInvalidArgument) {
        Fail(what + ": " + error.ToString());
        return false;
      }
      log_->warn("[{}] {} failed: {}; reading the committed position back to learn its outcome, in {} ms",
                 options_.destination, what, error.ToString(), options_.retry_backoff.count());
      if (!Sleep(options_.retry_backoff) || !EnsureProducer()) return false;
      CommittedPosition back;
      bool any = false;
      if (!ReadBackPosition(&back, &any, kForever)) return false;
      if (any && !tag.empty() && back.transaction == tag) {
        log_->info("[{}] {} had committed; going on after it", options_.destination, what);
        return finish();
      }
      Status s = send_all();
      if (s.ok()) {
        log_->info("[{}] {} aborted; sent again as transaction {}", options_.destination, what, tag);
        return true;
      }
      error = std::move(s);
    }
  };

  while (!stop_.load()) {
    StatusTick();
    const bool room = txn.size() < options_.transaction_max_batches && txn_bytes < options_.max_in_flight_bytes;
    if (room) {
      // With a transaction open, only what the ring has now: its commit waits otherwise.
      Status s = store->Get(options_.batch_size,
                            txn.empty() ? std::chrono::nanoseconds(options_.get_timeout) : store::RingStore::kNoWait,
                            &batch);
      if (!s.ok()) {
        if (s.code() != Status::Code::kAborted) Fail("reading the ring: " + s.ToString());
        return;
      }
      if (!batch.empty()) {
        size_t safe = carry.size() + batch.entries.size();  // none
        for (size_t i = 0; i < batch.entries.size(); ++i) {
          if (batch.entries[i].meta->safe_resume_point) safe = carry.size() + i;
        }
        carry.insert(carry.end(), batch.entries.begin(), batch.entries.end());
        if (safe >= carry.size()) continue;  // the middle of a binlog transaction: more to come
        Chunk c;
        c.id = ++chunk_id;
        if (spare.empty()) {
          c.encoder = std::make_unique<BatchEncoder>(router_.get(), options_.encoder);
        } else {
          c.encoder = std::move(spare.back());
          spare.pop_back();
        }
        entries_.clear();
        uint64_t bytes = 0;
        for (size_t i = 0; i <= safe; ++i) {
          entries_.push_back(carry[i].bytes);
          bytes += carry[i].bytes.size();
        }
        const uint64_t rows_before = c.encoder->rows_encoded();
        if (Status e = c.encoder->Encode(entries_, c.id, WallMs()); !e.ok()) {
          Fail("entries at " + carry.front().meta->position.ToString() + " .. " +
               carry[safe].meta->position.ToString() + " cannot be encoded: " + e.ToString());
          return;
        }
        txn_bytes += bytes;
        {
          std::lock_guard<std::mutex> lock(stats_mu_);
          stats_.rows += c.encoder->rows_encoded() - rows_before;
          stats_.peak_in_flight_bytes = std::max(stats_.peak_in_flight_bytes, txn_bytes);
        }
        txn_end = carry[safe].sequence + 1;
        txn_position = carry[safe].meta->position;
        carry.erase(carry.begin(), carry.begin() + static_cast<std::ptrdiff_t>(safe + 1));
        txn.push_back(std::move(c));
        Status sent = tag.empty() ? producer_->BeginTransaction(&tag) : Status::OK();
        if (sent.ok()) sent = send(txn.back());
        if (!sent.ok() && !recover(std::move(sent))) return;
        continue;
      }
      if (txn.empty()) continue;
    }
    // Commit: the rows are confirmed first, so the position never lands without them.
    Status c = producer_->ConfirmRound(last_round, stop_);
    if (c.ok()) c = producer_->CommitTransaction(options_.destination, meta::EncodeCursor(txn_position, {}), stop_);
    if (c.ok()) {
      if (!finish()) return;
      continue;
    }
    if (stop_.load() || !recover(std::move(c))) return;
  }
}

}  // namespace canal::mq
