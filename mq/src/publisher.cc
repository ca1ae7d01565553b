#include "canal/mq/publisher.h"

#include <spdlog/spdlog.h>

#include "canal/meta/meta_json.h"
#include "canal/meta/meta_manager.h"
#include "canal/store/ring_store.h"
#include "publisher_util.h"

namespace canal::mq {


Status Publisher::Create(PublisherOptions options, meta::MetaManager* meta, std::unique_ptr<Publisher>* out) {
  if (!options.producer_factory) return Status::InvalidArgument("MQ publisher: no producer factory");
  if (options.batch_size == 0) return Status::InvalidArgument("canal.mq.canalBatchSize must be at least 1");
  std::unique_ptr<Router> router;
  CANAL_RETURN_IF_ERROR(Router::Create(options.routing, &router).WithContext("destination " + options.destination));
  out->reset(new Publisher(std::move(options), meta, std::move(router)));
  return Status::OK();
}

Publisher::Publisher(PublisherOptions options, meta::MetaManager* meta, std::unique_ptr<Router> router)
    : options_(std::move(options)),
      meta_(meta),
      router_(std::move(router)),
      encoder_(std::make_unique<BatchEncoder>(router_.get(), options_.encoder)),
      log_(options_.logger ? options_.logger : std::make_shared<spdlog::logger>("canal-mq")) {}

Publisher::~Publisher() { Stop(); }

Status Publisher::Subscribe() {
  meta::ClientIdentity client;
  client.destination = options_.destination;
  client.client_id = options_.client_id;
  CANAL_RETURN_IF_ERROR(meta_->Subscribe(client).WithContext("MQ mode: subscribing client " +
                                                             std::to_string(options_.client_id) + " of destination " +
                                                             options_.destination));
  if (!options_.transactional) return Status::OK();
  // Exactly once: the cursor follows what Kafka committed, whatever the local or ZooKeeper
  // cursor says (a crash between a commit and the cursor write leaves it behind).
  stop_.store(false);
  CommittedPosition committed;
  bool found = false;
  const bool read = ReadBackPosition(&committed, &found, options_.position_wait);
  producer_.reset();  // the publisher's thread makes its own
  if (!read) {
    return Status::IOError("destination " + options_.destination +
                           ": exactly-once publishing (canal.mq.transaction) needs the position committed in Kafka "
                           "before reading the binlog, and it could not be read within " +
                           std::to_string(options_.position_wait.count() / 1000) + " s: " + stats().last_error);
  }
  std::optional<LogPosition> local;
  CANAL_RETURN_IF_ERROR(meta_->GetCursor(client, &local));
  if (!found) {
    log_->info("[{}] exactly-once publishing: Kafka has no committed position for this destination yet; starting "
               "from {}",
               options_.destination, local ? "the cursor " + local->ToString() : std::string("the instance's start"));
    return Status::OK();
  }
  LogPosition position;
  meta::LogIdentity identity;
  CANAL_RETURN_IF_ERROR(meta::DecodeCursor(committed.cursor_json, &position, &identity)
                            .WithContext("destination " + options_.destination + ": the position Kafka committed"));
  if (local && *local == position) {
    log_->info("[{}] exactly-once publishing: resuming after Kafka's committed transaction {} at {}",
               options_.destination, committed.transaction, position.ToString());
    return Status::OK();
  }
  log_->info("[{}] exactly-once publishing: the cursor follows Kafka's committed transaction {}: {} (it was {})",
             options_.destination, committed.transaction, position.ToString(),
             local ? local->ToString() : std::string("none"));
  CANAL_RETURN_IF_ERROR(meta_->UpdateCursor(client, position));
  return meta_->Flush(options_.destination);
}

void Publisher::Start(store::RingStore* store) {
  Stop();
  stop_.store(false);
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.running = true;
    stats_.failed = false;
    stats_.last_error.clear();
  }
  thread_ = std::thread([this, store] { Run(store); });
}

void Publisher::Stop() {
  {
    std::lock_guard<std::mutex> lock(sleep_mu_);
    stop_.store(true);
  }
  sleep_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  producer_.reset();
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.running = false;
}

PublisherStats Publisher::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

std::string Publisher::StatusLine() const {
  PublisherStats s = stats();
  std::string line = s.failed ? "FAILED (" + s.last_error + "), " : std::string();
  line += "published " + std::to_string(s.batches) + " batches, " + std::to_string(s.messages) + " messages, " +
          std::to_string(s.rows) + " rows; ";
  if (options_.transactional) {
    line += std::to_string(s.transactions) + " transactions committed, " + std::to_string(s.aborted_transactions) +
            " failed (aborted and sent again, or found committed)";
  } else {
    line += "republished " + std::to_string(s.republished) + " in " + std::to_string(s.failed_rounds) +
            " failed rounds";
  }
  if (s.peak_in_flight_bytes > 0) line += "; at most " + std::to_string(s.peak_in_flight_bytes) + " bytes in flight";
  return line;
}

bool Publisher::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(sleep_mu_);
  return !sleep_cv_.wait_for(lock, d, [this] { return stop_.load(); });
}

