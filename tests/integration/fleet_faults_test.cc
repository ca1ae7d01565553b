// A balanced cluster given bad input, and ZooKeeper failing under it: caps that cannot hold every
// destination (the rest are listed as unassigned, with the reason, and logged; none dropped
// silently), conf folders that differ between servers (a destination runs only where it is
// listed), a destination removed from every conf while it runs (it leaves the assignment and
// stops), and ZooKeeper restarted under load (nothing served twice, every destination resumes).
#include "integration/fleet_fixture.h"

namespace canal::testing::fleet {
namespace {

class FleetFaults : public Fleet {};

// Caps of 2 on three servers, 8 destinations: 6 run, 2 are unassigned with the reason, and the
// servers' logs name them; a fourth server gives them room.
TEST_F(FleetFaults, CapsThatCannotHoldEveryDestinationListTheRestAsUnassignedWithTheReason) {
  const auto test_start = Clock::now();
  const std::vector<Dest> dests = Dests("k", 8);
  ASSERT_TRUE(CreateTables(dests));
  std::vector<std::string> servers;
  for (int i = 0; i < 4; ++i) {
    MakeServer("caps", i, dests, "canal.cluster.max.destinations = 2\n");
    servers.push_back(ServerAddress(i));
  }
  const std::vector<std::string> three(servers.begin(), servers.begin() + 3);
  auto t = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(StartServer(i));

  // Settled: 2 on each server and running there, the 2 others unassigned.
  layout::Assignment a;
  auto settled = [&](const std::vector<std::string>& on, size_t unassigned) {
    a = ReadAssignment();
    if (a.assignment.size() + a.unassigned.size() != dests.size() || a.unassigned.size() != unassigned) return false;
    std::map<std::string, int> counts;
    for (const auto& [d, server] : a.assignment) {
      if (Owner(d) != server || std::find(on.begin(), on.end(), server) == on.end()) return false;
      ++counts[server];
    }
    for (const std::string& server : on) {
      if (counts[server] != 2) return false;
    }
    return true;
  };
  ASSERT_TRUE(WaitFor([&] { return settled(three, 2); }, 30s, 50ms)) << Describe(dests, three);
  const double capped_s = SecondsSince(t);
  const layout::Assignment capped = a;

  // Every destination is either assigned or unassigned with a reason naming the cap; an
  // unassigned one has no running node; every server that lists it says it runs nowhere.
  int checked = 0;
  for (const Dest& d : dests) {
    const bool assigned = capped.assignment.count(d.name) != 0, unassigned = capped.unassigned.count(d.name) != 0;
    EXPECT_NE(assigned, unassigned) << d.name << " must be exactly one of assigned and unassigned";
    if (!unassigned) continue;
    const std::string& why = capped.unassigned.at(d.name);
    EXPECT_NE(why.find("canal.cluster.max.destinations"), std::string::npos) << d.name << ": " << why;
    EXPECT_EQ(Owner(d.name), "") << d.name << " is unassigned but runs";
    for (int i = 0; i < 3; ++i) {
      const std::string text = "cluster: destination " + d.name + " runs nowhere";
      EXPECT_TRUE(WaitForText(install(i).server_log(), text, 5s)) << install(i).server_log() << " lacks: " << text;
    }
    ++checked;
  }
  // None silently dropped: the leader's log names each when it first leaves it unassigned.
  std::string leader_log;
  for (int i = 0; i < 3; ++i) {
    if (servers[i] == capped.leader) leader_log = ReadAll(install(i).server_log());
  }
  for (const auto& [d, why] : capped.unassigned) {
    EXPECT_NE(leader_log.find("placement: destination " + d + " is unassigned"), std::string::npos) << d;
  }

  // A fourth server gives them room: all 8 run, 2 on each, nothing unassigned.
  t = Clock::now();
  ASSERT_TRUE(StartServer(3));
  EXPECT_TRUE(WaitFor([&] { return settled(servers, 0); }, 30s, 50ms)) << Describe(dests, servers);
  const double room_s = SecondsSince(t);
  const std::vector<std::string> fourth = AssignedTo(a, servers[3], dests);

  std::string reasons;
  for (const auto& [d, why] : capped.unassigned) reasons += "\n[ fleet ]     " + d + ": " + why;
  std::printf("[ fleet ] caps: 8 destinations, 3 servers with canal.cluster.max.destinations = 2: settled after %.2f s "
              "with %zu assigned (%s) and %zu unassigned, each logged by every server (%d checked):%s\n",
              capped_s, capped.assignment.size(), Describe(dests, three).c_str(), capped.unassigned.size(), checked,
              reasons.c_str());
  std::printf("[ fleet ]   a fourth server (cap 2): all 8 running after %.2f s, it took %s; test %.1f s\n", room_s,
              Join(fourth).c_str(), SecondsSince(test_start));
  EXPECT_EQ(capped.unassigned.size(), 2u);
  EXPECT_EQ(fourth.size(), 2u);
}

// Servers whose conf folders differ: a destination that one server lists runs there; the rest
// spread. Then a destination running on one server is deleted from every conf folder (auto scan
// on), and another from the only server that lists it: both leave the assignment and stop.
TEST_F(FleetFaults, ConfFoldersDecideWhereADestinationRunsAndOneRemovedFromEveryConfStops) {
  const auto test_start = Clock::now();
  const std::vector<Dest> common = Dests("c", 4);
  const Dest only_a{"only_a", 0, "fleet_db.only_a"}, only_b{"only_b", 0, "fleet_db.only_b"};
  std::vector<Dest> all = common;
  all.push_back(only_a);
  all.push_back(only_b);
  ASSERT_TRUE(CreateTables(all));
  std::vector<Dest> a_conf = common, b_conf = common;
  a_conf.push_back(only_a);
  b_conf.push_back(only_b);
  MakeServer("conf", 0, a_conf);
  MakeServer("conf", 1, b_conf);
  MakeServer("conf", 2, common);
  const std::vector<std::string> servers = {ServerAddress(0), ServerAddress(1), ServerAddress(2)};
  auto t = Clock::now();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(StartServer(i));
  ASSERT_GE(WaitPlaced(all, servers, t, 30s, "three servers with different conf folders"), 0);
  const double placed_s = SecondsSince(t);
  const std::string placed_view = Describe(all, servers);
  layout::Assignment a = ReadAssignment();
  EXPECT_EQ(a.assignment[only_a.name], servers[0]);
  EXPECT_EQ(a.assignment[only_b.name], servers[1]);
  EXPECT_TRUE(a.unassigned.empty());

  // Each of the two is served by its server: a row written now comes to a client there.
  for (const Dest& d : {only_a, only_b}) {
    ASSERT_TRUE(primary(0).Sql("INSERT INTO " + d.table + " (txn, seq, pad) VALUES (1, 0, 'x')"))
        << primary(0).error();
    Connector c(ServerClientOptions(d.name == only_a.name ? kServerPorts[0] : kServerPorts[1], d.name));
    Status s = ConnectAndSubscribe(c, 10s);
    ASSERT_TRUE(s.ok()) << d.name << ": " << s.ToString();
    int rows = 0;
    for (const auto deadline = Clock::now() + 10s; rows == 0 && Clock::now() < deadline;) {
      Message m;
      ASSERT_TRUE((s = c.GetWithoutAck(16, 200, TimeUnit::kMilliseconds, &m)).ok()) << s.ToString();
      if (m.batch_id() == -1) continue;
      ASSERT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData&) { ++rows; }).ok());
      ASSERT_TRUE(c.Ack(m.batch_id()).ok());
    }
    EXPECT_EQ(rows, 1) << d.name << " did not deliver its row";
  }

  // Removed while running: a common destination from every conf folder, only_a from A's.
  const std::string victim = common[0].name;
  const std::string victim_owner = Owner(victim);
  OwnerWatch watch(zk_.get(), {victim, only_a.name});
  const auto removed_at = Clock::now();
  for (int i = 0; i < 3; ++i) fs::remove_all(install(i).conf_dir() / victim);
  fs::remove_all(install(0).conf_dir() / only_a.name);
  std::vector<Dest> rest;
  for (const Dest& d : all) {
    if (d.name != victim && d.name != only_a.name) rest.push_back(d);
  }
  auto gone = [&] {
    const layout::Assignment now = ReadAssignment();
    for (const std::string& d : {victim, only_a.name}) {
      if (now.assignment.count(d) != 0 || now.unassigned.count(d) != 0 || !Owner(d).empty()) return false;
    }
    return Placed(rest, servers);
  };
  EXPECT_TRUE(WaitFor(gone, 20s, 50ms)) << Describe(all, servers);
  const double removed_s = SecondsSince(removed_at);
  std::this_thread::sleep_for(1500ms);  // it must not come back
  EXPECT_TRUE(gone()) << "a removed destination came back: " << Describe(all, servers);
  // (Each server drops it at its own next scan: until the last one has, the leader may give it
  // to a server that still lists it, which runs it briefly.)
  const int victim_moves = watch.Moves(victim, removed_at, Clock::now());
  const std::string victim_history = watch.History(victim, removed_at);
  int logs_saying_stopped = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string log = ReadAll(install(i).server_log());
    if (log.find("destination " + victim + ": its instance.properties is gone; stopping it") != std::string::npos) {
      ++logs_saying_stopped;
    }
  }
  const bool only_a_stopped = ReadAll(install(0).server_log()).find("destination only_a: its instance.properties "
                                                                    "is gone; stopping it") != std::string::npos;

  std::printf("[ fleet ] conf folders: A lists c00-c03 + only_a, B c00-c03 + only_b, C c00-c03: placed after %.2f s "
              "(only_a on %s, only_b on %s; %s), both served a row\n",
              placed_s, a.assignment[only_a.name].c_str(), a.assignment[only_b.name].c_str(), placed_view.c_str());
  std::printf("[ fleet ]   %s (running on %s) deleted from every conf folder and only_a from A's: both out of the "
              "assignment and stopped after %.2f s; %s moved %d times meanwhile (its running node: %s); 'stopping "
              "it' logged by %d servers for %s, by A for only_a: %s; test %.1f s\n",
              victim.c_str(), victim_owner.c_str(), removed_s, victim.c_str(), victim_moves, victim_history.c_str(),
              logs_saying_stopped, victim.c_str(), only_a_stopped ? "yes" : "no", SecondsSince(test_start));
  EXPECT_EQ(logs_saying_stopped, 3) << "every server that listed " << victim << " drops it";
  EXPECT_TRUE(only_a_stopped);
}

