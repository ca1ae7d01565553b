// ZkMetaManager against a live standalone ZooKeeper (scripts/zk-sandbox.sh on
// port 12181): Canal's node layout and JSON bodies, read back raw, and what a
// second manager (a newly active server) sees.
#include "canal/meta/zk_meta_manager.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "canal/coord/zk_client.h"
#include "canal/meta/meta_json.h"
#include "meta_test_util.h"
#include "support/test_ports.h"
#include "support/zk_suite.h"

using canal::testing::TestPort;

namespace canal::meta {
namespace {

using namespace std::chrono_literals;
using coord::ZkClient;
using coord::ZkCreateMode;
using coord::ZkOptions;
using testing::CanalIdentity;
using testing::CanalPosition;
using testing::kCanalCursor;

constexpr uint16_t kZkPort = TestPort("zk_coord");

LogPosition Pos(const std::string& file, uint64_t offset) {
  LogPosition p;
  p.journal_name = file;
  p.position = offset;
  p.server_id = 1;
  return p;
}

class ZkMetaManagerTest : public canal::testing::ZkSuite<kZkPort> {
 protected:
  void SetUp() override {
    ZkSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    dest_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    zk_ = Connect();
    ASSERT_NE(zk_, nullptr);
  }

  std::unique_ptr<ZkClient> Connect(int op_ms = 5000) { return ZkSuite::Connect(Options(20000, op_ms)); }

  std::unique_ptr<ZkMetaManager> StartManager(ZkClient* zk, ZkMetaOptions o = {}) {
    o.zk = zk;
    auto m = std::make_unique<ZkMetaManager>(std::move(o));
    Status s = m->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return m;
  }

  ClientIdentity Client(int16_t id, std::string filter = "") const { return ClientIdentity{dest_, id, filter}; }
  std::string Base() const { return "/otter/canal/destinations/" + dest_; }

  std::string Raw(const std::string& path) {
    std::string data;
    Status s = zk_->Get(path, &data);
    return s.ok() ? data : "<" + s.ToString() + ">";
  }
  bool Exists(const std::string& path) {
    bool exists = false;
    EXPECT_TRUE(zk_->Exists(path, &exists).ok());
    return exists;
  }

