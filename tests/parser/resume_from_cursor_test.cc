// ResumePointFromCursor: stored cursors (ours and Canal's) to start positions.
#include "canal/parser/resume_from_cursor.h"

#include <gtest/gtest.h>

namespace canal::parser {
namespace {

LogPosition Cursor(uint64_t position, bool included = false, uint64_t transaction_begin = 0) {
  LogPosition p;
  p.journal_name = "mysql-bin.000004";
  p.position = position;
  p.included = included;
  p.transaction_begin = transaction_begin;
  p.server_id = 1;
  p.gtid = "0-1-42";
  p.timestamp_ms = 1591600659123;
  return p;
}

TEST(ResumePointFromCursor, BoundaryCursorResumesAtItsPosition) {
  ResumePoint r;
  ASSERT_TRUE(ResumePointFromCursor(Cursor(13885), &r).ok());
  EXPECT_EQ(r.file, "mysql-bin.000004");
  EXPECT_EQ(r.position, 13885u);
  EXPECT_EQ(r.skip_until, 0u);
  EXPECT_EQ(r.gtid, "0-1-42");
  EXPECT_EQ(r.timestamp, 1591600659u);
}

TEST(ResumePointFromCursor, CursorInsideATransactionRereadsItAndSkipsWhatWasConsumed) {
  ResumePoint r;
  ASSERT_TRUE(ResumePointFromCursor(Cursor(90210, true, 13885), &r).ok());
  EXPECT_EQ(r.file, "mysql-bin.000004");
  EXPECT_EQ(r.position, 13885u);
  EXPECT_EQ(r.skip_until, 90210u);
  // The cursor's GTID is the unfinished transaction's, not the last complete one.
  EXPECT_EQ(r.gtid, "");
  EXPECT_EQ(r.timestamp, 0u);
}

TEST(ResumePointFromCursor, CanalIncludedCursorResumesAtTheEventItNamesAsCanalDoes) {
  ResumePoint r;
  ASSERT_TRUE(ResumePointFromCursor(Cursor(13885, true), &r).ok());
  EXPECT_EQ(r.position, 13885u);
  EXPECT_EQ(r.skip_until, 0u);
}

TEST(ResumePointFromCursor, FirstEventOffsetIsAccepted) {
  ResumePoint r;
  ASSERT_TRUE(ResumePointFromCursor(Cursor(4), &r).ok());
  EXPECT_EQ(r.position, 4u);
}

TEST(ResumePointFromCursor, EmptyJournalNameIsInvalidArgument) {
  LogPosition p = Cursor(13885);
  p.journal_name.clear();
  ResumePoint r;
  r.file = "untouched";
  Status s = ResumePointFromCursor(p, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("no journal name"), std::string::npos) << s.ToString();
  EXPECT_EQ(r.file, "untouched");
}

TEST(ResumePointFromCursor, OffsetBeforeTheFirstEventIsInvalidArgument) {
  for (uint64_t position : {0u, 1u, 3u}) {
    ResumePoint r;
    Status s = ResumePointFromCursor(Cursor(position), &r);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << position;
    EXPECT_NE(s.message().find("mysql-bin.000004"), std::string::npos) << s.ToString();
  }
}

TEST(ResumePointFromCursor, TransactionBeginNotBeforeThePositionIsInvalidArgument) {
  for (uint64_t begin : {uint64_t{1}, uint64_t{3}, uint64_t{90210}, uint64_t{90211}}) {
    ResumePoint r;
    Status s = ResumePointFromCursor(Cursor(90210, true, begin), &r);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << begin;
    EXPECT_NE(s.message().find("transactionBegin"), std::string::npos) << s.ToString();
  }
}

TEST(ResumePointFromCursor, HugeTimestampIsClampedNotWrapped) {
  LogPosition p = Cursor(100);
  p.timestamp_ms = INT64_MAX;
  ResumePoint r;
  ASSERT_TRUE(ResumePointFromCursor(p, &r).ok());
  EXPECT_EQ(r.timestamp, UINT32_MAX);
  p.timestamp_ms = -5000;
  ASSERT_TRUE(ResumePointFromCursor(p, &r).ok());
  EXPECT_EQ(r.timestamp, 0u);
}

}  // namespace
}  // namespace canal::parser
