// The snapshot driver's two ends in a destination (snapshot/snapshot_merger.h, snapshot_runner.h):
// chunks go out through the destination's EntrySink, and each reader renders rows with an
// EntryBuilder made from the same options (value format, field filters), so a snapshot row's
// Column bytes are the ones the sink writes for the same row read from the binlog.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "canal/sink/entry_builder.h"
#include "canal/sink/entry_sink.h"
#include "canal/snapshot/snapshot_merger.h"
#include "canal/snapshot/snapshot_runner.h"

namespace canal::server {

class SinkChunkOutput final : public snapshot::ChunkOutput {
 public:
  // `after_put` runs after each chunk went into the ring: the instance tells the ring its
  // producer has put what it had (RingStore::ProducerCaughtUp), so a client waiting with the
  // low-latency rule takes the chunk now; the parser, idle on a quiet stream, would not say so.
  SinkChunkOutput(sink::EntrySink* sink, std::function<void()> after_put)
      : sink_(sink), after_put_(std::move(after_put)) {}
  Status PutChunk(const snapshot::EmittedChunk& chunk) override;
  void SetProgress(std::shared_ptr<const std::string> progress) override;
  Status WaitForRoom(uint64_t bytes) override;

 private:
  sink::EntrySink* const sink_;
  const std::function<void()> after_put_;
  std::vector<sink::SnapshotSegment> segments_;  // PutChunk's; the merger puts one chunk at a time
};

class BuilderRowWriter final : public snapshot::RowWriter {
 public:
  explicit BuilderRowWriter(const sink::EntrySinkOptions& options);
  Status AppendAt(const binlog::TableMap& table, uint64_t table_version, std::span<const binlog::ColumnValue> values,
                  std::string* buffer, size_t* at) override;

 private:
  sink::EntryBuilder builder_;
};

}  // namespace canal::server