  std::string dest_;
  std::unique_ptr<ZkClient> zk_;
};

TEST_F(ZkMetaManagerTest, PathsFollowCanalLayout) {
  const ClientIdentity c{"example", 1001, ""};
  EXPECT_EQ(ZkMetaManager::DestinationPath("example"), "/otter/canal/destinations/example");
  EXPECT_EQ(ZkMetaManager::ClientPath(c), "/otter/canal/destinations/example/1001");
  EXPECT_EQ(ZkMetaManager::FilterPath(c), "/otter/canal/destinations/example/1001/filter");
  EXPECT_EQ(ZkMetaManager::CursorPath(c), "/otter/canal/destinations/example/1001/cursor");
}

TEST_F(ZkMetaManagerTest, StartWithoutAClientIsInvalidArgument) {
  ZkMetaManager m(ZkMetaOptions{});
  Status s = m.Start();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  bool subscribed = false;
  EXPECT_EQ(m.HasSubscribe(Client(1), &subscribed).code(), Status::Code::kAborted);
}

TEST_F(ZkMetaManagerTest, SubscribeWritesTheClientNodeAndItsFilter) {
  auto m = StartManager(zk_.get());
  ASSERT_TRUE(m->Subscribe(Client(1001, ".*\\..*")).ok());
  EXPECT_EQ(Raw(Base() + "/1001"), "");
  EXPECT_EQ(Raw(Base() + "/1001/filter"), ".*\\..*");
  EXPECT_FALSE(Exists(Base() + "/1001/cursor"));  // nothing acked yet

  // A new filter replaces the old; an empty one removes the node, as Canal
  // writes no filter node for an empty filter.
  ASSERT_TRUE(m->Subscribe(Client(1001, "db\\..*")).ok());
  EXPECT_EQ(Raw(Base() + "/1001/filter"), "db\\..*");
  ASSERT_TRUE(m->Subscribe(Client(1001, "")).ok());
  EXPECT_FALSE(Exists(Base() + "/1001/filter"));
  EXPECT_TRUE(Exists(Base() + "/1001"));
}

TEST_F(ZkMetaManagerTest, CursorIsWrittenOnFlushAsCanalJsonOneWritePerMovedClient) {
  auto m = StartManager(zk_.get());
  ASSERT_TRUE(m->Subscribe(Client(1001)).ok());
  ASSERT_TRUE(m->Subscribe(Client(1002)).ok());
  ASSERT_TRUE(m->SetSourceIdentity(dest_, CanalIdentity()).ok());

  ASSERT_TRUE(m->UpdateCursor(Client(1001), CanalPosition()).ok());
  EXPECT_FALSE(Exists(Base() + "/1001/cursor"));  // memory only until Flush
  uint64_t before = m->zk_writes();
  ASSERT_TRUE(m->Flush(dest_).ok());
  EXPECT_EQ(Raw(Base() + "/1001/cursor"), kCanalCursor);
  EXPECT_FALSE(Exists(Base() + "/1002/cursor"));
  EXPECT_EQ(m->zk_writes() - before, 1u);

  before = m->zk_writes();
  ASSERT_TRUE(m->Flush(dest_).ok());
  EXPECT_EQ(m->zk_writes(), before);  // nothing changed, nothing written

  // Several acks before one flush: one write per client, the last cursor.
  ASSERT_TRUE(m->UpdateCursor(Client(1001), Pos("mysql-bin.000004", 20000)).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(1001), Pos("mysql-bin.000005", 4)).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(1002), Pos("mysql-bin.000004", 15000)).ok());
  before = m->zk_writes();
  ASSERT_TRUE(m->Flush(dest_).ok());
  EXPECT_EQ(m->zk_writes() - before, 2u);
  LogPosition p;
  LogIdentity id;
  ASSERT_TRUE(DecodeCursor(Raw(Base() + "/1001/cursor"), &p, &id).ok());
  EXPECT_EQ(p, Pos("mysql-bin.000005", 4));
  EXPECT_EQ(id, CanalIdentity());
  ASSERT_TRUE(DecodeCursor(Raw(Base() + "/1002/cursor"), &p, &id).ok());
  EXPECT_EQ(p, Pos("mysql-bin.000004", 15000));
}

TEST_F(ZkMetaManagerTest, ANewActiveServerResumesAtTheFlushedCursor) {
  auto zk_b = Connect();
  ASSERT_NE(zk_b, nullptr);
  auto a = StartManager(zk_.get());
  ASSERT_TRUE(a->Subscribe(Client(1001, "shop\\..*")).ok());
  ASSERT_TRUE(a->Subscribe(Client(7)).ok());
  ASSERT_TRUE(a->SetSourceIdentity(dest_, CanalIdentity()).ok());
  ASSERT_TRUE(a->UpdateCursor(Client(1001), CanalPosition()).ok());
  int64_t batch = 0;
  ASSERT_TRUE(a->AddBatch(Client(1001), PositionRange{Pos("f", 4), Pos("f", 9), Pos("f", 9)}, &batch).ok());
  ASSERT_TRUE(a->Flush(dest_).ok());
  // Batches stay in memory: nothing under the client but filter and cursor.
  std::vector<std::string> names;
  ASSERT_TRUE(zk_->Children(Base() + "/1001", &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"cursor", "filter"}));

  auto b = StartManager(zk_b.get());
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(b->ListClients(dest_, &clients).ok());
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_EQ(clients[0], Client(7));  // client-id order
  EXPECT_EQ(clients[1], Client(1001, "shop\\..*"));
  std::optional<LogPosition> cursor;
  LogIdentity identity;
  ASSERT_TRUE(b->GetCursor(Client(1001), &cursor, &identity).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(*cursor, CanalPosition());
  EXPECT_EQ(identity, CanalIdentity());
  ASSERT_TRUE(b->GetCursor(Client(7), &cursor).ok());
  EXPECT_FALSE(cursor.has_value());
  std::vector<Batch> batches;
  ASSERT_TRUE(b->ListBatches(Client(1001), &batches).ok());
  EXPECT_TRUE(batches.empty());

  // B acks further; A, active again later, reloads and sees it.
  const uint64_t before = b->zk_writes();
  ASSERT_TRUE(b->UpdateCursor(Client(1001), Pos("mysql-bin.000009", 77)).ok());
  ASSERT_TRUE(b->Flush(dest_).ok());
  EXPECT_EQ(b->zk_writes() - before, 1u);  // loaded cursors are not rewritten
  ASSERT_TRUE(a->GetCursor(Client(1001), &cursor).ok());
  EXPECT_EQ(*cursor, CanalPosition());  // stale until told
  ASSERT_TRUE(a->Reload(dest_).ok());
  ASSERT_TRUE(a->GetCursor(Client(1001), &cursor).ok());
  EXPECT_EQ(cursor->journal_name, "mysql-bin.000009");
  EXPECT_EQ(cursor->position, 77u);
}

