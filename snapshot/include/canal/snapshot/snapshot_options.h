// SnapshotOptions: the canal.instance.snapshot.* settings, with their defaults and bounds.
//
//   canal.instance.snapshot.mode          never | initial | initial_only | when_needed (never)
//   canal.instance.snapshot.threads       readers, each with its own connection (2; 1..64)
//   canal.instance.snapshot.chunk.rows    rows per chunk at most (8192; 1..1,000,000)
//   canal.instance.snapshot.chunk.bytes   bytes per chunk at most, whatever the row width
//                                         (16 MiB; 64 KiB..1 GiB); a single row larger than
//                                         this is a chunk of its own
//   canal.instance.snapshot.window.keys   keys the stream may change while one chunk is open
//                                         before the chunk is read again (100,000; 1..10^7)
//
// A plain value; thread-compatible.
#pragma once

#include <cstdint>
#include <string_view>

#include "canal/common/status.h"

namespace canal::snapshot {

enum class SnapshotMode : uint8_t {
  kNever,        // stream only, from the configured or stored position (Canal's behaviour)
  kInitial,      // first start without a cursor: snapshot the filter's tables, then stream
  kInitialOnly,  // the same, then stop
  kWhenNeeded,   // also when the cursor's binlog was purged: snapshot again instead of stopping
};

// "never", "initial", "initial_only", "when_needed".
std::string_view SnapshotModeName(SnapshotMode mode);
// The mode a setting names (case-insensitive); InvalidArgument naming the key, the value and the
// accepted ones otherwise.
Status ParseSnapshotMode(std::string_view text, SnapshotMode* mode);

struct SnapshotOptions {
  static constexpr uint32_t kMaxThreads = 64;
  static constexpr uint64_t kMaxChunkRows = 1'000'000;
  static constexpr uint64_t kMinChunkBytes = 64 * 1024;
  static constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 30;
  static constexpr uint64_t kMaxWindowKeys = 10'000'000;

  SnapshotMode mode = SnapshotMode::kNever;
  uint32_t threads = 2;
  uint64_t chunk_rows = 8192;
  uint64_t chunk_bytes = 16 * 1024 * 1024;
  uint64_t window_keys = 100'000;

  // InvalidArgument naming the first setting out of bounds, its value, the bounds and why.
  Status Validate() const;
};

}  // namespace canal::snapshot
