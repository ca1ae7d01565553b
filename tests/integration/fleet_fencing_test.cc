// Fencing in a balanced cluster: the leader, frozen (SIGSTOP) past its ZooKeeper session, loses
// its destinations and its leadership to the others; resumed (SIGCONT), it serves nothing of what
// it ran (a connection from before the freeze and one from after get no data) and writes no
// cursor over the ones the new servers wrote; then, given a share again, it takes it over by
// hand-over, and the clients' rows show nothing delivered twice beyond unanswered acks.
#include "integration/fleet_fixture.h"
#include "support/resumed_server.h"

namespace canal::testing::fleet {
namespace {

class FleetFencing : public Fleet {};

// The cursor nodes of `dests` (client 1001): path -> body ("" when missing).
std::map<std::string, std::string> Cursors(coord::ZkClient& zk, const std::vector<Dest>& dests) {
  std::map<std::string, std::string> out;
  for (const Dest& d : dests) {
    const std::string path = layout::ClientCursorPath(d.name, "1001");
    std::string body;
    if (!zk.Get(path, &body).ok()) body.clear();
    out[path] = body;
  }
  return out;
}

// A cursor's binlog position (journal name, offset); ("", -1) when it does not parse.
std::pair<std::string, int64_t> CursorPosition(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("postion") || !j["postion"].is_object()) return {"", -1};
  const nlohmann::json& p = j["postion"];
  return {p.value("journalName", ""), p.value("position", int64_t{-1})};
}

std::string LeaderAddress(coord::ZkClient& zk) {
  std::string body, address;
  const std::string path = layout::PlacementLeaderPath();
  if (!zk.Get(path, &body).ok() || !layout::ParseLeader(path, body, &address).ok()) return "";
  return address;
}

TEST_F(FleetFencing, AFrozenLeaderLosesItsDestinationsAndAfterResumingServesNothingAndWritesNoCursor) {
  const auto test_start = Clock::now();
  const std::vector<Dest> dests = Dests("f", 6);
  ASSERT_TRUE(CreateTables(dests));
  std::vector<std::string> servers;
  // The first server started leads.
  ASSERT_TRUE(StartPlaced("fencing", 1, dests, &servers));
  ASSERT_TRUE(StartPlaced("fencing", 3, dests, &servers));
  const std::string frozen = servers[0];
  ASSERT_EQ(LeaderAddress(*zk_), frozen);
  const std::vector<std::string> others = {servers[1], servers[2]};
  const std::vector<std::string> frozen_dests = AssignedTo(ReadAssignment(), frozen, dests);
  ASSERT_EQ(frozen_dests.size(), 2u);

  OwnerWatch watch(zk_.get(), Names(dests));
  Writer writer(primary(0).socket(), dests, 100ms);
  auto written = [&](const std::string& d) { return writer.written(d); };
  Clients clients(zk_sandbox_->servers(), dests);
  clients.Start();
  writer.Start();
  ASSERT_TRUE(WaitFor([&] { return clients.EachReceived(10 * kRowsPerTxn); }, 60s)) << clients.Judge(written).Text();

  // A plain connection to the frozen server for one of its destinations, made before the freeze.
  ConnectorOptions direct = ServerClientOptions(kServerPorts[0], frozen_dests[0]);
  direct.connect_timeout = 3s;
  direct.read_timeout = 5s;
  Connector before(direct);
  Status s = before.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();

  const auto frozen_at = Clock::now();
  ASSERT_TRUE(install(0).Freeze());
  ASSERT_TRUE(WaitFor([&] { return ha::AllThreadsStopped(install(0).Pid()); }, 5s));
  const double moved_s = WaitPlaced(dests, others, frozen_at, 20s, "the leader frozen");
  ASSERT_GE(moved_s, 0);
  std::string new_leader;
  WaitFor([&] { return !(new_leader = LeaderAddress(*zk_)).empty(); }, 5s);
  double served_again_s = 0;
  for (const std::string& d : frozen_dests) {
    ASSERT_TRUE(WaitFor([&] { return clients.of(d).log.FirstBatchAfter(frozen_at + 1s).has_value(); }, 20s))
        << d << ": no batch after the freeze; " << clients.of(d).log.last_error();
    const auto first = clients.of(d).log.FirstBatchAfter(frozen_at + 1s);
    served_again_s = std::max(served_again_s, SecondsBetween(frozen_at, *first));
  }

  // The operator drains it while it is frozen: once resumed it is given nothing, so any running
  // node or cursor it writes from then on would be its stale state.
  bool created = false;
  ASSERT_TRUE(zk_->CreateNode(layout::PlacementDrainPath(frozen), "", coord::ZkCreateMode::kPersistent, true, &created)
                  .ok());
  // The stream pauses; every client catches up, and the cursors the new servers wrote settle.
  writer.Stop();
  EXPECT_TRUE(WaitFor([&] { return clients.Complete(written); }, 60s)) << clients.Judge(written).Text();
  std::map<std::string, std::string> cursors_before = Cursors(*zk_, dests);
  EXPECT_TRUE(WaitFor([&] {
    std::this_thread::sleep_for(1200ms);  // longer than the cursor flush period
    std::map<std::string, std::string> now = Cursors(*zk_, dests);
    const bool same = now == cursors_before;
    cursors_before = std::move(now);
    return same;
  }, 20s, 0ms)) << "the cursors did not settle with the clients caught up";
  // Frozen well past its session timeout (and its fencing bound).
  std::this_thread::sleep_until(frozen_at + std::chrono::milliseconds(kSessionTimeoutMs) + 3s);

  // Resumed: its first answers, to the connection from before and to one made after. Meanwhile
  // every cursor is read every 50 ms: one going back would be the resumed server's stale write
  // (what it holds of its old destinations' cursors dates from the freeze, far behind).
  std::atomic<int> regressions{0};
  std::mutex regressions_mu;
  std::vector<std::string> regression_texts;
  std::jthread sampler([&](std::stop_token stop) {
    std::map<std::string, std::pair<std::string, int64_t>> last;
    for (const auto& [path, body] : cursors_before) last[path] = CursorPosition(body);
    while (!stop.stop_requested()) {
      for (const auto& [path, body] : Cursors(*zk_, dests)) {
        const auto pos = CursorPosition(body);
        if (pos < last[path]) {
          ++regressions;
          std::lock_guard<std::mutex> lock(regressions_mu);
          regression_texts.push_back(path + " went back from " + last[path].first + ":" +
                                     std::to_string(last[path].second) + " to " + body);
        }
        last[path] = std::max(last[path], pos);
      }
      std::this_thread::sleep_for(50ms);
    }
  });
  const auto thawed_at = Clock::now();
  ASSERT_TRUE(install(0).Thaw());
  Connector after(direct);
  const ResumedServerAnswers resumed = ExpectResumedServerServesNothing(before, after);
  // Nothing must happen for a while: no running node of its, no cursor written.
  std::this_thread::sleep_until(thawed_at + 4s);
  sampler.request_stop();
  sampler.join();
  const std::map<std::string, std::string> cursors_after = Cursors(*zk_, dests);
  const bool owned_after_thaw = watch.EverOwnedBy(frozen, thawed_at, Clock::now());
  // Nor does the resumed ex-leader write an assignment.
  const layout::Assignment after_thaw = ReadAssignment();
  const std::string frozen_log = ReadAll(install(0).server_log());
  const bool fence_logged = frozen_log.find("fencing") != std::string::npos;
  // (The active servers may move a cursor forward over transactions the filter skips.)
  int cursors_forward = 0;
  for (const auto& [path, body] : cursors_before) {
    if (CursorPosition(cursors_after.at(path)) > CursorPosition(body)) ++cursors_forward;
  }
  int refused_writes = 0;
  for (size_t at = frozen_log.find("refused: server " + frozen); at != std::string::npos;
       at = frozen_log.find("refused: server " + frozen, at + 1)) {
    ++refused_writes;
  }
  for (const std::string& r : regression_texts) ADD_FAILURE() << r;

  // The drain ends: it takes its share again by hand-over, and the stream goes on.
  const auto undrained_at = Clock::now();
  ASSERT_TRUE(zk_->Delete(layout::PlacementDrainPath(frozen)).ok());
  const double back_s = WaitPlaced(dests, servers, undrained_at, 30s, "the drain of the resumed server ended");
  const std::vector<std::string> back = AssignedTo(ReadAssignment(), frozen, dests);
  writer.Start();
  const int mark = writer.written(dests[0].name) + 20;
  EXPECT_TRUE(WaitFor([&] { return writer.written(dests[0].name) >= mark; }, 30s));
  writer.Stop();
  EXPECT_TRUE(WaitFor([&] { return clients.Complete(written); }, 60s)) << clients.Judge(written).Text();
  std::this_thread::sleep_for(1500ms);  // room for a late duplicate
  clients.Stop();
  const Delivery delivery = clients.Judge(written);
  // Its clean stop at the end (a leave: f-destinations handed over, cursors flushed).
  std::string stop_out;
  const int stop_rc = install(0).Stop(&stop_out);
  const bool stop_write_refused =
      ReadAll(install(0).server_log()).find("writing the cursors at stop failed") != std::string::npos;

  std::printf("[ fleet ] fencing: the leader %s (running %s) frozen (SIGSTOP) for %.1f s; its destinations ran on the "
              "others after %.2f s (bound %.0f s), their clients served again after %.2f s, new leader %s\n",
              frozen.c_str(), Join(frozen_dests).c_str(), SecondsBetween(frozen_at, thawed_at), moved_s, kMoveBoundS,
              served_again_s, new_leader.c_str());
  std::printf("[ fleet ]   after SIGCONT (drained meanwhile): %d of 4 requests refused, %d batches delivered; running "
              "nodes of its in the 4 s after: %s; cursors that went back: %d (%d of %zu moved forward by their active "
              "servers); cursor writes it logged as refused: %d; fencing logged: %s\n",
              resumed.refusals, resumed.data, owned_after_thaw ? "yes" : "none", regressions.load(), cursors_forward,
              dests.size(), refused_writes, fence_logged ? "yes" : "no");
  std::printf("[ fleet ]   the assignment 4 s after SIGCONT: generation %llu, written by %s\n",
              static_cast<unsigned long long>(after_thaw.generation), after_thaw.leader.c_str());
  for (const auto& answer : resumed.answers) std::printf("[ fleet ]     %s\n", answer.c_str());
  std::printf("[ fleet ]   drain ended: placed again after %.2f s, it got %zu back (%s); clients: %s; test %.1f s\n",
              back_s, back.size(), Join(back).c_str(), delivery.Text().c_str(), SecondsSince(test_start));
  std::printf("[ fleet ]   its stop.sh at the end: exit %d%s\n", stop_rc,
              stop_write_refused ? " (it logged \"writing the cursors at stop failed\": the fence refused the "
                                   "cursors it still held from before the freeze)"
                                 : "");
  for (const std::string& f : delivery.faults) std::printf("[ fleet ]   fault: %s\n", f.c_str());

  EXPECT_LT(moved_s, kMoveBoundS);
  EXPECT_NE(new_leader, frozen);
  EXPECT_NE(after_thaw.leader, frozen) << "the resumed ex-leader wrote generation " << after_thaw.generation;
  EXPECT_FALSE(new_leader.empty());
  EXPECT_EQ(resumed.data, 0);
  EXPECT_GE(resumed.refusals, 2) << "the subscribe from before and the one from after must both be refused";
  EXPECT_FALSE(owned_after_thaw) << "the resumed server took a running node back while drained";
  EXPECT_EQ(regressions.load(), 0);
  EXPECT_TRUE(fence_logged) << "no fencing line in " << install(0).server_log();
  EXPECT_GE(back_s, 0);
  EXPECT_EQ(back.size(), 2u);
  EXPECT_TRUE(delivery.faults.empty()) << Join(delivery.faults, "\n");
  EXPECT_EQ(delivery.duplicates, 0);
}

}  // namespace
}  // namespace canal::testing::fleet
