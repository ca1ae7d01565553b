// FileMetaManager: the default back end. Subscriptions and cursors of each
// destination live in `<data_dir>/<destination>/meta.dat`, in the JSON shape
// Canal's FileMixedMetaManager writes (see meta_json.h), so a Canal data
// directory can be taken over and handed back. Batches stay in memory.
//
// Loading: a destination's file is read on its first use. A missing file is an
// empty destination; a file that does not parse is a Corruption error naming
// the file, returned by every call on that destination until it is fixed: a
// cursor is never reset silently.
//
// Writing: each write replaces meta.dat whole via temp file + fsync + rename +
// directory fsync (see durable_file.h), so a crash leaves the old or the new
// file. The durability rule of meta_manager.h holds: Flush(destination) writes
// once for all changes since the last write and is a no-op when there are
// none; concurrent Flush calls of one destination share one write when they
// can. Subscribe and Unsubscribe write before they return. A background thread
// writes dirty destinations every `flush_period` (Canal's
// canal.file.flush.period, default 1000 ms); Stop writes everything.
//
// The state mutex is never held across file I/O, so a slow disk delays the
// acks of one destination's flushers only, not other sessions' gets.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "canal/meta/memory_meta_manager.h"

namespace canal::meta {

struct FileMetaOptions {
  std::string data_dir;  // canal.file.data.dir; created by Start when missing
  // canal.file.flush.period; zero disables the background flusher.
  std::chrono::milliseconds flush_period{1000};
};

class FileMetaManager final : public MemoryMetaManager {
 public:
  explicit FileMetaManager(FileMetaOptions options);
  ~FileMetaManager() override;  // Stop()s; its error is lost, call Stop() to see it

  // Creates data_dir when missing and starts the background flusher.
  Status Start() override;
  // Stops the flusher, then writes every dirty destination; returns the first error.
  Status Stop() override;

  Status Subscribe(const ClientIdentity& client) override;
  Status Unsubscribe(const ClientIdentity& client) override;
  Status Flush(const std::string& destination) override;

  std::string MetaFilePath(const std::string& destination) const;

  // Files written so far (for tests and metrics).
  uint64_t file_writes() const { return file_writes_.load(std::memory_order_relaxed); }
  // The last background write's outcome (it retries at the next period).
  Status background_status() const;

 protected:
  Status LoadDestinationLocked(const std::string& destination) override;
  void MarkDirtyLocked(const std::string& destination) override;

 private:
  struct DestinationFile {
    bool loaded = false;          // guarded by mu_
    uint64_t version = 0;         // bumped on each change; guarded by mu_
    uint64_t durable_version = 0; // version known to be on disk; guarded by mu_
    std::mutex write_mu;          // one writer per file at a time
  };

  // Writes the destination when dirty. Does not check running_, so Stop can use it.
  Status FlushDestination(const std::string& destination);
  void FlusherLoop();

  const FileMetaOptions options_;
  // Entries are never erased while the manager lives, so pointers stay valid
  // outside mu_. Guarded by mu_.
  std::map<std::string, std::unique_ptr<DestinationFile>> files_;
  std::atomic<uint64_t> file_writes_{0};

  std::mutex lifecycle_mu_;  // serialises Start and Stop (taken before mu_)
  std::thread flusher_;
  std::condition_variable flusher_cv_;  // waits on mu_
  bool flusher_stop_ = false;           // guarded by mu_
  Status background_status_;            // guarded by mu_
};

}  // namespace canal::meta
