// HA when the active server fails: SIGKILLed, or frozen (SIGSTOP) past its
// ZooKeeper session and then resumed. The standby takes over within the bound;
// the client loses nothing and repeats nothing beyond the one batch acked
// without an answer; a resumed server is fenced.
#include "integration/ha_fixture.h"
#include "support/resumed_server.h"
#include "support/test_ports.h"

using canal::testing::TestPort;

namespace canal::testing::ha {
namespace {

constexpr uint16_t kFailoverPorts[2] = {TestPort("ha_servers"), TestPort("ha_servers", 1)};
constexpr uint16_t kPartitionPorts[2] = {TestPort("ha_servers", 2), TestPort("ha_servers", 3)};
constexpr uint16_t kAckNotAppliedPorts[2] = {TestPort("ha_servers_late"), TestPort("ha_servers_late", 1)};

// 1. SIGKILL of the active server while 2,000 transactions (200,000 rows)
// stream to a ClusterConnector client: the standby takes over within the
// bound, and the client receives every row in order, once (only the batch it
// acked just before the kill, with no answer since, may come once more).
TEST_F(Ha, SigkillOfTheActiveServerFailsOverWithinTheBoundLosingAndRepeatingNothing) {
  constexpr int kTxns = 2000, kRowsPerTxn = 100, kChunks = 20;
  const std::string table = "ha_db.failover";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("failover", kFailoverPorts, table));
  const std::vector<std::string> chunks = LoadChunks("failover", table, kTxns, kRowsPerTxn, kChunks);
  const auto start = Clock::now();

  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  ConsumeLog log;
  ClusterConnector c(ConsumerOptions(zk_sandbox_->servers()));
  std::jthread consumer([&](std::stop_token stop) { RunClusterConsumer(stop, c, ledger, log); });
  std::jthread writer([&] { WriteFiles(chunks, 0, chunks.size()); });

  EXPECT_TRUE(WaitFor([&] { return ledger.transactions_complete() >= 600; }, 60s))
      << ledger.transactions_complete() << " transactions; " << log.last_error();
  const std::string killed = RunningAddress(), standby = Address(kFailoverPorts[1]);
  ASSERT_EQ(killed, Address(kFailoverPorts[0]));
  const int64_t at_kill = ledger.transactions_complete();
  const auto killed_at = Clock::now();
  ASSERT_TRUE(install(0).Kill9());
  std::optional<Clock::time_point> node_moved;
  if (WaitFor([&] { return RunningAddress() == standby; }, 20s)) node_moved = Clock::now();
  ASSERT_TRUE(node_moved) << "the running node still says \"" << RunningAddress() << "\" 20 s after the kill\n"
                          << ReadAll(install(1).server_log());

  writer.join();
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 90s)) << ledger.distinct() << " rows; " << log.last_error();
  std::this_thread::sleep_for(1500ms);  // room for a late duplicate
  consumer.request_stop();
  consumer.join();

  const auto first_batch = log.FirstBatchAfter(killed_at, standby);
  const double node_s = SecondsBetween(killed_at, *node_moved);
  const double serving_s = first_batch ? SecondsBetween(killed_at, *first_batch) : -1;
  std::printf("[ ha ] failover: SIGKILL of the active server at %lld of %d transactions; running node moved after "
              "%.2f s, first batch from the new active after %.2f s (bound %.0f s, session timeout %d ms); %lld of %d "
              "rows in %.1f s, %zu batches, %lld reconnects, %lld errors returned to the client, %s\n",
              static_cast<long long>(at_kill), kTxns, node_s, serving_s, kTakeoverBoundS, kSessionTimeoutMs,
              static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn, SecondsSince(start),
              log.batches().size(), static_cast<long long>(log.reconnects.load()),
              static_cast<long long>(log.errors()), ledger.Tally().c_str());
  std::printf("%s", log.first_errors().c_str());
  ASSERT_TRUE(first_batch) << "no batch from " << standby << " after the kill";
  EXPECT_LT(serving_s, kTakeoverBoundS);
  EXPECT_LT(node_s, kTakeoverBoundS);
  EXPECT_EQ(ledger.Faults(), "");
}

