// ZkClient against a live standalone ZooKeeper (scripts/zk-sandbox.sh on
// port 12181). Skips when java or the zookeeper package is missing.
#include "canal/coord/zk_client.h"

#include "canal/coord/testing/expire_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_suite.h"

using canal::testing::TestPort;

namespace canal::coord {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kZkPort = TestPort("zk_coord");

// Counts callbacks and lets a test wait for them.
class Counter {
 public:
  // Notifies under the lock: a waiter may destroy the Counter once it wakes.
  void Bump() {
    std::lock_guard<std::mutex> lock(mu_);
    ++count_;
    cv_.notify_all();
  }
  bool WaitFor(int n, std::chrono::milliseconds limit = 10s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return count_ >= n; });
  }
  int count() {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

// Records state transitions seen by a listener.
class StateLog {
 public:
  void Add(ZkState s) {
    std::lock_guard<std::mutex> lock(mu_);
    states_.push_back(s);
    cv_.notify_all();
  }
  bool WaitFor(ZkState s, std::chrono::milliseconds limit = 20s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] {
      for (ZkState x : states_) {
        if (x == s) return true;
      }
      return false;
    });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ZkState> states_;
};

class ZkClientTest : public canal::testing::ZkSuite<kZkPort> {
 protected:
  void SetUp() override {
    ZkSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    root_ = "/canal-test/" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // Polls until `path` exists == want (ephemeral removal is asynchronous to
  // the closing client).
  static bool WaitExists(ZkClient* c, const std::string& path, bool want, std::chrono::milliseconds limit = 15s) {
    return canal::testing::WaitFor(
        [&] {
          bool exists = !want;
          return c->Exists(path, &exists).ok() && exists == want;
        },
        limit, 50ms);
  }

  std::string root_;
};

TEST_F(ZkClientTest, ConnectsAndReportsSession) {
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->state(), ZkState::kConnected);
  EXPECT_NE(c->session_id(), 0);
  // The sandbox allows 1 s to 120 s, so what we asked for is what we get.
  EXPECT_EQ(c->negotiated_session_timeout_ms(), 6000);
  EXPECT_EQ(c->options().servers, sandbox_->servers());
  EXPECT_STREQ(ZkStateName(ZkState::kExpired), "expired");
}

TEST_F(ZkClientTest, CreateRejectsUnusableOptions) {
  std::unique_ptr<ZkClient> c;
  ZkOptions o;
  Status s = ZkClient::Create(o, &c);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("canal.zkServers"), std::string::npos) << s.ToString();
  o.servers = "127.0.0.1:1 ,x";
  EXPECT_EQ(ZkClient::Create(o, &c).code(), Status::Code::kInvalidArgument);
  o.servers = sandbox_->servers();
  o.operation_timeout_ms = 0;
  EXPECT_EQ(ZkClient::Create(o, &c).code(), Status::Code::kInvalidArgument);
}

TEST_F(ZkClientTest, UnreachableServerFailsWithinTheBoundNamingIt) {
  std::unique_ptr<ZkClient> c;
  ZkOptions o;
  o.servers = "127.0.0.1:1";  // nothing listens on port 1
  o.operation_timeout_ms = 500;
  ASSERT_TRUE(ZkClient::Create(o, &c).ok());
  Status s = c->WaitConnected(300ms);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("127.0.0.1:1"), std::string::npos) << s.ToString();
  const auto start = std::chrono::steady_clock::now();
  std::string data;
  s = c->Get("/x", &data);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.ToString().find("/x"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("127.0.0.1:1"), std::string::npos) << s.ToString();
  EXPECT_LT(took, 2s);
  EXPECT_EQ(c->state(), ZkState::kConnecting);
}