// The batch record is the server's only one of an in-flight batch (the
// session acks from it): the cursor's ack position, the ring's ack point and
// the rows come back as recorded across flushes, and a Reload (a new active
// run) forgets them, as the session's new-run check expects.
TEST_F(ZkMetaManagerTest, BatchRecordsComeBackWholeAcrossFlushesAndAReloadForgetsThem) {
  auto m = StartManager(zk_.get());
  ASSERT_TRUE(m->Subscribe(Client(1001)).ok());
  PositionRange range{Pos("f", 4), Pos("f", 9), Pos("f", 7)};
  range.store_ack = 42;
  range.rows = 5;
  int64_t id = 0;
  ASSERT_TRUE(m->AddBatch(Client(1001), range, &id).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(1001), Pos("f", 3)).ok());
  ASSERT_TRUE(m->Flush(dest_).ok());
  PositionRange got;
  ASSERT_TRUE(m->GetBatch(Client(1001), id, &got).ok());
  EXPECT_EQ(got, range);
  PositionRange removed;
  ASSERT_TRUE(m->RemoveBatch(Client(1001), id, &removed).ok());
  EXPECT_EQ(removed, range);
  EXPECT_EQ(removed.ack, Pos("f", 7));
  EXPECT_EQ(removed.store_ack, 42u);
  EXPECT_EQ(removed.rows, 5u);

  ASSERT_TRUE(m->AddBatch(Client(1001), range, &id).ok());
  ASSERT_TRUE(m->Reload(dest_).ok());
  std::vector<Batch> batches;
  ASSERT_TRUE(m->ListBatches(Client(1001), &batches).ok());
  EXPECT_TRUE(batches.empty());
}

TEST_F(ZkMetaManagerTest, UnsubscribeRemovesTheClientNodes) {
  auto m = StartManager(zk_.get());
  ASSERT_TRUE(m->Subscribe(Client(1001, "x")).ok());
  ASSERT_TRUE(m->Subscribe(Client(1002)).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(1001), CanalPosition()).ok());
  ASSERT_TRUE(m->Flush(dest_).ok());
  ASSERT_TRUE(Exists(Base() + "/1001/cursor"));
  ASSERT_TRUE(m->Unsubscribe(Client(1001)).ok());
  EXPECT_FALSE(Exists(Base() + "/1001"));
  EXPECT_TRUE(Exists(Base() + "/1002"));
  ASSERT_TRUE(m->Unsubscribe(Client(1001)).ok());  // unknown: fine
  bool subscribed = true;
  ASSERT_TRUE(m->HasSubscribe(Client(1001), &subscribed).ok());
  EXPECT_FALSE(subscribed);

  auto other = StartManager(zk_.get());
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(other->ListClients(dest_, &clients).ok());
  EXPECT_EQ(clients, std::vector<ClientIdentity>{Client(1002)});
}

