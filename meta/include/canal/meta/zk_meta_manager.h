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
// and is written by the next Flush. ZooKeeper I/O happens outside the state
// mutex, except the one-time load of a destination.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "canal/coord/zk_client.h"
#include "canal/meta/memory_meta_manager.h"

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

class ZkMetaManager final : public MemoryMetaManager {
 public:
  explicit ZkMetaManager(ZkMetaOptions options);
  ~ZkMetaManager() override;  // Stop()s; its error is lost, call Stop() to see it

  // Starts the background flusher (when flush_period > 0). Destinations are
  // read on first use, so a standby server can start early and still read the
  // cursors current when it becomes active.
  Status Start() override;
  // Stops the flusher, then writes every dirty destination; returns the first error.
  Status Stop() override;

  Status Subscribe(const ClientIdentity& client) override;
  Status Unsubscribe(const ClientIdentity& client) override;
  Status Flush(const std::string& destination) override;

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
  // The last background write's outcome (it retries at the next period).
  Status background_status() const;

 protected:
  Status LoadDestinationLocked(const std::string& destination) override;
  void MarkDirtyLocked(const std::string& destination) override;

 private:
  // What ZooKeeper holds for a client, as far as this manager knows.
  struct WrittenClient {
    std::string filter;
    std::optional<std::string> cursor_json;
  };
  struct DestinationNodes {
    bool loaded = false;           // guarded by mu_
    uint64_t version = 0;          // bumped on each change; guarded by mu_
    uint64_t durable_version = 0;  // version known to be in ZooKeeper; guarded by mu_
    // Guarded by mu_; flushes change it holding write_mu too, and loads happen
    // only while no flush can be half-way (Reload takes write_mu).
    std::map<int16_t, WrittenClient> written;
    std::mutex write_mu;           // one writer per destination; taken before mu_
  };

  // Writes the destination when dirty. Does not check running_, so Stop can use it.
  Status FlushDestination(const std::string& destination);
  void FlusherLoop();

  const ZkMetaOptions options_;
  // Entries are never erased while the manager lives, so pointers stay valid
  // outside mu_. Guarded by mu_.
  std::map<std::string, std::unique_ptr<DestinationNodes>> nodes_;
  std::atomic<uint64_t> zk_writes_{0};

  std::mutex lifecycle_mu_;  // serialises Start and Stop (taken before mu_)
  std::thread flusher_;
  std::condition_variable flusher_cv_;  // waits on mu_
  bool flusher_stop_ = false;           // guarded by mu_
  Status background_status_;            // guarded by mu_
};

}  // namespace canal::meta
