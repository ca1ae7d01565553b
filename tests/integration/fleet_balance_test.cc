// A balanced cluster under load: 30 destinations on 3 MariaDB primaries (10 each, a table each),
// a writer on every primary inserting into all its tables throughout, one ClusterConnector client
// per destination. Servers join one after another, one is SIGKILLed and comes back, one is
// drained: the destinations spread evenly at every step, move within the bound, move at most once
// per change, and every client receives every row once (beyond the batch it acked without an
// answer since).
#include "integration/fleet_fixture.h"

namespace canal::testing::fleet {
namespace {

class FleetBalance : public Fleet {};

// How a step moved the destinations, from the running nodes' owners over [from, to].
struct StepMoves {
  int most = 0;   // moves of the destination that moved most
  int moved = 0;  // destinations that moved at all
  std::string which;
};
StepMoves MovesIn(const OwnerWatch& watch, Clock::time_point from, Clock::time_point to) {
  StepMoves m;
  m.most = watch.MostMoves(from, to, &m.which, &m.moved);
  return m;
}

TEST_F(FleetBalance, ThirtyDestinationsSpreadEvenlyThroughJoinsACrashARejoinAndADrainLosingNothing) {
  constexpr int kDests = 30;
  const auto test_start = Clock::now();
  ASSERT_TRUE(UsePrimaries(kPrimaries));
  const double primaries_s = SecondsSince(test_start);
  const std::vector<Dest> dests = Dests("d", kDests, kPrimaries);
  ASSERT_TRUE(CreateTables(dests));
  for (int i = 0; i < 3; ++i) MakeServer("balance", i, dests);
  const std::string a = ServerAddress(0), b = ServerAddress(1), c = ServerAddress(2);
  OwnerWatch watch(zk_.get(), Names(dests));

  // Server A alone runs all 30.
  auto t = Clock::now();
  ASSERT_TRUE(StartServer(0));
  const double alone_s = WaitPlaced(dests, {a}, t, 60s, "server A alone");
  ASSERT_GE(alone_s, 0);

  // The stream: a writer per primary, a client per destination.
  std::vector<std::unique_ptr<Writer>> writers;
  for (int p = 0; p < kPrimaries; ++p) {
    std::vector<Dest> mine;
    for (const Dest& d : dests) {
      if (d.primary == p) mine.push_back(d);
    }
    writers.push_back(std::make_unique<Writer>(primary(p).socket(), mine, 150ms));
  }
  std::map<std::string, int> primary_of;
  for (const Dest& d : dests) primary_of[d.name] = d.primary;
  auto written = [&](const std::string& d) { return writers[primary_of.at(d)]->written(d); };
  Clients clients(zk_sandbox_->servers(), dests);
  const auto stream_start = Clock::now();
  clients.Start();
  for (auto& w : writers) w->Start();
  ASSERT_TRUE(WaitFor([&] { return clients.EachReceived(2 * kRowsPerTxn); }, 60s))
      << "not every client received rows within 60 s";
  const double first_rows_s = SecondsSince(stream_start);

  // B joins: 15 / 15. C joins: 10 / 10 / 10. Each destination moves once at most.
  t = Clock::now();
  ASSERT_TRUE(StartServer(1));
  const double b_join_s = WaitPlaced(dests, {a, b}, t, 30s, "server B joining");
  ASSERT_GE(b_join_s, 0);
  std::this_thread::sleep_for(1s);  // a late second move would show here
  const StepMoves b_join = MovesIn(watch, t, Clock::now());

  t = Clock::now();
  ASSERT_TRUE(StartServer(2));
  const double c_join_s = WaitPlaced(dests, {a, b, c}, t, 30s, "server C joining");
  ASSERT_GE(c_join_s, 0);
  std::this_thread::sleep_for(1s);
  const StepMoves c_join = MovesIn(watch, t, Clock::now());
  const std::map<std::string, int> three = PerServer(Owners(dests));

  // kill -9 of C: its destinations run on A and B within the bound, split evenly.
  const layout::Assignment before_kill = ReadAssignment();
  const std::vector<std::string> c_dests = AssignedTo(before_kill, c, dests);
  const auto killed_at = Clock::now();
  ASSERT_TRUE(install(2).Kill9());
  const double kill_s = WaitPlaced(dests, {a, b}, killed_at, 20s, "after the SIGKILL of server C");
  ASSERT_GE(kill_s, 0);
  const auto moved_at = Clock::now();
  const std::map<std::string, int> two = PerServer(Owners(dests));
  // The clients of C's destinations, served again: the slowest one's first batch after the kill.
  double served_again_s = 0;
  for (const std::string& d : c_dests) {
    ASSERT_TRUE(WaitFor([&] { return clients.of(d).log.FirstBatchAfter(moved_at).has_value(); }, 20s))
        << d << ": no batch within 20 s of its move; " << clients.of(d).log.last_error();
    for (const ConsumeLog::Batch& batch : clients.of(d).log.batches()) {
      if (batch.at < killed_at || batch.server == c) continue;
      served_again_s = std::max(served_again_s, SecondsBetween(killed_at, batch.at));
      break;
    }
  }
  const StepMoves kill = MovesIn(watch, killed_at, Clock::now());

  // C comes back: it gets its share again, and no destination moves more than once.
  t = Clock::now();
  ASSERT_TRUE(StartServer(2));
  const double rejoin_s = WaitPlaced(dests, {a, b, c}, t, 30s, "server C rejoining");
  ASSERT_GE(rejoin_s, 0);
  // Past two load reports of every server (sampled every 5 s): a move the measured load
  // causes (a destination that just arrived reports no rate for its first interval) shows here.
  std::this_thread::sleep_until(t + 12s);
  const std::string loads = LoadText();
  const StepMoves rejoin = MovesIn(watch, t, Clock::now());
  EXPECT_TRUE(Placed(dests, {a, b, c})) << "not even 12 s after C's start: " << Describe(dests, {a, b, c});
  const std::map<std::string, int> rejoined = PerServer(Owners(dests));
  const std::vector<std::string> c_again = AssignedTo(ReadAssignment(), c, dests);
  EXPECT_LE(rejoin.most, 1) << rejoin.which << " moved " << rejoin.most << " times while C rejoined: "
                            << watch.History(rejoin.which, t);

  // B drained under load (the operator's node): it empties, A and C take its share.
  const std::vector<std::string> b_dests = AssignedTo(ReadAssignment(), b, dests);
  t = Clock::now();
  bool created = false;
  Status s = zk_->CreateNode(layout::PlacementDrainPath(b), "drained by the test", coord::ZkCreateMode::kPersistent,
                             /*make_parents=*/true, &created);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const double drain_s = WaitPlaced(dests, {a, c}, t, 30s, "server B drained");
  ASSERT_GE(drain_s, 0);
  std::this_thread::sleep_for(1s);
  const StepMoves drain = MovesIn(watch, t, Clock::now());
  const std::map<std::string, int> drained = PerServer(Owners(dests));

  // The end of the stream: every client gets every row.
  for (auto& w : writers) w->Stop();
  EXPECT_TRUE(WaitFor([&] { return clients.Complete(written); }, 90s)) << clients.Judge(written).Text();
  std::this_thread::sleep_for(1500ms);  // room for a late duplicate
  clients.Stop();
  const Delivery delivery = clients.Judge(written);

  const std::vector<std::string> servers = {a, b, c};
  std::printf("[ fleet ] balance: 30 destinations on 3 primaries, 3 servers (session %d ms); primaries up in %.1f s; "
              "A alone ran all 30 after %.2f s; first rows at every client %.2f s after the stream began\n",
              kSessionTimeoutMs, primaries_s, alone_s, first_rows_s);
  std::printf("[ fleet ]   B joined: placed after %.2f s, %d destinations moved (most moves of one: %d); C joined: "
              "placed after %.2f s, %d moved (most %d); then %s\n",
              b_join_s, b_join.moved, b_join.most, c_join_s, c_join.moved, c_join.most,
              CountsText(three, servers).c_str());
  std::printf("[ fleet ]   SIGKILL of C (%zu destinations): all running on A and B after %.2f s (bound %.0f s), "
              "slowest client served again after %.2f s; %s; %d moved (most %d)\n",
              c_dests.size(), kill_s, kMoveBoundS, served_again_s, CountsText(two, servers).c_str(), kill.moved,
              kill.most);
  std::printf("[ fleet ]   C restarted: placed after %.2f s, it got %zu back, %d destinations moved in the 12 s after "
              "its start, most moves of one %d; %s; measured load %s\n",
              rejoin_s, c_again.size(), rejoin.moved, rejoin.most, CountsText(rejoined, servers).c_str(),
              loads.c_str());
  std::printf("[ fleet ]   B drained (%zu destinations): empty after %.2f s, %d moved (most %d); %s; assignment "
              "generation %llu\n",
              b_dests.size(), drain_s, drain.moved, drain.most, CountsText(drained, servers).c_str(),
              static_cast<unsigned long long>(ReadAssignment().generation));
  std::printf("[ fleet ]   clients: %s; test %.1f s\n", delivery.Text().c_str(), SecondsSince(test_start));
  for (const std::string& f : delivery.faults) std::printf("[ fleet ]   fault: %s\n", f.c_str());
  for (auto& w : writers) {
    if (!w->error().empty()) std::printf("[ fleet ]   a writer retried after: %s\n", w->error().c_str());
  }

  EXPECT_LT(kill_s, kMoveBoundS);
  EXPECT_EQ(c_dests.size(), 10u);
  EXPECT_LE(b_join.most, 1) << b_join.which;
  EXPECT_LE(c_join.most, 1) << c_join.which;
  EXPECT_LE(kill.most, 1) << kill.which;
  EXPECT_EQ(kill.moved, static_cast<int>(c_dests.size())) << "only C's destinations move when it dies";
  EXPECT_GE(c_again.size(), 9u);
  EXPECT_LE(c_again.size(), 11u);
  EXPECT_LE(drain.most, 1) << drain.which;
  EXPECT_EQ(drain.moved, static_cast<int>(b_dests.size())) << "only B's destinations move when it is drained";
  EXPECT_EQ(drained.count(b), 0u) << "B still runs destinations after the drain";
  EXPECT_TRUE(delivery.faults.empty()) << Join(delivery.faults, "\n");
  EXPECT_EQ(delivery.duplicates, 0);
  EXPECT_EQ(delivery.missing, 0);
}

}  // namespace
}  // namespace canal::testing::fleet