TEST_F(ZkClientTest, BadPathsAreInvalidArgument) {
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  std::string data;
  for (const char* bad : {"", "a", "/a/", "//", "/a//b", "/a/../b", "/."}) {
    Status s = c->Get(bad, &data);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << "'" << bad << "': " << s.ToString();
  }
  EXPECT_EQ(c->Get(std::string_view("/a\0b", 4), &data).code(), Status::Code::kInvalidArgument);
  bool created = false;
  EXPECT_EQ(c->CreateNode("/", "", ZkCreateMode::kPersistent, false, &created).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(c->Delete("/", true).code(), Status::Code::kInvalidArgument);
}

TEST_F(ZkClientTest, CreatesPersistentNodesWithParentsAndReportsExisting) {
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  const std::string path = root_ + "/a/b/c";
  bool created = false;
  Status s = c->CreateNode(path, "payload", ZkCreateMode::kPersistent, false, &created);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();

  ASSERT_TRUE(c->CreateNode(path, "payload", ZkCreateMode::kPersistent, true, &created).ok());
  EXPECT_TRUE(created);
  ASSERT_TRUE(c->CreateNode(path, "other", ZkCreateMode::kPersistent, true, &created).ok());
  EXPECT_FALSE(created);
  std::string data;
  ASSERT_TRUE(c->Get(path, &data).ok());
  EXPECT_EQ(data, "payload");  // an existing node keeps its data
  ASSERT_TRUE(c->Get(root_ + "/a", &data).ok());
  EXPECT_EQ(data, "");  // parents are empty
}

TEST_F(ZkClientTest, GetSetExistsRoundTripBinaryAndEmptyData) {
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  const std::string path = root_ + "/node";
  bool exists = true;
  ASSERT_TRUE(c->Exists(path, &exists).ok());
  EXPECT_FALSE(exists);
  std::string data = "stale";
  Status s = c->Get(path, &data);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos);
  EXPECT_NE(s.ToString().find(sandbox_->servers()), std::string::npos);

  ASSERT_TRUE(c->SetOrCreate(path, std::string("bin\0ary\xff", 8)).ok());  // creates with parents
  ASSERT_TRUE(c->Exists(path, &exists).ok());
  EXPECT_TRUE(exists);
  ASSERT_TRUE(c->Get(path, &data).ok());
  EXPECT_EQ(data, std::string("bin\0ary\xff", 8));
  ASSERT_TRUE(c->SetOrCreate(path, "").ok());
  ASSERT_TRUE(c->Get(path, &data).ok());
  EXPECT_EQ(data, "");
  const std::string big(512 * 1024, 'x');
  ASSERT_TRUE(c->SetOrCreate(path, big).ok());
  ASSERT_TRUE(c->Get(path, &data).ok());
  EXPECT_EQ(data, big);
}

