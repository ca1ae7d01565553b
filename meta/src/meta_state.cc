#include "meta_state.h"

#include <algorithm>

namespace canal::meta {

namespace {

std::string Describe(const ClientIdentity& client, std::string_view request) {
  std::string s(request);
  s += " for ";
  s += client.ToString();
  return s;
}

}  // namespace

Status MetaState::ValidateDestination(std::string_view destination, std::string_view request) {
  auto fail = [&](std::string_view why) {
    std::string m(request);
    m += ": destination \"";
    m += destination;
    m += "\" ";
    m += why;
    return Status::InvalidArgument(m);
  };
  if (destination.empty()) return fail("is empty");
  if (destination == "." || destination == "..") return fail("is not a directory name");
  for (char c : destination) {
    if (c == '/' || c == '\0') return fail("contains '/' or NUL");
  }
  return Status::OK();
}

MetaState::ClientState* MetaState::Find(const ClientIdentity& client) {
  return const_cast<ClientState*>(std::as_const(*this).Find(client));
}

const MetaState::ClientState* MetaState::Find(const ClientIdentity& client) const {
  auto d = destinations_.find(client.destination);
  if (d == destinations_.end()) return nullptr;
  for (const ClientState& c : d->second.clients) {
    if (c.meta.client.SameClient(client)) return &c;
  }
  return nullptr;
}

Status MetaState::Require(const ClientIdentity& client, std::string_view request, const ClientState** state) const {
  *state = Find(client);
  if (*state == nullptr) return Status::NotFound(Describe(client, request) + ": client is not subscribed");
  return Status::OK();
}

Status MetaState::Require(const ClientIdentity& client, std::string_view request, ClientState** state) {
  *state = Find(client);
  if (*state == nullptr) return Status::NotFound(Describe(client, request) + ": client is not subscribed");
  return Status::OK();
}

bool MetaState::Subscribe(const ClientIdentity& client) {
  if (ClientState* existing = Find(client)) {
    if (existing->meta.client.filter == client.filter) return false;
    existing->meta.client.filter = client.filter;
    return true;
  }
  ClientState state;
  state.meta.client = client;
  destinations_[client.destination].clients.push_back(std::move(state));
  return true;
}

bool MetaState::Unsubscribe(const ClientIdentity& client) {
  auto d = destinations_.find(client.destination);
  if (d == destinations_.end()) return false;
  auto& clients = d->second.clients;
  auto it = std::find_if(clients.begin(), clients.end(),
                         [&](const ClientState& c) { return c.meta.client.SameClient(client); });
  if (it == clients.end()) return false;
  clients.erase(it);  // drops cursor and batches with it
  return true;
}

std::vector<ClientIdentity> MetaState::ListClients(const std::string& destination) const {
  std::vector<ClientIdentity> out;
  auto d = destinations_.find(destination);
  if (d == destinations_.end()) return out;
  for (const ClientState& c : d->second.clients) out.push_back(c.meta.client);
  return out;
}

Status MetaState::GetCursor(const ClientIdentity& client, std::optional<LogPosition>* cursor,
                            LogIdentity* identity) const {
  const ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "GetCursor", &state));
  *cursor = state->meta.cursor;
  if (identity != nullptr) *identity = state->meta.cursor_identity;
  return Status::OK();
}

Status MetaState::UpdateCursor(const ClientIdentity& client, const LogPosition& cursor, bool* changed) {
  if (changed != nullptr) *changed = false;
  ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "UpdateCursor", &state));
  if (cursor.empty()) {
    return Status::InvalidArgument(Describe(client, "UpdateCursor") + ": cursor has no journal name");
  }
  // A cursor loaded from disk keeps its upstream until the instance says which
  // upstream it now reads from.
  const auto& source = destinations_[client.destination].source;
  // The cursor held already (every field, the snapshot progress and GTID state by their text),
  // from the same upstream: nothing to write. A snapshot chunk goes out as several entries that
  // all resume at the chunk's start, so most acks during a snapshot are such.
  if (state->meta.cursor && *state->meta.cursor == cursor && (!source || state->meta.cursor_identity == *source)) {
    return Status::OK();
  }
  state->meta.cursor = cursor;
  if (source) state->meta.cursor_identity = *source;
  if (changed != nullptr) *changed = true;
  return Status::OK();
}

void MetaState::SetSourceIdentity(const std::string& destination, const LogIdentity& identity) {
  destinations_[destination].source = identity;
}

