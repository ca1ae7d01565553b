// The placement function (coord/placement.h): pure, no ZooKeeper.
#include "canal/coord/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace canal::coord {
namespace {

std::string Dest(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "d%02d", i);
  return buf;
}

std::set<std::string> Dests(int from, int to) {  // [from, to)
  std::set<std::string> out;
  for (int i = from; i < to; ++i) out.insert(Dest(i));
  return out;
}

PlacementServer Server(std::string id, std::set<std::string> dests, uint32_t cap = 0, bool draining = false) {
  return PlacementServer{std::move(id), cap, draining, std::move(dests)};
}

std::vector<PlacementDestination> Destinations(int n) {
  std::vector<PlacementDestination> out;
  for (int i = 0; i < n; ++i) out.push_back(PlacementDestination{Dest(i)});
  return out;
}

std::map<std::string, size_t> Counts(const PlacementResult& r) {
  std::map<std::string, size_t> counts;
  for (const auto& [d, s] : r.assignment) counts[s] += 1;
  return counts;
}

// Each destination at most once among the moves.
void ExpectEachMovesOnce(const PlacementResult& r) {
  std::set<std::string> seen;
  for (const PlacementMove& m : r.moves) EXPECT_TRUE(seen.insert(m.destination).second) << m.destination;
}

PlacementInput ThreeServers(int n) {
  PlacementInput in;
  for (const char* id : {"10.0.0.1:11111", "10.0.0.2:11111", "10.0.0.3:11111"}) {
    in.servers.push_back(Server(id, Dests(0, n)));
  }
  in.destinations = Destinations(n);
  return in;
}

TEST(Placement, BalancesThirtyOverThreeFromScratch) {
  const PlacementResult r = Place(ThreeServers(30));
  EXPECT_EQ(r.assignment.size(), 30u);
  EXPECT_TRUE(r.unassigned.empty());
  for (const auto& [id, n] : Counts(r)) EXPECT_EQ(n, 10u) << id;
  EXPECT_EQ(r.moves.size(), 30u);  // all new
  for (const PlacementMove& m : r.moves) EXPECT_EQ(m.from, "");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Placement, AJoinMovesOnlyWhatEvensTheLoad) {
  PlacementInput in = ThreeServers(30);
  for (int i = 0; i < 30; ++i) in.previous[Dest(i)] = i < 15 ? "10.0.0.1:11111" : "10.0.0.2:11111";
  const PlacementResult r = Place(in);
  for (const auto& [id, n] : Counts(r)) EXPECT_EQ(n, 10u) << id;
  ASSERT_EQ(r.moves.size(), 10u);
  std::map<std::string, int> from;
  for (const PlacementMove& m : r.moves) {
    EXPECT_EQ(m.to, "10.0.0.3:11111");
    from[m.from] += 1;
  }
  EXPECT_EQ(from["10.0.0.1:11111"], 5);
  EXPECT_EQ(from["10.0.0.2:11111"], 5);
  ExpectEachMovesOnce(r);
}

TEST(Placement, ALeaveSpreadsTheLostOnesEvenlyOverTheOthers) {
  PlacementInput in = ThreeServers(30);
  const PlacementResult before = Place(in);
  in.previous = before.assignment;
  in.servers.pop_back();  // 10.0.0.3 is gone
  const PlacementResult r = Place(in);
  EXPECT_EQ(Counts(r), (std::map<std::string, size_t>{{"10.0.0.1:11111", 15}, {"10.0.0.2:11111", 15}}));
  ASSERT_EQ(r.moves.size(), 10u);
  for (const PlacementMove& m : r.moves) EXPECT_EQ(m.from, "10.0.0.3:11111");
  // The others kept every destination they had.
  for (const auto& [d, s] : before.assignment) {
    if (s != "10.0.0.3:11111") {
      EXPECT_EQ(r.assignment.at(d), s) << d;
    }
  }
}

