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
// Writing (the file's forms: meta_file.h): while running, meta.dat is two
// checksummed slots written alternately, each write one pwrite and one
// fdatasync; a crash tears at most the slot being written and the load takes
// the newest valid one. The first write of a run (or one that outgrows the
// slots) makes a new two-slot file via temp file + fsync + rename + directory
// fsync. Stop turns each file back into Canal's plain JSON (the same durable
// replacement), so a stopped server's meta.dat is Canal's file; a plain-JSON
// file (Canal's, hand-edited, or from a clean stop) is read at load, with a
// log line. The durability rule of meta_manager.h holds: Flush(destination) writes
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
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "canal/meta/persistent_meta_manager.h"

namespace canal::meta {

class MetaFileWriter;

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
  // Subscribe, Unsubscribe, Flush: see persistent_meta_manager.h.
  // Stop: as PersistentMetaManager's, then every file in the slot form is
  // rewritten as plain JSON; returns the first error.
  Status Stop() override;

  std::string MetaFilePath(const std::string& destination) const;

  // Durable writes so far, of either kind (for tests and metrics).
  uint64_t file_writes() const { return file_writes_.load(std::memory_order_relaxed); }
  // Of those, the in-place slot writes (one fdatasync each).
  uint64_t slot_writes() const { return slot_writes_.load(std::memory_order_relaxed); }

 protected:
  Status CheckBeforeStart() override;
  Status LoadFromStoreLocked(const std::string& destination) override;
  PendingWrite PrepareWriteLocked(const std::string& destination) override;

 private:
  MetaFileWriter* WriterFor(const std::string& destination);

  const FileMetaOptions options_;
  std::atomic<uint64_t> file_writes_{0};
  std::atomic<uint64_t> slot_writes_{0};
  std::mutex writers_mu_;  // guards the map; each writer locks itself. Taken after mu_, never before.
  // Never erased while the manager lives, so pointers stay valid outside writers_mu_.
  std::map<std::string, std::unique_ptr<MetaFileWriter>> writers_;
};

}  // namespace canal::meta
