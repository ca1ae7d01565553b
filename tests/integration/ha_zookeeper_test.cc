// HA and ZooKeeper itself: a ZooKeeper restart under a running pair pauses
// service without loss, and the nodes the servers and a client write follow
// Canal's layout and JSON.
#include "integration/ha_fixture.h"
#include "support/test_ports.h"

using canal::testing::TestPort;

namespace canal::testing::ha {
namespace {

constexpr uint16_t kZkRestartPorts[2] = {TestPort("ha_servers", 4), TestPort("ha_servers", 5)};
constexpr uint16_t kLayoutPorts[2] = {
    TestPort("ha_servers", 8),
    TestPort("ha_servers", 1),
};  // 13532: the failover test's servers are long gone

// 3. ZooKeeper stopped under a running pair, once for ~2 s (within the session
// timeout) and once for 9 s (beyond it), while a stream is written: the
// service pauses at most and resumes, losing and repeating nothing.
TEST_F(Ha, ZooKeeperRestartedUnderARunningPairPausesServiceWithoutLoss) {
  constexpr int kTxns = 1200, kRowsPerTxn = 20, kChunks = 60;
  const std::string table = "ha_db.zkrestart";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("zkrestart", kZkRestartPorts, table));
  const std::vector<std::string> chunks = LoadChunks("zkrestart", table, kTxns, kRowsPerTxn, kChunks);

  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  ConsumeLog log;
  ClusterConnector c(ConsumerOptions(zk_sandbox_->servers()));
  std::jthread consumer([&](std::stop_token stop) { RunClusterConsumer(stop, c, ledger, log); });
  // ~30 s of writes, spanning both outages.
  std::jthread writer([&] { WriteFiles(chunks, 0, chunks.size(), 450ms); });

  struct Outage {
    double down_s = 0, pause_s = 0, resumed_after_s = -1;
    std::string active_after;
  };
  auto outage = [&](std::chrono::milliseconds down) {
    Outage o;
    const auto [stopped, started] = StopZkFor(*zk_sandbox_, down);
    o.down_s = SecondsBetween(stopped, started);
    EXPECT_TRUE(WaitFor([&] { return log.FirstBatchAfter(started).has_value(); }, 30s))
        << "no batch within 30 s of ZooKeeper's return; " << log.last_error();
    if (auto b = log.FirstBatchAfter(started)) o.resumed_after_s = SecondsBetween(started, *b);
    o.pause_s = log.LongestPause(stopped, started);
    WaitFor([&] { return !RunningAddress().empty(); }, 15s);
    o.active_after = RunningAddress();
    return o;
  };
  EXPECT_TRUE(WaitFor([&] { return ledger.transactions_complete() >= 100; }, 30s)) << log.last_error();
  const Outage shortly = outage(2s);
  std::this_thread::sleep_for(3s);
  const Outage long_one = outage(9s);
  writer.join();
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 60s)) << ledger.distinct() << " rows; " << log.last_error();
  std::this_thread::sleep_for(1s);
  consumer.request_stop();
  consumer.join();

  std::printf("[ ha ] ZooKeeper restarts: unavailable %.1f s (stop, ~2 s, start) -> longest pause %.2f s, first batch %.2f s after it came "
              "back, active then %s; unavailable %.1f s (beyond the %d ms session) -> longest pause %.2f s, first batch "
              "%.2f s after, active then %s; client: %lld of %d rows, %lld reconnects, %lld elections, %lld errors "
              "returned, %s\n",
              shortly.down_s, shortly.pause_s, shortly.resumed_after_s, shortly.active_after.c_str(), long_one.down_s,
              kSessionTimeoutMs, long_one.pause_s, long_one.resumed_after_s, long_one.active_after.c_str(),
              static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn,
              static_cast<long long>(log.reconnects.load()), static_cast<long long>(log.elections.load()),
              static_cast<long long>(log.errors()), ledger.Tally().c_str());
  std::printf("%s", log.first_errors().c_str());
  EXPECT_FALSE(shortly.active_after.empty());
  EXPECT_FALSE(long_one.active_after.empty());
  EXPECT_EQ(ledger.Faults(), "");
}

