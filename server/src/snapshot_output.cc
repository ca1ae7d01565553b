#include "snapshot_output.h"

namespace canal::server {

namespace {

sink::EntryBuilderOptions BuilderOptions(const sink::EntrySinkOptions& options) {
  sink::EntryBuilderOptions o = options.entries;
  o.fields = options.field_filter.get();
  o.black_fields = options.black_field_filter.get();
  return o;
}

}  // namespace

Status SinkChunkOutput::PutChunk(const snapshot::EmittedChunk& chunk) {
  sink::SnapshotChunkOut out;
  out.table = chunk.table;
  out.rows = chunk.rows;
  segments_.clear();
  for (snapshot::ChunkSegment& g : chunk.segments) {
    if (g.rows == 0) continue;  // opened for a row that never came
    segments_.push_back(sink::SnapshotSegment{&g.bytes, snapshot::ChunkRows::kRoom, g.end, g.rows});
  }
  out.segments = segments_;
  out.at = chunk.at;
  out.progress_after = chunk.progress_after;
  out.execute_time_ms = chunk.execute_time_ms;
  out.begin = chunk.begin;
  out.end = chunk.end;
  CANAL_RETURN_IF_ERROR(sink_->PutSnapshotChunk(out));
  if (after_put_) after_put_();
  return Status::OK();
}

void SinkChunkOutput::SetProgress(std::shared_ptr<const std::string> progress) {
  sink_->SetSnapshotProgress(std::move(progress));
}

Status SinkChunkOutput::WaitForRoom(uint64_t bytes) { return sink_->WaitForRoom(bytes); }

BuilderRowWriter::BuilderRowWriter(const sink::EntrySinkOptions& options) : builder_(BuilderOptions(options)) {}

Status BuilderRowWriter::AppendAt(const binlog::TableMap& table, uint64_t table_version,
                                  std::span<const binlog::ColumnValue> values, std::string* buffer, size_t* at) {
  return builder_.SnapshotRowAt(table, values, buffer, at, table_version);
}

}  // namespace canal::server