TEST(Placement, UnitWeightsEndWithFloorOrCeilAndMoveOnlyWhatThatTakes) {
  std::mt19937 rng(7);
  for (int n = 0; n <= 40; n += 3) {
    for (int s = 1; s <= 6; ++s) {
      PlacementInput in;
      for (int i = 0; i < s; ++i) in.servers.push_back(Server("h" + std::to_string(i) + ":1", Dests(0, n)));
      in.destinations = Destinations(n);
      // A random previous assignment over the same servers, plus some on a server now gone.
      for (int i = 0; i < n; ++i) {
        const int who = static_cast<int>(rng() % static_cast<unsigned>(s + 1));
        in.previous[Dest(i)] = "h" + std::to_string(who) + ":1";
      }
      const PlacementResult r = Place(in);
      ASSERT_EQ(r.assignment.size(), static_cast<size_t>(n));
      std::map<std::string, size_t> counts = Counts(r);
      const size_t lo = static_cast<size_t>(n / s), hi = lo + (n % s != 0 ? 1 : 0);
      for (int i = 0; i < s; ++i) {
        const size_t c = counts["h" + std::to_string(i) + ":1"];
        EXPECT_TRUE(c == lo || c == hi) << "n=" << n << " s=" << s << " server " << i << " has " << c;
      }
      // Fewest moves: the ones off the gone server, plus what each overfull server must shed.
      std::map<std::string, size_t> prev_counts;
      size_t orphans = 0;
      for (const auto& [d, id] : in.previous) {
        if (id == "h" + std::to_string(s) + ":1") {
          ++orphans;
        } else {
          prev_counts[id] += 1;
        }
      }
      size_t shed = 0;
      for (const auto& [id, c] : prev_counts) shed += c > hi ? c - hi : 0;
      EXPECT_LE(r.moves.size(), orphans + shed + static_cast<size_t>(s)) << "n=" << n << " s=" << s;
      ExpectEachMovesOnce(r);
    }
  }
}

TEST(Placement, CapsThatCannotHoldEverythingListTheRestWithReasons) {
  PlacementInput in;
  in.servers = {Server("a:1", Dests(0, 15), 5), Server("b:1", Dests(0, 15), 4)};
  in.destinations = Destinations(15);
  const PlacementResult r = Place(in);
  EXPECT_EQ(Counts(r), (std::map<std::string, size_t>{{"a:1", 5}, {"b:1", 4}}));
  ASSERT_EQ(r.unassigned.size(), 6u);
  for (const auto& [d, why] : r.unassigned) {
    EXPECT_NE(why.find("cap"), std::string::npos) << why;
    EXPECT_NE(why.find("canal.cluster.max.destinations"), std::string::npos) << why;
  }
}

TEST(Placement, CapsHoldAgainstStickinessAndPins) {
  PlacementInput in;
  in.servers = {Server("a:1", Dests(0, 10), 3), Server("b:1", Dests(0, 10), 0)};
  in.destinations = Destinations(10);
  for (int i = 0; i < 10; ++i) in.previous[Dest(i)] = "a:1";  // a had everything before its cap was lowered
  for (int i = 5; i < 10; ++i) in.destinations[i].pin = "a:1";
  const PlacementResult r = Place(in);
  EXPECT_EQ(Counts(r)["a:1"], 3u);
  EXPECT_EQ(Counts(r)["b:1"], 7u);
  // Pins claim the cap first (by name), then nothing more fits.
  for (int i = 5; i < 8; ++i) EXPECT_EQ(r.assignment.at(Dest(i)), "a:1");
  EXPECT_FALSE(r.warnings.empty());  // two pins could not be honoured
}

TEST(Placement, DrainEmptiesAServer) {
  PlacementInput in = ThreeServers(30);
  in.previous = Place(in).assignment;
  in.servers[1].draining = true;
  const PlacementResult r = Place(in);
  EXPECT_EQ(Counts(r), (std::map<std::string, size_t>{{"10.0.0.1:11111", 15}, {"10.0.0.3:11111", 15}}));
  EXPECT_EQ(r.moves.size(), 10u);
  for (const PlacementMove& m : r.moves) EXPECT_EQ(m.from, "10.0.0.2:11111");
}

