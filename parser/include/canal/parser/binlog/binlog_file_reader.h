// BinlogFileReader: reads binlog files from disk and yields their events in order.
//
// Checks the magic (FE 'b' 'i' 'n'), frames events by their header's length, and
// decodes them with an EventDecoder. Plain files are memory-mapped read-only
// (binlog files are bounded by max_binlog_size, 1 GiB at most); .gz files and
// buffers are held in memory. A directory or a list of
// files is read in name order with one decoder, as a replica would see them.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/event_decoder.h"

namespace canal::binlog {

class BinlogFileReader {
 public:
  // `decoder` must outlive the reader; it is reset for the new file.
  explicit BinlogFileReader(EventDecoder* decoder);
  ~BinlogFileReader();

  // Opens `path` (a .gz file is inflated) and checks the magic.
  Status Open(const std::string& path);
  // Reads from memory instead (tests, fuzzing). `name` appears in errors.
  Status OpenBuffer(std::string name, std::string bytes);

  // Next event, including events inside TRANSACTION_PAYLOADs (in_payload set).
  // Sets *eof at a clean end of file. A file that ends inside an event is a
  // Truncated error naming the offset.
  Status Next(Event* event, bool* eof);

  // Moves to `position` (an event's start, at or after the current position,
  // not inside a payload): a start position inside the file.
  Status Seek(uint64_t position);

  const std::string& path() const { return name_; }
  uint64_t size() const { return size_; }
  uint64_t position() const { return pos_; }

 private:
  EventDecoder* decoder_;
  std::string name_;
  void Close();
  Status Start(std::string name, const char* base, size_t size);

  std::string data_;          // owned bytes (gzip, buffers)
  void* map_ = nullptr;       // or a read-only mapping of the file
  size_t map_length_ = 0;
  const char* base_ = nullptr;
  size_t size_ = 0;
  uint64_t pos_ = 0;
};

// Expands command-line arguments into binlog files: a directory contributes its
// files whose names look like binlogs (name.NNNNNN), sorted; files stay in order.
Status ExpandBinlogPaths(const std::vector<std::string>& args, std::vector<std::string>* files);

}  // namespace canal::binlog
