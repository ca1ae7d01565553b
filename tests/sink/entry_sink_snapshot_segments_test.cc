// Snapshot rows put without a copy: EntryBuilder::SnapshotRowAt renders a row in place in a
// buffer with room in front, and PutSnapshotChunk's segments become entries whose prefix is
// written into that room and whose buffer moves into the ring. The entries are byte for byte
// those the copying path (views) makes; too little room falls back to a copy; bad segments are
// refused.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "canal/sink/entry_builder.h"
#include "canal/sink/entry_sink.h"
#include "sink_harness.h"
#include "snapshot_chunk_out.h"
#include "sink_test_support.h"

namespace canal::sink {
namespace {

using testing_support::Harness;
using testing_support::ItemsRow;
using testing_support::ItemsTable;
using testing_support::kFile;
using Progress = std::shared_ptr<const std::string>;

// The same rows rendered both ways: appended to one buffer (views), and in place into
// segments of at most `per_segment` rows after `room` bytes.
struct TwoWays {
  std::shared_ptr<binlog::TableMap> table = ItemsTable();
  std::string appended;
  std::vector<std::string_view> views;
  std::vector<std::string> buffers;
  std::vector<SnapshotSegment> segments;
  Progress before = std::make_shared<const std::string>(R"({"chunk":1})");
  Progress after = std::make_shared<const std::string>(R"({"chunk":2})");

  TwoWays(const std::vector<std::string>& names, size_t per_segment, size_t room) {
    EntryBuilder a, b;
    std::vector<size_t> ends;
    buffers.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      binlog::ColumnValue v[2];
      ItemsRow(static_cast<int64_t>(i + 1), names[i], v);
      EXPECT_TRUE(a.SnapshotRow(*table, v, &appended).ok());
      ends.push_back(appended.size());
      if (i % per_segment == 0) {
        // Stale bytes past the room: written over, never read.
        buffers.emplace_back(room + 100, '#');
        segments.push_back(SnapshotSegment{nullptr, room, room, 0});
      }
      SnapshotSegment& g = segments.back();
      size_t at = g.rows_end;
      const Status s = b.SnapshotRowAt(*table, v, &buffers.back(), &at);
      EXPECT_TRUE(s.ok()) << s.ToString();
      g.rows_end = at;
      ++g.rows;
    }
    for (size_t k = 0; k < segments.size(); ++k) segments[k].buffer = &buffers[k];
    size_t from = 0;
    for (size_t end : ends) {
      views.emplace_back(appended.data() + from, end - from);
      from = end;
    }
  }

  SnapshotChunkOut Out() const {
    return testing_support::ChunkOutAt(table.get(), views, before, after, 1700000123456);
  }
};

// Every entry's bytes and its rows count, in ring order.
std::vector<std::pair<std::string, uint32_t>> Entries(store::RingStore* store, std::vector<const char*>* data = nullptr) {
  store::Batch b;
  EXPECT_TRUE(store->Get(4096, store::RingStore::kNoWait, &b).ok());
  std::vector<std::pair<std::string, uint32_t>> out;
  for (const store::EntryView& e : b.entries) {
    out.emplace_back(std::string(e.bytes), e.meta->rows);
    if (data != nullptr) data->push_back(e.bytes.data());
  }
  return out;
}

TEST(EntrySinkSnapshotSegments, SegmentsMakeTheEntriesViewsMakeWithoutACopy) {
  std::vector<std::string> names;
  // Rows that fill most of their buffer: the ring moves a buffer at most twice its entry.
  for (int i = 0; i < 10; ++i) names.push_back("name " + std::to_string(i) + std::string(300 + i * 7, 'x') + "\xc3\xa9");
  // Views are grouped by the byte bound (all ten in one entry); segments are taken as they come.
  TwoWays w(names, 10, 512);
  const std::vector<const char*> rows_at = {w.buffers[0].data() + 512};
  Harness copied, moved;
  ASSERT_TRUE(copied.sink->PutSnapshotChunk(w.Out()).ok());
  SnapshotChunkOut out = w.Out();
  out.segments = w.segments;
  ASSERT_TRUE(moved.sink->PutSnapshotChunk(out).ok());
  std::vector<const char*> data;
  const auto want = Entries(copied.store.get()), got = Entries(moved.store.get(), &data);
  ASSERT_EQ(want.size(), 3u);  // BEGIN, the rows, END
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first) << "entry " << i;
    EXPECT_EQ(got[i].second, want[i].second) << "entry " << i;
  }
  // The rows entry is the segment's own buffer: it ends with the rows where they were rendered.
  EXPECT_EQ(data[1] + got[1].first.size(), rows_at[0] + (w.segments[0].rows_end - 512));
  EXPECT_NE(w.buffers[0].data() + 512, rows_at[0]);  // the segment holds another buffer now
  EXPECT_EQ(moved.sink->stats().snapshot_rows, 10u);
}