// ZooKeeper restarted under a running cluster, quickly and then down for longer than the session
// timeout, while every destination streams: the destinations pause at most and all resume on one
// server each, and no client gets a row twice (beyond unanswered acks) or misses one.
TEST_F(FleetFaults, ZooKeeperRestartsServeNothingTwiceAndEveryDestinationResumes) {
  const auto test_start = Clock::now();
  const std::vector<Dest> dests = Dests("z", 6);
  ASSERT_TRUE(CreateTables(dests));
  std::vector<std::string> servers;
  ASSERT_TRUE(StartPlaced("zk", 3, dests, &servers));
  const layout::Assignment first = ReadAssignment();

  OwnerWatch watch(zk_.get(), Names(dests));
  Writer writer(primary(0).socket(), dests, 100ms);
  auto written = [&](const std::string& d) { return writer.written(d); };
  Clients clients(zk_sandbox_->servers(), dests);
  clients.Start();
  writer.Start();
  ASSERT_TRUE(WaitFor([&] { return clients.EachReceived(10 * kRowsPerTxn); }, 60s)) << clients.Judge(written).Text();

  struct Outage {
    double down_s = 0, placed_s = -1, all_served_s = -1;
  };
  auto outage = [&](std::chrono::milliseconds down) {
    Outage o;
    const auto [stopped, started] = StopZkFor(*zk_sandbox_, down);
    o.down_s = SecondsBetween(stopped, started);
    if (WaitFor([&] { return Placed(dests, servers); }, 30s, 50ms)) o.placed_s = SecondsSince(started);
    const bool served = WaitFor([&] {
      for (const auto& c : clients.all()) {
        if (!c->log.FirstBatchAfter(started).has_value()) return false;
      }
      return true;
    }, 30s);
    if (served) o.all_served_s = SecondsSince(started);
    EXPECT_GE(o.placed_s, 0) << "not placed again within 30 s: " << Describe(dests, servers);
    EXPECT_TRUE(served) << "not every client got a batch within 30 s of ZooKeeper's return";
    return o;
  };
  const auto restarts_at = Clock::now();
  const Outage shortly = outage(0ms);  // a plain restart
  const Outage long_one = outage(std::chrono::milliseconds(kSessionTimeoutMs) + 3s);
  std::string which;
  int moved = 0;
  const int most = watch.MostMoves(restarts_at, Clock::now(), &which, &moved);
  const layout::Assignment last = ReadAssignment();
  int reassigned = 0;
  for (const auto& [d, server] : last.assignment) reassigned += first.assignment.at(d) != server ? 1 : 0;

  writer.Stop();
  EXPECT_TRUE(WaitFor([&] { return clients.Complete(written); }, 60s)) << clients.Judge(written).Text();
  std::this_thread::sleep_for(1500ms);  // room for a late duplicate
  clients.Stop();
  const Delivery delivery = clients.Judge(written);

  std::printf("[ fleet ] ZooKeeper restarts under 3 servers and 6 streaming destinations: a restart (down %.1f s) -> "
              "placed again %.2f s after it came back, every client served %.2f s after; down %.1f s (beyond the %d "
              "ms session) -> placed %.2f s after, served %.2f s after; %d destinations changed owner (most %d), %d "
              "reassigned, generation %llu -> %llu\n",
              shortly.down_s, shortly.placed_s, shortly.all_served_s, long_one.down_s, kSessionTimeoutMs,
              long_one.placed_s, long_one.all_served_s, moved, most, reassigned,
              static_cast<unsigned long long>(first.generation), static_cast<unsigned long long>(last.generation));
  std::printf("[ fleet ]   clients: %s; test %.1f s\n", delivery.Text().c_str(), SecondsSince(test_start));
  for (const std::string& f : delivery.faults) std::printf("[ fleet ]   fault: %s\n", f.c_str());
  EXPECT_TRUE(delivery.faults.empty()) << Join(delivery.faults, "\n");
  EXPECT_EQ(delivery.duplicates, 0);
  EXPECT_EQ(delivery.missing, 0);
}

}  // namespace
}  // namespace canal::testing::fleet
