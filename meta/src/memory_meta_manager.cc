#include "canal/meta/memory_meta_manager.h"

#include "meta_state.h"

namespace canal::meta {

MemoryMetaManager::MemoryMetaManager() : state_(std::make_unique<MetaState>()) {}
MemoryMetaManager::~MemoryMetaManager() = default;

Status MemoryMetaManager::Start() {
  std::lock_guard lock(mu_);
  if (running_) return Status::OK();
  state_->Clear();
  running_ = true;
  return Status::OK();
}

Status MemoryMetaManager::Stop() {
  std::lock_guard lock(mu_);
  running_ = false;
  return Status::OK();
}

Status MemoryMetaManager::LoadDestinationLocked(const std::string&) { return Status::OK(); }
void MemoryMetaManager::MarkDirtyLocked(const std::string&) {}

Status MemoryMetaManager::EnterLocked(const std::string& destination, std::string_view request) {
  if (!running_) {
    std::string m(request);
    m += ": meta manager is not running";
    return Status::Aborted(m);
  }
  CANAL_RETURN_IF_ERROR(MetaState::ValidateDestination(destination, request));
  return LoadDestinationLocked(destination);
}

template <typename Fn>
Status MemoryMetaManager::WithClient(const ClientIdentity& client, std::string_view request, Fn&& fn) {
  std::lock_guard lock(mu_);
  CANAL_RETURN_IF_ERROR(EnterLocked(client.destination, request));
  return fn(*state_);
}

Status MemoryMetaManager::Subscribe(const ClientIdentity& client) {
  return WithClient(client, "Subscribe", [&](MetaState& s) {
    if (s.Subscribe(client)) MarkDirtyLocked(client.destination);
    return Status::OK();
  });
}

Status MemoryMetaManager::Unsubscribe(const ClientIdentity& client) {
  return WithClient(client, "Unsubscribe", [&](MetaState& s) {
    if (s.Unsubscribe(client)) MarkDirtyLocked(client.destination);
    return Status::OK();
  });
}

Status MemoryMetaManager::HasSubscribe(const ClientIdentity& client, bool* subscribed) {
  return WithClient(client, "HasSubscribe", [&](MetaState& s) {
    *subscribed = s.HasSubscribe(client);
    return Status::OK();
  });
}

Status MemoryMetaManager::ListClients(const std::string& destination, std::vector<ClientIdentity>* clients) {
  std::lock_guard lock(mu_);
  CANAL_RETURN_IF_ERROR(EnterLocked(destination, "ListClients"));
  *clients = state_->ListClients(destination);
  return Status::OK();
}

Status MemoryMetaManager::GetCursor(const ClientIdentity& client, std::optional<LogPosition>* cursor,
                                    LogIdentity* identity) {
  return WithClient(client, "GetCursor", [&](MetaState& s) { return s.GetCursor(client, cursor, identity); });
}

Status MemoryMetaManager::UpdateCursor(const ClientIdentity& client, const LogPosition& cursor) {
  return WithClient(client, "UpdateCursor", [&](MetaState& s) {
    bool changed = false;
    CANAL_RETURN_IF_ERROR(s.UpdateCursor(client, cursor, &changed));
    if (changed) MarkDirtyLocked(client.destination);
    return Status::OK();
  });
}

Status MemoryMetaManager::SetSourceIdentity(const std::string& destination, const LogIdentity& identity) {
  std::lock_guard lock(mu_);
  CANAL_RETURN_IF_ERROR(EnterLocked(destination, "SetSourceIdentity"));
  state_->SetSourceIdentity(destination, identity);
  return Status::OK();
}

Status MemoryMetaManager::Flush(const std::string& destination) {
  std::lock_guard lock(mu_);
  return EnterLocked(destination, "Flush");
}

Status MemoryMetaManager::AddBatch(const ClientIdentity& client, const PositionRange& range, int64_t* batch_id) {
  return WithClient(client, "AddBatch", [&](MetaState& s) { return s.AddBatch(client, range, batch_id); });
}

Status MemoryMetaManager::AddBatchWithId(const ClientIdentity& client, const PositionRange& range,
                                         int64_t batch_id) {
  return WithClient(client, "AddBatchWithId",
                    [&](MetaState& s) { return s.AddBatchWithId(client, range, batch_id); });
}

Status MemoryMetaManager::GetBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* range) {
  return WithClient(client, "GetBatch", [&](MetaState& s) { return s.GetBatch(client, batch_id, range); });
}

Status MemoryMetaManager::RemoveBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* removed) {
  return WithClient(client, "RemoveBatch", [&](MetaState& s) { return s.RemoveBatch(client, batch_id, removed); });
}

Status MemoryMetaManager::GetFirstBatch(const ClientIdentity& client, std::optional<Batch>* batch) {
  return WithClient(client, "GetFirstBatch", [&](MetaState& s) { return s.GetFirstBatch(client, batch); });
}

Status MemoryMetaManager::GetLastestBatch(const ClientIdentity& client, std::optional<Batch>* batch) {
  return WithClient(client, "GetLastestBatch", [&](MetaState& s) { return s.GetLastestBatch(client, batch); });
}

Status MemoryMetaManager::ListBatches(const ClientIdentity& client, std::vector<Batch>* batches) {
  return WithClient(client, "ListBatches", [&](MetaState& s) { return s.ListBatches(client, batches); });
}

Status MemoryMetaManager::ClearAllBatches(const ClientIdentity& client) {
  return WithClient(client, "ClearAllBatches", [&](MetaState& s) { return s.ClearAllBatches(client); });
}

}  // namespace canal::meta
