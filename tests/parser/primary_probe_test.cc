// ChoosePrimary and PrimaryProbe::Describe (parser/mysql/primary_probe.h): which candidate
// the stream follows, and what the log says about each.
#include <gtest/gtest.h>

#include <vector>

#include "canal/parser/mysql/primary_probe.h"

namespace canal::mysql {
namespace {

PrimaryProbe Probe(bool reachable, bool read_only, bool replicating) {
  PrimaryProbe p;
  p.reachable = reachable;
  p.read_only = read_only;
  p.replicating = replicating;
  p.server_id = 7;
  if (!reachable) p.error = "Connection refused";
  return p;
}

TEST(ChoosePrimary, TakesTheWritableServerThatDoesNotReplicate) {
  bool split = true;
  // A dead old primary, the promoted replica, a replica of it.
  EXPECT_EQ(ChoosePrimary({Probe(false, false, false), Probe(true, false, false), Probe(true, true, true)}, 0, &split),
            1);
  EXPECT_FALSE(split);
  // A replica that is writable but still replicating is not it (a promotion half done).
  EXPECT_EQ(ChoosePrimary({Probe(true, false, true), Probe(true, true, false)}, 0, &split), -1);
  EXPECT_EQ(ChoosePrimary({}, -1, &split), -1);
}

TEST(ChoosePrimary, TwoWritableServersKeepTheCurrentOneAndSaySplit) {
  bool split = false;
  const std::vector<PrimaryProbe> two = {Probe(true, false, false), Probe(true, false, false)};
  EXPECT_EQ(ChoosePrimary(two, 1, &split), 1);
  EXPECT_TRUE(split);
  EXPECT_EQ(ChoosePrimary(two, -1, &split), 0);
}

TEST(PrimaryProbe, DescribesEachRole) {
  EXPECT_EQ(Probe(false, false, false).Describe(), "unreachable: Connection refused");
  EXPECT_EQ(Probe(true, false, false).Describe(), "read_only=OFF, not replicating (server_id 7)");
  PrimaryProbe replica = Probe(true, true, true);
  replica.replicating_from = "10.0.0.1:3306";
  EXPECT_EQ(replica.Describe(), "read_only=ON, replicating from 10.0.0.1:3306 (server_id 7)");
  PrimaryProbe unknown = Probe(true, true, false);
  unknown.replication_unknown = "replication status not readable (GRANT SLAVE MONITOR ...)";
  EXPECT_EQ(unknown.Describe(), "read_only=ON, replication status not readable (GRANT SLAVE MONITOR ...) (server_id 7)");
}

}  // namespace
}  // namespace canal::mysql
