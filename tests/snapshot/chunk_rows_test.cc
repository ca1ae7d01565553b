// ChunkRows: rows written in place into segments with room in front, at most
// kSegmentRowBytes of rows each (a larger row alone), every row once and in
// order with its key; buffers reused across chunks within the keep bound, and
// whatever buffer a segment is left with after its rows went out.
#include "canal/snapshot/chunk_rows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace canal::snapshot {
namespace {

// Writes `row` the way a RowWriter does: at the position given, growing the buffer.
void Write(ChunkRows* c, const std::string& row, const std::string& key) {
  size_t at = 0;
  std::string* buffer = c->NextRowBuffer(&at);
  ASSERT_LE(at, buffer->size());
  if (buffer->size() < at + row.size()) buffer->resize(at + row.size());
  std::memcpy(buffer->data() + at, row.data(), row.size());
  c->AddRow(at + row.size(), key);
}

std::string Row(size_t i, size_t size) {
  std::string r = std::to_string(i) + ":";
  r.resize(size, static_cast<char>('a' + i % 26));
  return r;
}

void ExpectRows(const ChunkRows& c, const std::vector<std::string>& rows) {
  std::vector<std::string> got, keys;
  c.ForEachRow([&](std::string_view row, std::string_view key) {
    got.emplace_back(row);
    keys.emplace_back(key);
  });
  ASSERT_EQ(got.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(got[i], rows[i]) << i;
    EXPECT_EQ(keys[i], "k" + std::to_string(i)) << i;
  }
  uint64_t bytes = 0, in_segments = 0;
  for (const std::string& r : rows) bytes += r.size();
  EXPECT_EQ(c.row_bytes, bytes);
  for (size_t g = 0; g < c.used_segments; ++g) {
    const ChunkSegment& s = c.segments[g];
    EXPECT_GT(s.rows, 0u) << "segment " << g;
    EXPECT_GE(s.end, ChunkRows::kRoom);
    EXPECT_LE(s.end, s.bytes.size());
    in_segments += s.end - ChunkRows::kRoom;
  }
  EXPECT_EQ(in_segments, bytes);
}

TEST(ChunkRowsTest, RowsFillSegmentsUpToTheBoundInOrder) {
  ChunkRows c;
  std::vector<std::string> rows;
  for (size_t i = 0; i < 1000; ++i) {
    rows.push_back(Row(i, 600 + i % 300));
    Write(&c, rows.back(), "k" + std::to_string(i));
  }
  ExpectRows(c, rows);
  EXPECT_GE(c.used_segments, 3u);
  for (size_t g = 0; g < c.used_segments; ++g) {
    EXPECT_LE(c.segments[g].end - ChunkRows::kRoom, ChunkRows::kSegmentRowBytes) << g;
    // Full but for less than two rows: a segment ends only when the next row would not fit.
    if (g + 1 < c.used_segments) {
      EXPECT_GT(c.segments[g].end - ChunkRows::kRoom, ChunkRows::kSegmentRowBytes - 1800) << g;
    }
  }
}

TEST(ChunkRowsTest, ARowLargerThanPredictedMovesToTheNextSegmentWhole) {
  ChunkRows c;
  std::vector<std::string> rows;
  for (size_t i = 0; i < 200; ++i) {
    rows.push_back(Row(i, 1000));
    Write(&c, rows.back(), "k" + std::to_string(i));
  }
  // Small rows so far predict a small row: this one crosses the bound after it is written.
  rows.push_back(Row(200, 100000));
  Write(&c, rows.back(), "k200");
  rows.push_back(Row(201, 10));
  Write(&c, rows.back(), "k201");
  ExpectRows(c, rows);
  ASSERT_EQ(c.used_segments, 2u);
  EXPECT_EQ(c.segments[0].rows, 200u);
  EXPECT_EQ(c.segments[1].rows, 2u);
}

TEST(ChunkRowsTest, ARowPastTheBoundComesAloneAndAStartedSegmentTakesIt) {
  ChunkRows c;
  std::vector<std::string> rows = {Row(0, 50)};
  Write(&c, rows[0], "k0");
  c.StartSegment(size_t{3} << 20);  // a huge row next
  rows.push_back(Row(1, ChunkRows::kSegmentRowBytes * 3));
  Write(&c, rows[1], "k1");
  rows.push_back(Row(2, 50));
  Write(&c, rows[2], "k2");
  ExpectRows(c, rows);
  ASSERT_EQ(c.used_segments, 3u);
  EXPECT_EQ(c.segments[1].rows, 1u);
  // A start right after another start, before any row, opens nothing new.
  c.StartSegment(10);
  c.StartSegment(10);
  EXPECT_EQ(c.used_segments, 4u);
  EXPECT_EQ(c.segments[3].rows, 0u);
}

TEST(ChunkRowsTest, ClearKeepsBuffersWithinTheBoundAndASwappedOutBufferIsReused) {
  ChunkRows c;
  for (size_t i = 0; i < 2000; ++i) Write(&c, Row(i, 1000), "k" + std::to_string(i));
  ASSERT_GE(c.used_segments, 7u);
  // The ring took the first segment's buffer and gave back a small one.
  std::string spare = "xy";
  c.segments[0].bytes.swap(spare);
  const char* const kept = c.segments[1].bytes.data();
  c.Clear(3 * (ChunkRows::kSegmentRowBytes + ChunkRows::kRoom + (32 << 10)));
  EXPECT_EQ(c.row_count(), 0u);
  EXPECT_EQ(c.used_segments, 0u);
  EXPECT_EQ(c.row_bytes, 0u);
  EXPECT_EQ(c.segments[1].bytes.data(), kept);
  size_t held = 0;
  for (const ChunkSegment& s : c.segments) held += s.bytes.capacity();
  EXPECT_LE(held, 3 * (ChunkRows::kSegmentRowBytes + ChunkRows::kRoom + (32 << 10)));
  std::vector<std::string> rows;
  for (size_t i = 0; i < 600; ++i) {
    rows.push_back(Row(i, 900));
    Write(&c, rows.back(), "k" + std::to_string(i));
  }
  ExpectRows(c, rows);
}

TEST(ChunkRowsTest, AppendRowCopiesIn) {
  ChunkRows c;
  c.AppendRow("one", "k0");
  c.AppendRow("", "k1");
  c.AppendRow("three", "k2");
  ExpectRows(c, {"one", "", "three"});
}

}  // namespace
}  // namespace canal::snapshot
