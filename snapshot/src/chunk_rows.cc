#include "canal/snapshot/chunk_rows.h"

#include <algorithm>
#include <cstring>

namespace canal::snapshot {

void ChunkRows::Clear(size_t keep_bytes) {
  size_t kept = 0;
  for (ChunkSegment& s : segments) {
    kept += s.bytes.capacity();
    if (kept > keep_bytes) std::string().swap(s.bytes);
    s.end = 0;
    s.rows = 0;
  }
  used_segments = 0;
  row_ends.clear();
  row_bytes = 0;
  last_row_bytes_ = 0;
  keys.clear();
  key_ends.clear();
  snapshot = LogPosition();
  last_key.clear();
  exhausted = false;
  read_ms = 0;
}

ChunkSegment& ChunkRows::OpenSegment(size_t reserve) {
  if (used_segments == segments.size()) segments.emplace_back();
  ChunkSegment& s = segments[used_segments++];
  // A buffer back from the ring keeps its size: rows are written over its old bytes, and only
  // what it lacks is zero-filled.
  if (s.bytes.capacity() < kRoom + reserve) s.bytes.reserve(kRoom + reserve);
  if (s.bytes.size() < kRoom) s.bytes.resize(kRoom);
  s.end = kRoom;
  s.rows = 0;
  return s;
}

std::string* ChunkRows::NextRowBuffer(size_t* at) {
  // A row the size of the last one would take the open segment past the bound: a new segment
  // now, rather than the row moved after it is written (every row, were rows wide).
  const bool full = used_segments != 0 && segments[used_segments - 1].rows != 0 &&
                    segments[used_segments - 1].end - kRoom + last_row_bytes_ > kSegmentRowBytes;
  ChunkSegment& s = used_segments == 0 || full ? OpenSegment(kSegmentRowBytes + kSegmentSlack)
                                               : segments[used_segments - 1];
  *at = s.end;
  return &s.bytes;
}

void ChunkRows::StartSegment(size_t bytes) {
  if (used_segments != 0 && segments[used_segments - 1].rows == 0) {
    ChunkSegment& s = segments[used_segments - 1];
    if (s.bytes.capacity() < kRoom + bytes) s.bytes.reserve(kRoom + bytes);
    return;
  }
  OpenSegment(bytes);
}

void ChunkRows::AddRow(size_t end, std::string_view key) {
  const size_t g = used_segments - 1;
  const size_t size = end - segments[g].end;
  if (segments[g].rows > 0 && end - kRoom > kSegmentRowBytes) {
    // Past the bound: the row starts the next segment (the open one ends before it).
    ChunkSegment& next = OpenSegment(std::max(size, kSegmentRowBytes));
    const ChunkSegment& full = segments[g];
    if (next.bytes.size() < kRoom + size) next.bytes.resize(kRoom + size);
    std::memcpy(next.bytes.data() + kRoom, full.bytes.data() + full.end, size);
    next.end = kRoom + size;
    next.rows = 1;
  } else {
    segments[g].end = end;
    ++segments[g].rows;
  }
  row_ends.push_back(segments[used_segments - 1].end);
  row_bytes += size;
  last_row_bytes_ = size;
  keys.append(key);
  key_ends.push_back(keys.size());
}

void ChunkRows::AppendRow(std::string_view row, std::string_view key) {
  size_t at = 0;
  std::string* buffer = NextRowBuffer(&at);
  if (buffer->size() < at + row.size()) buffer->resize(at + row.size());
  std::memcpy(buffer->data() + at, row.data(), row.size());
  AddRow(at + row.size(), key);
}

}  // namespace canal::snapshot