TEST(EntrySinkSnapshotSegments, SeveralSegmentsAreOneEntryEachAndTheLastCarriesTheProgressWithoutEnds) {
  std::vector<std::string> names(7, "row");
  TwoWays w(names, 3, 300);  // segments of 3, 3 and 1 rows
  ASSERT_EQ(w.segments.size(), 3u);
  EntrySinkOptions o;
  o.event_types.transaction_entry = true;  // no BEGIN/END entries
  Harness h(std::move(o));
  SnapshotChunkOut out = w.Out();
  out.segments = w.segments;
  ASSERT_TRUE(h.sink->PutSnapshotChunk(out).ok());
  store::Batch b;
  ASSERT_TRUE(h.store->Get(64, store::RingStore::kNoWait, &b).ok());
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.entries[0].meta->rows, 3u);
  EXPECT_EQ(b.entries[1].meta->rows, 3u);
  EXPECT_EQ(b.entries[2].meta->rows, 1u);
  EXPECT_EQ(b.entries[0].meta->position.snapshot, w.before);
  EXPECT_EQ(b.entries[1].meta->position.snapshot, w.before);
  EXPECT_EQ(b.entries[2].meta->position.snapshot, w.after);
}

TEST(EntrySinkSnapshotSegments, TooLittleRoomInFrontIsCopiedIntoTheSameEntry) {
  TwoWays w({"apple", "pear"}, 10, 8);  // 8 bytes cannot hold a header
  Harness copied, fallback;
  ASSERT_TRUE(copied.sink->PutSnapshotChunk(w.Out()).ok());
  SnapshotChunkOut out = w.Out();
  out.segments = w.segments;
  const char* const segment = w.buffers[0].data();
  ASSERT_TRUE(fallback.sink->PutSnapshotChunk(out).ok());
  std::vector<const char*> data;
  const auto want = Entries(copied.store.get()), got = Entries(fallback.store.get(), &data);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got, want);
  EXPECT_EQ(w.buffers[0].data(), segment);  // left with the caller
}

TEST(EntrySinkSnapshotSegments, RowsWrittenInPlaceAreTheAppendedRowsAndTheBufferNeverShrinks) {
  auto table = ItemsTable();
  EntryBuilder a, b;
  std::string appended, buffer(4096, '#');
  size_t at = 100;
  for (int i = 0; i < 50; ++i) {
    binlog::ColumnValue v[2];
    const std::string name(static_cast<size_t>(i) * 13, 'n');  // viewed by the values
    ItemsRow(i, name, v);
    ASSERT_TRUE(a.SnapshotRow(*table, v, &appended).ok());
    const size_t size_before = buffer.size();
    ASSERT_TRUE(b.SnapshotRowAt(*table, v, &buffer, &at, 7).ok());
    EXPECT_GE(buffer.size(), size_before);
    EXPECT_GE(buffer.size(), at);
  }
  EXPECT_EQ(buffer.substr(0, 100), std::string(100, '#'));  // before *at: untouched
  EXPECT_EQ(buffer.substr(100, at - 100), appended);
}

TEST(EntrySinkSnapshotSegments, ARowThatDoesNotRenderOrAPositionPastTheBufferLeavesAt) {
  auto table = ItemsTable();
  EntryBuilder b;
  std::string buffer(10, '#');
  binlog::ColumnValue v[2];
  ItemsRow(1, "x", v);
  size_t at = 11;
  Status s = b.SnapshotRowAt(*table, v, &buffer, &at);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_EQ(at, 11u);
  at = 2;
  s = b.SnapshotRowAt(*table, std::span<const binlog::ColumnValue>(v, 1), &buffer, &at);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("1 values for 2 columns"), std::string::npos) << s.ToString();
  EXPECT_EQ(at, 2u);
}

TEST(EntrySinkSnapshotSegments, BadSegmentsAreRefusedAndNothingIsPut) {
  TwoWays w({"apple"}, 10, 512);
  const SnapshotSegment bad[] = {
      {nullptr, 512, w.segments[0].rows_end, 1},                          // no buffer
      {&w.buffers[0], 512, w.segments[0].rows_end, 0},                   // no rows
      {&w.buffers[0], 512, 512, 1},                                      // no bytes
      {&w.buffers[0], 512, w.buffers[0].size() + 1, 1},                  // past the buffer
  };
  for (const SnapshotSegment& g : bad) {
    Harness h;
    SnapshotChunkOut out = w.Out();
    out.segments = std::span<const SnapshotSegment>(&g, 1);
    const Status s = h.sink->PutSnapshotChunk(out);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("segment without rows"), std::string::npos) << s.ToString();
    EXPECT_EQ(h.store->stats().put_sequence, 0u);
  }
}

}  // namespace
}  // namespace canal::sink
