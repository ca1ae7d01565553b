// Test doubles for the session server: a Destination made of a small
// RingStore and a MemoryMetaManager that counts its flushes, and a
// DestinationRegistry holding such destinations. The test is the ring's
// producer: it puts entries with Put/PutEntry.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "canal/entry.pb.h"
#include "canal/meta/memory_meta_manager.h"
#include "canal/server/destination.h"
#include "canal/store/ring_store.h"

namespace canal::server::testing {

inline constexpr char kTestJournal[] = "mysql-bin.000001";

// A MemoryMetaManager that counts Flush calls and remembers, at each one, the
// cursors it would have written.
class CountingMetaManager : public meta::MemoryMetaManager {
 public:
  Status Flush(const std::string& destination) override {
    std::vector<meta::ClientIdentity> clients;
    std::map<int16_t, std::optional<LogPosition>> cursors;
    if (ListClients(destination, &clients).ok()) {
      for (const meta::ClientIdentity& c : clients) {
        std::optional<LogPosition> cursor;
        if (GetCursor(c, &cursor).ok()) cursors[c.client_id] = cursor;
      }
    }
    {
      std::lock_guard lock(flush_mu_);
      flushed_cursors_ = std::move(cursors);
    }
    flushes_.fetch_add(1);
    if (const auto delay = std::chrono::milliseconds(flush_delay_ms_.load()); delay.count() > 0) {
      in_flush_.store(true);  // a slow disk
      std::this_thread::sleep_for(delay);
      in_flush_.store(false);
    }
    if (fail_flush_.load()) return Status::IOError("flush of " + destination + " failed (test)");
    return MemoryMetaManager::Flush(destination);
  }

  // As a persistent back end that has written everything (set_all_written) or not.
  bool MayNeedFlush(const std::string& destination) override {
    (void)destination;
    return !all_written_.load();
  }
  void set_all_written(bool all_written) { all_written_.store(all_written); }

  int flushes() const { return flushes_.load(); }
  void set_fail_flush(bool fail) { fail_flush_.store(fail); }
  // Every Flush takes this long (a slow disk); in_flush() while it does.
  void set_flush_delay(std::chrono::milliseconds delay) { flush_delay_ms_.store(delay.count()); }
  bool in_flush() const { return in_flush_.load(); }

  // The client's cursor as of the last Flush (nullopt: none or not subscribed).
  std::optional<LogPosition> flushed_cursor(int16_t client_id) const {
    std::lock_guard lock(flush_mu_);
    auto it = flushed_cursors_.find(client_id);
    return it == flushed_cursors_.end() ? std::nullopt : it->second;
  }

 private:
  std::atomic<int> flushes_{0};
  std::atomic<bool> fail_flush_{false};
  std::atomic<int64_t> flush_delay_ms_{0};
  std::atomic<bool> in_flush_{false};
  std::atomic<bool> all_written_{false};
  mutable std::mutex flush_mu_;
  std::map<int16_t, std::optional<LogPosition>> flushed_cursors_;  // guarded by flush_mu_
};

class MemoryDestination : public Destination {
 public:
  static store::RingStoreOptions SmallRing(uint32_t slots = 64) {
    store::RingStoreOptions o;
    o.buffer_size = slots;
    o.batch_mode = store::BatchMode::kItemSize;
    return o;
  }

  explicit MemoryDestination(std::string name, store::RingStoreOptions options = SmallRing())
      : name_(std::move(name)), options_(options) {
    std::unique_ptr<store::RingStore> ring;
    Status s = store::RingStore::Create(options, &ring);
    if (!s.ok()) throw std::runtime_error(s.ToString());
    store_ = std::move(ring);
    s = meta_.Start();
    if (!s.ok()) throw std::runtime_error(s.ToString());
  }

  const std::string& name() const override { return name_; }
  bool running() const override { return running_.load(); }
  std::shared_ptr<store::RingStore> store() override {
    std::lock_guard lock(mu_);
    return store_;
  }
  meta::MetaManager* meta() override { return &meta_; }
  CountingMetaManager* counting_meta() { return &meta_; }

