// The chunk reader allocates nothing per row once warm: reading ten times the rows makes no more
// C++ heap allocations, for a paged chunk and for a keyless table's one streamed read. (Connector/C's
// own buffers are malloc'd and not counted here; its unbuffered fetch holds one row at a time.)
// This file replaces the binary's operator new (support/allocation_counter.h: one file only).
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/snapshot/snapshot_render.h"
#include "snapshot_live_support.h"
#include "support/allocation_counter.h"

namespace canal::testing {
namespace {

using snapshot::ChunkReader;
using snapshot::SnapshotOptions;
using snapshot::TableShape;

class ChunkReaderAllocationLive : public SnapshotLiveSuite<ChunkReaderAllocationLive> {
 public:
  static std::string SetupSql() {
    return "CREATE DATABASE snap; "
           "CREATE TABLE snap.many (id INT PRIMARY KEY, v VARCHAR(40), d DATETIME, n DECIMAL(12,3)); "
           "INSERT INTO snap.many SELECT seq, REPEAT('v', seq % 37), '2024-05-06 07:08:09' + "
           "INTERVAL seq SECOND, seq / 7 FROM snap.seq_1_to_5000; "
           "CREATE TABLE snap.heap (v VARCHAR(40), n INT); "
           "INSERT INTO snap.heap SELECT REPEAT('h', seq % 37), seq FROM snap.seq_1_to_500;";
  }

 protected:
  // C++ allocations of one ReadChunk, and the rows it read; with `converter`, each row is also
  // converted, every value rendered and its key encoded, as a snapshot's consumer would.
  size_t AllocationsOf(ChunkReader* reader, const std::vector<snapshot::KeyValue>& after, uint64_t* rows,
                       snapshot::SnapshotRowConverter* converter = nullptr) {
    snapshot::ChunkResult result;
    uint64_t seen = 0;
    const ChunkReader::RowCallback count = [&](const snapshot::ChunkRow& row) {
      seen += row.fields.size() > 0;
      if (converter == nullptr) return Status::OK();
      CANAL_RETURN_IF_ERROR(converter->Convert(row.fields));
      for (size_t i = 0; i < row.fields.size(); ++i) {
        text_.clear();
        if (!converter->values()[i].is_null()) CANAL_RETURN_IF_ERROR(converter->AppendValue(i, {}, &text_));
        sql_types_ += converter->SqlType(i);
      }
      key_.Clear();
      return converter->AppendKey(reader->key(), &key_);
    };
    size_t allocations = 0;
    {
      CountAllocations counter;
      Status s = reader->ReadChunk(after, count, &result);
      allocations = counter.allocations();
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    *rows = seen;
    return allocations;
  }

  // A paged chunk of 500 rows allocates as much as one of 5000, once warm; with `convert`, every
  // row is also converted, rendered and key-encoded (the converter's buffers warm up too).
  void ExpectFlatPagedChunks(bool convert) {
    TableShape shape;
    ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "many", &shape).ok());
    snapshot::SnapshotRowConverter converter;
    ASSERT_TRUE(converter.Init(shape, snapshot::SnapshotColumnOptions{}).ok());
    snapshot::SnapshotRowConverter* const c = convert ? &converter : nullptr;
    ChunkReader reader(conn_.get());
    SnapshotOptions options;
    options.chunk_rows = 5000;
    ASSERT_TRUE(reader.Open(shape, "", options).ok());
    std::vector<snapshot::KeyValue> near_end(1), start(1);
    near_end[0].kind = start[0].kind = snapshot::FieldKind::kSigned;
    near_end[0].field_type = start[0].field_type = 3;  // LONG
    near_end[0].i64 = 4500;
    start[0].i64 = 0;
    uint64_t rows = 0;
    AllocationsOf(&reader, start, &rows, c);  // warm: buffers grow to the longest value
    AllocationsOf(&reader, near_end, &rows, c);
    const size_t few = AllocationsOf(&reader, near_end, &rows, c);
    EXPECT_EQ(rows, 500u);
    const size_t many = AllocationsOf(&reader, start, &rows, c);
    EXPECT_EQ(rows, 5000u);
    EXPECT_EQ(many, few) << "allocations per chunk must not grow with its rows";
    if (convert) {
      EXPECT_NE(sql_types_, 0);
    }
  }

  std::string text_;
  snapshot::KeyEncoder key_;
  int64_t sql_types_ = 0;
};

TEST_F(ChunkReaderAllocationLive, APagedChunkAllocatesTheSameForTenTimesTheRows) { ExpectFlatPagedChunks(false); }

TEST_F(ChunkReaderAllocationLive, ConvertingAndRenderingRowsAllocatesTheSameForTenTimesTheRows) {
  ExpectFlatPagedChunks(true);
}

TEST_F(ChunkReaderAllocationLive, AKeylessReadAllocatesTheSameForTenTimesTheRows) {
  TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(conn_.get(), "snap", "heap", &shape).ok());
  ChunkReader reader(conn_.get());
  ASSERT_TRUE(reader.Open(shape, "", SnapshotOptions{}).ok());
  ASSERT_EQ(reader.key().kind, snapshot::ChunkKey::Kind::kNone);
  uint64_t rows = 0;
  AllocationsOf(&reader, {}, &rows);  // warm
  const size_t few = AllocationsOf(&reader, {}, &rows);
  EXPECT_EQ(rows, 500u);
  ASSERT_TRUE(sandbox_->Sql("INSERT INTO snap.heap SELECT REPEAT('h', seq % 37), seq FROM snap.seq_1_to_4500;"))
      << sandbox_->error();
  const size_t many = AllocationsOf(&reader, {}, &rows);
  EXPECT_EQ(rows, 5000u);
  EXPECT_EQ(many, few) << "allocations of a streamed read must not grow with its rows";
}

}  // namespace
}  // namespace canal::testing