TEST(Placement, DrainedOrExcludedEverywhereIsUnassignedWithAReason) {
  PlacementInput in;
  in.servers = {Server("a:1", {"x", "y"}, 0, /*draining=*/true), Server("b:1", {"y"})};
  in.destinations = {PlacementDestination{"x"}, PlacementDestination{"y", 1.0, {}, {"b:1"}}};
  const PlacementResult r = Place(in);
  EXPECT_TRUE(r.assignment.empty());
  ASSERT_EQ(r.unassigned.size(), 2u);
  for (const auto& [d, why] : r.unassigned) EXPECT_NE(why.find("excluded or draining"), std::string::npos) << why;
}

TEST(Placement, PinsAreHonouredAndNeverRebalanced) {
  PlacementInput in = ThreeServers(6);
  for (int i = 0; i < 6; ++i) in.destinations[i].pin = "10.0.0.1:11111";
  const PlacementResult r = Place(in);
  EXPECT_EQ(Counts(r)["10.0.0.1:11111"], 6u);
  EXPECT_TRUE(r.warnings.empty());
  // A pin moves a destination off its previous server.
  PlacementInput in2 = ThreeServers(3);
  in2.previous = {{Dest(0), "10.0.0.2:11111"}};
  in2.destinations[0].pin = "10.0.0.3:11111";
  const PlacementResult r2 = Place(in2);
  EXPECT_EQ(r2.assignment.at(Dest(0)), "10.0.0.3:11111");
}

TEST(Placement, PinsToServersThatCannotRunItAreNotHonoured) {
  PlacementInput in;
  in.servers = {Server("a:1", {"x", "y", "z"}), Server("b:1", {"y"}), Server("c:1", {"x", "y", "z"}, 0, true)};
  in.destinations = {PlacementDestination{"x", 1, {}, {}, "b:1"},     // b does not list it
                     PlacementDestination{"y", 1, {}, {"b:1"}, "b:1"},  // b is excluded
                     PlacementDestination{"z", 1, {}, {}, "c:1"}};    // c is draining
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment, (std::map<std::string, std::string>{{"x", "a:1"}, {"y", "a:1"}, {"z", "a:1"}}));
  EXPECT_EQ(r.warnings.size(), 3u);
}

TEST(Placement, PreferredServersComeFirstWhileUnderCap) {
  PlacementInput in;
  in.servers = {Server("a:1", Dests(0, 6), 2), Server("b:1", Dests(0, 6)), Server("c:1", Dests(0, 6))};
  in.destinations = Destinations(6);
  for (auto& d : in.destinations) d.preferred = {"a:1"};
  const PlacementResult r = Place(in);
  EXPECT_EQ(Counts(r)["a:1"], 2u);  // its cap; the rest spread over the others
  EXPECT_EQ(Counts(r)["b:1"], 2u);
  EXPECT_EQ(Counts(r)["c:1"], 2u);
  // Among several preferred servers, balanced; nothing goes elsewhere.
  PlacementInput in2 = ThreeServers(6);
  for (auto& d : in2.destinations) d.preferred = {"10.0.0.2:11111", "10.0.0.3:11111"};
  const PlacementResult r2 = Place(in2);
  EXPECT_EQ(Counts(r2), (std::map<std::string, size_t>{{"10.0.0.2:11111", 3}, {"10.0.0.3:11111", 3}}));
}

TEST(Placement, ExcludedServersNeverGetIt) {
  PlacementInput in = ThreeServers(12);
  for (auto& d : in.destinations) d.excluded = {"10.0.0.1:11111"};
  const PlacementResult r = Place(in);
  EXPECT_EQ(Counts(r), (std::map<std::string, size_t>{{"10.0.0.2:11111", 6}, {"10.0.0.3:11111", 6}}));
  // Excluded wins over preferred, and over stickiness.
  in.destinations[0].preferred = {"10.0.0.1:11111"};
  in.previous[Dest(1)] = "10.0.0.1:11111";
  const PlacementResult r2 = Place(in);
  EXPECT_NE(r2.assignment.at(Dest(0)), "10.0.0.1:11111");
  EXPECT_NE(r2.assignment.at(Dest(1)), "10.0.0.1:11111");
}