TEST_F(ZkClientTest, ChildrenAreSortedAndMissingParentIsNotFound) {
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  for (const char* name : {"c", "a", "b"}) {
    bool created = false;
    ASSERT_TRUE(c->CreateNode(root_ + "/" + name, "", ZkCreateMode::kPersistent, true, &created).ok());
  }
  std::vector<std::string> names;
  ASSERT_TRUE(c->Children(root_, &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_TRUE(c->Children(root_ + "/a", &names).ok());
  EXPECT_TRUE(names.empty());
  EXPECT_TRUE(c->Children(root_ + "/missing", &names).IsNotFound());
}

TEST_F(ZkClientTest, DeleteIsRecursiveOnlyWhenAskedAndMissingIsFine) {
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  bool created = false;
  ASSERT_TRUE(c->CreateNode(root_ + "/t/x/1", "", ZkCreateMode::kPersistent, true, &created).ok());
  ASSERT_TRUE(c->CreateNode(root_ + "/t/y", "", ZkCreateMode::kPersistent, true, &created).ok());
  Status s = c->Delete(root_ + "/t", false);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("children"), std::string::npos) << s.ToString();
  ASSERT_TRUE(c->Delete(root_ + "/t", true).ok());
  bool exists = true;
  ASSERT_TRUE(c->Exists(root_ + "/t", &exists).ok());
  EXPECT_FALSE(exists);
  EXPECT_TRUE(c->Delete(root_ + "/t", false).ok());
  EXPECT_TRUE(c->Delete(root_ + "/never/was", true).ok());
}

TEST_F(ZkClientTest, EphemeralNodesCannotHaveChildren) {
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  bool created = false;
  ASSERT_TRUE(c->CreateNode(root_ + "/eph", "", ZkCreateMode::kEphemeral, true, &created).ok());
  Status s = c->CreateNode(root_ + "/eph/child", "", ZkCreateMode::kPersistent, false, &created);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
}

TEST_F(ZkClientTest, DataWatchFiresOnceOnChange) {
  Counter fired;
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  const std::string path = root_ + "/w";
  ASSERT_TRUE(c->SetOrCreate(path, "v1").ok());
  bool exists = false;
  std::string data;
  ASSERT_TRUE(c->GetAndWatch(path, [&] { fired.Bump(); }, &exists, &data).ok());
  EXPECT_TRUE(exists);
  EXPECT_EQ(data, "v1");
  ASSERT_TRUE(c->SetOrCreate(path, "v2").ok());
  ASSERT_TRUE(fired.WaitFor(1));
  ASSERT_TRUE(c->SetOrCreate(path, "v3").ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(fired.count(), 1);  // one-shot
}

TEST_F(ZkClientTest, DataWatchFiresOnDelete) {
  Counter fired;
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  const std::string path = root_ + "/w";
  ASSERT_TRUE(c->SetOrCreate(path, "v").ok());
  bool exists = false;
  ASSERT_TRUE(c->GetAndWatch(path, [&] { fired.Bump(); }, &exists, nullptr).ok());
  ASSERT_TRUE(c->Delete(path).ok());
  ASSERT_TRUE(fired.WaitFor(1));
}

TEST_F(ZkClientTest, WatchOnMissingNodeFiresOnceOnCreation) {
  Counter fired;
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  const std::string path = root_ + "/later";
  bool exists = true;
  std::string data = "stale";
  ASSERT_TRUE(c->GetAndWatch(path, [&] { fired.Bump(); }, &exists, &data).ok());
  EXPECT_FALSE(exists);
  EXPECT_EQ(data, "");
  ASSERT_TRUE(c->SetOrCreate(path, "born").ok());
  ASSERT_TRUE(fired.WaitFor(1));
  ASSERT_TRUE(c->SetOrCreate(path, "changed").ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(fired.count(), 1);
}

TEST_F(ZkClientTest, ChildrenWatchFiresOnceWhenAChildComesOrGoes) {
  Counter fired;
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  bool created = false;
  ASSERT_TRUE(c->CreateNode(root_ + "/kids", "", ZkCreateMode::kPersistent, true, &created).ok());
  std::vector<std::string> names;
  ASSERT_TRUE(c->ChildrenAndWatch(root_ + "/kids", [&] { fired.Bump(); }, &names).ok());
  EXPECT_TRUE(names.empty());
  ASSERT_TRUE(c->CreateNode(root_ + "/kids/one", "", ZkCreateMode::kEphemeral, false, &created).ok());
  ASSERT_TRUE(fired.WaitFor(1));
  ASSERT_TRUE(c->ChildrenAndWatch(root_ + "/kids", [&] { fired.Bump(); }, &names).ok());
  EXPECT_EQ(names, std::vector<std::string>{"one"});
  ASSERT_TRUE(c->SetOrCreate(root_ + "/kids/one", "data change is not a children change").ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(fired.count(), 1);
  ASSERT_TRUE(c->Delete(root_ + "/kids/one").ok());
  ASSERT_TRUE(fired.WaitFor(2));

  Status s = c->ChildrenAndWatch(root_ + "/nobody", [&] { fired.Bump(); }, &names);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
}

// The classic pattern: re-arm from inside the callback. Must not deadlock.
TEST_F(ZkClientTest, WatchCallbackMayCallTheClientToReArm) {
  Counter fired;
  std::mutex mu;
  std::vector<std::string> seen;
  std::unique_ptr<ZkClient> c = Connect();
  ASSERT_NE(c, nullptr);
  const std::string path = root_ + "/rearm";
  ASSERT_TRUE(c->SetOrCreate(path, "0").ok());
  std::function<void()> arm = [&] {
    bool exists = false;
    std::string data;
    Status s = c->GetAndWatch(path, arm, &exists, &data);
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(s.ok() ? data : s.ToString());
    }
    fired.Bump();
  };
  arm();  // first read + arm, from the test thread
  ASSERT_TRUE(fired.WaitFor(1));
  ASSERT_TRUE(c->SetOrCreate(path, "1").ok());
  ASSERT_TRUE(fired.WaitFor(2));
  ASSERT_TRUE(c->SetOrCreate(path, "2").ok());
  ASSERT_TRUE(fired.WaitFor(3));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"0", "1", "2"}));
  c->Close();  // no re-arm can outlive the test's locals
}

