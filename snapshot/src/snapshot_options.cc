#include "canal/snapshot/snapshot_options.h"

#include <string>

#include "canal/common/ascii_case.h"

namespace canal::snapshot {
namespace {

Status OutOfBounds(std::string_view key, uint64_t value, uint64_t min, uint64_t max, std::string_view why) {
  return Status::InvalidArgument(std::string(key) + "=" + std::to_string(value) + " is out of bounds: it must be " +
                                 std::to_string(min) + ".." + std::to_string(max) + " (" + std::string(why) + ")");
}

}  // namespace

std::string_view SnapshotModeName(SnapshotMode mode) {
  switch (mode) {
    case SnapshotMode::kNever: return "never";
    case SnapshotMode::kInitial: return "initial";
    case SnapshotMode::kInitialOnly: return "initial_only";
    case SnapshotMode::kWhenNeeded: return "when_needed";
  }
  return "never";
}

Status ParseSnapshotMode(std::string_view text, SnapshotMode* mode) {
  for (SnapshotMode m : {SnapshotMode::kNever, SnapshotMode::kInitial, SnapshotMode::kInitialOnly,
                         SnapshotMode::kWhenNeeded}) {
    if (AsciiEqualsIgnoreCase(text, SnapshotModeName(m))) {
      *mode = m;
      return Status::OK();
    }
  }
  // The value is the operator's own text: bounded before it goes into a message.
  std::string shown(text.substr(0, 64));
  if (text.size() > 64) shown += "...";
  return Status::InvalidArgument("canal.instance.snapshot.mode=" + shown +
                                 " is not a snapshot mode; use never, initial, initial_only or when_needed");
}

Status SnapshotOptions::Validate() const {
  if (threads < 1 || threads > kMaxThreads) {
    return OutOfBounds("canal.instance.snapshot.threads", threads, 1, kMaxThreads,
                       "each reader holds a connection to the primary");
  }
  if (chunk_rows < 1 || chunk_rows > kMaxChunkRows) {
    return OutOfBounds("canal.instance.snapshot.chunk.rows", chunk_rows, 1, kMaxChunkRows,
                       "a chunk is held in memory until the stream passes its position");
  }
  if (chunk_bytes < kMinChunkBytes || chunk_bytes > kMaxChunkBytes) {
    return OutOfBounds("canal.instance.snapshot.chunk.bytes", chunk_bytes, kMinChunkBytes, kMaxChunkBytes,
                       "the bytes of one chunk held in memory per reader");
  }
  if (window_keys < 1 || window_keys > kMaxWindowKeys) {
    return OutOfBounds("canal.instance.snapshot.window.keys", window_keys, 1, kMaxWindowKeys,
                       "keys changed by the stream while a chunk is open, remembered to drop them from it");
  }
  return Status::OK();
}

}  // namespace canal::snapshot