TEST(Placement, OneHeavyDestinationBalancesByWeight) {
  PlacementInput in;
  in.servers = {Server("a:1", Dests(0, 11)), Server("b:1", Dests(0, 11))};
  in.destinations = Destinations(11);
  in.destinations[10].weight = 10.0;  // as heavy as the ten others together
  const PlacementResult r = Place(in);
  const std::string heavy_on = r.assignment.at(Dest(10));
  for (int i = 0; i < 10; ++i) EXPECT_NE(r.assignment.at(Dest(i)), heavy_on) << Dest(i);
  // From a previous that put it with half the others: they move off it, it stays.
  for (int i = 0; i < 11; ++i) in.previous[Dest(i)] = i % 2 == 0 ? "a:1" : "b:1";  // d10 on a with d00..d08 evens
  const PlacementResult r2 = Place(in);
  EXPECT_EQ(r2.assignment.at(Dest(10)), "a:1");
  EXPECT_EQ(Counts(r2)["a:1"], 1u);
  ExpectEachMovesOnce(r2);
}

TEST(Placement, NoMoveThatDoesNotStrictlyReduceTheSpread) {
  PlacementInput in;
  in.servers = {Server("a:1", {"x", "y"}), Server("b:1", {"x", "y"})};
  in.destinations = {PlacementDestination{"x", 3.0}, PlacementDestination{"y", 2.0}};
  in.previous = {{"x", "a:1"}, {"y", "b:1"}};
  const PlacementResult r = Place(in);
  EXPECT_TRUE(r.moves.empty());
  // Two servers with 2 and 1 unit destinations: moving one gives 1 and 2, no better.
  PlacementInput in2 = ThreeServers(3);
  in2.servers.pop_back();
  in2.previous = {{Dest(0), "10.0.0.1:11111"}, {Dest(1), "10.0.0.1:11111"}, {Dest(2), "10.0.0.2:11111"}};
  EXPECT_TRUE(Place(in2).moves.empty());
}

TEST(Placement, ServersListingDifferentDestinationsGetOnlyWhatTheyList) {
  PlacementInput in;
  in.servers = {Server("a:1", Dests(0, 10)), Server("b:1", Dests(5, 15)), Server("c:1", Dests(10, 20))};
  in.destinations = Destinations(20);
  const PlacementResult r = Place(in);
  ASSERT_EQ(r.assignment.size(), 20u);
  for (const auto& [d, id] : r.assignment) {
    const auto& server = *std::find_if(in.servers.begin(), in.servers.end(), [&](auto& s) { return s.id == id; });
    EXPECT_EQ(server.destinations.count(d), 1u) << d << " on " << id;
  }
  for (const auto& [id, n] : Counts(r)) EXPECT_TRUE(n == 6 || n == 7) << id << " " << n;
}

TEST(Placement, IsDeterministicWhateverTheInputOrder) {
  PlacementInput in = ThreeServers(25);
  in.destinations[3].weight = 2.5;
  in.destinations[7].preferred = {"10.0.0.2:11111"};
  in.previous = {{Dest(1), "10.0.0.3:11111"}, {Dest(2), "10.0.0.3:11111"}};
  const PlacementResult a = Place(in);
  std::mt19937 rng(1);
  for (int round = 0; round < 5; ++round) {
    PlacementInput shuffled = in;
    std::shuffle(shuffled.servers.begin(), shuffled.servers.end(), rng);
    std::shuffle(shuffled.destinations.begin(), shuffled.destinations.end(), rng);
    const PlacementResult b = Place(shuffled);
    EXPECT_EQ(a.assignment, b.assignment);
    EXPECT_EQ(a.unassigned, b.unassigned);
    EXPECT_EQ(a.moves, b.moves);
  }
  // And a second call on its own result moves nothing.
  in.previous = a.assignment;
  EXPECT_TRUE(Place(in).moves.empty());
}

