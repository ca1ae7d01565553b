// ZkMetaManager: subscriptions and cursors in ZooKeeper, in Canal's layout
// (Canal's ZooKeeperMetaManager), so that whichever server becomes active for
// a destination resumes every client at its acked cursor:
//
//   /otter/canal/destinations/<dest>/<clientId>          persistent, empty
//   /otter/canal/destinations/<dest>/<clientId>/filter   the filter text (absent when "")
//   /otter/canal/destinations/<dest>/<clientId>/cursor   EncodeCursor JSON (meta_json.h)
//
// Batches stay in memory (Canal keeps them under .../<clientId>/mark/): a
// server that becomes active starts with no outstanding batches and delivers
// again from the cursor, which is what a client sees after any failover, so
// storing them would buy a ZooKeeper write per batch for nothing.
//
// Loading: a destination is read from ZooKeeper on its first use (and again
// after Reload). Names under the destination that are not client ids
// (cluster, running) are skipped; clients come in client-id order. A cursor
// that does not decode is Corruption naming its node, returned by every call
// on the destination until fixed: a cursor is never reset silently.
//
// Writing follows the durability rule of meta_manager.h. UpdateCursor changes
// memory; Flush(destination) writes what changed since the last write: one
// set per client whose cursor moved (nothing when none did). Subscribe and
// Unsubscribe write before they return. With flush_period > 0 a background
// thread also writes dirty destinations every period: on its own (without the
// session server's flush before each reply) an ack is durable only after the
// next period, so a failover in between redelivers what was acked. Stop
// writes everything.
//
// Errors (ZooKeeper down, session expired, fence refused) are Status values
// naming the destination, the client and the node; what failed stays dirty
// and is written by the next Flush.
//
// Cursor writes are conditional on the node's version as this manager last
// read or wrote it (ZkClient::SetIfVersion): when another server wrote the
// cursor since (it runs the destination now), the write is refused with
// Aborted, whatever write_fence said a moment before. Reload reads the
// versions again. ZooKeeper I/O happens outside the state
// mutex, except the one-time load of a destination.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "canal/coord/zk_client.h"
#include "canal/meta/persistent_meta_manager.h"

namespace canal::meta {

struct ZkMetaOptions {
  coord::ZkClient* zk = nullptr;  // required; not owned, must outlive the manager
  // Zero: writes happen on Flush, Subscribe, Unsubscribe and Stop only.
  std::chrono::milliseconds flush_period{0};
  // Asked before each write to a destination's nodes; an error refuses the
  // write and is returned. For HA: "do I still own this destination's
  // running node?", so that a deposed server cannot move a cursor back.
  std::function<Status(const std::string& destination)> write_fence;
};

class ZkMetaManager final : public PersistentMetaManager {
 public:
  explicit ZkMetaManager(ZkMetaOptions options);
  ~ZkMetaManager() override;  // Stop()s; its error is lost, call Stop() to see it

  // Start starts the background flusher (when flush_period > 0).
  // Destinations are read on first use, so a standby server can start early
  // and still read the cursors current when it becomes active. Stop,
  // Subscribe, Unsubscribe, Flush: see persistent_meta_manager.h.

  // Forgets what memory holds for the destination (clients, cursors,
  // batches); the next call reads ZooKeeper again. For a server that becomes
  // active again after another one ran the destination. Unwritten changes are
  // dropped.
  Status Reload(const std::string& destination);

  // Node paths, in Canal's layout.
  static std::string DestinationPath(const std::string& destination);
  static std::string ClientPath(const ClientIdentity& client);
  static std::string FilterPath(const ClientIdentity& client);
  static std::string CursorPath(const ClientIdentity& client);

  // ZooKeeper writes so far (node sets, creates, deletes; for tests and metrics).
  uint64_t zk_writes() const { return zk_writes_.load(std::memory_order_relaxed); }

 protected:
  Status CheckBeforeStart() override;
  Status LoadFromStoreLocked(const std::string& destination) override;
  PendingWrite PrepareWriteLocked(const std::string& destination) override;
  void ForgetLocked(const std::string& destination) override;
  void ForgetAllLocked() override;

 private:
  // What ZooKeeper holds for a client, as far as this manager knows.
  struct WrittenClient {
    std::string filter;
    std::optional<std::string> cursor_json;
    // The cursor node's version as last read or written here (-1: absent). Each write is
    // conditional on it: a server that lost the destination cannot overwrite the cursor the
    // new owner wrote, however long it was paused between its fence check and its write.
    int32_t cursor_version = -1;
    std::string cursor_sent;  // the body last sent, answered or not (a timed-out write may have landed)
  };
  using WrittenClients = std::map<int16_t, WrittenClient>;
  struct Write;

  // Makes the writes, recording each in *written (under mu_) once made.
  Status WriteNodes(const std::string& destination, const std::vector<Write>& writes, WrittenClients* written);

  const ZkMetaOptions options_;
  // Per destination. Guarded by mu_; flushes change an entry holding the
  // destination's write lock too, and loads happen only while no flush can be
  // half-way (Reload takes that lock). Entries are not erased while the
  // manager runs, so pointers stay valid outside mu_.
  std::map<std::string, WrittenClients> written_;
  std::atomic<uint64_t> zk_writes_{0};
};

}  // namespace canal::meta