// 2. The active server is frozen (SIGSTOP) past its session timeout: the
// standby takes over and the client keeps consuming without loss or repeat;
// resumed (SIGCONT), the old server never delivers data for the destination
// to a connection made before the freeze or after, and does not take the
// running node back.
TEST_F(Ha, AFrozenActiveServerIsReplacedAndAfterResumingNeverDeliversData) {
  constexpr int kTxns = 600, kRowsPerTxn = 20, kChunks = 30;
  const std::string table = "ha_db.partition";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("partition", kPartitionPorts, table));
  const std::string frozen = Address(kPartitionPorts[0]), standby = Address(kPartitionPorts[1]);
  const std::vector<std::string> chunks = LoadChunks("partition", table, kTxns, kRowsPerTxn, kChunks);

  DeliveryLedger ledger(kTxns, kRowsPerTxn);
  ConsumeLog log;
  ClusterConnector c(ConsumerOptions(zk_sandbox_->servers()));
  std::jthread consumer([&](std::stop_token stop) { RunClusterConsumer(stop, c, ledger, log); });
  // A plain connection to the old active server, authenticated before the freeze.
  ConnectorOptions direct_options;
  direct_options.address = frozen;
  direct_options.destination = kDestination;
  direct_options.connect_timeout = 3s;
  direct_options.read_timeout = 5s;
  Connector before(direct_options);
  Status s = before.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();

  // A third of the stream through the active server, a third while it is
  // frozen, the rest after it resumed.
  WriteFiles(chunks, 0, kChunks / 3);
  EXPECT_TRUE(WaitFor([&] { return ledger.transactions_complete() >= kTxns / 3; }, 30s)) << log.last_error();
  const auto frozen_at = Clock::now();
  ASSERT_TRUE(install(0).Freeze());
  std::jthread writer([&] { WriteFiles(chunks, kChunks / 3, 2 * kChunks / 3, 200ms); });
  std::optional<Clock::time_point> node_moved;
  if (WaitFor([&] { return RunningAddress() == standby; }, 20s)) node_moved = Clock::now();
  EXPECT_TRUE(node_moved) << "the running node still says \"" << RunningAddress() << "\" 20 s after the freeze";
  EXPECT_TRUE(WaitFor([&] { return log.FirstBatchAfter(frozen_at, standby).has_value(); }, 20s));
  // Frozen well past its session timeout (and its fencing bound).
  std::this_thread::sleep_until(frozen_at + std::chrono::milliseconds(kSessionTimeoutMs) + 3s);
  writer.join();

  // Resumed: its first answers, to a connection from before and one from after.
  const auto thawed_at = Clock::now();
  ASSERT_TRUE(install(0).Thaw());
  Connector after(direct_options);
  const ResumedServerAnswers resumed = ExpectResumedServerServesNothing(before, after);

  // It must not take the running node back while the new active server holds it.
  std::string held_by = standby;
  WaitFor([&] {
    const std::string a = RunningAddress();
    if (a != standby) held_by = a;
    return a != standby;
  }, 4s);
  WriteFiles(chunks, 2 * kChunks / 3, kChunks);
  EXPECT_TRUE(WaitFor([&] { return ledger.complete(); }, 60s)) << ledger.distinct() << " rows; " << log.last_error();
  std::this_thread::sleep_for(1s);  // room for a late duplicate
  consumer.request_stop();
  consumer.join();
  const bool fence_logged = ReadAll(install(0).server_log()).find("fencing") != std::string::npos;

  const auto first_batch = log.FirstBatchAfter(frozen_at, standby);
  std::printf("[ ha ] partition: active server frozen (SIGSTOP) for %.1f s; running node moved after %.2f s, first "
              "batch from the new active after %.2f s; after SIGCONT the old server answered %d of 4 requests with an error or a closed connection and "
              "delivered %d batches, running node held by %s for 4 s after, fencing logged: %s; client: %lld of %d "
              "rows, %lld reconnects, %lld errors returned, %s\n",
              SecondsBetween(frozen_at, thawed_at), node_moved ? SecondsBetween(frozen_at, *node_moved) : -1.0,
              first_batch ? SecondsBetween(frozen_at, *first_batch) : -1.0, resumed.refusals, resumed.data,
              held_by == standby ? "the new active" : held_by.c_str(), fence_logged ? "yes" : "no",
              static_cast<long long>(ledger.distinct()), kTxns * kRowsPerTxn,
              static_cast<long long>(log.reconnects.load()), static_cast<long long>(log.errors()),
              ledger.Tally().c_str());
  for (const auto& a : resumed.answers) std::printf("[ ha ]   %s\n", a.c_str());
  std::printf("%s", log.first_errors().c_str());
  EXPECT_EQ(resumed.data, 0);
  EXPECT_GE(resumed.refusals, 2) << "the subscribe from before and the one from after must both be refused";
  EXPECT_EQ(held_by, standby) << "the resumed server took the running node back";
  ASSERT_TRUE(first_batch) << "no batch from " << standby << " after the freeze";
  EXPECT_LT(SecondsBetween(frozen_at, *first_batch), kTakeoverBoundS);
  EXPECT_EQ(ledger.Faults(), "");
}

