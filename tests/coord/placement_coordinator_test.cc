// PlacementCoordinator against the live ZooKeeper sandbox (port 12181, a
// chroot per test under ctest): three coordinators with three ZkClients in
// one process share 30 destinations. Skips when ZooKeeper is not installed.
#include "canal/coord/placement_coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "canal/coord/testing/expire_session.h"
#include "canal/coord/zk_client.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_suite.h"

namespace canal::coord {
namespace {

using namespace std::chrono_literals;
using canal::testing::WaitFor;

constexpr uint16_t kZkPort = canal::testing::TestPort("zk_coord");
constexpr int kDestinations = 30;

std::string Dest(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "d%02d", i);
  return buf;
}

std::set<std::string> AllDestinations() {
  std::set<std::string> out;
  for (int i = 0; i < kDestinations; ++i) out.insert(Dest(i));
  return out;
}

std::string Address(int i) { return "127.0.0.1:" + std::to_string(21000 + i); }

std::map<std::string, size_t> Counts(const Assignment& a) {
  std::map<std::string, size_t> counts;
  for (const auto& [d, s] : a.assignment) counts[s] += 1;
  return counts;
}

// Every assignment the coordinators' callbacks saw, whoever saw it.
class Recorder {
 public:
  void Add(const Assignment& a) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_[a.generation] = a;
  }
  // Generations after `after`, in order.
  std::vector<Assignment> Since(uint64_t after) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Assignment> out;
    for (auto it = seen_.upper_bound(after); it != seen_.end(); ++it) out.push_back(it->second);
    return out;
  }

 private:
  std::mutex mu_;
  std::map<uint64_t, Assignment> seen_;
};

// How often each destination changed server from `start` through `later`.
std::map<std::string, int> MovesPerDestination(const Assignment& start, const std::vector<Assignment>& later) {
  std::map<std::string, int> moves;
  std::map<std::string, std::string> where = start.assignment;
  for (const Assignment& a : later) {
    for (const auto& [d, s] : a.assignment) {
      auto it = where.find(d);
      if (it != where.end() && it->second != s) moves[d] += 1;
      where[d] = s;
    }
  }
  return moves;
}

class PlacementCoordinatorTest : public canal::testing::ZkSuite<kZkPort> {
 protected:
  struct Node {
    std::unique_ptr<ZkClient> zk;
    std::unique_ptr<PlacementCoordinator> coord;
  };

  void SetUp() override {
    ZkSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    observer_ = Connect();
    ASSERT_NE(observer_, nullptr);
    // Run by hand (no chroot per test), tests share the server: start clean.
    ASSERT_TRUE(observer_->Delete(layout::kPlacementRoot, true).ok());
  }

  void TearDown() override {
    for (Node& n : nodes_) {
      if (n.zk != nullptr) n.zk->Close();  // no clean leave: quicker
      n.coord.reset();
    }
  }

  PlacementCoordinatorOptions Options(int i) {
    PlacementCoordinatorOptions o;
    o.address = Address(i);
    o.destinations = AllDestinations();
    o.coalesce = 100ms;
    o.retry_min = 50ms;
    o.retry_max = 1000ms;
    o.load_interval = 500ms;
    o.on_assignment = [this](const Assignment& a, uint64_t generation) {
      EXPECT_EQ(a.generation, generation);
      recorder_.Add(a);
    };
    return o;
  }

  // Starts (or restarts) node i with a ZkClient of its own.
  void StartNode(int i, PlacementCoordinatorOptions o, int session_ms = 6000) {
    if (nodes_.size() <= static_cast<size_t>(i)) nodes_.resize(i + 1);
    Node& n = nodes_[i];
    n.zk = ZkSuite::Connect(ZkSuite::Options(session_ms, 2000));
    ASSERT_NE(n.zk, nullptr);
    n.coord = std::make_unique<PlacementCoordinator>(n.zk.get(), std::move(o));
    ASSERT_TRUE(n.coord->Start().ok());
  }
  void StartNode(int i) { StartNode(i, Options(i)); }

  // A crash: the session closes at once (its ephemeral nodes go), no clean leave.
  void Crash(int i) {
    nodes_[i].zk->Close();
    nodes_[i].coord.reset();
    nodes_[i].zk.reset();
  }

  Assignment InZk() {
    ClusterView view;
    if (!ReadClusterView(observer_.get(), &view).ok() || !view.has_assignment) return Assignment{};
    return view.assignment;
  }

