// MemoryMetaManager: the MetaManager rules kept in memory only; everything is
// lost when the process ends. For tests and for Canal's memory-instance mode.
// Also the base of PersistentMetaManager (the file and ZooKeeper back ends),
// which adds loading and writing through the two hooks below. Thread-safe: one mutex guards all state.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "canal/meta/meta_manager.h"

namespace canal::meta {

class MetaState;

class MemoryMetaManager : public MetaManager {
 public:
  MemoryMetaManager();
  ~MemoryMetaManager() override;
  MemoryMetaManager(const MemoryMetaManager&) = delete;
  MemoryMetaManager& operator=(const MemoryMetaManager&) = delete;

  Status Start() override;
  Status Stop() override;

  Status Subscribe(const ClientIdentity& client) override;
  Status Unsubscribe(const ClientIdentity& client) override;
  Status HasSubscribe(const ClientIdentity& client, bool* subscribed) override;
  Status ListClients(const std::string& destination, std::vector<ClientIdentity>* clients) override;

  using MetaManager::GetCursor;
  Status GetCursor(const ClientIdentity& client, std::optional<LogPosition>* cursor,
                   LogIdentity* identity) override;
  Status UpdateCursor(const ClientIdentity& client, const LogPosition& cursor) override;
  Status SetSourceIdentity(const std::string& destination, const LogIdentity& identity) override;
  // Nothing to write; checks the destination name only.
  Status Flush(const std::string& destination) override;

  Status AddBatch(const ClientIdentity& client, const PositionRange& range, int64_t* batch_id) override;
  Status AddBatchWithId(const ClientIdentity& client, const PositionRange& range, int64_t batch_id) override;
  Status GetBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* range) override;
  Status RemoveBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* removed) override;
  Status GetFirstBatch(const ClientIdentity& client, std::optional<Batch>* batch) override;
  Status GetLastestBatch(const ClientIdentity& client, std::optional<Batch>* batch) override;
  Status ListBatches(const ClientIdentity& client, std::vector<Batch>* batches) override;
  Status ClearAllBatches(const ClientIdentity& client) override;

 protected:
  // Called with mu_ held before the first use of a destination's state (and
  // again until it succeeds); a persistent back end loads it here.
  virtual Status LoadDestinationLocked(const std::string& destination);
  // Called with mu_ held after a change to what a persistent back end stores.
  virtual void MarkDirtyLocked(const std::string& destination);

  // Running check, destination check and load, all with mu_ held.
  Status EnterLocked(const std::string& destination, std::string_view request);

  mutable std::mutex mu_;
  bool running_ = false;          // guarded by mu_
  std::unique_ptr<MetaState> state_;  // guarded by mu_

 private:
  // Runs `fn(state)` for a client's request under the lock.
  template <typename Fn>
  Status WithClient(const ClientIdentity& client, std::string_view request, Fn&& fn);
};

}  // namespace canal::meta
