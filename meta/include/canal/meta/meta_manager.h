// MetaManager: who is subscribed to a destination, where each client's cursor
// stands, and which batches each client holds.
//
// - Subscriptions: a client (destination + client id) with its filter.
//   Subscribing again replaces the filter and keeps cursor and batches;
//   unsubscribing drops the client's cursor and outstanding batches.
// - Cursor: the position of the last entry the client acked. It moves when the
//   session acks a batch (UpdateCursor with the batch's ack position); nothing
//   here forces it forward, because binlog names restart after RESET MASTER.
// - Batches: batch id -> PositionRange, the server's only record of a batch
//   handed out and not acked (see meta_types.h), memory-only in every back end (as in
//   Canal: after a restart, delivery resumes from the cursor). Ids count from 1
//   per client and are never reused while the manager lives, even across
//   ClearAllBatches or unsubscribe, so a stale ack cannot match a new batch.
//   Only the oldest outstanding batch may be removed (acked or rolled back).
//
// Durability rule (persistent back ends): UpdateCursor only changes memory, and
// moving a cursor to where it stands already (same fields, progress and upstream)
// changes nothing, so the Flush after it writes nothing.
// The protocol gives an ack no reply, so the session must call
// Flush(destination) before it answers that client's next request; Flush
// writes every change since the last write in one go (one fsync per request
// at most, however many acks came before it) and does nothing when nothing
// changed. Without a next request, a background flusher writes within the
// configured period. Subscribe, Unsubscribe and Stop write at once. Hence a
// client that received any answer after its ack never sees that batch again,
// whatever crashes.
//
// Errors are Status values naming the client and the request. Every method is
// safe to call from several threads at once. Methods fail with Aborted before
// Start and after Stop. Operations on a client that is not subscribed fail
// with NotFound (a session racing an unsubscribe must not resurrect a cursor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/meta/meta_types.h"

namespace canal::meta {

class MetaManager {
 public:
  virtual ~MetaManager() = default;

  virtual Status Start() = 0;
  // Writes everything still unwritten, then refuses further calls. Idempotent.
  virtual Status Stop() = 0;

  // Adds the client, or replaces its filter when it is subscribed already.
  virtual Status Subscribe(const ClientIdentity& client) = 0;
  // Removes the client with its cursor and batches; unknown clients are OK.
  virtual Status Unsubscribe(const ClientIdentity& client) = 0;
  virtual Status HasSubscribe(const ClientIdentity& client, bool* subscribed) = 0;
  // Subscribed clients of a destination, in subscription order.
  virtual Status ListClients(const std::string& destination, std::vector<ClientIdentity>* clients) = 0;

  // The client's cursor, or nullopt when it has acked nothing yet.
  Status GetCursor(const ClientIdentity& client, std::optional<LogPosition>* cursor) {
    return GetCursor(client, cursor, nullptr);
  }
  // Also reports the upstream the cursor was taken from (when identity is non-null).
  virtual Status GetCursor(const ClientIdentity& client, std::optional<LogPosition>* cursor,
                           LogIdentity* identity) = 0;
  // Memory only; see the durability rule above.
  virtual Status UpdateCursor(const ClientIdentity& client, const LogPosition& cursor) = 0;
  // The upstream stamped on cursors of this destination from now on.
  virtual Status SetSourceIdentity(const std::string& destination, const LogIdentity& identity) = 0;
  // Makes every change of the destination durable; a no-op when nothing changed.
  virtual Status Flush(const std::string& destination) = 0;
  // False only when the destination is known to hold nothing unwritten, so that Flush would
  // write nothing: a caller may then skip handing Flush to another thread. True by default.
  virtual bool MayNeedFlush(const std::string& destination) {
    (void)destination;
    return true;
  }

  // Records a batch under the client's next id (1, 2, ...).
  virtual Status AddBatch(const ClientIdentity& client, const PositionRange& range, int64_t* batch_id) = 0;
  // Records a batch under a given id (restoring another server's batches);
  // later AddBatch ids follow it. The id must be >= 1 and not outstanding.
  virtual Status AddBatchWithId(const ClientIdentity& client, const PositionRange& range, int64_t batch_id) = 0;
  // NotFound when the id is not outstanding.
  virtual Status GetBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* range) = 0;
  // Removes the oldest outstanding batch. NotFound for an unknown id;
  // InvalidArgument "batchId:N is not the firstly:M" for any other id.
  virtual Status RemoveBatch(const ClientIdentity& client, int64_t batch_id, PositionRange* removed) = 0;
  // Oldest / newest outstanding batch, nullopt when none (Canal's spelling "Lastest").
  virtual Status GetFirstBatch(const ClientIdentity& client, std::optional<Batch>* batch) = 0;
  virtual Status GetLastestBatch(const ClientIdentity& client, std::optional<Batch>* batch) = 0;
  // Outstanding batches, oldest first.
  virtual Status ListBatches(const ClientIdentity& client, std::vector<Batch>* batches) = 0;
  virtual Status ClearAllBatches(const ClientIdentity& client) = 0;
};

}  // namespace canal::meta
