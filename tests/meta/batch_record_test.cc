// A batch's record in the meta manager is the only one the server keeps of
// an in-flight batch (the session acks from it): every field the ack needs
// must come back exactly as recorded, from every read and from RemoveBatch,
// on every back end, whatever flushes came in between.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace canal::meta {
namespace {

using testing::Client;
using testing::Pos;
using testing::ScratchDir;


// A batch of the ring's entries [store_ack - 5, store_ack) whose ack position
// lies inside it (a transaction ended before its last entry).
PositionRange Record(uint64_t from, uint64_t store_ack, uint64_t rows) {
  PositionRange r;
  r.start = Pos("mysql-bin.000004", from);
  r.end = Pos("mysql-bin.000004", from + 50, 1591600659123);
  r.ack = Pos("mysql-bin.000004", from + 30);
  r.store_ack = store_ack;
  r.rows = rows;
  return r;
}

using BatchRecordTest = testing::BackEndTest;

TEST_P(BatchRecordTest, EveryReadAndTheRemovalGiveBackTheWholeRecord) {
  int64_t first = 0;
  int64_t second = 0;
  ASSERT_TRUE(meta_->AddBatch(client_, Record(100, 5, 17), &first).ok());
  ASSERT_TRUE(meta_->AddBatch(client_, Record(200, 9, 0), &second).ok());
  ASSERT_TRUE(meta_->UpdateCursor(client_, Pos("mysql-bin.000004", 90)).ok());
  ASSERT_TRUE(meta_->Flush(client_.destination).ok());  // writes the cursor; batches stay

  PositionRange got;
  ASSERT_TRUE(meta_->GetBatch(client_, second, &got).ok());
  EXPECT_EQ(got, Record(200, 9, 0));
  std::optional<Batch> batch;
  ASSERT_TRUE(meta_->GetFirstBatch(client_, &batch).ok());
  ASSERT_TRUE(batch);
  EXPECT_EQ(*batch, (Batch{first, Record(100, 5, 17)}));
  ASSERT_TRUE(meta_->GetLastestBatch(client_, &batch).ok());
  ASSERT_TRUE(batch);
  EXPECT_EQ(*batch, (Batch{second, Record(200, 9, 0)}));
  std::vector<Batch> all;
  ASSERT_TRUE(meta_->ListBatches(client_, &all).ok());
  EXPECT_EQ(all, (std::vector<Batch>{{first, Record(100, 5, 17)}, {second, Record(200, 9, 0)}}));

  PositionRange removed;
  ASSERT_TRUE(meta_->RemoveBatch(client_, first, &removed).ok());
  EXPECT_EQ(removed, Record(100, 5, 17));
  EXPECT_EQ(removed.ack, Pos("mysql-bin.000004", 130));
  EXPECT_EQ(removed.store_ack, 5u);
  EXPECT_EQ(removed.rows, 17u);
  EXPECT_EQ(removed.end.timestamp_ms, 1591600659123);  // the ack metrics' event time
}

TEST_P(BatchRecordTest, ABatchWithoutAnAckPositionGivesBackAnEmptyOne) {
  PositionRange r = Record(100, 3, 2);
  r.ack = LogPosition{};
  int64_t id = 0;
  ASSERT_TRUE(meta_->AddBatch(client_, r, &id).ok());
  PositionRange removed;
  ASSERT_TRUE(meta_->RemoveBatch(client_, id, &removed).ok());
  EXPECT_TRUE(removed.ack.empty());
  EXPECT_EQ(removed.store_ack, 3u);
}

TEST_P(BatchRecordTest, ARestoredBatchKeepsItsRecordToo) {
  ASSERT_TRUE(meta_->AddBatchWithId(client_, Record(300, 12, 4), 7).ok());
  PositionRange removed;
  ASSERT_TRUE(meta_->RemoveBatch(client_, 7, &removed).ok());
  EXPECT_EQ(removed, Record(300, 12, 4));
}

// Records differing only in the server's fields are different records: a
// copy that dropped them would not compare equal.
TEST_P(BatchRecordTest, RecordsDifferingOnlyInStoreAckOrRowsAreNotEqual) {
  EXPECT_NE(Record(100, 5, 17), Record(100, 6, 17));
  EXPECT_NE(Record(100, 5, 17), Record(100, 5, 18));
  int64_t id = 0;
  ASSERT_TRUE(meta_->AddBatch(client_, Record(100, 5, 17), &id).ok());
  PositionRange got;
  ASSERT_TRUE(meta_->GetBatch(client_, id, &got).ok());
  EXPECT_NE(got, Record(100, 0, 17));
}

// A failed removal (unknown id, not the oldest) hands back nothing and keeps
// the record for the right ack.
TEST_P(BatchRecordTest, ARefusedRemovalKeepsTheRecord) {
  int64_t first = 0;
  int64_t second = 0;
  ASSERT_TRUE(meta_->AddBatch(client_, Record(100, 5, 1), &first).ok());
  ASSERT_TRUE(meta_->AddBatch(client_, Record(200, 9, 2), &second).ok());
  PositionRange removed;
  EXPECT_EQ(meta_->RemoveBatch(client_, second, &removed).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(meta_->RemoveBatch(client_, second + 5, &removed).IsNotFound());
  EXPECT_EQ(removed, PositionRange{});
  ASSERT_TRUE(meta_->RemoveBatch(client_, first, &removed).ok());
  EXPECT_EQ(removed, Record(100, 5, 1));
  ASSERT_TRUE(meta_->RemoveBatch(client_, second, &removed).ok());
  EXPECT_EQ(removed, Record(200, 9, 2));
}

INSTANTIATE_TEST_SUITE_P(BackEnds, BatchRecordTest, testing::LocalBackEnds(), testing::BackEndName);

}  // namespace
}  // namespace canal::meta