TEST(Placement, AnEmptyClusterAssignsNothingAndSaysWhy) {
  EXPECT_TRUE(Place(PlacementInput{}).assignment.empty());
  PlacementInput in;
  in.destinations = Destinations(3);
  in.previous = {{Dest(0), "gone:1"}};
  const PlacementResult r = Place(in);
  EXPECT_TRUE(r.assignment.empty());
  ASSERT_EQ(r.unassigned.size(), 3u);
  for (const auto& [d, why] : r.unassigned) EXPECT_NE(why.find("no live server lists it"), std::string::npos);
  EXPECT_EQ(r.moves, (std::vector<PlacementMove>{{Dest(0), "gone:1", ""}}));
  // Servers but no destinations.
  PlacementInput servers_only;
  servers_only.servers = {Server("a:1", {})};
  EXPECT_TRUE(Place(servers_only).assignment.empty());
}

TEST(Placement, ADestinationRemovedFromEveryConfIsDropped) {
  PlacementInput in = ThreeServers(4);
  in.previous = Place(in).assignment;
  // d03 is no longer among the destinations: gone from the assignment, and not unassigned.
  in.destinations.pop_back();
  for (auto& s : in.servers) s.destinations.erase(Dest(3));
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment.count(Dest(3)), 0u);
  EXPECT_EQ(r.unassigned.count(Dest(3)), 0u);
  ASSERT_EQ(r.moves.size(), 1u);
  EXPECT_EQ(r.moves[0].destination, Dest(3));
  EXPECT_EQ(r.moves[0].to, "");
}

// ---- bad input ----------------------------------------------------------

TEST(PlacementBadInput, DuplicateServerIdsKeepTheFirst) {
  PlacementInput in;
  in.servers = {Server("a:1", {"x"}, 0), Server("a:1", {"y"}, 0, true), Server("b:1", {"x", "y"})};
  in.destinations = {PlacementDestination{"x"}, PlacementDestination{"y"}};
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment.size(), 2u);
  EXPECT_EQ(r.assignment.at("y"), "b:1");  // the first a:1 does not list y
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("a:1"), std::string::npos);
}

TEST(PlacementBadInput, DuplicateAndNamelessDestinationsAndIdlessServersAreIgnored) {
  PlacementInput in;
  in.servers = {Server("", {"x"}), Server("a:1", {"x", ""})};
  in.destinations = {PlacementDestination{"x", 1.0}, PlacementDestination{"x", 5.0}, PlacementDestination{""}};
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment, (std::map<std::string, std::string>{{"x", "a:1"}}));
  EXPECT_EQ(r.warnings.size(), 3u);
}

TEST(PlacementBadInput, WeightsThatAreNotFinitePositiveCountAsOne) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double w : {0.0, -1.0, -0.0, nan, inf, -inf}) {
    PlacementInput in = ThreeServers(6);
    for (auto& d : in.destinations) d.weight = w;
    const PlacementResult r = Place(in);
    for (const auto& [id, n] : Counts(r)) EXPECT_EQ(n, 2u) << "weight " << w;
    EXPECT_EQ(r.warnings.size(), 6u) << "weight " << w;
  }
  // Mixed: one NaN among unit weights still balances as unit weights.
  PlacementInput in = ThreeServers(9);
  in.destinations[4].weight = nan;
  for (const auto& [id, n] : Counts(Place(in))) EXPECT_EQ(n, 3u);
}

TEST(PlacementBadInput, HugeAndTinyWeightsDoNotBreakTheBalance) {
  PlacementInput in = ThreeServers(6);
  in.destinations[0].weight = 1e300;
  in.destinations[1].weight = 1e-300;
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment.size(), 6u);
  ExpectEachMovesOnce(r);
  in.previous = r.assignment;
  EXPECT_TRUE(Place(in).moves.empty());
}