TEST_F(ZkMetaManagerTest, LoadReadsCanalWrittenNodesAndSkipsNonClients) {
  bool created = false;
  // What Canal and the HA nodes leave beside the clients.
  ASSERT_TRUE(zk_->CreateNode(Base() + "/running", R"({"active":true,"address":"10.0.0.1:11111"})",
                              ZkCreateMode::kEphemeral, true, &created).ok());
  ASSERT_TRUE(zk_->CreateNode(Base() + "/cluster/10.0.0.1:11111", "", ZkCreateMode::kEphemeral, true, &created).ok());
  ASSERT_TRUE(zk_->CreateNode(Base() + "/007", "", ZkCreateMode::kPersistent, true, &created).ok());
  ASSERT_TRUE(zk_->CreateNode(Base() + "/99999", "", ZkCreateMode::kPersistent, true, &created).ok());
  // Canal's own key order (fastjson sorts, "@type" first) and a running client node.
  ASSERT_TRUE(zk_->SetOrCreate(Base() + "/1001/cursor", kCanalCursor).ok());
  ASSERT_TRUE(zk_->SetOrCreate(Base() + "/1001/filter", "shop\\..*").ok());
  ASSERT_TRUE(zk_->CreateNode(Base() + "/1001/running", R"({"active":true,"address":"10.0.0.9:5000","clientId":1001})",
                              ZkCreateMode::kEphemeral, false, &created).ok());
  ASSERT_TRUE(zk_->CreateNode(Base() + "/-3", "", ZkCreateMode::kPersistent, false, &created).ok());

  auto m = StartManager(zk_.get());
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(m->ListClients(dest_, &clients).ok());
  EXPECT_EQ(clients, (std::vector<ClientIdentity>{Client(-3), Client(1001, "shop\\..*")}));
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(m->GetCursor(Client(1001), &cursor).ok());
  EXPECT_EQ(cursor, CanalPosition());
  const uint64_t before = m->zk_writes();
  ASSERT_TRUE(m->Flush(dest_).ok());
  EXPECT_EQ(m->zk_writes(), before);
  EXPECT_EQ(Raw(Base() + "/1001/cursor"), kCanalCursor);
}

TEST_F(ZkMetaManagerTest, UnknownDestinationIsEmpty) {
  auto m = StartManager(zk_.get());
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(m->ListClients(dest_, &clients).ok());
  EXPECT_TRUE(clients.empty());
  EXPECT_TRUE(m->Flush(dest_).ok());
  EXPECT_FALSE(Exists(Base()));  // reading creates nothing
  std::optional<LogPosition> cursor;
  EXPECT_TRUE(m->GetCursor(Client(1), &cursor).IsNotFound());
  EXPECT_TRUE(m->UpdateCursor(Client(1), Pos("f", 4)).IsNotFound());
}