  // The assignment in ZooKeeper gives each server `want` destinations, none
  // unassigned, and every running coordinator has seen it.
  bool WaitCounts(const std::map<std::string, size_t>& want, std::chrono::milliseconds limit = 20s) {
    return WaitFor(
        [&] {
          const Assignment a = InZk();
          if (Counts(a) != want || !a.unassigned.empty()) return false;
          for (const Node& n : nodes_) {
            if (n.coord != nullptr && n.coord->CurrentAssignment().generation != a.generation) return false;
          }
          return true;
        },
        limit, 50ms);
  }

  std::map<std::string, size_t> Even(std::vector<int> who, size_t each) {
    std::map<std::string, size_t> want;
    for (int i : who) want[Address(i)] = each;
    return want;
  }

  int Leader() {
    int leader = -1;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].coord != nullptr && nodes_[i].coord->IsLeader()) {
        if (leader != -1) return -2;  // two leaders
        leader = static_cast<int>(i);
      }
    }
    return leader;
  }

  std::unique_ptr<ZkClient> observer_;
  std::vector<Node> nodes_;
  Recorder recorder_;
};

TEST_F(PlacementCoordinatorTest, ThreeServersGetTenEachAndOneLeads) {
  for (int i = 0; i < 3; ++i) StartNode(i);
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  EXPECT_GE(Leader(), 0);
  ClusterView view;
  ASSERT_TRUE(ReadClusterView(observer_.get(), &view).ok());
  EXPECT_EQ(view.servers.size(), 3u);
  EXPECT_EQ(view.leader, Address(Leader()));
  EXPECT_EQ(view.assignment.leader, view.leader);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(view.servers.at(Address(i)).destinations, AllDestinations());
    EXPECT_EQ(nodes_[i].coord->AssignedHere().size(), 10u);
  }
  // Nothing changes while nothing happens: no rewrite.
  const uint64_t generation = view.assignment.generation;
  std::this_thread::sleep_for(500ms);  // (checks that something does NOT happen)
  EXPECT_EQ(InZk().generation, generation);
}

TEST_F(PlacementCoordinatorTest, ACrashSpreadsItsDestinationsAndARestartTakesTenBackMovingEachOnce) {
  for (int i = 0; i < 3; ++i) StartNode(i);
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  const Assignment before = InZk();

  const auto crashed_at = std::chrono::steady_clock::now();
  Crash(2);
  ASSERT_TRUE(WaitCounts(Even({0, 1}, 15), 10s));
  EXPECT_LT(canal::testing::SecondsSince(crashed_at), 5.0);
  const Assignment after_crash = InZk();
  for (const auto& [d, s] : before.assignment) {
    if (s != Address(2)) {
      EXPECT_EQ(after_crash.assignment.at(d), s) << d << " moved though its server lived";
    }
  }
  const std::map<std::string, int> lost = MovesPerDestination(before, recorder_.Since(before.generation));
  EXPECT_EQ(lost.size(), 10u);
  for (const auto& [d, n] : lost) EXPECT_EQ(n, 1) << d << " moved more than once";

  StartNode(2);
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  const std::map<std::string, int> moves = MovesPerDestination(after_crash, recorder_.Since(after_crash.generation));
  EXPECT_EQ(moves.size(), 10u);
  for (const auto& [d, n] : moves) EXPECT_EQ(n, 1) << d << " moved more than once";
}

TEST_F(PlacementCoordinatorTest, ACleanStopHandsOverAtOnceWhateverTheLostServerDelay) {
  for (int i = 0; i < 3; ++i) {
    PlacementCoordinatorOptions o = Options(i);
    o.lost_server_delay = 60s;  // would hold a crashed server's destinations for a minute
    StartNode(i, std::move(o));
  }
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  // The leader itself (the harder case: it hands over its destinations and its lead).
  int leaving = -1;
  ASSERT_TRUE(WaitFor([&] { return (leaving = Leader()) >= 0; }, 10s));
  const auto start = std::chrono::steady_clock::now();
  nodes_[leaving].coord->Stop();
  EXPECT_LT(canal::testing::SecondsSince(start), 5.0);
  EXPECT_TRUE(nodes_[leaving].coord->AssignedHere().empty()) << "Stop returned before the handover";
  bool exists = true;
  ASSERT_TRUE(observer_->Exists(layout::PlacementServerPath(Address(leaving)), &exists).ok());
  EXPECT_FALSE(exists);
  nodes_[leaving].coord.reset();
  std::vector<int> others;
  for (int i = 0; i < 3; ++i) {
    if (i != leaving) others.push_back(i);
  }
  ASSERT_TRUE(WaitCounts(Even(others, 15), 5s));
  EXPECT_TRUE(WaitFor([&] { return Leader() >= 0; }, 10s));
}

