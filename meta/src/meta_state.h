// MetaState: the subscription, cursor and batch rules, with no locking and no
// I/O. Back ends wrap it in their own mutex and persistence. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/common/status.h"
#include "canal/meta/meta_json.h"
#include "canal/meta/meta_types.h"

namespace canal::meta {

class MetaState {
 public:
  // Destination names become directory names: refuse anything that could
  // leave the data directory or is not a plain name.
  static Status ValidateDestination(std::string_view destination, std::string_view request);

  // Returns whether anything persisted changed.
  bool Subscribe(const ClientIdentity& client);
  bool Unsubscribe(const ClientIdentity& client);
  bool HasSubscribe(const ClientIdentity& client) const { return Find(client) != nullptr; }
  std::vector<ClientIdentity> ListClients(const std::string& destination) const;

  Status GetCursor(const ClientIdentity& client, std::optional<LogPosition>* cursor, LogIdentity* identity) const;
  // *changed (when non-null): whether the cursor or its upstream differ from what was held.
  Status UpdateCursor(const ClientIdentity& client, const LogPosition& cursor, bool* changed = nullptr);
  void SetSourceIdentity(const std::string& destination, const LogIdentity& identity);

  Status AddBatch(const ClientIdentity& client, const PositionRange& range, int64_t* batch_id);
  Status AddBatchWithId(const ClientIdentity& client, const PositionRange& range, int64_t batch_id);
  Status GetBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* range) const;
  Status RemoveBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* removed);
  Status GetFirstBatch(const ClientIdentity& client, std::optional<Batch>* batch) const;
  Status GetLastestBatch(const ClientIdentity& client, std::optional<Batch>* batch) const;
  Status ListBatches(const ClientIdentity& client, std::vector<Batch>* batches) const;
  Status ClearAllBatches(const ClientIdentity& client);

  // Persisted part of a destination, and its replacement on load.
  DestinationMeta Snapshot(const std::string& destination) const;
  void Restore(const DestinationMeta& meta);

  void Clear();

 private:
  struct ClientState {
    ClientMeta meta;
    std::map<int64_t, PositionRange> batches;  // ordered: begin() is the oldest
  };
  struct DestinationState {
    std::vector<ClientState> clients;  // subscription order; a handful per destination
    std::optional<LogIdentity> source;
  };
  using ClientKey = std::pair<std::string, int16_t>;

  ClientState* Find(const ClientIdentity& client);
  const ClientState* Find(const ClientIdentity& client) const;
  // NotFound naming the client and request when it is not subscribed.
  Status Require(const ClientIdentity& client, std::string_view request, const ClientState** state) const;
  Status Require(const ClientIdentity& client, std::string_view request, ClientState** state);

  std::map<std::string, DestinationState> destinations_;
  // Outlives unsubscribe so ids are never reused while the process lives.
  std::map<ClientKey, int64_t> next_batch_id_;
};

}  // namespace canal::meta
