// MetaFileWriter: one destination's meta.dat, written in the slot form
// (canal/meta/meta_file.h).
//
// Write makes a JSON document durable. When the file is already in the slot
// form and the document fits, it overwrites the slot that does not hold the
// newest state and calls fdatasync once: no rename, no directory sync. Else
// (no file yet, a plain-JSON file, a document that outgrew the slots) it
// writes a whole new two-slot file via durable_file.h (temp file, fsync,
// rename, directory fsync): once per file, not per ack.
//
// WritePlain puts the last state written or read back into Canal's plain JSON
// (the clean stop). Thread-safe; the caller serialises writes per destination
// anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/meta/meta_file.h"

namespace canal::meta {

class MetaFileWriter {
 public:
  MetaFileWriter(std::string dir, std::string path);
  ~MetaFileWriter();
  MetaFileWriter(const MetaFileWriter&) = delete;
  MetaFileWriter& operator=(const MetaFileWriter&) = delete;

  // What a load found in the file: the next write continues from it.
  void Adopt(const MetaFileContents& contents);
  Status Write(std::string_view json);
  // Slot form -> plain JSON of the newest state; a no-op in any other form.
  Status WritePlain();

  // Whole-file writes (temp + rename) and in-place slot writes so far.
  uint64_t whole_writes() const;
  uint64_t slot_writes() const;

 private:
  Status WriteWholeLocked(std::string_view json);
  Status WriteSlotLocked(std::string_view json);
  void CloseLocked();

  const std::string dir_;
  const std::string path_;
  mutable std::mutex mu_;
  int fd_ = -1;  // open for writing while form_ is kSlots (opened at the first slot write)
  MetaFileForm form_ = MetaFileForm::kAbsent;
  uint64_t sequence_ = 0;  // the highest seq written or read
  int newest_slot_ = -1;   // the slot holding the newest durable state
  size_t slot_size_ = 0;
  std::string last_json_;  // the newest durable state
  std::string buffer_;     // the slot being written, reused
  uint64_t whole_writes_ = 0;
  uint64_t slot_writes_ = 0;
};

}  // namespace canal::meta