TEST_F(PlacementCoordinatorTest, DrainEmptiesAServerAndUndrainRebalances) {
  for (int i = 0; i < 3; ++i) StartNode(i);
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  ASSERT_TRUE(SetDrain(observer_.get(), Address(1), true).ok());
  ASSERT_TRUE(WaitCounts(Even({0, 2}, 15)));
  ClusterView view;
  ASSERT_TRUE(ReadClusterView(observer_.get(), &view).ok());
  EXPECT_EQ(view.drained, (std::set<std::string>{Address(1)}));
  ASSERT_TRUE(SetDrain(observer_.get(), Address(1), false).ok());
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
}

TEST_F(PlacementCoordinatorTest, ALeaderCrashElectsANewLeaderThatKeepsTheAssignment) {
  for (int i = 0; i < 3; ++i) {
    PlacementCoordinatorOptions o = Options(i);
    o.lost_server_delay = 3s;
    StartNode(i, std::move(o));
  }
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  int leader = -1;
  ASSERT_TRUE(WaitFor([&] { return (leader = Leader()) >= 0; }, 10s));
  const Assignment before = InZk();
  Crash(leader);
  int next = -1;
  ASSERT_TRUE(WaitFor([&] { return (next = Leader()) >= 0; }, 10s));
  EXPECT_NE(next, leader);
  // Within the delay the crashed server keeps its destinations: nothing moved, nothing rewritten.
  Assignment now = InZk();
  EXPECT_EQ(now.assignment, before.assignment);
  EXPECT_EQ(now.generation, before.generation);
  // Then they move, and the generation goes on from where it was.
  std::vector<int> others;
  for (int i = 0; i < 3; ++i) {
    if (i != leader) others.push_back(i);
  }
  ASSERT_TRUE(WaitCounts(Even(others, 15), 15s));
  now = InZk();
  EXPECT_EQ(now.generation, before.generation + 1);
  EXPECT_EQ(now.leader, Address(next));
}

TEST_F(PlacementCoordinatorTest, AnExpiredSessionWithinTheDelayMovesNothing) {
  for (int i = 0; i < 3; ++i) {
    PlacementCoordinatorOptions o = Options(i);
    o.lost_server_delay = 20s;
    StartNode(i, std::move(o));
  }
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  const Assignment before = InZk();
  const int victim = Leader() == 0 ? 1 : 0;  // not the leader
  const int64_t old_session = nodes_[victim].zk->session_id();
  ASSERT_TRUE(testing::ExpireSession(*nodes_[victim].zk).ok());
  // It reopens and registers again, and the assignment stays as it was.
  ASSERT_TRUE(WaitFor(
      [&] {
        bool exists = false;
        return nodes_[victim].zk->session_id() != old_session && nodes_[victim].zk->session_id() != 0 &&
               observer_->Exists(layout::PlacementServerPath(Address(victim)), &exists).ok() && exists;
      },
      20s));
  std::this_thread::sleep_for(500ms);  // (checks that nothing moves)
  EXPECT_EQ(InZk().assignment, before.assignment);
  EXPECT_EQ(nodes_[victim].coord->AssignedHere().size(), 10u);
}

