#include "canal/meta/persistent_meta_manager.h"

#include <utility>
#include <vector>

#include "meta_state.h"

namespace canal::meta {

PersistentMetaManager::PersistentMetaManager(std::chrono::milliseconds flush_period) : flush_period_(flush_period) {}

PersistentMetaManager::~PersistentMetaManager() {
  // Derived destructors have stopped; this only covers a flusher left running.
  {
    std::lock_guard lock(mu_);
    flusher_stop_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
}

Status PersistentMetaManager::Start() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    if (running_) return Status::OK();
  }
  CANAL_RETURN_IF_ERROR(CheckBeforeStart());
  {
    std::lock_guard lock(mu_);
    state_->Clear();
    tracked_.clear();
    ForgetAllLocked();
    flusher_stop_ = false;
    background_status_ = Status::OK();
    running_ = true;
  }
  if (flush_period_.count() > 0) flusher_ = std::thread([this] { FlusherLoop(); });
  return Status::OK();
}

Status PersistentMetaManager::Stop() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    running_ = false;  // refuse new calls: nothing changes while we write the last time
    flusher_stop_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  return FlushDirty();
}

Status PersistentMetaManager::Subscribe(const ClientIdentity& client) {
  CANAL_RETURN_IF_ERROR(MemoryMetaManager::Subscribe(client));
  return FlushDestination(client.destination);
}

Status PersistentMetaManager::Unsubscribe(const ClientIdentity& client) {
  CANAL_RETURN_IF_ERROR(MemoryMetaManager::Unsubscribe(client));
  return FlushDestination(client.destination);
}

Status PersistentMetaManager::Flush(const std::string& destination) {
  {
    std::lock_guard lock(mu_);
    CANAL_RETURN_IF_ERROR(EnterLocked(destination, "Flush"));
  }
  return FlushDestination(destination);
}

bool PersistentMetaManager::MayNeedFlush(const std::string& destination) {
  std::lock_guard lock(mu_);
  const auto it = tracked_.find(destination);
  // (Not loaded yet: Flush would load it, which is its business.)
  return it == tracked_.end() || !it->second->loaded || it->second->durable_version < it->second->version;
}

Status PersistentMetaManager::background_status() const {
  std::lock_guard lock(mu_);
  return background_status_;
}

Status PersistentMetaManager::Unload(const std::string& destination, std::string_view request) {
  Tracked* tracked;
  {
    std::lock_guard lock(mu_);
    if (!running_) return Status::Aborted(std::string(request) + ": meta manager is not running");
    CANAL_RETURN_IF_ERROR(MetaState::ValidateDestination(destination, request));
    auto it = tracked_.find(destination);
    if (it == tracked_.end()) return Status::OK();  // never loaded
    tracked = it->second.get();
  }
  // write_mu: no flush of this destination is half-way while we forget.
  std::lock_guard write_lock(tracked->write_mu);
  std::lock_guard lock(mu_);
  tracked->loaded = false;
  tracked->durable_version = tracked->version;
  ForgetLocked(destination);
  return Status::OK();
}

Status PersistentMetaManager::LoadDestinationLocked(const std::string& destination) {
  std::unique_ptr<Tracked>& tracked = tracked_[destination];
  if (!tracked) tracked = std::make_unique<Tracked>();
  if (tracked->loaded) return Status::OK();
  // Read under mu_: once per destination (per Unload), and nothing may see the
  // destination half loaded.
  CANAL_RETURN_IF_ERROR(LoadFromStoreLocked(destination));
  tracked->loaded = true;
  return Status::OK();
}

void PersistentMetaManager::MarkDirtyLocked(const std::string& destination) { ++tracked_[destination]->version; }

Status PersistentMetaManager::FlushDestination(const std::string& destination) {
  Tracked* tracked;
  uint64_t wanted;
  {
    std::lock_guard lock(mu_);
    auto it = tracked_.find(destination);
    if (it == tracked_.end() || !it->second->loaded) return Status::OK();
    tracked = it->second.get();
    wanted = tracked->version;
    if (tracked->durable_version >= wanted) return Status::OK();
  }
  std::lock_guard write_lock(tracked->write_mu);
  PendingWrite write;
  uint64_t snapshot_version;
  {
    std::lock_guard lock(mu_);
    // A writer that held write_mu before us may have covered our changes:
    // this is where concurrent flushes coalesce into one write.
    if (!tracked->loaded || tracked->durable_version >= wanted) return Status::OK();
    write = PrepareWriteLocked(destination);
    snapshot_version = tracked->version;
  }
  if (write) CANAL_RETURN_IF_ERROR(write());
  std::lock_guard lock(mu_);
  if (snapshot_version > tracked->durable_version) tracked->durable_version = snapshot_version;
  return Status::OK();
}

Status PersistentMetaManager::FlushDirty() {
  std::vector<std::string> dirty;
  {
    std::lock_guard lock(mu_);
    for (const auto& [destination, tracked] : tracked_) {
      if (tracked->loaded && tracked->version > tracked->durable_version) dirty.push_back(destination);
    }
  }
  Status first;
  for (const std::string& destination : dirty) {
    Status s = FlushDestination(destination);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

void PersistentMetaManager::FlusherLoop() {
  std::unique_lock lock(mu_);
  while (!flusher_stop_) {
    if (flusher_cv_.wait_for(lock, flush_period_, [this] { return flusher_stop_; })) break;
    lock.unlock();
    Status first = FlushDirty();
    lock.lock();
    background_status_ = std::move(first);
  }
}

}  // namespace canal::meta
