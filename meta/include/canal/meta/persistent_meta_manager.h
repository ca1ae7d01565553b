// PersistentMetaManager: what every persistent back end (FileMetaManager,
// ZkMetaManager) does around its store, so that each of them only reads and
// writes:
//
//   - loading a destination on first use (LoadFromStoreLocked), once;
//   - counting changes per destination and writing the dirty ones, with
//     concurrent flushes of one destination sharing one write when they can
//     (PrepareWriteLocked, then its pending write outside the state mutex);
//   - Subscribe and Unsubscribe writing before they return;
//   - a background thread writing dirty destinations every flush period;
//   - Stop writing everything, returning the first error.
//
// The state mutex is never held across store I/O, except the one-time load.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "canal/meta/memory_meta_manager.h"

namespace canal::meta {

class PersistentMetaManager : public MemoryMetaManager {
 public:
  // Calls CheckBeforeStart, then starts the background flusher.
  Status Start() override;
  // Stops the flusher, then writes every dirty destination; returns the first error.
  Status Stop() override;

  Status Subscribe(const ClientIdentity& client) override;
  Status Unsubscribe(const ClientIdentity& client) override;
  Status Flush(const std::string& destination) override;
  // False when the destination is loaded and every change of it is written.
  bool MayNeedFlush(const std::string& destination) override;

  // The last background write's outcome (it retries at the next period).
  Status background_status() const;

 protected:
  // flush_period zero: no background flusher.
  explicit PersistentMetaManager(std::chrono::milliseconds flush_period);
  // Derived classes Stop() in their own destructor: Stop writes through them.
  ~PersistentMetaManager() override;

  // The store's part of a write: run outside mu_ (with the destination's
  // write lock held); an error leaves the destination dirty.
  using PendingWrite = std::function<Status()>;

  // Without mu_, before a start: checks the options and prepares the store.
  virtual Status CheckBeforeStart() = 0;
  // With mu_ held: reads the destination from the store into state_.
  virtual Status LoadFromStoreLocked(const std::string& destination) = 0;
  // With mu_ held: captures what to write for the destination's current state.
  virtual PendingWrite PrepareWriteLocked(const std::string& destination) = 0;
  // With mu_ held, when the destination is forgotten (Unload) or all are (Start).
  virtual void ForgetLocked(const std::string& destination) { (void)destination; }
  virtual void ForgetAllLocked() {}

  // Forgets what memory holds for the destination: the next call loads it
  // again. Unwritten changes are dropped. `request` names the caller in errors.
  Status Unload(const std::string& destination, std::string_view request);

  Status LoadDestinationLocked(const std::string& destination) final;
  void MarkDirtyLocked(const std::string& destination) final;

 private:
  struct Tracked {
    bool loaded = false;           // guarded by mu_
    uint64_t version = 0;          // bumped on each change; guarded by mu_
    uint64_t durable_version = 0;  // version known to be in the store; guarded by mu_
    std::mutex write_mu;           // one writer per destination; taken before mu_
  };

  // Writes the destination when dirty. Does not check running_, so Stop can use it.
  Status FlushDestination(const std::string& destination);
  // Writes every dirty destination; returns the first error. Takes mu_.
  Status FlushDirty();
  void FlusherLoop();

  const std::chrono::milliseconds flush_period_;
  // Entries are never erased while the manager lives, so pointers stay valid
  // outside mu_. Guarded by mu_.
  std::map<std::string, std::unique_ptr<Tracked>> tracked_;

  std::mutex lifecycle_mu_;  // serialises Start and Stop (taken before mu_)
  std::thread flusher_;
  std::condition_variable flusher_cv_;  // waits on mu_
  bool flusher_stop_ = false;           // guarded by mu_
  Status background_status_;            // guarded by mu_
};

}  // namespace canal::meta