// 2b. The ack a frozen active server received just before the freeze: once
// resumed (fenced: the standby is active), it refuses the ack with error 409
// ("not applied, the batch comes again"), and the ClusterConnector, whose get
// reads that answer, fails over, rolls back and gets the same batch from the
// new active server, with no error returned to the caller.
TEST_F(Ha, AnAckAFrozenServerReadsAfterResumingIs409AndTheClusterConnectorGetsTheBatchAgain) {
  const std::string table = "ha_db.ack409";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("ack409", kAckNotAppliedPorts, table));
  const std::string frozen = Address(kAckNotAppliedPorts[0]), standby = Address(kAckNotAppliedPorts[1]);
  // The fixed address list: through ZooKeeper the connector would see the
  // running node move and leave the frozen server before reading its answer.
  ClusterConnectorOptions o = ConsumerOptions("");
  o.zk_servers.clear();
  o.addresses = {frozen, standby};
  o.read_timeout = 60s;  // still waiting on the frozen server when it resumes
  ClusterConnector c(o);
  Status s = c.Connect();
  if (s.ok()) s = c.Subscribe();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(Sql("INSERT INTO " + table + " (txn, seq, pad) VALUES (1, 0, 'a'), (1, 1, 'b')"));
  auto rows_of = [](Message& m) {
    std::vector<std::string> rows;
    EXPECT_TRUE(ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
                  rows.push_back(ColumnText(row, "pad"));
                }).ok());
    return rows;
  };
  Message first;
  for (const auto deadline = Clock::now() + 20s; first.batch_id() == -1 && Clock::now() < deadline;) {
    s = c.GetWithoutAck(256, 200, TimeUnit::kMilliseconds, &first);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_NE(first.batch_id(), -1) << "no batch from " << frozen;
  ASSERT_EQ(c.current_address(), frozen);
  const std::vector<std::string> rows = rows_of(first);
  ASSERT_EQ(rows, (std::vector<std::string>{"a", "b"}));

  const auto frozen_at = Clock::now();
  ASSERT_TRUE(install(0).Freeze());
  // Every thread stopped before the ack leaves: it must wait in the socket.
  ASSERT_TRUE(WaitFor([&] { return AllThreadsStopped(install(0).Pid()); }, 5s));
  s = c.Ack(first.batch_id());  // sent (no answer is expected): it waits in the frozen server's socket
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(WaitFor([&] { return RunningAddress() == standby; }, 20s)) << RunningAddress();
  std::this_thread::sleep_until(frozen_at + std::chrono::milliseconds(kSessionTimeoutMs) + 3s);
  ASSERT_TRUE(install(0).Thaw());

  Message again;
  s = c.GetWithoutAck(256, 500, TimeUnit::kMilliseconds, &again);
  for (const auto deadline = Clock::now() + 20s; s.ok() && again.batch_id() == -1 && Clock::now() < deadline;) {
    s = c.GetWithoutAck(256, 500, TimeUnit::kMilliseconds, &again);
  }
  const std::string log = ReadAll(install(0).server_log());
  std::printf("[ ha ] ack not applied: frozen %.1f s; the get after resuming: %s, batch %lld from %s; acks the "
              "connector saw refused with 409: %lld, reconnects %lld\n",
              SecondsBetween(frozen_at, Clock::now()), s.ToString().c_str(), static_cast<long long>(again.batch_id()),
              c.current_address().c_str(), static_cast<long long>(c.acks_not_applied()),
              static_cast<long long>(c.reconnects()));
  ASSERT_TRUE(s.ok()) << "the connector returned the failure instead of getting again: " << s.ToString();
  EXPECT_EQ(c.current_address(), standby);
  EXPECT_EQ(rows_of(again), rows) << "the batch whose ack was not applied comes again";
  EXPECT_EQ(c.acks_not_applied(), 1) << "the resumed server did not answer the ack with 409:\n" << log;
  EXPECT_NE(log.find("error 409"), std::string::npos) << log;
  EXPECT_TRUE(c.Ack(again.batch_id()).ok());
}

}  // namespace
}  // namespace canal::testing::ha