TEST(PlacementBadInput, PinsToUnknownServersAreIgnored) {
  PlacementInput in = ThreeServers(3);
  in.destinations[0].pin = "nowhere:1";
  in.destinations[1].preferred = {"nowhere:1"};
  in.destinations[2].excluded = {"nowhere:1"};
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment.size(), 3u);
  for (const auto& [id, n] : Counts(r)) EXPECT_EQ(n, 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("nowhere:1"), std::string::npos);
}

TEST(PlacementBadInput, PreviousAssignmentsToUnknownServersOrNoneArePlacedAfresh) {
  PlacementInput in = ThreeServers(3);
  in.previous = {{Dest(0), "gone:1"}, {Dest(1), ""}, {"not-a-destination", "10.0.0.1:11111"}};
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment.size(), 3u);
  for (const auto& [id, n] : Counts(r)) EXPECT_EQ(n, 1u);
  // d01 had "" (none): a plain new placement; the unknown destination is dropped.
  bool dropped = false;
  for (const PlacementMove& m : r.moves) {
    if (m.destination == Dest(1)) {
      EXPECT_EQ(m.from, "");
    }
    if (m.destination == "not-a-destination") dropped = m.to.empty();
  }
  EXPECT_TRUE(dropped);
}

TEST(PlacementBadInput, AServerThatListsNothingOrIsAtCapZeroIsHarmless) {
  PlacementInput in = ThreeServers(4);
  in.servers.push_back(Server("empty:1", {}));
  in.servers.push_back(Server("max:1", Dests(0, 4), std::numeric_limits<uint32_t>::max()));
  const PlacementResult r = Place(in);
  EXPECT_EQ(r.assignment.size(), 4u);
  EXPECT_EQ(Counts(r).count("empty:1"), 0u);
}

TEST(PlacementBadInput, EveryDestinationMovesAtMostOnceFromASkewedStart) {
  PlacementInput in = ThreeServers(30);
  for (int i = 0; i < 30; ++i) in.previous[Dest(i)] = "10.0.0.1:11111";
  const PlacementResult r = Place(in);
  for (const auto& [id, n] : Counts(r)) EXPECT_EQ(n, 10u);
  EXPECT_EQ(r.moves.size(), 20u);
  ExpectEachMovesOnce(r);
}

// Random clusters (lists, caps, drains, exclusions, pins, weights, a random
// previous): every rule holds, and the same input gives the same output.
TEST(PlacementBadInput, RandomClustersKeepEveryRule) {
  std::mt19937 rng(12345);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int round = 0; round < 300; ++round) {
    const int ns = pick(6), nd = pick(25);
    PlacementInput in;
    for (int i = 0; i < ns; ++i) {
      std::set<std::string> listed;
      for (int d = 0; d < nd; ++d) {
        if (pick(3) != 0) listed.insert(Dest(d));
      }
      const auto cap = static_cast<uint32_t>(pick(4) == 0 ? pick(5) : 0);
      in.servers.push_back(Server("s" + std::to_string(i) + ":1", listed, cap, pick(6) == 0));
    }
    for (int d = 0; d < nd; ++d) {
      PlacementDestination pd{Dest(d)};
      const double weights[] = {1, 1, 1, 0.25, 3, 0, -2, std::nan("")};
      pd.weight = weights[pick(8)];
      if (pick(5) == 0) pd.pin = "s" + std::to_string(pick(7)) + ":1";
      if (pick(5) == 0) pd.preferred = {"s" + std::to_string(pick(7)) + ":1"};
      if (pick(5) == 0) pd.excluded = {"s" + std::to_string(pick(7)) + ":1"};
      in.destinations.push_back(pd);
      if (pick(2) == 0) in.previous[Dest(d)] = "s" + std::to_string(pick(7)) + ":1";
    }
    const PlacementResult r = Place(in);
    std::map<std::string, size_t> counts = Counts(r);
    for (const PlacementServer& s : in.servers) {
      if (s.cap != 0) {
        EXPECT_LE(counts[s.id], s.cap) << "round " << round;
      }
      if (s.draining) {
        EXPECT_EQ(counts[s.id], 0u) << "round " << round;
      }
    }
    for (const PlacementDestination& d : in.destinations) {
      const bool assigned = r.assignment.count(d.name) != 0;
      EXPECT_NE(assigned, r.unassigned.count(d.name) != 0) << "round " << round << " " << d.name;
      if (!assigned) continue;
      const std::string& id = r.assignment.at(d.name);
      const auto& server = *std::find_if(in.servers.begin(), in.servers.end(), [&](auto& s) { return s.id == id; });
      EXPECT_EQ(server.destinations.count(d.name), 1u) << "round " << round;
      EXPECT_EQ(std::count(d.excluded.begin(), d.excluded.end(), id), 0) << "round " << round;
    }
    ExpectEachMovesOnce(r);
    const PlacementResult again = Place(in);
    EXPECT_EQ(again.assignment, r.assignment);
    EXPECT_EQ(again.moves, r.moves);
  }
}