TEST_F(ZkMetaManagerTest, CorruptCursorIsCorruptionNamingTheNodeOnEveryCall) {
  ASSERT_TRUE(zk_->SetOrCreate(Base() + "/1001/cursor", "{not json").ok());
  auto m = StartManager(zk_.get());
  for (int i = 0; i < 2; ++i) {
    std::vector<ClientIdentity> clients;
    Status s = m->ListClients(dest_, &clients);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find(Base() + "/1001/cursor"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(Raw(Base() + "/1001/cursor"), "{not json");  // never reset
  ASSERT_TRUE(zk_->SetOrCreate(Base() + "/1001/cursor", kCanalCursor).ok());
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(m->GetCursor(Client(1001), &cursor).ok());
  EXPECT_EQ(cursor, CanalPosition());
}

TEST_F(ZkMetaManagerTest, ZooKeeperDownGivesStatusValuesAndAFlushAfterwardsCatchesUp) {
  auto zk = Connect(/*op_ms=*/1000);
  ASSERT_NE(zk, nullptr);
  auto m = StartManager(zk.get());
  ASSERT_TRUE(m->Subscribe(Client(1001)).ok());
  ASSERT_TRUE(m->SetSourceIdentity(dest_, CanalIdentity()).ok());

  ASSERT_TRUE(sandbox_->Stop()) << sandbox_->error();
  // Acks are memory only and keep working.
  ASSERT_TRUE(m->UpdateCursor(Client(1001), CanalPosition()).ok());
  const auto start = std::chrono::steady_clock::now();
  Status s = m->Flush(dest_);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.ToString().find("client 1001 of destination " + dest_), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(Base() + "/1001/cursor"), std::string::npos) << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  s = m->Subscribe(Client(1002));
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  // A manager that never read the destination cannot serve it.
  auto fresh = StartManager(zk.get());
  std::vector<ClientIdentity> clients;
  s = fresh->ListClients(dest_, &clients);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.ToString().find("loading meta of destination " + dest_), std::string::npos) << s.ToString();

  ASSERT_TRUE(sandbox_->Start()) << sandbox_->error();
  ASSERT_TRUE(zk->WaitConnected(20s).ok());
  ASSERT_TRUE(zk_->WaitConnected(20s).ok());
  ASSERT_TRUE(m->Flush(dest_).ok());  // what failed stayed dirty
  EXPECT_EQ(Raw(Base() + "/1001/cursor"), kCanalCursor);
  EXPECT_TRUE(Exists(Base() + "/1002"));  // the failed Subscribe is in memory, written now
  ASSERT_TRUE(fresh->ListClients(dest_, &clients).ok());
  EXPECT_EQ(clients.size(), 2u);
}

TEST_F(ZkMetaManagerTest, FlushPeriodWritesWithoutAnExplicitFlush) {
  ZkMetaOptions o;
  o.flush_period = 100ms;
  auto m = StartManager(zk_.get(), o);
  ASSERT_TRUE(m->Subscribe(Client(1001)).ok());
  ASSERT_TRUE(m->SetSourceIdentity(dest_, CanalIdentity()).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(1001), CanalPosition()).ok());
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!Exists(Base() + "/1001/cursor") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(Raw(Base() + "/1001/cursor"), kCanalCursor);
  EXPECT_TRUE(m->background_status().ok());
}

TEST_F(ZkMetaManagerTest, WriteFenceRefusesWritesUntilItAllows) {
  bool allowed = true;
  ZkMetaOptions o;
  o.write_fence = [&](const std::string& destination) {
    return allowed ? Status::OK() : Status::Aborted("not the active server for " + destination);
  };
  auto m = StartManager(zk_.get(), o);
  ASSERT_TRUE(m->Subscribe(Client(1001)).ok());
  allowed = false;
  ASSERT_TRUE(m->UpdateCursor(Client(1001), CanalPosition()).ok());
  Status s = m->Flush(dest_);
  EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  EXPECT_NE(s.ToString().find("not the active server"), std::string::npos) << s.ToString();
  EXPECT_FALSE(Exists(Base() + "/1001/cursor"));
  allowed = true;
  ASSERT_TRUE(m->Flush(dest_).ok());
  EXPECT_TRUE(Exists(Base() + "/1001/cursor"));
  ASSERT_TRUE(m->Stop().ok());
}

TEST_F(ZkMetaManagerTest, StopWritesDirtyCursorsAndRefusesLaterCalls) {
  auto m = StartManager(zk_.get());
  ASSERT_TRUE(m->Subscribe(Client(1001)).ok());
  ASSERT_TRUE(m->SetSourceIdentity(dest_, CanalIdentity()).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(1001), CanalPosition()).ok());
  ASSERT_TRUE(m->Stop().ok());
  EXPECT_EQ(Raw(Base() + "/1001/cursor"), kCanalCursor);
  EXPECT_EQ(m->Flush(dest_).code(), Status::Code::kAborted);
  EXPECT_EQ(m->Reload(dest_).code(), Status::Code::kAborted);
  EXPECT_TRUE(m->Stop().ok());  // idempotent
}