// 5. The nodes two servers and a client write are Canal's: paths, ephemeral
// server nodes that go with their server, and the JSON bodies of the running
// nodes and of the cursor.
TEST_F(Ha, ZooKeeperNodesFollowCanalsLayoutAndJson) {
  const std::string table = "ha_db.layout";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("layout", kLayoutPorts, table));
  const std::string active = Address(kLayoutPorts[0]), standby = Address(kLayoutPorts[1]);
  const std::string filter = "ha_db\\.layout";

  ClusterConnectorOptions o = ConsumerOptions(zk_sandbox_->servers());
  o.client_address = "10.1.2.3:4242";
  ClusterConnector c(o);
  Status s = c.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE((s = c.Subscribe(filter)).ok()) << s.ToString();
  ASSERT_TRUE(Sql("INSERT INTO " + table + " (txn, seq, pad) VALUES (1, 0, 'a'), (1, 1, 'b')"));
  size_t rows = 0;
  const auto deadline = Clock::now() + 20s;
  while (rows < 2 && Clock::now() < deadline) {
    Message m;
    ASSERT_TRUE((s = c.GetWithoutAck(100, 200, TimeUnit::kMilliseconds, &m)).ok()) << s.ToString();
    if (m.batch_id() == -1) continue;
    ASSERT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData&) { ++rows; }).ok());
    ASSERT_TRUE((s = c.Ack(m.batch_id())).ok()) << s.ToString();
  }
  ASSERT_EQ(rows, 2u);
  Message after_ack;  // the server writes the acked cursor before it answers this
  ASSERT_TRUE((s = c.GetWithoutAck(100, 100, TimeUnit::kMilliseconds, &after_ack)).ok()) << s.ToString();

  auto get = [&](const std::string& path) {
    std::string body;
    Status st = zk_->Get(path, &body);
    EXPECT_TRUE(st.ok()) << path << ": " << st.ToString();
    return body;
  };
  auto json = [](const std::string& body) { return nlohmann::json::parse(body, nullptr, false); };
  const std::string dest = "/otter/canal/destinations/example";
  int checked = 0;

  // Servers.
  const std::vector<std::string> both = {active, standby};
  std::vector<std::string> servers = Children("/otter/canal/cluster"), dest_servers = Children(dest + "/cluster");
  std::sort(servers.begin(), servers.end());
  std::sort(dest_servers.begin(), dest_servers.end());
  std::vector<std::string> want = both;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(servers, want);
  EXPECT_EQ(dest_servers, want);
  checked += 2;

  // The active server's running node: {"active":true,"address":"ip:port"}.
  const std::string running_body = get(dest + "/running");
  const nlohmann::json running = json(running_body);
  ASSERT_TRUE(running.is_object()) << running_body;
  EXPECT_EQ(running.value("active", false), true) << running_body;
  EXPECT_EQ(running.value("address", ""), active) << running_body;
  ++checked;

  // The cursor: Canal's LogPosition JSON, "postion" as Canal spells it.
  const std::string cursor_body = get(dest + "/1001/cursor");
  const nlohmann::json cursor = json(cursor_body);
  ASSERT_TRUE(cursor.is_object()) << cursor_body;
  EXPECT_EQ(cursor.value("@type", ""), "com.alibaba.otter.canal.protocol.position.LogPosition") << cursor_body;
  ASSERT_TRUE(cursor.contains("identity") && cursor["identity"].is_object()) << cursor_body;
  EXPECT_EQ(cursor["identity"].value("slaveId", 0), -1) << cursor_body;
  ASSERT_TRUE(cursor["identity"].contains("sourceAddress")) << cursor_body;
  EXPECT_EQ(cursor["identity"]["sourceAddress"].value("address", ""), "127.0.0.1") << cursor_body;
  EXPECT_EQ(cursor["identity"]["sourceAddress"].value("port", 0), kSandboxPort) << cursor_body;
  EXPECT_FALSE(cursor.contains("position")) << cursor_body;
  ASSERT_TRUE(cursor.contains("postion") && cursor["postion"].is_object()) << cursor_body;
  const nlohmann::json& pos = cursor["postion"];
  EXPECT_TRUE(pos.contains("gtid") && pos["gtid"].is_string()) << cursor_body;
  EXPECT_TRUE(pos.contains("included") && pos["included"].is_boolean()) << cursor_body;
  std::string status_out;
  ASSERT_TRUE(sandbox_->Sql("SHOW MASTER STATUS", &status_out));
  const std::string master_file = status_out.substr(0, status_out.find('\t'));
  EXPECT_EQ(pos.value("journalName", ""), master_file) << cursor_body;
  EXPECT_TRUE(pos.contains("position") && pos["position"].is_number_integer() && pos["position"].get<int64_t>() > 4)
      << cursor_body;
  EXPECT_TRUE(pos.contains("serverId") && pos["serverId"].is_number_integer()) << cursor_body;
  EXPECT_TRUE(pos.contains("timestamp") && pos["timestamp"].is_number_integer() &&
              pos["timestamp"].get<int64_t>() > 1'500'000'000'000)
      << "timestamp in milliseconds: " << cursor_body;
  ++checked;

  // The client's filter (text) and running node.
  EXPECT_EQ(get(dest + "/1001/filter"), filter);
  const std::string client_body = get(dest + "/1001/running");
  const nlohmann::json client_running = json(client_body);
  ASSERT_TRUE(client_running.is_object()) << client_body;
  EXPECT_EQ(client_running.value("active", false), true) << client_body;
  EXPECT_EQ(client_running.value("address", ""), "10.1.2.3:4242") << client_body;
  EXPECT_TRUE(client_running.contains("clientId") && client_running["clientId"].is_number_integer() &&
              client_running["clientId"].get<int>() == 1001)
      << client_body;
  checked += 2;

  // Ephemeral: the standby's nodes go with it (stop.sh), the client's with its session.
  std::string out;
  EXPECT_EQ(install(1).Stop(&out), 0) << out;
  bool standby_gone = WaitFor([&] {
    bool e1 = true, e2 = true;
    return zk_->Exists("/otter/canal/cluster/" + standby, &e1).ok() && !e1 &&
           zk_->Exists(dest + "/cluster/" + standby, &e2).ok() && !e2;
  }, 5s);
  EXPECT_TRUE(standby_gone);
  c.Disconnect();
  bool client_gone = WaitFor([&] {
    bool e = true;
    return zk_->Exists(dest + "/1001/running", &e).ok() && !e;
  }, 5s);
  EXPECT_TRUE(client_gone);
  bool cursor_kept = false;
  EXPECT_TRUE(zk_->Exists(dest + "/1001/cursor", &cursor_kept).ok());
  checked += 2;

  std::printf("[ ha ] layout: %d checks of the nodes against CANAL_PROTOCOL.md (cluster, destination cluster, "
              "running, cursor with @type and \"postion\", filter, client running); standby's nodes gone after "
              "stop.sh: %s, client running node gone after Disconnect: %s, cursor kept: %s\n",
              checked, standby_gone ? "yes" : "no", client_gone ? "yes" : "no", cursor_kept ? "yes" : "no");
  std::printf("[ ha ]   running: %s\n[ ha ]   client running: %s\n[ ha ]   cursor: %s\n", running_body.c_str(),
              client_body.c_str(), cursor_body.c_str());
  EXPECT_TRUE(cursor_kept);
}

}  // namespace
}  // namespace canal::testing::ha