// ---- load factors ---------------------------------------------------------

TEST(PlacementLoadFactors, ArePowersOfTwoAroundTheMeanAndIgnoreBadRates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kMiB = 1 << 20;
  auto f = LoadFactors({{"a", 100 * kMiB}, {"b", 100 * kMiB}, {"c", 100 * kMiB}, {"d", 100 * kMiB}});
  for (const auto& [d, x] : f) EXPECT_EQ(x, 1.0) << d;
  f = LoadFactors({{"hot", 7000 * kMiB}, {"a", 1000 * kMiB}, {"b", 1000 * kMiB}, {"c", 1000 * kMiB}, {"idle", 0}});
  EXPECT_EQ(f["hot"], 4.0);  // 7000 / 2000 = 3.5 -> 4
  EXPECT_EQ(f["a"], 1.0);    // below the mean: 1
  EXPECT_EQ(f["idle"], 1.0);
  // Jitter around the mean changes nothing.
  f = LoadFactors({{"a", 1000 * kMiB}, {"b", 1100 * kMiB}, {"c", 950 * kMiB}});
  for (const auto& [d, x] : f) EXPECT_EQ(x, 1.0) << d;
  // An idle cluster's trickle (a start's first events on some, nothing on others) weighs nothing.
  f = LoadFactors({{"a", 3000}, {"b", 0}, {"c", 0}, {"d", 120}});
  for (const auto& [d, x] : f) EXPECT_EQ(x, 1.0) << d;
  // One busy destination among idle ones: its rate over 1 MiB/s, at most 8.
  f = LoadFactors({{"busy", 4 * kMiB}, {"b", 0}, {"c", 0}, {"d", 0}});
  EXPECT_EQ(f["busy"], 4.0);
  EXPECT_EQ(f["b"], 1.0);
  f = LoadFactors({{"busy", 400 * kMiB}, {"b", 0}, {"c", 0}});
  EXPECT_EQ(f["busy"], 4.0);  // 400 over the mean, 133: 3 -> 4
  std::map<std::string, double> many{{"busy", 400 * kMiB}};
  for (int i = 0; i < 19; ++i) many["idle" + std::to_string(i)] = 0;
  EXPECT_EQ(LoadFactors(many)["busy"], 8.0);  // 20x the mean, capped at 8
  // Bad rates count 1 and do not skew the mean; fewer than two usable rates: all 1.
  f = LoadFactors({{"a", nan}, {"b", -5}, {"c", std::numeric_limits<double>::infinity()}, {"d", 10}});
  for (const auto& [d, x] : f) EXPECT_EQ(x, 1.0) << d;
  f = LoadFactors({{"a", 0}, {"b", 0}});
  for (const auto& [d, x] : f) EXPECT_EQ(x, 1.0) << d;
  f = LoadFactors({{"a", 1e308}, {"b", 1e308}, {"c", 1}});
  for (const auto& [d, x] : f) EXPECT_TRUE(std::isfinite(x)) << d;
  EXPECT_TRUE(LoadFactors({}).empty());
}

}  // namespace
}  // namespace canal::coord
