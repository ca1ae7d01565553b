#include "canal/common/room_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace canal {
namespace {

TEST(RoomBuffer, GrowthKeepsWhatWasWritten) {
  RoomBuffer b;
  EXPECT_TRUE(b.empty());
  b.Append("");  // an empty buffer has no storage yet: nothing to copy into
  EXPECT_TRUE(b.empty());
  std::string expected;
  for (int i = 0; i < 100'000; ++i) {
    const std::string piece = std::to_string(i) + ",";
    b.Append(piece);
    expected += piece;
  }
  b.Append('!');
  expected += '!';
  EXPECT_EQ(b.view(), expected);
  EXPECT_EQ(b.size(), expected.size());
}

TEST(RoomBuffer, RoomIsWrittenThroughAndCommitKeepsOnlyWhatWasWritten) {
  RoomBuffer b;
  b.Append("ab");
  char* p = b.Room(1 << 20);  // more than the first allocation
  p[0] = 'c';
  p[1] = 'd';
  b.Commit(p + 2);
  EXPECT_EQ(b.view(), "abcd");
}

TEST(RoomBuffer, ClearKeepsTheCapacity) {
  RoomBuffer b;
  b.Append(std::string(200'000, 'x'));
  const char* before = b.Room(0);
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.Room(200'000) - b.size(), before - 200'000) << "cleared, the same storage is reused";
}

TEST(RoomBuffer, NumbersAtTheirLimits) {
  RoomBuffer b;
  b.AppendNumber(std::numeric_limits<int64_t>::min());
  b.Append(' ');
  b.AppendNumber(std::numeric_limits<int64_t>::max());
  b.Append(' ');
  b.AppendNumber(0);
  b.Append(' ');
  b.AppendNumber(-1);
  EXPECT_EQ(b.view(), "-9223372036854775808 9223372036854775807 0 -1");
}

}  // namespace
}  // namespace canal