TEST_F(ZkMetaManagerTest, BadDestinationNamesAreRefused) {
  auto m = StartManager(zk_.get());
  std::vector<ClientIdentity> clients;
  EXPECT_EQ(m->ListClients("a/b", &clients).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(m->ListClients("", &clients).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(m->Subscribe(ClientIdentity{"..", 1, ""}).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(m->Reload("x/y").code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace canal::meta

namespace canal::meta {
namespace {

// The cursor node's version fences a replaced owner: A wrote the cursor, B took the
// destination over and wrote it since; A, whose fence check would still pass (it was paused
// between the check and the write), cannot write its older cursor over B's.
TEST_F(ZkMetaManagerTest, AReplacedOwnersCursorWriteIsRefusedByTheNodesVersion) {
  auto zk_b = Connect();
  ASSERT_NE(zk_b, nullptr);
  auto a = StartManager(zk_.get());
  ASSERT_TRUE(a->Subscribe(Client(1001)).ok());
  ASSERT_TRUE(a->UpdateCursor(Client(1001), Pos("mysql-bin.000001", 100)).ok());
  ASSERT_TRUE(a->Flush(dest_).ok());

  auto b = StartManager(zk_b.get());  // the new owner reads the cursor (and its version)
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(b->GetCursor(Client(1001), &cursor).ok());
  ASSERT_TRUE(b->UpdateCursor(Client(1001), Pos("mysql-bin.000001", 500)).ok());
  ASSERT_TRUE(b->Flush(dest_).ok());

  ASSERT_TRUE(a->UpdateCursor(Client(1001), Pos("mysql-bin.000001", 200)).ok());
  const Status s = a->Flush(dest_);
  EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
  EXPECT_NE(s.ToString().find("fenced"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("client 1001"), std::string::npos) << s.ToString();
  EXPECT_NE(Raw(Base() + "/1001/cursor").find("500"), std::string::npos) << Raw(Base() + "/1001/cursor");
  // Still refused on the next try: nothing A holds moves B's cursor.
  EXPECT_EQ(a->Flush(dest_).code(), Status::Code::kAborted);
  EXPECT_NE(Raw(Base() + "/1001/cursor").find("500"), std::string::npos);

  // A, made the owner again, reloads and writes from what it read.
  ASSERT_TRUE(a->Reload(dest_).ok());
  ASSERT_TRUE(a->UpdateCursor(Client(1001), Pos("mysql-bin.000001", 900)).ok());
  ASSERT_TRUE(a->Flush(dest_).ok());
  EXPECT_NE(Raw(Base() + "/1001/cursor").find("900"), std::string::npos);
  // A cursor node someone else created first is refused too.
  ASSERT_TRUE(b->Reload(dest_).ok());
  ASSERT_TRUE(b->Subscribe(Client(7)).ok());
  ASSERT_TRUE(zk_->SetOrCreate(Base() + "/7/cursor", Raw(Base() + "/1001/cursor")).ok());
  ASSERT_TRUE(b->UpdateCursor(Client(7), Pos("mysql-bin.000002", 4)).ok());
  EXPECT_EQ(b->Flush(dest_).code(), Status::Code::kAborted);
}

// A write that timed out may still have landed: when the node holds exactly what this manager
// sent last, its version is this manager's to go on from (not a fence).
TEST_F(ZkMetaManagerTest, AWriteThatLandedUnansweredIsNotTakenForAnotherOwner) {
  auto a = StartManager(zk_.get());
  ASSERT_TRUE(a->Subscribe(Client(1001)).ok());
  ASSERT_TRUE(a->UpdateCursor(Client(1001), Pos("mysql-bin.000001", 100)).ok());
  ASSERT_TRUE(a->Flush(dest_).ok());
  // The same bytes written once more behind A's back: the version moves, the content does not.
  const std::string body = Raw(Base() + "/1001/cursor");
  ASSERT_TRUE(zk_->SetOrCreate(Base() + "/1001/cursor", body).ok());
  ASSERT_TRUE(a->UpdateCursor(Client(1001), Pos("mysql-bin.000001", 300)).ok());
  const Status s = a->Flush(dest_);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(Raw(Base() + "/1001/cursor").find("300"), std::string::npos);
}

}  // namespace
}  // namespace canal::meta
