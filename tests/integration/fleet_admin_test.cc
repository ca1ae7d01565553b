// The operator's side of a balanced cluster, through bin/canal-admin.sh against the servers'
// admin API: `cluster` prints the leader, the servers and the assignment; `drain SERVER` empties a
// server and says when it is; `drain SERVER --undo` lets it take destinations again; `move DEST
// SERVER` pins a destination there; and bad requests (an unknown server, a server whose conf does
// not list the destination) are refused naming the problem, changing nothing.
#include "integration/fleet_fixture.h"
#include "support/sandbox_script.h"

namespace canal::testing::fleet {
namespace {

class FleetAdmin : public Fleet {
 protected:
  static constexpr const char* kToken = "fleet-admin-t0ken-0123456789";
  // bin/canal-admin.sh ARGS of server i; its output (stdout and stderr) and *rc.
  std::string Admin(int i, const std::string& args, int* rc) {
    return RunShell("bash " + ShellQuoted(install(i).bin_dir() / "canal-admin.sh") + " " + args + " 2>&1", rc);
  }
};

TEST_F(FleetAdmin, ClusterDrainAndMoveThroughCanalAdminSh) {
  const std::vector<Dest> dests = Dests("a", 4);
  ASSERT_TRUE(CreateTables(dests));
  std::vector<std::string> servers;
  constexpr uint16_t kMetricsPorts[] = {TestPort("fleet", 20), TestPort("fleet", 21)};
  for (int i = 0; i < 2; ++i) {
    MakeServer("admin", i, dests,
               "canal.metrics.pull.port = " + std::to_string(kMetricsPorts[i]) +
                   "\ncanal.admin.token = " + kToken + "\n");
    servers.push_back(ServerAddress(i));
  }
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(StartServer(i));
  ASSERT_GE(WaitPlaced(dests, servers, Clock::now(), 30s, "two servers"), 0);

  // cluster: any member answers with the whole view.
  int rc = -1;
  std::string out = Admin(1, "cluster", &rc);
  ASSERT_EQ(rc, 0) << out;
  const nlohmann::json view = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(view.is_object()) << out;
  EXPECT_EQ(view["placement"], "balanced");
  EXPECT_TRUE(view["leader"] == servers[0] || view["leader"] == servers[1]) << out;
  EXPECT_EQ(view["assignment"].size(), dests.size()) << out;
  EXPECT_EQ(view["servers"].size(), 2u) << out;
  EXPECT_EQ(view["servers"][servers[0]]["assigned"], 2) << out;

  // drain: server 0 empties; the command waits for it and says so.
  const auto drain_start = Clock::now();
  out = Admin(1, "drain " + servers[0] + " --wait 30", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find(servers[0] + " is empty"), std::string::npos) << out;
  const double drained_s = SecondsBetween(drain_start, Clock::now());
  // (The hand-over follows the assignment by a few milliseconds.)
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const Dest& d : dests) {
          if (Owner(d.name) != servers[1]) return false;
        }
        return true;
      },
      10s, 50ms))
      << Describe(dests, servers);
  // ... and takes destinations again once the drain ends.
  out = Admin(0, "drain " + servers[0] + " --undo", &rc);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_GE(WaitPlaced(dests, servers, Clock::now(), 30s, "after the drain ended"), 0);

  // move: a destination of server 1 pinned to server 0.
  std::string moved;
  for (const Dest& d : dests) {
    if (Owner(d.name) == servers[1]) moved = d.name;
  }
  ASSERT_FALSE(moved.empty());
  out = Admin(0, "move " + moved + " " + servers[0], &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(WaitFor([&] { return Owner(moved) == servers[0]; }, 20s, 50ms)) << Describe(dests, servers);
  std::string body;
  ASSERT_TRUE(zk_->Get(layout::PlacementPinPath(moved), &body).ok());
  EXPECT_NE(body.find(servers[0]), std::string::npos) << body;
  out = Admin(0, "move " + moved + " --unpin", &rc);
  ASSERT_EQ(rc, 0) << out;
  bool exists = true;
  EXPECT_TRUE(WaitFor([&] { return zk_->Exists(layout::PlacementPinPath(moved), &exists).ok() && !exists; }, 10s,
                      50ms));

  // Unpinned, the leader evens the load again.
  ASSERT_GE(WaitPlaced(dests, servers, Clock::now(), 30s, "after the unpin"), 0);

  // Refusals name the problem and change nothing.
  const uint64_t generation = ReadAssignment().generation;
  out = Admin(0, "drain 127.0.0.1:9", &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("no server 127.0.0.1:9 in the cluster"), std::string::npos) << out;
  out = Admin(0, "move nosuch " + servers[0], &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("does not list it"), std::string::npos) << out;
  out = Admin(0, "drain not-a-server", &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(ReadAssignment().generation, generation);
  std::printf("[ fleet ] admin: cluster listed %zu destinations on 2 servers (leader %s); drain of %s done in "
              "%.2f s (the command waited and said so); move of %s by pin, then unpinned; an unknown server and "
              "a destination the server cannot run refused\n",
              view["assignment"].size(), view["leader"].get<std::string>().c_str(), servers[0].c_str(), drained_s,
              moved.c_str());
}

}  // namespace
}  // namespace canal::testing::fleet