  // Accepts comma-separated ECMAScript regexes (enough to tell good from bad).
  Status SetClientFilter(std::string_view regex) override {
    std::string all(regex);
    size_t start = 0;
    while (start <= all.size()) {
      const size_t comma = std::min(all.find(',', start), all.size());
      const std::string pattern = all.substr(start, comma - start);
      try {
        std::regex compiled(pattern);
      } catch (const std::regex_error& e) {
        return Status::InvalidArgument("filter pattern \"" + pattern + "\" does not compile: " + e.what());
      }
      start = comma + 1;
    }
    std::lock_guard lock(mu_);
    filter_ = all;
    ++filter_calls_;
    return Status::OK();
  }

  std::string filter() const {
    std::lock_guard lock(mu_);
    return filter_;
  }
  int filter_calls() const {
    std::lock_guard lock(mu_);
    return filter_calls_;
  }
  void set_running(bool running) { running_.store(running); }

  // What Instance::Start does for a new run: a fresh ring, and the batches
  // of every client cleared (they pointed into the old ring).
  Status NewRun() {
    std::unique_ptr<store::RingStore> ring;
    CANAL_RETURN_IF_ERROR(store::RingStore::Create(options_, &ring));
    std::shared_ptr<store::RingStore> old;
    {
      std::lock_guard lock(mu_);
      old = std::exchange(store_, std::move(ring));
    }
    old->Stop();
    std::vector<meta::ClientIdentity> clients;
    CANAL_RETURN_IF_ERROR(meta_.ListClients(name_, &clients));
    for (const meta::ClientIdentity& c : clients) CANAL_RETURN_IF_ERROR(meta_.ClearAllBatches(c));
    return Status::OK();
  }

  // The serialised Entry a test puts at `offset` (its header names the offset).
  static std::string EntryBytes(uint64_t offset) {
    entry::Entry e;
    e.mutable_header()->set_logfilename(kTestJournal);
    e.mutable_header()->set_logfileoffset(static_cast<int64_t>(offset));
    e.set_entrytype(entry::ROWDATA);
    e.set_storevalue("row " + std::to_string(offset));
    return e.SerializeAsString();
  }

  static LogPosition Position(uint64_t offset) {
    LogPosition p;
    p.journal_name = kTestJournal;
    p.position = offset;
    p.server_id = 1;
    p.timestamp_ms = 1591600659000;
    return p;
  }

  // Puts the entry at `offset`; `safe` marks a resume point (a transaction end).
  Status PutEntry(uint64_t offset, bool safe = true) {
    store::EntryMeta m;
    m.kind = safe ? store::EntryKind::kTransactionEnd : store::EntryKind::kOther;
    m.safe_resume_point = safe;
    m.position = Position(offset);
    return store()->Put(EntryBytes(offset), m);
  }

  // Puts offsets [first, first + n).
  Status PutRange(uint64_t first, int n, bool safe = true) {
    for (int i = 0; i < n; ++i) CANAL_RETURN_IF_ERROR(PutEntry(first + static_cast<uint64_t>(i), safe));
    return Status::OK();
  }

 private:
  const std::string name_;
  const store::RingStoreOptions options_;
  std::shared_ptr<store::RingStore> store_;  // guarded by mu_
  CountingMetaManager meta_;
  std::atomic<bool> running_{true};
  mutable std::mutex mu_;
  std::string filter_;  // guarded by mu_
  int filter_calls_ = 0;  // guarded by mu_
};

class MemoryRegistry : public DestinationRegistry {
 public:
  void Add(std::shared_ptr<Destination> destination) {
    std::lock_guard lock(mu_);
    destinations_[destination->name()] = std::move(destination);
  }
  std::shared_ptr<Destination> Find(std::string_view name) override {
    std::lock_guard lock(mu_);
    auto it = destinations_.find(std::string(name));
    return it == destinations_.end() ? nullptr : it->second;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Destination>> destinations_;  // guarded by mu_
};

}  // namespace canal::server::testing
