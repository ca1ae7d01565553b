// HA when the active client fails: two canal-cli --zk processes with the same
// client id; the elected one is SIGKILLed and the other resumes from the acked
// cursor.
#include "integration/ha_fixture.h"

#include "canal/coord/canal_layout.h"
#include "support/test_ports.h"

using canal::testing::TestPort;

namespace canal::testing::ha {
namespace {

constexpr uint16_t kClientFailoverPorts[2] = {TestPort("ha_servers", 6), TestPort("ha_servers", 7)};

// 4. Two canal-cli --zk processes with the same client id: the elected one
// prints and acks part of the stream and is SIGKILLed; the other takes over
// from the acked cursor: no row missing, and only rows of the killed one's
// last batch (printed, acked without an answer, or not acked) printed twice.
TEST_F(Ha, ASigkilledActiveClientIsReplacedByTheStandbyFromTheAckedCursor) {
  constexpr int kTxns = 2000, kRowsPerTxn = 10, kChunks = 20, kBatch = 50;
  const fs::path cli = fs::path(CANAL_BINARY_DIR) / "bin" / "canal-cli";
  ASSERT_TRUE(fs::exists(cli)) << cli << " is missing: build the canal-cli target first";
  const std::string table = "ha_db.clients";
  ASSERT_TRUE(CreateLoadTable(table));
  ASSERT_TRUE(StartPair("clients", kClientFailoverPorts, table));
  const std::vector<std::string> chunks = LoadChunks("clients", table, kTxns, kRowsPerTxn, kChunks);
  const fs::path dir = install(0).root();
  const std::vector<std::string> args = {cli.string(), "--zk", zk_sandbox_->servers(), "--destination", kDestination,
                                         "--client-id", "1001", "--json", "--batch", std::to_string(kBatch),
                                         "--timeout-ms", "200"};
  const std::string client_running = coord::layout::ClientRunningPath(kDestination, "1001");

  ChildProcess first, second;
  ASSERT_TRUE(first.Spawn(args, dir / "cli-a.out", dir / "cli-a.err"));
  bool exists = false;
  ASSERT_TRUE(WaitFor([&] { return zk_->Exists(client_running, &exists).ok() && exists; }, 15s))
      << ReadAll(dir / "cli-a.err");
  ASSERT_TRUE(second.Spawn(args, dir / "cli-b.out", dir / "cli-b.err"));
  ASSERT_TRUE(WaitForText(dir / "cli-b.err", "standby", 15s)) << ReadAll(dir / "cli-b.err");

  // Written as fast as it goes, so that the kill lands while the client is busy.
  std::jthread writer([&] { WriteFiles(chunks, 0, chunks.size()); });
  ASSERT_TRUE(WaitFor([&] { return CountLines(dir / "cli-a.out") >= 5000; }, 60s)) << ReadAll(dir / "cli-a.err");
  const auto killed_at = Clock::now();
  ASSERT_TRUE(first.Signal(SIGKILL));
  first.Wait(5s);
  // The cursor the killed client left (its last ack reaches ZooKeeper within
  // the flush period, and no later: the standby waits for its session to expire).
  std::this_thread::sleep_for(1500ms);
  std::string cursor;
  EXPECT_TRUE(zk_->Get("/otter/canal/destinations/example/1001/cursor", &cursor).ok());
  EXPECT_TRUE(WaitFor([&] { return CountLines(dir / "cli-b.out") > 0; }, 20s)) << ReadAll(dir / "cli-b.err");
  const double took_over_s = SecondsSince(killed_at);  // within 20 ms of the standby's first line
  writer.join();

  DeliveryLedger total(kTxns, kRowsPerTxn);
  int unparsable = 0;
  EXPECT_TRUE(WaitFor([&] { return static_cast<int64_t>(CliRows(dir / "cli-b.out", total, &unparsable).size()) +
                                       static_cast<int64_t>(CliRows(dir / "cli-a.out", total, &unparsable).size()) >=
                                   total.size(); }, 60s));
  std::this_thread::sleep_for(1s);
  second.Signal(SIGTERM);
  EXPECT_EQ(second.Wait(10s), 0) << ReadAll(dir / "cli-b.err");
  unparsable = 0;
  const std::vector<int64_t> a = CliRows(dir / "cli-a.out", total, &unparsable);
  const std::vector<int64_t> b = CliRows(dir / "cli-b.out", total, &unparsable);

  // Each process alone: in order, no repeats.
  DeliveryLedger la(kTxns, kRowsPerTxn), lb(kTxns, kRowsPerTxn);
  la.Received(a);
  lb.Received(b);
  // Together: the rows printed by both are a tail of the killed one's output,
  // the standby starts inside it, and nothing is missing.
  std::vector<uint8_t> in_a(static_cast<size_t>(total.size()), 0);
  for (int64_t n : a) {
    if (n >= 0 && n < total.size()) in_a[n] = 1;
  }
  int64_t both = 0;
  for (int64_t n : b) both += n >= 0 && n < total.size() && in_a[n];
  const int64_t b_first = b.empty() ? -1 : b.front();
  const int64_t a_last = a.empty() ? -1 : a.back();
  int64_t tail_from_b_first = 0;  // rows of a at or after b's first row
  for (int64_t n : a) tail_from_b_first += n >= b_first;
  total.Received(a);
  total.Received(b);
  const int64_t missing = total.gaps();
  // A batch of kBatch entries holds at most kBatch row entries of kRowsPerTxn rows.
  const int64_t one_batch = int64_t{kBatch} * kRowsPerTxn;

  std::printf("[ ha ] client failover: canal-cli A printed %zu rows (last txn %lld) and was SIGKILLed; canal-cli B "
              "(standby, same client id) printed its first row %.2f s later (session timeout %d ms), starting at txn "
              "%lld; %lld rows printed by both (the killed client's unfinished last batch, bound %lld), %lld missing, "
              "%lld out of order, %lld repeats within one process\n",
              a.size(), static_cast<long long>(a_last / kRowsPerTxn + 1), took_over_s, kSessionTimeoutMs,
              static_cast<long long>(b_first / kRowsPerTxn + 1), static_cast<long long>(both),
              static_cast<long long>(one_batch), static_cast<long long>(missing),
              static_cast<long long>(la.out_of_order() + lb.out_of_order()),
              static_cast<long long>(la.duplicates() + lb.duplicates()));
  std::printf("[ ha ]   cursor after the kill: %s\n", cursor.c_str());
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(la.duplicates() + lb.duplicates(), 0);
  EXPECT_EQ(la.out_of_order() + lb.out_of_order(), 0);
  EXPECT_EQ(la.foreign() + lb.foreign(), 0);
  EXPECT_LE(b_first, a_last + 1) << "the standby skipped rows after the killed client's last one";
  EXPECT_EQ(both, tail_from_b_first) << "rows printed twice are not exactly the killed client's tail";
  EXPECT_LE(both, one_batch);
  EXPECT_LT(took_over_s, kTakeoverBoundS);
}

}  // namespace
}  // namespace canal::testing::ha
