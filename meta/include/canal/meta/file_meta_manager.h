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
#include <cstdint>
#include <string>

#include "canal/meta/persistent_meta_manager.h"

namespace canal::meta {

struct FileMetaOptions {
  std::string data_dir;  // canal.file.data.dir; created by Start when missing
  // canal.file.flush.period; zero disables the background flusher.
  std::chrono::milliseconds flush_period{1000};
};

class FileMetaManager final : public PersistentMetaManager {
 public:
  explicit FileMetaManager(FileMetaOptions options);
  ~FileMetaManager() override;  // Stop()s; its error is lost, call Stop() to see it

  // Start creates data_dir when missing and starts the background flusher;
  // Stop, Subscribe, Unsubscribe, Flush: see persistent_meta_manager.h.

  std::string MetaFilePath(const std::string& destination) const;

  // Files written so far (for tests and metrics).
  uint64_t file_writes() const { return file_writes_.load(std::memory_order_relaxed); }

 protected:
  Status CheckBeforeStart() override;
  Status LoadFromStoreLocked(const std::string& destination) override;
  PendingWrite PrepareWriteLocked(const std::string& destination) override;

 private:
  const FileMetaOptions options_;
  std::atomic<uint64_t> file_writes_{0};
};

}  // namespace canal::meta
