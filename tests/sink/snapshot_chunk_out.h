// The chunk the snapshot sink tests put: rows of ItemsTable at the stream boundary
// kFile:5000, with the progress before and after it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "canal/sink/entry_sink.h"
#include "sink_harness.h"

namespace canal::sink::testing_support {

inline SnapshotChunkOut ChunkOutAt(const binlog::TableMap* table, std::span<const std::string_view> rows,
                                   std::shared_ptr<const std::string> before,
                                   std::shared_ptr<const std::string> after, int64_t read_ms) {
  SnapshotChunkOut out;
  out.table = table;
  out.rows = rows;
  out.at.journal_name = kFile;
  out.at.position = 5000;
  out.at.server_id = 1;
  out.at.gtid = "0-1-9";
  out.at.timestamp_ms = 1700000000000;
  out.at.snapshot = std::move(before);
  out.progress_after = std::move(after);
  out.execute_time_ms = read_ms;
  return out;
}

}  // namespace canal::sink::testing_support
