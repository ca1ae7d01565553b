// The failover harness (support/replication_pair.h) against real MariaDB: a
// pair replicates by GTID; a kill -9 of the primary, the replica's promotion
// and the old primary's rejoin lose nothing; a planned switchover there and
// back keeps every row; an old primary with a transaction the new one lacks is
// refused with a readable divergence error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "support/mariadb_sandbox.h"
#include "support/replication_pair.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kPortA = TestPort("failover");
constexpr uint16_t kPortB = TestPort("failover", 1);

#define REQUIRE_MARIADB()                                                      \
  do {                                                                         \
    if (!MariadbSandbox::Available()) GTEST_SKIP() << MariadbSandbox::SkipReason(); \
  } while (0)

std::string Value(MariadbSandbox& s, const std::string& sql) {
  std::string out;
  EXPECT_TRUE(s.Sql(sql, &out)) << s.error();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string BinlogPos(MariadbSandbox& s) { return Value(s, "SELECT @@gtid_binlog_pos"); }
int Rows(MariadbSandbox& s) { return std::atoi(Value(s, "SELECT COUNT(*) FROM rp.t").c_str()); }

// `txns` transactions of 10 rows each, ids from `first`.
void Insert(MariadbSandbox& s, int first, int txns) {
  std::string sql;
  for (int t = 0; t < txns; ++t) {
    sql += "INSERT INTO rp.t VALUES ";
    for (int i = 0; i < 10; ++i) {
      const int id = first + t * 10 + i;
      sql += (i ? ",(" : "(") + std::to_string(id) + ",'row " + std::to_string(id) + "')";
    }
    sql += ";\n";
  }
  ASSERT_TRUE(s.Sql(sql)) << s.error();
}

void CreateTable(MariadbSandbox& s) {
  ASSERT_TRUE(s.Sql("CREATE DATABASE rp; CREATE TABLE rp.t (id INT PRIMARY KEY, v VARCHAR(32));")) << s.error();
}

Gtid Domain0(const std::string& pos) {
  std::map<uint32_t, Gtid> parsed;
  EXPECT_TRUE(ParseGtidPos(pos, &parsed)) << pos;
  EXPECT_EQ(parsed.size(), 1u) << pos;  // one domain: both servers use gtid_domain_id=0
  return parsed[0];
}

void ExpectReplicating(MariadbSandbox& s, uint16_t from_port) {
  ReplicaStatus st;
  std::string error;
  ASSERT_TRUE(ReadReplicaStatus(s, &st, &error)) << error;
  EXPECT_TRUE(st.configured);
  EXPECT_EQ(st.master_port, from_port) << st.ToString();
  EXPECT_EQ(st.io_running, "Yes") << st.ToString();
  EXPECT_EQ(st.sql_running, "Yes") << st.ToString();
  EXPECT_EQ(Value(s, "SELECT @@read_only"), "1");
}

TEST(ReplicationPair, GtidPositionsParseAndCompare) {
  std::map<uint32_t, Gtid> a, b;
  ASSERT_TRUE(ParseGtidPos("0-1-5,3-2-9\n", &a));
  EXPECT_EQ(a[0].ToString(), "0-1-5");
  EXPECT_EQ(a[3].ToString(), "3-2-9");
  ASSERT_TRUE(ParseGtidPos("", &b));
  EXPECT_TRUE(GtidPosCovers(a, b));  // everything covers the empty position
  EXPECT_FALSE(GtidPosCovers(b, a));
  ASSERT_TRUE(ParseGtidPos("0-2-5,3-2-10", &b));
  EXPECT_FALSE(GtidPosCovers(b, a));  // 0-2-5 is not 0-1-5: diverged
  ASSERT_TRUE(ParseGtidPos("0-2-6,3-2-10", &b));
  EXPECT_TRUE(GtidPosCovers(b, a));
  EXPECT_FALSE(ParseGtidPos("0-1", &b));
  EXPECT_FALSE(ParseGtidPos("0-1-x", &b));
}

TEST(ReplicationPair, FailoverPromotesReplicaAndOldPrimaryRejoins) {
  REQUIRE_MARIADB();
  ReplicationPair pair(kPortA, kPortB);
  std::string error;
  ASSERT_TRUE(pair.Start(&error)) << error;
  EXPECT_EQ(pair.primary_port(), kPortA);
  EXPECT_EQ(pair.replica_port(), kPortB);
  EXPECT_EQ(Value(pair.primary(), "SELECT @@read_only"), "0");
  ExpectReplicating(pair.replica(), kPortA);

  CreateTable(pair.primary());
  Insert(pair.primary(), 1, 10);
  ASSERT_TRUE(pair.WaitReplicaCaughtUp(30s, &error)) << error;
  EXPECT_EQ(Rows(pair.replica()), 100);
  const std::string before = BinlogPos(pair.primary());
  EXPECT_EQ(BinlogPos(pair.replica()), before);  // log_slave_updates: the same GTIDs
  const Gtid last_of_a = Domain0(before);
  EXPECT_EQ(last_of_a.server_id, 1u);

  ASSERT_TRUE(pair.KillPrimary(&error)) << error;
  ASSERT_TRUE(pair.PromoteReplica(&error)) << error;
  EXPECT_EQ(pair.primary_port(), kPortB);
  EXPECT_EQ(&pair.primary(), &pair.b());
  EXPECT_EQ(Value(pair.primary(), "SELECT @@read_only"), "0");
  Insert(pair.primary(), 101, 1);
  const Gtid first_of_b = Domain0(BinlogPos(pair.primary()));
  EXPECT_EQ(first_of_b.domain, 0u);
  EXPECT_EQ(first_of_b.server_id, 2u);
  EXPECT_EQ(first_of_b.seq, last_of_a.seq + 1);  // the domain's sequence goes on

  ASSERT_TRUE(pair.RejoinOldPrimaryAsReplica(&error)) << error;
  EXPECT_EQ(pair.replica_port(), kPortA);
  ExpectReplicating(pair.replica(), kPortB);
  Insert(pair.primary(), 111, 1);
  ASSERT_TRUE(pair.WaitReplicaCaughtUp(30s, &error)) << error;
  EXPECT_EQ(Rows(pair.replica()), 120);
  EXPECT_EQ(BinlogPos(pair.replica()), BinlogPos(pair.primary()));
}

TEST(ReplicationPair, PlannedSwitchoverThereAndBackKeepsEveryRow) {
  REQUIRE_MARIADB();
  ReplicationPair pair(kPortA, kPortB);
  std::string error;
  ASSERT_TRUE(pair.Start(&error)) << error;
  CreateTable(pair.primary());
  Insert(pair.primary(), 1, 5);

  // No explicit wait: the switchover waits for the replica itself.
  ASSERT_TRUE(pair.PlannedSwitchover(&error)) << error;
  EXPECT_EQ(pair.primary_port(), kPortB);
  EXPECT_EQ(Value(pair.primary(), "SELECT @@read_only"), "0");
  ExpectReplicating(pair.replica(), kPortB);
  EXPECT_EQ(Rows(pair.primary()), 50);  // 0 missing rows
  Insert(pair.primary(), 51, 5);
  ASSERT_TRUE(pair.WaitReplicaCaughtUp(30s, &error)) << error;
  EXPECT_EQ(Rows(pair.replica()), 100);

  // And back: B's gtid_slave_pos is stale now (it stops at A's last write);
  // the demotion must start it after what B wrote as primary.
  ASSERT_TRUE(pair.PlannedSwitchover(&error)) << error;
  EXPECT_EQ(pair.primary_port(), kPortA);
  ExpectReplicating(pair.replica(), kPortA);
  Insert(pair.primary(), 101, 1);
  ASSERT_TRUE(pair.WaitReplicaCaughtUp(30s, &error)) << error;
  EXPECT_EQ(Rows(pair.replica()), 110);
  EXPECT_EQ(Rows(pair.primary()), 110);
  EXPECT_EQ(BinlogPos(pair.replica()), BinlogPos(pair.primary()));
}

TEST(ReplicationPair, DivergedOldPrimaryIsReported) {
  REQUIRE_MARIADB();
  ReplicationPair pair(kPortA, kPortB);
  std::string error;
  ASSERT_TRUE(pair.Start(&error)) << error;
  CreateTable(pair.primary());
  ASSERT_TRUE(pair.WaitReplicaCaughtUp(30s, &error)) << error;

  // The replica misses A's last transaction; B then writes one of its own.
  ASSERT_TRUE(pair.StopReplicaIo(&error)) << error;
  Insert(pair.primary(), 1, 1);
  ASSERT_TRUE(pair.KillPrimary(&error)) << error;
  ASSERT_TRUE(pair.PromoteReplica(&error)) << error;
  EXPECT_EQ(Rows(pair.primary()), 0);
  Insert(pair.primary(), 1, 1);

  EXPECT_FALSE(pair.RejoinOldPrimaryAsReplica(&error, 20s));
  EXPECT_NE(error.find("1236"), std::string::npos) << error;
  EXPECT_NE(error.find("diverged"), std::string::npos) << error;
  // The old primary is up, read-only, its replication stopped: the caller decides.
  EXPECT_EQ(Value(pair.replica(), "SELECT @@read_only"), "1");
  std::printf("the divergence as reported: %s\n", error.c_str());
}

}  // namespace
}  // namespace canal::testing