TEST_F(PlacementCoordinatorTest, PinsAndWeightsAreHonoured) {
  for (int i = 0; i < 3; ++i) StartNode(i);
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  std::string pinned;
  for (const auto& [d, s] : InZk().assignment) {
    if (s != Address(2)) {
      pinned = d;
      break;
    }
  }
  ASSERT_TRUE(SetPin(observer_.get(), pinned, Address(2)).ok());
  ASSERT_TRUE(WaitFor([&] { return InZk().assignment[pinned] == Address(2); }, 10s));
  ASSERT_TRUE(WaitFor([&] { return nodes_[2].coord->AssignedHere().count(pinned) == 1; }, 10s));
  // A weight as heavy as ten destinations: its server sheds others to even the load.
  ASSERT_TRUE(SetPin(observer_.get(), pinned, "").ok());
  ASSERT_TRUE(SetWeight(observer_.get(), pinned, 10.0).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        const Assignment a = InZk();
        auto counts = Counts(a);
        auto it = a.assignment.find(pinned);
        return it != a.assignment.end() && counts[it->second] < 10;
      },
      10s));
  ClusterView view;
  ASSERT_TRUE(ReadClusterView(observer_.get(), &view).ok());
  EXPECT_EQ(view.weights.at(pinned), 10.0);
  EXPECT_TRUE(view.pins.empty());
  // The pins folder deleted by hand: the leader makes it again and still sees new pins.
  ASSERT_TRUE(observer_->Delete(layout::PlacementPinsPath(), true).ok());
  std::string other;
  for (const auto& [d, s] : InZk().assignment) {
    if (s != Address(0) && d != pinned) {
      other = d;
      break;
    }
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        bool exists = false;
        return observer_->Exists(layout::PlacementPinsPath(), &exists).ok() && exists;
      },
      10s));
  ASSERT_TRUE(SetPin(observer_.get(), other, Address(0)).ok());
  ASSERT_TRUE(WaitFor([&] { return InZk().assignment[other] == Address(0); }, 10s));
}

TEST_F(PlacementCoordinatorTest, ConfChangesAndLoadReachTheNodeAndTheAssignment) {
  for (int i = 0; i < 3; ++i) StartNode(i);
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  // Server 0 no longer lists d00..d14: it only keeps what it still lists.
  std::set<std::string> fewer;
  for (int i = 15; i < kDestinations; ++i) fewer.insert(Dest(i));
  nodes_[0].coord->SetDestinations(fewer);
  ASSERT_TRUE(WaitFor(
      [&] {
        const Assignment a = InZk();
        for (const auto& [d, s] : a.assignment) {
          if (s == Address(0) && fewer.count(d) == 0) return false;
        }
        return a.assignment.size() == kDestinations && a.generation == nodes_[0].coord->CurrentAssignment().generation;
      },
      10s));
  // A destination no conf lists any more is dropped.
  for (int i = 0; i < 3; ++i) {
    std::set<std::string> without = i == 0 ? fewer : AllDestinations();
    without.erase(Dest(29));
    nodes_[i].coord->SetDestinations(without);
  }
  ASSERT_TRUE(WaitFor([&] { return InZk().assignment.size() == kDestinations - 1; }, 10s));
  EXPECT_EQ(InZk().unassigned.count(Dest(29)), 0u);
  // Load reaches the node, at most once per load_interval (500 ms here).
  auto load_is = [&](double rate) {
    return WaitFor(
        [&] {
          ClusterView view;
          return ReadClusterView(observer_.get(), &view).ok() && view.servers.count(Address(1)) != 0 &&
                 view.servers.at(Address(1)).load == std::map<std::string, double>{{Dest(1), rate}};
        },
        10s, 10ms);
  };
  const auto start = std::chrono::steady_clock::now();
  nodes_[1].coord->SetLoad({{Dest(1), 1000.0}});
  ASSERT_TRUE(load_is(1000.0));
  nodes_[1].coord->SetLoad({{Dest(1), 2000.0}});
  ASSERT_TRUE(load_is(2000.0));
  EXPECT_GE(canal::testing::SecondsSince(start), 0.5) << "two load writes closer than load_interval";
}

TEST_F(PlacementCoordinatorTest, ZooKeeperRestartKeepsTheAssignment) {
  for (int i = 0; i < 3; ++i) {
    PlacementCoordinatorOptions o = Options(i);
    o.lost_server_delay = 20s;  // even if a session did not survive, nothing moves
    StartNode(i, std::move(o), /*session_ms=*/20000);
  }
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  const Assignment before = InZk();
  ASSERT_TRUE(sandbox_->Restart()) << sandbox_->error();
  ASSERT_TRUE(observer_->WaitConnected(20s).ok());
  ASSERT_TRUE(WaitFor([&] { return Leader() >= 0 && InZk().generation != 0; }, 30s));
  EXPECT_EQ(InZk().assignment, before.assignment);
  // Still watching after the restart: a drain is acted on.
  ASSERT_TRUE(SetDrain(observer_.get(), Address(0), true).ok());
  ASSERT_TRUE(WaitCounts(Even({1, 2}, 15), 20s));
  EXPECT_GT(InZk().generation, before.generation);
}

