// canal-server following the database through its own failover (docs/replication.md,
// "Failover"), end to end: a MariaDB primary and GTID replica (ReplicationPair), a writer
// committing single-row transactions as fast as one session goes, canal-server with both
// servers as candidates (canal.instance.master.address = A,B), and a client counting every
// row it receives by key. The oracle is the new primary's own table: every row it has must
// arrive exactly once; a row that arrived but is not there must be one the server reported
// as lost (the old primary's last commits that never reached the replica).
#include <gtest/gtest.h>

#include "failover_fixture.h"

namespace canal::testing {
namespace failover {
namespace {

TEST_F(FailoverE2e, KillThePrimaryPromoteTheReplicaAndTheStreamFollowsExactly) {
  // continue: the old primary's last commits may not have reached the replica before the
  // kill; then they are lost to it, and the test checks they are the ones reported.
  ASSERT_NO_FATAL_FAILURE(StartServer("continue"));
  counter_.Start();
  const Clock::time_point writing_since = Clock::now();
  writer_.Start(pair_->primary().socket());
  ASSERT_TRUE(WaitFor([&] { return counter_.Has(2000); }, 60s)) << "the stream never reached row 2000";
  // An errant transaction on the replica (written there alone, in a domain of its own): the
  // old primary never had it; once the replica is primary it is delivered, and reported.
  ASSERT_TRUE(pair_->replica().Sql("SET SESSION gtid_domain_id = 5; INSERT INTO fo.t (id, v) VALUES (-1, 0)"))
      << pair_->replica().error();

  std::string error;
  std::printf("[ FAILOVER ] the writer committed %.0f transactions/s on the old primary\n",
              static_cast<double>(writer_.committed()) / std::max(0.001, SecondsSince(writing_since)));
  ASSERT_TRUE(pair_->KillPrimary(&error)) << error;
  const Clock::time_point killed = Clock::now();
  ASSERT_TRUE(pair_->PromoteReplica(&error)) << error;
  int64_t first_on_new = 0;
  ASSERT_TRUE(FollowToNewPrimary(*install_, "kill -9", &first_on_new));
  const double follow_s = SecondsSince(killed);
  std::printf("[ FAILOVER ] kill -9 of the primary to the first rows written on the promoted replica: %.2f s\n",
              follow_s);
  EXPECT_LT(follow_s, 10.0);
  ASSERT_TRUE(WaitFor([&] { return writer_.next_id() > first_on_new + 2000; }, 60s));
  writer_.Stop();
  const uint64_t extra = ExpectExactlyThePrimarysRows();
  EXPECT_EQ(extra, ReportedLost()) << "rows received but not on the new primary must be the ones reported lost";
  const std::string log = ReadFile(install_->instance_log("example"));
  EXPECT_NE(log.find("to 127.0.0.1:" + std::to_string(kPortB) + ", the primary"), std::string::npos) << log;
  EXPECT_NE(log.find("resuming after the delivered GTID state"), std::string::npos) << log;
  EXPECT_TRUE(counter_.Has(-1)) << "the replica's errant transaction was not delivered";
  EXPECT_NE(log.find("domain 5 after seq 0 up to 5-2-1"), std::string::npos) << log;
}

TEST_F(FailoverE2e, APlannedSwitchoverAndBackLosesAndRepeatsNothing) {
  ASSERT_NO_FATAL_FAILURE(StartServer("stop"));
  counter_.Start();
  writer_.Start(pair_->primary().socket());
  std::string error;
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(WaitFor([&] { return writer_.committed() > 1500u * (round + 1); }, 60s));
    // The application stops writing while the roles change (root could write to a read-only
    // server, and those writes would exist on the old primary alone).
    writer_.Pause(true);
    const Clock::time_point started = Clock::now();
    ASSERT_TRUE(pair_->PlannedSwitchover(&error)) << error;
    int64_t first_on_new = 0;
    ASSERT_TRUE(FollowToNewPrimary(*install_, "switchover " + std::to_string(round + 1), &first_on_new));
    std::printf("[ FAILOVER ] switchover %d: to the first rows written on the new primary: %.2f s\n", round + 1,
                SecondsSince(started));
    // The demoted primary replicates, so its own binlog has those rows too; the stream must
    // still move to where the writes go (within a role check, detecting.interval.time).
    const std::string moved = "to 127.0.0.1:" + std::to_string(pair_->primary_port()) + ", the primary";
    ASSERT_TRUE(WaitFor([&] { return Count(ReadFile(install_->instance_log("example")), moved) == 1; }, 15s))
        << ReadFile(install_->instance_log("example"));
    std::printf("[ FAILOVER ] switchover %d: the stream moved to the new primary after %.2f s\n", round + 1,
                SecondsSince(started));
  }
  ASSERT_TRUE(WaitFor([&] { return writer_.committed() > 4000u; }, 60s));
  writer_.Stop();
  EXPECT_EQ(ExpectExactlyThePrimarysRows(), 0u);
  EXPECT_EQ(ReportedLost(), 0u);
  EXPECT_NE(ReadFile(install_->instance_log("example")).find("is no longer the primary: read_only=ON"),
            std::string::npos);
}

// Kill the primary, promote the replica, bring the old primary back as a replica, and then the
// same the other way. Each kill comes while the writer pauses with the replica caught up (a
// server with transactions the new primary lacks could not rejoin it); canal may still be
// behind either.
TEST_F(FailoverE2e, FailsOverAndBackByKillAndPromoteBothWays) {
  ASSERT_NO_FATAL_FAILURE(StartServer("stop"));
  counter_.Start();
  writer_.Start(pair_->primary().socket());
  std::string error;
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(WaitFor([&] { return writer_.committed() > 2000u * (round + 1); }, 60s));
    writer_.Pause(true);
    ASSERT_TRUE(pair_->WaitReplicaCaughtUp(30s, &error)) << error;
    ASSERT_TRUE(pair_->KillPrimary(&error)) << error;
    const Clock::time_point killed = Clock::now();
    ASSERT_TRUE(pair_->PromoteReplica(&error)) << error;
    int64_t first_on_new = 0;
    ASSERT_TRUE(FollowToNewPrimary(*install_, "round " + std::to_string(round + 1), &first_on_new));
    std::printf("[ FAILOVER ] round %d: kill -9 of the primary to the first rows written on the promoted replica: "
                "%.2f s\n",
                round + 1, SecondsSince(killed));
    EXPECT_LT(SecondsSince(killed), 10.0);
    // The killed server rejoins as a replica of the new primary (it lost nothing: the replica
    // had caught up), and can be promoted back in the next round.
    ASSERT_TRUE(pair_->RejoinOldPrimaryAsReplica(&error)) << error;
  }
  ASSERT_TRUE(WaitFor([&] { return writer_.committed() > 6000u; }, 60s));
  writer_.Stop();
  EXPECT_EQ(ExpectExactlyThePrimarysRows(), 0u);
  EXPECT_EQ(ReportedLost(), 0u);
}

// The replica misses the primary's last transactions (its IO thread stopped) while canal
// delivers them; the primary dies and the replica is promoted, and writes go on there under
// the same sequence numbers. The destination stops naming the lost GTIDs; told to continue, it
// follows the new primary's own history from where it parted and counts them.
TEST_F(FailoverE2e, ADivergedNewPrimaryStopsTheDestinationNamingTheLostGtidsUnlessToldToContinue) {
  ASSERT_NO_FATAL_FAILURE(StartServer("stop"));
  counter_.Start();
  writer_.Start(pair_->primary().socket());
  ASSERT_TRUE(WaitFor([&] { return counter_.Has(500); }, 60s));
  std::string error;
  ASSERT_TRUE(pair_->StopReplicaIo(&error)) << error;
  const int64_t missed_from = writer_.next_id();
  ASSERT_TRUE(WaitFor([&] { return writer_.next_id() > missed_from + 300; }, 60s));
  writer_.Pause(true);
  const int64_t last_on_old = writer_.next_id() - 1;
  ASSERT_TRUE(WaitFor([&] { return counter_.Has(last_on_old); }, 30s)) << "canal never delivered the missed rows";
  ASSERT_TRUE(pair_->KillPrimary(&error)) << error;
  ASSERT_TRUE(pair_->PromoteReplica(&error)) << error;
  writer_.Point(pair_->primary().socket());
  writer_.Pause(false);
  const int64_t first_on_new = writer_.next_id();
  ASSERT_TRUE(WaitFor([&] { return writer_.next_id() > first_on_new + 500; }, 60s));

  // Stop: the error names the lost GTIDs (server 1's, in domain 0) and the fix.
  const std::string lacks = "lacks ";
  ASSERT_TRUE(WaitFor([&] { return ReadFile(install_->instance_log("example")).find("parser stopped") !=
                                   std::string::npos; },
                      30s))
      << ReadFile(install_->instance_log("example"));
  std::string log = ReadFile(install_->instance_log("example"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m, std::regex("lacks ([0-9]+) transaction\\(s\\) that clients already received: "
                                                   "(0-1-[0-9]+\\.\\.0-1-[0-9]+)")))
      << log;
  const uint64_t named = std::stoull(m[1]);
  std::printf("[ FAILOVER ] diverged: the destination stopped naming %llu lost transactions (%s)\n",
              static_cast<unsigned long long>(named), m[2].str().c_str());
  EXPECT_NE(log.find("canal.instance.failover.diverged=continue"), std::string::npos);
  EXPECT_FALSE(counter_.Has(first_on_new)) << "nothing of the new primary was delivered after the stop";
  // Each lost transaction is one row the client has and the new primary lacks.
  {
    const std::vector<int64_t> ids = PrimaryIds();
    const std::set<int64_t> on_new(ids.begin(), ids.end());
    uint64_t delivered_not_there = 0;
    for (const auto& [id, n] : counter_.counts()) delivered_not_there += on_new.count(id) == 0 ? n : 0;
    EXPECT_EQ(delivered_not_there, named);
    EXPECT_GE(named, 300u);
  }

  // Continue: restarted with the key, it goes on from where the histories parted.
  std::string out;
  ASSERT_EQ(install_->Stop(&out), 0) << out;
  ConfigureInstance("continue");
  ASSERT_EQ(install_->Startup(&out), 0) << out;
  ASSERT_TRUE(WaitFor([&] { return writer_.next_id() > first_on_new + 1500; }, 60s));
  writer_.Stop();
  const uint64_t extra = ExpectExactlyThePrimarysRows();
  EXPECT_EQ(extra, named);
  EXPECT_EQ(ReportedLost(), named);
  const HttpReply metrics = HttpGet(kMetricsPort, "/metrics");
  EXPECT_NE(metrics.body.find("canal_instance_failover_lost_transactions{destination=\"example\"} " +
                              std::to_string(named)),
            std::string::npos)
      << metrics.body.substr(0, 4000);
}

// Both at once: the ZooKeeper pair's active canal-server is killed while the database fails
// over. The standby takes the cursor (and its GTID state) from ZooKeeper and resumes on the
// new primary. Rows after the last durable ack come again (the killed server's unacked
// batch, at most one get); none is lost.
TEST_F(FailoverE2e, TheStandbyCanalServerResumesOnTheNewPrimaryWhenBothFailAtOnce) {
  std::string zk_error;
  std::unique_ptr<ZkSandbox> zk = StartSuiteZk(kZkPort, &zk_error);
  if (zk == nullptr && zk_error.empty()) GTEST_SKIP() << "ZooKeeper is not installed";
  ASSERT_NE(zk, nullptr) << zk_error;
  std::unique_ptr<CanalInstall> servers[2];
  for (int i = 0; i < 2; ++i) {
    servers[i] = std::make_unique<CanalInstall>(std::string("failover-ha-") + "ab"[i], kPortA);
    servers[i]->WriteServerProperties(CanalInstall::ServerProperties(
        kPairServerPorts[i], "canal.zkServers = " + zk->servers() +
                                 "\ncanal.zookeeper.session.timeout = 6000\ncanal.zookeeper.flush.period = 0\n"));
    servers[i]->WriteInstance("example", "canal.instance.master.address = 127.0.0.1:" + std::to_string(kPortA) +
                                             ",127.0.0.1:" + std::to_string(kPortB) +
                                             "\ncanal.instance.filter.regex = fo\\\\..*\n"
                                             "canal.instance.detecting.interval.time = 1\n");
  }
  std::string out;
  ASSERT_EQ(servers[0]->Startup(&out), 0) << out;
  ASSERT_TRUE(WaitFor([&] { return ReadFile(servers[0]->instance_log("example")).find("starting from") !=
                                   std::string::npos; },
                      30s))
      << ReadFile(servers[0]->server_log());
  ASSERT_EQ(servers[1]->Startup(&out), 0) << out;
  counter_.StartCluster(zk->servers());
  writer_.Start(pair_->primary().socket());
  ASSERT_TRUE(WaitFor([&] { return counter_.Has(3000); }, 60s));
  // The writer pauses with the replica caught up (nothing is lost to the database's failover;
  // canal may still be behind), then both die.
  writer_.Pause(true);
  std::string error;
  ASSERT_TRUE(pair_->WaitReplicaCaughtUp(30s, &error)) << error;
  ASSERT_TRUE(servers[0]->Kill9());
  ASSERT_TRUE(pair_->KillPrimary(&error)) << error;
  const Clock::time_point killed = Clock::now();
  ASSERT_TRUE(pair_->PromoteReplica(&error)) << error;
  int64_t first_on_new = 0;
  ASSERT_TRUE(FollowToNewPrimary(*servers[1], "the standby canal-server", &first_on_new, 60s));
  std::printf("[ FAILOVER ] active canal-server and primary killed together: the standby delivered the new "
              "primary's first rows %.2f s later (ZooKeeper session timeout 6 s)\n",
              SecondsSince(killed));
  ASSERT_TRUE(WaitFor([&] { return writer_.next_id() > first_on_new + 2000; }, 60s));
  writer_.Stop();
  install_.reset();  // (the checks read the standby's log)
  std::swap(install_, servers[1]);
  ExpectExactlyThePrimarysRows(/*repeats_allowed=*/5000);
  EXPECT_EQ(ReportedLost(), 0u);
  EXPECT_NE(ReadFile(install_->instance_log("example")).find("resuming after the delivered GTID state"),
            std::string::npos);
  counter_.Stop();
  EXPECT_EQ(install_->Stop(&out), 0) << out;
}

// Honest lag on an idle source (Canal reports an idle primary as lagging, alibaba/canal #4326):
// the primary writes nothing for a minute; its heartbeats (detecting.interval.time = 1 s) keep
// the delay metrics under the heartbeat period plus a second the whole time.
TEST_F(FailoverE2e, AnIdlePrimaryShowsNoLagForAMinute) {
  ASSERT_NO_FATAL_FAILURE(StartServer("stop"));
  counter_.Start();
  writer_.Start(pair_->primary().socket());
  ASSERT_TRUE(WaitFor([&] { return counter_.Has(200); }, 60s));
  writer_.Stop();
  const int64_t last = writer_.next_id() - 1;
  ASSERT_TRUE(WaitFor([&] { return counter_.Has(last); }, 30s));
  const auto metric = [](const std::string& body, const std::string& series) -> double {
    const size_t at = body.find(series + " ");
    return at == std::string::npos ? -1 : std::stod(body.substr(at + series.size() + 1));
  };
  double worst_delay = 0, worst_ack_delay = 0;
  int samples = 0;
  const Clock::time_point idle_from = Clock::now();
  while (SecondsSince(idle_from) < 60) {
    const HttpReply r = HttpGet(kMetricsPort, "/metrics");
    const double delay = metric(r.body, "canal_instance_traffic_delay{destination=\"example\"}");
    const double ack_delay = metric(r.body, "canal_instance_ack_delay{destination=\"example\"}");
    ASSERT_GE(delay, 0) << r.body.substr(0, 2000);
    ASSERT_GE(ack_delay, 0) << r.body.substr(0, 2000);
    worst_delay = std::max(worst_delay, delay);
    worst_ack_delay = std::max(worst_ack_delay, ack_delay);
    ++samples;
    std::this_thread::sleep_for(250ms);  // the sampling period of a watch on the metrics, not a wait
  }
  std::printf("[ FAILOVER ] idle primary for 60 s, %d samples: worst traffic delay %.0f ms, worst ack delay %.0f ms "
              "(heartbeat period 1000 ms)\n",
              samples, worst_delay, worst_ack_delay);
  EXPECT_LT(worst_delay, 2000);
  EXPECT_LT(worst_ack_delay, 2000);
}

}  // namespace
}  // namespace failover
}  // namespace canal::testing