TEST_F(ZkClientTest, EphemeralNodeVanishesWhenItsSessionCloses) {
  Counter gone;
  auto owner = Connect();
  auto observer = Connect();
  ASSERT_NE(owner, nullptr);
  ASSERT_NE(observer, nullptr);
  const std::string path = root_ + "/running/node-1";
  bool created = false;
  ASSERT_TRUE(owner->CreateNode(path, "10.0.0.1:11111", ZkCreateMode::kEphemeral, true, &created).ok());
  ASSERT_TRUE(created);
  bool exists = false;
  std::string data;
  ASSERT_TRUE(observer->GetAndWatch(path, [&] { gone.Bump(); }, &exists, &data).ok());
  ASSERT_TRUE(exists);
  EXPECT_EQ(data, "10.0.0.1:11111");
  owner->Close();
  EXPECT_EQ(owner->state(), ZkState::kClosed);
  ASSERT_TRUE(gone.WaitFor(1));
  ASSERT_TRUE(observer->Exists(path, &exists).ok());
  EXPECT_FALSE(exists);
  // The parent was made persistent.
  ASSERT_TRUE(observer->Exists(root_ + "/running", &exists).ok());
  EXPECT_TRUE(exists);
  // A closed client fails calls without waiting.
  Status s = owner->Get(path, &data);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.ToString().find("closed"), std::string::npos) << s.ToString();
}

TEST_F(ZkClientTest, SessionExpiryIsReportedAndReopenGivesANewSession) {
  StateLog log;  // outlives the client that calls it
  Counter watch_fired;
  auto c = Connect(Options(4000, 2000));
  auto observer = Connect();
  ASSERT_NE(c, nullptr);
  ASSERT_NE(observer, nullptr);
  const int listener = c->AddStateListener([&](ZkState s) { log.Add(s); });
  const std::string path = root_ + "/eph";
  bool created = false;
  ASSERT_TRUE(c->CreateNode(path, "", ZkCreateMode::kEphemeral, true, &created).ok());
  bool exists = false;
  ASSERT_TRUE(c->GetAndWatch(root_ + "/watched", [&] { watch_fired.Bump(); }, &exists, nullptr).ok());
  const int64_t old_session = c->session_id();

  ASSERT_TRUE(coord::testing::ExpireSession(*c).ok());
  ASSERT_TRUE(log.WaitFor(ZkState::kExpired));
  EXPECT_EQ(c->state(), ZkState::kExpired);
  EXPECT_EQ(c->session_id(), 0);
  EXPECT_TRUE(WaitExists(observer.get(), path, false));

  // Calls fail at once, saying why.
  const auto start = std::chrono::steady_clock::now();
  std::string data;
  Status s = c->Get(path, &data);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.ToString().find("expired"), std::string::npos) << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
  s = c->WaitConnected(100ms);
  EXPECT_NE(s.ToString().find("expired"), std::string::npos) << s.ToString();

  ASSERT_TRUE(c->Reopen().ok());
  ASSERT_TRUE(c->WaitConnected(10s).ok());
  ASSERT_TRUE(log.WaitFor(ZkState::kConnected));
  EXPECT_NE(c->session_id(), 0);
  EXPECT_NE(c->session_id(), old_session);
  ASSERT_TRUE(c->CreateNode(path, "", ZkCreateMode::kEphemeral, true, &created).ok());
  EXPECT_TRUE(created);
  // The old session's watch died with it.
  ASSERT_TRUE(observer->SetOrCreate(root_ + "/watched", "x").ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(watch_fired.count(), 0);
  c->RemoveStateListener(listener);
}