TEST_F(PlacementCoordinatorTest, MalformedNodesNeverStopTheLeader) {
  StartNode(0);
  ASSERT_TRUE(WaitCounts(Even({0}, 30)));
  const uint64_t generation = InZk().generation;
  bool created = false;
  ASSERT_TRUE(observer_->CreateNode(layout::PlacementServerPath("9.9.9.9:1"), std::string(500, '{'),
                                    ZkCreateMode::kEphemeral, true, &created).ok());
  ASSERT_TRUE(observer_->SetOrCreate(layout::PlacementPinPath(Dest(0)), "\xff garbage").ok());
  ASSERT_TRUE(observer_->SetOrCreate(layout::PlacementWeightPath(Dest(1)), "NaN").ok());
  ASSERT_TRUE(observer_->SetOrCreate(layout::PlacementAssignmentPath(), "{\"generation\":1e999}").ok());
  // The leader rewrites the unreadable assignment, with a generation past every one it saw.
  ASSERT_TRUE(WaitFor(
      [&] {
        const Assignment a = InZk();
        return a.generation > generation && a.assignment.size() == kDestinations;
      },
      10s));
  ClusterView view;
  ASSERT_TRUE(ReadClusterView(observer_.get(), &view).ok());
  EXPECT_EQ(view.unreadable.size(), 3u);  // the server, the pin, the weight
  // A second server still joins and gets its share.
  StartNode(1);
  ASSERT_TRUE(WaitCounts(Even({0, 1}, 15)));
}

TEST_F(PlacementCoordinatorTest, BadArgumentsAreRefused) {
  PlacementCoordinatorOptions o = Options(0);
  o.address = "no-port";
  PlacementCoordinator bad_address(observer_.get(), o);
  EXPECT_EQ(bad_address.Start().code(), Status::Code::kInvalidArgument);
  o = Options(0);
  o.destinations.insert("a/b");
  PlacementCoordinator bad_name(observer_.get(), o);
  EXPECT_EQ(bad_name.Start().code(), Status::Code::kInvalidArgument);
  PlacementCoordinator no_client(nullptr, Options(0));
  EXPECT_EQ(no_client.Start().code(), Status::Code::kInvalidArgument);
  PlacementCoordinator twice(observer_.get(), Options(0));
  ASSERT_TRUE(twice.Start().ok());
  EXPECT_EQ(twice.Start().code(), Status::Code::kInvalidArgument);
  twice.Stop();
  twice.Stop();  // idempotent
  EXPECT_EQ(SetDrain(observer_.get(), "x/y", true).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(SetDrain(nullptr, Address(0), true).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(SetPin(observer_.get(), "..", Address(0)).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(SetPin(observer_.get(), "d", "nowhere").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(SetWeight(observer_.get(), "d", -1).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(SetWeight(observer_.get(), "d", std::nan("")).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(SetWeight(observer_.get(), "d", 0).ok());  // removes (none there)
  ClusterView empty;
  ASSERT_TRUE(observer_->Delete(layout::kPlacementRoot, true).ok());
  ASSERT_TRUE(ReadClusterView(observer_.get(), &empty).ok());
  EXPECT_TRUE(empty.servers.empty());
  EXPECT_FALSE(empty.has_assignment);
}

// A conf's hints (canal.instance.cluster.*) reach the leader with the server's node: a
// destination excluded from a server never runs there, one preferred goes there first.
TEST_F(PlacementCoordinatorTest, HintsFromTheConfsAreHonoured) {
  for (int i = 0; i < 3; ++i) StartNode(i);
  ASSERT_TRUE(WaitCounts(Even({0, 1, 2}, 10)));
  const Assignment before = InZk();
  std::string moved;
  for (const auto& [d, s] : before.assignment) {
    if (s == Address(0)) {
      moved = d;
      break;
    }
  }
  ASSERT_FALSE(moved.empty());
  // Server 1 says: never on server 0, preferably on server 2.
  std::map<std::string, layout::DestinationHints> hints;
  hints[moved] = layout::DestinationHints{1.0, {Address(2)}, {Address(0)}};
  nodes_[1].coord->SetHints(hints);
  ASSERT_TRUE(WaitFor([&] { return InZk().assignment[moved] != Address(0); }, 10s)) << moved;
  EXPECT_EQ(InZk().assignment[moved], Address(2));
  // Taken away again: the destination may go anywhere; nothing else moved for it.
  nodes_[1].coord->SetHints({});
  std::this_thread::sleep_for(500ms);
  EXPECT_NE(InZk().assignment[moved], "");
}

}  // namespace
}  // namespace canal::coord
