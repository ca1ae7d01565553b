// ChunkRows: a chunk as a reader read it. Rows are rendered in place into
// segments, each a buffer with room in front for the entry prefix the sink
// writes when the chunk goes out, so that a segment whose rows all go out is
// moved into the ring as one entry, never copied (EmittedChunk::segments).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/snapshot/field_value.h"

namespace canal::snapshot {

// One segment: `rows` RowData fields at [ChunkRows::kRoom, end) of `bytes`.
struct ChunkSegment {
  std::string bytes;
  size_t end = 0;
  uint32_t rows = 0;
};

struct ChunkRows {
  // Room in front of each segment's rows: an entry's header (names, position, props) fits
  // unless the names are very long, and then the sink copies instead.
  static constexpr size_t kRoom = 1024;
  // Rows per segment at most (a larger row alone): the sink's bound for one snapshot entry
  // (sink::kSnapshotEntryRowBytes), so that a segment is the entry the sink would make.
  static constexpr size_t kSegmentRowBytes = size_t{256} << 10;

  std::vector<ChunkSegment> segments;  // [0, used_segments) hold this chunk's rows
  size_t used_segments = 0;
  std::vector<size_t> row_ends;  // end of each row in its segment's bytes
  uint64_t row_bytes = 0;        // the rows' bytes in all
  std::string keys;              // each row's key bytes (KeyEncoder), back to back
  std::vector<size_t> key_ends;
  LogPosition snapshot;            // P
  std::vector<KeyValue> last_key;  // the chunk's last key (where the next chunk starts)
  bool exhausted = false;          // the table has no row after this chunk
  int64_t read_ms = 0;             // when it was read (executeTime)

  size_t row_count() const { return row_ends.size(); }
  // Empties the chunk; its segments keep their buffers while their capacity in all stays
  // within `keep_bytes` (a row far over the chunk's byte bound is not held until the next).
  void Clear(size_t keep_bytes = SIZE_MAX);

  // Where the next row is written: *buffer from *at on (RowWriter::AppendAt), then AddRow.
  // Opens a segment when none is open.
  std::string* NextRowBuffer(size_t* at);
  // Starts a new segment for the next row unless the open one is empty (a huge row comes
  // alone); reserves `bytes` past its room.
  void StartSegment(size_t bytes = 0);
  // Records the row written at NextRowBuffer's position, ending at `end`, with its key. A row
  // that takes the open segment past kSegmentRowBytes moves to a new one (one copy of it).
  void AddRow(size_t end, std::string_view key);
  // Copies `row` in (tests, and callers that render elsewhere).
  void AppendRow(std::string_view row, std::string_view key);

  // Calls f(row, key) for each row, in order.
  template <typename F>
  void ForEachRow(F&& f) const {
    size_t i = 0, key_begin = 0;
    for (size_t g = 0; g < used_segments; ++g) {
      const ChunkSegment& s = segments[g];
      size_t begin = kRoom;
      for (uint32_t r = 0; r < s.rows; ++r, ++i) {
        f(std::string_view(s.bytes.data() + begin, row_ends[i] - begin),
          std::string_view(keys.data() + key_begin, key_ends[i] - key_begin));
        begin = row_ends[i];
        key_begin = key_ends[i];
      }
    }
  }

 private:
  // Reserved past the bound in a new segment: the row that ends it usually fits.
  static constexpr size_t kSegmentSlack = size_t{32} << 10;
  ChunkSegment& OpenSegment(size_t reserve);
  size_t last_row_bytes_ = 0;
};

}  // namespace canal::snapshot