TEST_F(ZkClientTest, CallsWhileZooKeeperIsDownFailWithinTheBoundAndReconnectKeepsTheSession) {
  // Session 20 s: ZooKeeper is down for a few seconds only.
  StateLog log;
  auto c = Connect(Options(20000, 1000));
  ASSERT_NE(c, nullptr);
  c->AddStateListener([&](ZkState s) { log.Add(s); });
  const std::string path = root_ + "/eph";
  bool created = false;
  ASSERT_TRUE(c->CreateNode(path, "alive", ZkCreateMode::kEphemeral, true, &created).ok());
  const int64_t session = c->session_id();

  ASSERT_TRUE(sandbox_->Stop()) << sandbox_->error();
  ASSERT_TRUE(log.WaitFor(ZkState::kConnecting, 10s));
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::string data;
    Status s = c->Get(path, &data);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
    EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find(sandbox_->servers()), std::string::npos) << s.ToString();
    EXPECT_LT(took, 1500ms) << s.ToString();
  }
  bool exists = false;
  EXPECT_FALSE(c->Exists(path, &exists).ok());
  EXPECT_FALSE(c->SetOrCreate(root_ + "/p", "x").ok());
  EXPECT_FALSE(c->Delete(root_ + "/p", true).ok());
  EXPECT_EQ(c->state(), ZkState::kConnecting);

  ASSERT_TRUE(sandbox_->Start()) << sandbox_->error();
  ASSERT_TRUE(c->WaitConnected(20s).ok());
  EXPECT_EQ(c->session_id(), session);
  std::string data;
  ASSERT_TRUE(c->Get(path, &data).ok());
  EXPECT_EQ(data, "alive");
  auto other = Connect();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Exists(path, &exists).ok());
  EXPECT_TRUE(exists);
}

// A restarted ZooKeeper that lost its data does not know the session: the
// client learns it expired when it reconnects.
TEST_F(ZkClientTest, SessionUnknownAfterAWipedRestartIsReportedExpired) {
  StateLog log;
  auto c = Connect(Options(4000, 1000));
  ASSERT_NE(c, nullptr);
  c->AddStateListener([&](ZkState s) { log.Add(s); });
  ASSERT_TRUE(sandbox_->StartFresh()) << sandbox_->error();
  ASSERT_TRUE(log.WaitFor(ZkState::kExpired, 30s));
  EXPECT_EQ(c->state(), ZkState::kExpired);
  ASSERT_TRUE(c->Reopen().ok());
  EXPECT_TRUE(c->WaitConnected(10s).ok());
}

TEST_F(ZkClientTest, WatchFiringAfterTheClientIsDestroyedIsHarmless) {
  auto observer = Connect();
  auto writer = Connect();
  ASSERT_NE(observer, nullptr);
  ASSERT_NE(writer, nullptr);
  const std::string path = root_ + "/w";
  ASSERT_TRUE(writer->SetOrCreate(path, "1").ok());
  auto fired = std::make_shared<std::atomic<int>>(0);
  bool exists = false;
  ASSERT_TRUE(observer->GetAndWatch(path, [fired] { ++*fired; }, &exists, nullptr).ok());
  std::vector<std::string> names;
  ASSERT_TRUE(observer->ChildrenAndWatch(path, [fired] { ++*fired; }, &names).ok());
  observer.reset();
  ASSERT_TRUE(writer->SetOrCreate(path, "2").ok());
  ASSERT_TRUE(writer->SetOrCreate(path + "/child", "").ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(fired->load(), 0);
}

TEST_F(ZkClientTest, ClientMayBeDestroyedFromItsOwnCallback) {
  auto writer = Connect();
  ASSERT_NE(writer, nullptr);
  const std::string path = root_ + "/w";
  ASSERT_TRUE(writer->SetOrCreate(path, "1").ok());
  Counter done;
  auto victim = Connect();
  ASSERT_NE(victim, nullptr);
  std::unique_ptr<ZkClient>* slot = &victim;
  bool exists = false;
  ASSERT_TRUE(victim
                  ->GetAndWatch(
                      path,
                      [slot, &done] {
                        slot->reset();
                        done.Bump();
                      },
                      &exists, nullptr)
                  .ok());
  ASSERT_TRUE(writer->SetOrCreate(path, "2").ok());
  ASSERT_TRUE(done.WaitFor(1));
  EXPECT_EQ(victim, nullptr);
}

}  // namespace
}  // namespace canal::coord
