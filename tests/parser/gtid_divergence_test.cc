// FindGtidDivergence: where a promoted replica's history parts from what was
// delivered. The case that once miscounted: the new primary has already
// written some of its own transactions, under sequence numbers still below
// the delivered one; the histories part where it stopped applying, not at its
// own last number (the count of lost transactions came out short by exactly
// the writes it had made before the stream reconnected).
#include "canal/parser/gtid_divergence.h"

#include <gtest/gtest.h>

namespace canal::parser {
namespace {

using Gtid = binlog::GtidSet::DomainGtid;

TEST(GtidDivergence, OwnWritesBelowTheDeliveredNumberStillPartWhereItStoppedApplying) {
  // Seen in CI: the stream delivered up to 0-1-1966; the replica had applied up to 0-1-1337
  // and, promoted, written 61 of its own (0-2-1338..0-2-1398) before the stream reconnected.
  const Gtid delivered{0, 1, 1966};
  const Gtid has{0, 2, 1398};
  const Gtid applied{0, 1, 1337};
  const GtidDivergence d = FindGtidDivergence(delivered, &has, &applied);
  ASSERT_TRUE(d.diverged);
  ASSERT_EQ(d.parts, &applied);
  EXPECT_EQ(delivered.seq_no - d.parts->seq_no, 629u);  // 0-1-1338..0-1-1966 (it said 568: 1399..1966)
}

TEST(GtidDivergence, OwnWritesPastTheDeliveredNumberPartWhereItStoppedApplying) {
  const Gtid delivered{0, 1, 1966};
  const Gtid has{0, 2, 2500};
  const Gtid applied{0, 1, 1398};
  const GtidDivergence d = FindGtidDivergence(delivered, &has, &applied);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.parts, &applied);
}

TEST(GtidDivergence, ANewPrimaryThatAppliedEverythingDeliveredLosesNothing) {
  const Gtid delivered{0, 1, 1966};
  const Gtid applied{0, 1, 1966};
  const Gtid own{0, 2, 1970};
  EXPECT_FALSE(FindGtidDivergence(delivered, &own, &applied).diverged);
  EXPECT_FALSE(FindGtidDivergence(delivered, &applied, &applied).diverged) << "no writes of its own yet";
  const Gtid ahead{0, 1, 2000};
  EXPECT_FALSE(FindGtidDivergence(delivered, &ahead, nullptr).diverged) << "the same history, further on";
}

TEST(GtidDivergence, ANewPrimarySimplyBehindPartsAtItsLastGtid) {
  const Gtid delivered{0, 1, 1966};
  const Gtid has{0, 1, 1900};
  const GtidDivergence d = FindGtidDivergence(delivered, &has, &has);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.parts, &has);
  const GtidDivergence none = FindGtidDivergence(delivered, nullptr, nullptr);
  EXPECT_TRUE(none.diverged) << "a new primary without the domain lost all of it";
  EXPECT_EQ(none.parts, nullptr);
}

}  // namespace
}  // namespace canal::parser