Status MetaState::AddBatch(const ClientIdentity& client, const PositionRange& range, int64_t* batch_id) {
  ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "AddBatch", &state));
  int64_t& next = next_batch_id_.try_emplace(ClientKey(client.destination, client.client_id), 1).first->second;
  *batch_id = next++;
  state->batches.emplace(*batch_id, range);
  return Status::OK();
}

Status MetaState::AddBatchWithId(const ClientIdentity& client, const PositionRange& range, int64_t batch_id) {
  ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "AddBatchWithId", &state));
  if (batch_id < 1) {
    return Status::InvalidArgument(Describe(client, "AddBatchWithId") + ": batchId:" + std::to_string(batch_id) +
                                   " is not positive");
  }
  if (state->batches.count(batch_id) != 0) {
    return Status::InvalidArgument(Describe(client, "AddBatchWithId") + ": batchId:" + std::to_string(batch_id) +
                                   " is outstanding already");
  }
  int64_t& next = next_batch_id_.try_emplace(ClientKey(client.destination, client.client_id), 1).first->second;
  // batch_id >= 1 here, so +1 cannot overflow below INT64_MAX; saturate at the top.
  if (batch_id != INT64_MAX) next = std::max(next, batch_id + 1);
  state->batches.emplace(batch_id, range);
  return Status::OK();
}

Status MetaState::GetBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* range) const {
  const ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "GetBatch", &state));
  auto it = state->batches.find(batch_id);
  if (it == state->batches.end()) {
    return Status::NotFound(Describe(client, "GetBatch") + ": batchId:" + std::to_string(batch_id) +
                            " is not outstanding");
  }
  *range = it->second;
  return Status::OK();
}

Status MetaState::RemoveBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* removed) {
  ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "RemoveBatch", &state));
  auto it = state->batches.find(batch_id);
  if (it == state->batches.end()) {
    return Status::NotFound(Describe(client, "RemoveBatch") + ": batchId:" + std::to_string(batch_id) +
                            " is not outstanding");
  }
  // Acks and rollbacks must follow the order batches were handed out, or an
  // ack could move the cursor past entries of an earlier, unacked batch.
  if (it != state->batches.begin()) {
    return Status::InvalidArgument(Describe(client, "RemoveBatch") + ": batchId:" + std::to_string(batch_id) +
                                   " is not the firstly:" + std::to_string(state->batches.begin()->first));
  }
  if (removed != nullptr) *removed = it->second;
  state->batches.erase(it);
  return Status::OK();
}

Status MetaState::GetFirstBatch(const ClientIdentity& client, std::optional<Batch>* batch) const {
  const ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "GetFirstBatch", &state));
  batch->reset();
  if (!state->batches.empty()) *batch = Batch{state->batches.begin()->first, state->batches.begin()->second};
  return Status::OK();
}

Status MetaState::GetLastestBatch(const ClientIdentity& client, std::optional<Batch>* batch) const {
  const ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "GetLastestBatch", &state));
  batch->reset();
  if (!state->batches.empty()) *batch = Batch{state->batches.rbegin()->first, state->batches.rbegin()->second};
  return Status::OK();
}

Status MetaState::ListBatches(const ClientIdentity& client, std::vector<Batch>* batches) const {
  const ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "ListBatches", &state));
  batches->clear();
  for (const auto& [id, range] : state->batches) batches->push_back(Batch{id, range});
  return Status::OK();
}

Status MetaState::ClearAllBatches(const ClientIdentity& client) {
  ClientState* state;
  CANAL_RETURN_IF_ERROR(Require(client, "ClearAllBatches", &state));
  state->batches.clear();
  return Status::OK();
}

DestinationMeta MetaState::Snapshot(const std::string& destination) const {
  DestinationMeta meta;
  meta.destination = destination;
  auto d = destinations_.find(destination);
  if (d == destinations_.end()) return meta;
  for (const ClientState& c : d->second.clients) meta.clients.push_back(c.meta);
  return meta;
}

void MetaState::Restore(const DestinationMeta& meta) {
  DestinationState& d = destinations_[meta.destination];
  d.clients.clear();
  for (const ClientMeta& c : meta.clients) {
    ClientState state;
    state.meta = c;
    d.clients.push_back(std::move(state));
  }
}

void MetaState::Clear() {
  destinations_.clear();
  next_batch_id_.clear();
}

}  // namespace canal::meta
