// A balanced cluster keeps Canal's ZooKeeper layout: for every running destination the nodes
// Canal's ClusterCanalConnector and its servers read are where Canal puts them, with Canal's JSON
// (/otter/canal/destinations/<d>/running {"active":true,"address":"ip:port"}, /otter/canal/cluster/
// <ip:port>, /otter/canal/destinations/<d>/cluster/<ip:port>), the placement's own nodes stay
// outside them, and a client that finds its server as Canal's does gets its rows there. A server
// leaving cleanly (SIGTERM) takes its nodes with it and its destinations' running nodes are
// rewritten by the others at once.
#include "integration/fleet_fixture.h"

namespace canal::testing::fleet {
namespace {

class FleetLayout : public Fleet {};

TEST_F(FleetLayout, CanalsNodesAndJsonArePresentForEveryRunningDestination) {
  const auto test_start = Clock::now();
  const std::vector<Dest> dests = Dests("l", 6);
  ASSERT_TRUE(CreateTables(dests));
  std::vector<std::string> servers;
  for (int i = 0; i < 3; ++i) {
    MakeServer("layout", i, dests);
    servers.push_back(ServerAddress(i));
  }
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(StartServer(i));
  ASSERT_GE(WaitPlaced(dests, servers, Clock::now(), 30s, "three servers"), 0);
  const layout::Assignment assignment = ReadAssignment();
  std::vector<std::string> sorted_servers = servers;
  std::sort(sorted_servers.begin(), sorted_servers.end());

  auto get = [&](const std::string& path) {
    std::string body;
    Status st = zk_->Get(path, &body);
    EXPECT_TRUE(st.ok()) << path << ": " << st.ToString();
    return body;
  };
  auto sorted_children = [&](const std::string& path) {
    std::vector<std::string> names = Children(path);
    std::sort(names.begin(), names.end());
    return names;
  };
  int checked = 0;
  std::string sample_running;

  // The servers, and nothing but destinations under /otter/canal/destinations (Canal's admin
  // and clients list it); the placement's nodes in a folder of their own.
  EXPECT_EQ(sorted_children("/otter/canal/cluster"), sorted_servers);
  std::vector<std::string> names = Names(dests);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(sorted_children("/otter/canal/destinations"), names);
  for (const std::string& child : Children("/otter/canal")) {
    EXPECT_TRUE(child == "cluster" || child == "destinations" || child == "placement") << "/otter/canal/" << child;
  }
  std::vector<std::string> placement_servers = sorted_children(layout::PlacementServersPath());
  EXPECT_EQ(placement_servers, sorted_servers);
  checked += 4;

  for (const Dest& d : dests) {
    // Every server lists it, so every server is a candidate in Canal's sense.
    EXPECT_EQ(sorted_children(layout::DestinationPath(d.name) + "/cluster"), sorted_servers) << d.name;
    // The running node, read as Canal's client reads it: a JSON object with "active" true and the
    // "address" clients connect to, the assigned server's.
    const std::string body = get(layout::ServerRunningPath(d.name));
    const nlohmann::json running = nlohmann::json::parse(body, nullptr, false);
    ASSERT_TRUE(running.is_object()) << d.name << ": " << body;
    EXPECT_TRUE(running.contains("active") && running["active"].is_boolean() && running["active"].get<bool>())
        << body;
    ASSERT_TRUE(running.contains("address") && running["address"].is_string()) << body;
    EXPECT_EQ(running["address"].get<std::string>(), assignment.assignment.at(d.name)) << d.name << ": " << body;
    if (sample_running.empty()) sample_running = body;
    checked += 2;
  }

  // Clients find their server through the running node and get their rows there.
  std::vector<std::unique_ptr<ClusterConnector>> connectors;
  for (const Dest& d : dests) {
    auto o = LocalClusterClientOptions(zk_sandbox_->servers(), kSessionTimeoutMs, 50, d.name);
    o.client_address = "10.9.8.7:" + std::to_string(1000 + connectors.size());
    connectors.push_back(std::make_unique<ClusterConnector>(o));
    Status s = connectors.back()->Connect();
    if (s.ok()) s = connectors.back()->Subscribe();
    ASSERT_TRUE(s.ok()) << d.name << ": " << s.ToString();
    ASSERT_TRUE(primary(0).Sql("INSERT INTO " + d.table + " (txn, seq, pad) VALUES (1, 0, 'x'), (1, 1, 'y')"))
        << primary(0).error();
  }
  for (size_t i = 0; i < dests.size(); ++i) {
    ClusterConnector& c = *connectors[i];
    int rows = 0;
    for (const auto deadline = Clock::now() + 20s; rows < 2 && Clock::now() < deadline;) {
      Message m;
      Status s = c.GetWithoutAck(16, 200, TimeUnit::kMilliseconds, &m);
      ASSERT_TRUE(s.ok()) << dests[i].name << ": " << s.ToString();
      if (m.batch_id() == -1) continue;
      ASSERT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData&) { ++rows; }).ok());
      ASSERT_TRUE(c.Ack(m.batch_id()).ok());
    }
    EXPECT_EQ(rows, 2) << dests[i].name;
    EXPECT_EQ(c.current_address(), assignment.assignment.at(dests[i].name)) << dests[i].name;
    // The client's own running node, as Canal's client writes it.
    const std::string body = get(layout::ClientRunningPath(dests[i].name, "1001"));
    const nlohmann::json client = nlohmann::json::parse(body, nullptr, false);
    ASSERT_TRUE(client.is_object()) << body;
    EXPECT_EQ(client.value("active", false), true) << body;
    EXPECT_EQ(client.value("address", ""), c.options().client_address) << body;
    EXPECT_TRUE(client.contains("clientId") && client["clientId"].is_number_integer() &&
                client["clientId"].get<int>() == 1001)
        << body;
    checked += 3;
  }

  // A clean leave (SIGTERM): its nodes go, its destinations run on the others, each running
  // node rewritten in Canal's JSON; the clients follow.
  const std::string leaving = servers[2];
  const std::vector<std::string> its = AssignedTo(assignment, leaving, dests);
  const auto stop_at = Clock::now();
  std::jthread stopper([&] {
    std::string out;
    EXPECT_EQ(install(2).Stop(&out), 0) << out;
  });
  const std::vector<std::string> rest = {servers[0], servers[1]};
  const double moved_s = WaitPlaced(dests, rest, stop_at, 20s, "server C leaving cleanly");
  stopper.join();
  const double stopped_s = SecondsSince(stop_at);
  bool gone = false;
  EXPECT_TRUE(WaitFor([&] {
    bool e1 = true, e2 = true, e3 = true;
    gone = zk_->Exists(layout::ServerClusterPath(leaving), &e1).ok() && !e1 &&
           zk_->Exists(layout::DestinationClusterPath(dests[0].name, leaving), &e2).ok() && !e2 &&
           zk_->Exists(layout::PlacementServerPath(leaving), &e3).ok() && !e3;
    return gone;
  }, 5s));
  for (const std::string& d : its) {
    const std::string body = get(layout::ServerRunningPath(d));
    const nlohmann::json running = nlohmann::json::parse(body, nullptr, false);
    EXPECT_TRUE(running.is_object() && running.value("active", false)) << body;
    const std::string address = running.is_object() ? running.value("address", "") : "";
    EXPECT_TRUE(address == rest[0] || address == rest[1]) << d << ": " << body;
    ++checked;
  }
  // The clients of its destinations get a row written after the move from the new server.
  double followed_s = 0;
  for (size_t i = 0; i < dests.size(); ++i) {
    if (std::find(its.begin(), its.end(), dests[i].name) == its.end()) continue;
    ASSERT_TRUE(primary(0).Sql("INSERT INTO " + dests[i].table + " (txn, seq, pad) VALUES (2, 0, 'z')"));
    ClusterConnector& c = *connectors[i];
    int rows = 0;
    for (const auto deadline = Clock::now() + 20s; rows == 0 && Clock::now() < deadline;) {
      Message m;
      Status s = c.GetWithoutAck(16, 200, TimeUnit::kMilliseconds, &m);
      if (!s.ok() || m.batch_id() == -1) continue;
      ASSERT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
                    if (ColumnText(row, "pad") == "z") ++rows;
                  }).ok());
      (void)c.Ack(m.batch_id());
    }
    EXPECT_EQ(rows, 1) << dests[i].name << ": the row written after the move did not come";
    EXPECT_NE(c.current_address(), leaving);
    followed_s = std::max(followed_s, SecondsSince(stop_at));
  }
  for (auto& c : connectors) c->Disconnect();

  std::printf("[ fleet ] layout: 3 servers, 6 destinations: %d checks of Canal's nodes (cluster, destinations, each "
              "destination's cluster and running JSON, clients' running JSON); every client connected where the "
              "running node says and got its rows\n",
              checked);
  std::printf("[ fleet ]   running: %s\n", sample_running.c_str());
  std::printf("[ fleet ]   clean leave (SIGTERM) of %s running %s: placed on the other two after %.2f s, stop.sh "
              "returned after %.2f s, its nodes gone: %s, clients got a new row from the new servers by %.2f s; test "
              "%.1f s\n",
              leaving.c_str(), Join(its).c_str(), moved_s, stopped_s, gone ? "yes" : "no", followed_s,
              SecondsSince(test_start));
  EXPECT_GE(moved_s, 0);
  EXPECT_TRUE(gone);
}

}  // namespace
}  // namespace canal::testing::fleet
