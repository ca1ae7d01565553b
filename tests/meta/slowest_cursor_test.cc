// SlowestCursor: the earliest cursor, in stream order, of a destination's
// subscribed clients.
#include "canal/meta/slowest_cursor.h"

#include <gtest/gtest.h>

#include "canal/meta/memory_meta_manager.h"
#include "meta_test_util.h"

namespace canal::meta {
namespace {

using testing::Client;
using testing::Pos;

class SlowestCursorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(meta_.Start().ok()); }
  void TearDown() override { EXPECT_TRUE(meta_.Stop().ok()); }

  std::optional<LogPosition> Slowest(const std::string& destination = "example") {
    std::optional<LogPosition> out = Pos("sentinel", 1);
    Status s = SlowestCursor(&meta_, destination, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  MemoryMetaManager meta_;
};

TEST_F(SlowestCursorTest, NoClientsIsNullopt) { EXPECT_FALSE(Slowest().has_value()); }

TEST_F(SlowestCursorTest, ClientsWithoutCursorsAreNullopt) {
  ASSERT_TRUE(meta_.Subscribe(Client(1001)).ok());
  ASSERT_TRUE(meta_.Subscribe(Client(1002)).ok());
  EXPECT_FALSE(Slowest().has_value());
}

TEST_F(SlowestCursorTest, PicksTheEarliestByFileThenOffset) {
  for (int16_t id : {1001, 1002, 1003, 1004}) ASSERT_TRUE(meta_.Subscribe(Client(id)).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1001), Pos("mysql-bin.000010", 4)).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1002), Pos("mysql-bin.000009", 90000)).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1003), Pos("mysql-bin.000009", 120)).ok());
  // 1004 has no cursor yet: it does not hold the others back.
  auto slowest = Slowest();
  ASSERT_TRUE(slowest.has_value());
  EXPECT_EQ(*slowest, Pos("mysql-bin.000009", 120));
}

TEST_F(SlowestCursorTest, CursorInsideATransactionIsBeforeThatTransactionsEnd) {
  ASSERT_TRUE(meta_.Subscribe(Client(1001)).ok());
  ASSERT_TRUE(meta_.Subscribe(Client(1002)).ok());
  LogPosition piece = Pos("mysql-bin.000009", 5000);
  piece.included = true;
  piece.transaction_begin = 400;
  ASSERT_TRUE(meta_.UpdateCursor(Client(1001), Pos("mysql-bin.000009", 9000)).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1002), piece).ok());
  auto slowest = Slowest();
  ASSERT_TRUE(slowest.has_value());
  EXPECT_EQ(*slowest, piece);
}

TEST_F(SlowestCursorTest, OnlyTheNamedDestinationCounts) {
  ASSERT_TRUE(meta_.Subscribe(Client(1001, "example")).ok());
  ASSERT_TRUE(meta_.Subscribe(Client(1001, "other")).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1001, "example"), Pos("mysql-bin.000009", 900)).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1001, "other"), Pos("mysql-bin.000001", 4)).ok());
  EXPECT_EQ(*Slowest("example"), Pos("mysql-bin.000009", 900));
  EXPECT_EQ(*Slowest("other"), Pos("mysql-bin.000001", 4));
  EXPECT_FALSE(Slowest("nobody").has_value());
}

TEST_F(SlowestCursorTest, UnsubscribedClientNoLongerCounts) {
  ASSERT_TRUE(meta_.Subscribe(Client(1001)).ok());
  ASSERT_TRUE(meta_.Subscribe(Client(1002)).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1001), Pos("mysql-bin.000009", 100)).ok());
  ASSERT_TRUE(meta_.UpdateCursor(Client(1002), Pos("mysql-bin.000009", 200)).ok());
  ASSERT_TRUE(meta_.Unsubscribe(Client(1001)).ok());
  EXPECT_EQ(*Slowest(), Pos("mysql-bin.000009", 200));
}

TEST_F(SlowestCursorTest, StoppedManagerIsAnErrorNamingTheDestination) {
  ASSERT_TRUE(meta_.Stop().ok());
  std::optional<LogPosition> out = Pos("stale", 4);
  Status s = SlowestCursor(&meta_, "example", &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("destination example"), std::string::npos) << s.ToString();
  EXPECT_FALSE(out.has_value());
  ASSERT_TRUE(meta_.Start().ok());  // TearDown stops it again
}

}  // namespace
}  // namespace canal::meta