void Publisher::Fail(const std::string& message) {
  log_->error("[{}] MQ publishing stopped: {}", options_.destination, message);
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.failed = true;
  stats_.last_error = message;
}

void Publisher::StatusTick() {
  if (std::chrono::steady_clock::now() - last_status_ < options_.status_interval) return;
  last_status_ = std::chrono::steady_clock::now();
  const PublisherStats st = stats();
  if (st.batches != reported_batches_ || st.failed_rounds != reported_failures_) {
    reported_batches_ = st.batches;
    reported_failures_ = st.failed_rounds;
    log_->info("[{}] MQ status: {}", options_.destination, StatusLine());
  }
}

bool Publisher::Confirmed(store::RingStore* store, const store::Batch& batch, int64_t batch_id, size_t messages) {
  if (Status a = store->Ack(batch); !a.ok()) {
    Fail("acking the ring after the broker confirmed batch " + std::to_string(batch_id) + ": " + a.ToString());
    return false;
  }
  if (batch.safe_position) {
    // Durable before the next batch is acked: a crash from here on republishes at most the
    // batches after this one.
    meta::ClientIdentity client;
    client.destination = options_.destination;
    client.client_id = options_.client_id;
    Status c = meta_->UpdateCursor(client, *batch.safe_position);
    if (c.ok()) c = meta_->Flush(options_.destination);
    if (!c.ok()) {
      log_->warn("[{}] the broker confirmed batch {} but its cursor {} was not written ({}); a restart would "
                 "publish it again",
                 options_.destination, batch_id, batch.safe_position->ToString(), c.ToString());
    }
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.batches;
  stats_.messages += messages;
  return true;
}

bool Publisher::EnsureProducer() {
  while (!producer_ && !stop_.load()) {
    Status s = options_.producer_factory(&producer_);
    if (s.ok()) return true;
    producer_.reset();
    if (s.code() == Status::Code::kInvalidArgument) {
      Fail(s.ToString());
      return false;
    }
    log_->warn("[{}] cannot connect to the broker: {}; retrying in {} ms", options_.destination, s.ToString(),
               options_.retry_backoff.count());
    if (!Sleep(options_.retry_backoff)) return false;
  }
  return producer_ != nullptr;
}

void Publisher::Run(store::RingStore* store) {
  log_->info("[{}] MQ publishing: batches of {}, default topic {}, {} messages", options_.destination,
             options_.batch_size, options_.routing.topic, options_.encoder.flat_message ? "flat JSON" : "protobuf");
  last_status_ = std::chrono::steady_clock::now();
  if (!EnsureProducer()) {
    // Stopped, or a setting the broker can never accept (Fail said which).
  } else if (options_.transactional && producer_->transactional()) {
    RunTransactional(store);
  } else if (options_.max_in_flight_batches > 1 && producer_->pipelines()) {
    RunPipelined(store);
  } else {
    store::Batch batch;
    int64_t batch_id = 0;
    while (!stop_.load()) {
      StatusTick();
      Status s = store->Get(options_.batch_size, options_.get_timeout, &batch);
      if (!s.ok()) {
        if (s.code() != Status::Code::kAborted) Fail("reading the ring: " + s.ToString());
        break;
      }
      if (batch.empty()) continue;
      if (!PublishBatch(batch, ++batch_id)) break;
      if (!Confirmed(store, batch, batch_id, encoder_->messages().size())) break;
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.rows = encoder_->rows_encoded();
    }
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.running = false;
}

bool Publisher::PublishBatch(const store::Batch& batch, int64_t batch_id) {
  entries_.clear();
  for (const store::EntryView& e : batch.entries) entries_.push_back(e.bytes);
  if (Status s = encoder_->Encode(entries_, batch_id, WallMs()); !s.ok()) {
    Fail("entries at " + RangeOf(batch) + " cannot be encoded: " + s.ToString());
    return false;
  }
  const auto messages = encoder_->messages();
  while (!stop_.load()) {
    if (!EnsureProducer()) return false;
    Status s;
    for (const EncodedMessage& m : messages) {
      s = producer_->Send(m);
      if (!s.ok()) break;
    }
    Status confirmed = producer_->Confirm(stop_);
    if (s.ok()) s = std::move(confirmed);
    if (s.ok()) return true;
    if (stop_.load()) return false;
    const uint64_t again = producer_->confirmed();
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.republished += again;
      ++stats_.failed_rounds;
    }
    if (s.code() == Status::Code::kInvalidArgument) {
      Fail("batch " + std::to_string(batch_id) + " at " + RangeOf(batch) + ": " + s.ToString());
      return false;
    }
    log_->warn("[{}] batch {} at {} not confirmed by {}: {}; {} of its {} messages were confirmed and will be "
               "published again (duplicates); retrying in {} ms",
               options_.destination, batch_id, RangeOf(batch), producer_->Describe(), s.ToString(), again,
               messages.size(), options_.retry_backoff.count());
    if (producer_->broken()) producer_.reset();
    if (!Sleep(options_.retry_backoff)) return false;
  }
  return false;
}

}  // namespace canal::mq
