// RunningMonitor against a live ZooKeeper sandbox (port 12182), with fake
// instances (no database): two servers contend for one destination and
// exactly one runs it; the running node carries Canal's JSON and the cluster
// nodes Canal's paths; a closed session hands the destination over after the
// takeover delay; a ZooKeeper that goes away (or freezes) makes the active
// server stop before its session can expire; the session coming back (or a
// new one) contends again; the registry serves only what is active here; and
// a canal process frozen with SIGSTOP past its session expiry never reports
// the destination active again when it resumes.
#include "canal/server/running_monitor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "canal/coord/canal_layout.h"
#include "canal/coord/testing/expire_session.h"
#include "canal/coord/zk_client.h"
#include "canal/server/config.h"
#include "canal/server/instance_registry.h"
#include "canal/server/session_server.h"
#include "memory_destination.h"
#include "session_test_client.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

using canal::testing::TestPort;

namespace canal::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kZkPort = TestPort("zk_server_ha");
constexpr int kSessionMs = 4000;  // the sandbox's tick is 500 ms: 1 s to 120 s allowed
constexpr auto kDelay = 300ms;    // takeover delay in these tests
constexpr const char* kChildEnv = "CANAL_RUNNING_MONITOR_CHILD";
// The parent's ZooKeeper connect string (with its chroot, when shared).
constexpr const char* kChildZkEnv = "CANAL_RUNNING_MONITOR_CHILD_ZK";

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  return canal::testing::WaitFor(done, limit, 10ms);
}

Status Connect(const std::string& servers, int session_ms, std::unique_ptr<coord::ZkClient>* out) {
  coord::ZkOptions options;
  options.servers = servers;
  options.session_timeout_ms = session_ms;
  options.operation_timeout_ms = 2000;
  CANAL_RETURN_IF_ERROR(coord::ZkClient::Create(options, out));
  return (*out)->WaitConnected(10s);
}

// A ZkClient whose process can "crash": Crash() ends the session as a dying
// process does, and reopening fails until Recover() (the process restarts).
class CrashableZk final : public coord::ZkClient {
 public:
  explicit CrashableZk(std::unique_ptr<coord::ZkClient> inner) : inner_(std::move(inner)) {}
  void Crash() {
    crashed_ = true;
    inner_->Close();
  }
  void Recover() { crashed_ = false; }

  Status WaitConnected(std::chrono::milliseconds limit) override { return inner_->WaitConnected(limit); }
  coord::ZkState state() const override { return inner_->state(); }
  int64_t session_id() const override { return inner_->session_id(); }
  int negotiated_session_timeout_ms() const override { return inner_->negotiated_session_timeout_ms(); }
  int AddStateListener(StateListener listener) override { return inner_->AddStateListener(std::move(listener)); }
  void RemoveStateListener(int id) override { inner_->RemoveStateListener(id); }
  Status Reopen() override {
    if (crashed_) return Status::IOError("reopen refused: the test crashed this server");
    return inner_->Reopen();
  }
  void Close() override { inner_->Close(); }
  Status CreateNode(std::string_view path, std::string_view data, coord::ZkCreateMode mode, bool make_parents,
                    bool* created) override {
    return inner_->CreateNode(path, data, mode, make_parents, created);
  }
  Status SetOrCreate(std::string_view path, std::string_view data) override { return inner_->SetOrCreate(path, data); }
  Status Get(std::string_view path, std::string* data) override { return inner_->Get(path, data); }
  Status GetVersioned(std::string_view path, std::string* data, int32_t* version) override {
    return inner_->GetVersioned(path, data, version);
  }
  Status SetIfVersion(std::string_view path, std::string_view data, int32_t expected, int32_t* version) override {
    return inner_->SetIfVersion(path, data, expected, version);
  }
  Status GetAndWatch(std::string_view path, Watch watch, bool* exists, std::string* data) override {
    return inner_->GetAndWatch(path, std::move(watch), exists, data);
  }
  Status Exists(std::string_view path, bool* exists) override { return inner_->Exists(path, exists); }
  Status Delete(std::string_view path, bool recursive) override { return inner_->Delete(path, recursive); }
  Status Children(std::string_view path, std::vector<std::string>* names) override {
    return inner_->Children(path, names);
  }
  Status ChildrenAndWatch(std::string_view path, Watch watch, std::vector<std::string>* names) override {
    return inner_->ChildrenAndWatch(path, std::move(watch), names);
  }
  const coord::ZkOptions& options() const override { return inner_->options(); }
  coord::ZkClient& inner() { return *inner_; }

 private:
  std::unique_ptr<coord::ZkClient> inner_;
  std::atomic<bool> crashed_{false};
};

// One canal-server as far as HA goes: a session, a monitor, and a fake
// instance of one destination that records its life.
class Server {
 public:
  Server(std::string servers, std::string address, std::chrono::milliseconds fence_after = 0ms,
         bool placement = false)
      : servers_(std::move(servers)), address_(std::move(address)) {
    log_stream_ = std::make_shared<std::ostringstream>();
    log_ = std::make_shared<spdlog::logger>("ha-" + address_,
                                            std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_stream_));
    log_->set_level(spdlog::level::debug);
    std::unique_ptr<coord::ZkClient> zk;
    status_ = Connect(servers_, kSessionMs, &zk);
    if (!status_.ok()) return;
    zk_ = std::make_unique<CrashableZk>(std::move(zk));
    RunningMonitorOptions o;
    o.address = address_;
    o.takeover_delay = kDelay;
    o.fence_after = fence_after;
    o.retry_min = 50ms;
    o.retry_max = 500ms;
    o.logger = log_;
    o.placement = placement;
    o.on_deactivated = [this](const std::string& dest, const std::string& reason) {
      std::lock_guard<std::mutex> lock(mu_);
      closed_.push_back(dest + ": " + reason);
    };
    monitor_ = std::make_unique<RunningMonitor>(zk_.get(), std::move(o));
    status_ = monitor_->Start();
  }
  ~Server() {
    if (monitor_) monitor_->Stop();
    if (zk_) zk_->Close();
  }

  const Status& status() const { return status_; }
  RunningMonitor& monitor() { return *monitor_; }
  CrashableZk& zk() { return *zk_; }
  const std::string& address() const { return address_; }

  // `on_start`, when given, runs first in the handler's activate; its error fails the start.
  void Join(const std::string& dest, std::function<Status()> on_start = nullptr) {
    DestinationArbiter::Handler handler;
    handler.activate = [this, on_start = std::move(on_start)] {
      if (on_start) CANAL_RETURN_IF_ERROR(on_start());
      running_ = true;
      ++starts_;
      return Status::OK();
    };
    handler.deactivate = [this](const std::string&) {
      running_ = false;
      ++stops_;
      stopped_at_ = Clock::now().time_since_epoch().count();
    };
    monitor_->Join(dest, std::move(handler));
  }

  bool running() const { return running_; }
  int starts() const { return starts_; }
  int stops() const { return stops_; }
  Clock::time_point stopped_at() const { return Clock::time_point(Clock::duration(stopped_at_.load())); }
  std::vector<std::string> closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }
  std::string Log() {
    log_->flush();
    return log_stream_->str();
  }

 private:
  std::string servers_, address_;
  std::shared_ptr<std::ostringstream> log_stream_;
  std::shared_ptr<spdlog::logger> log_;
  Status status_;
  std::unique_ptr<CrashableZk> zk_;
  std::unique_ptr<RunningMonitor> monitor_;
  std::atomic<bool> running_{false};
  std::atomic<int> starts_{0}, stops_{0};
  std::atomic<int64_t> stopped_at_{0};
  std::mutex mu_;
  std::vector<std::string> closed_;
};

class RunningMonitorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv(kChildEnv) != nullptr) return;  // the child process uses the parent's sandbox
    sandbox_ = canal::testing::StartSuiteZk(kZkPort, &setup_error_);
  }
  static void TearDownTestSuite() { sandbox_.reset(); }

  void SetUp() override {
    if (std::getenv(kChildEnv) != nullptr) return;
    CANAL_REQUIRE_ZK(sandbox_, setup_error_);
    ASSERT_TRUE(Connect(sandbox_->servers(), kSessionMs, &observer_).ok());
  }
  void TearDown() override {
    if (observer_) observer_->Close();
  }

  std::unique_ptr<Server> MakeServer(const std::string& address, std::chrono::milliseconds fence_after = 0ms,
                                     bool placement = false) {
    auto server = std::make_unique<Server>(sandbox_->servers(), address, fence_after, placement);
    EXPECT_TRUE(server->status().ok()) << server->status().ToString();
    return server;
  }

  std::vector<std::string> Children(const std::string& path) {
    std::vector<std::string> names;
    Status s = observer_->Children(path, &names);
    if (!s.ok()) return {};
    std::sort(names.begin(), names.end());
    return names;
  }

  // The ZooKeeper server's pid, from the sandbox's pid file.
  pid_t ZkPid() {
    std::ifstream in(sandbox_->dir() + "/zookeeper.pid");
    long pid = 0;
    in >> pid;
    return static_cast<pid_t>(pid);
  }

  static inline std::unique_ptr<canal::testing::ZkSandbox> sandbox_;
  static inline std::string setup_error_;
  std::unique_ptr<coord::ZkClient> observer_;
};

TEST(ClusterAddressTest, PrefersRegisterIpThenListenIpThenAHostAddress) {
  EXPECT_EQ(ClusterAddress("10.1.1.1", "10.2.2.2", 11111), "10.1.1.1:11111");
  EXPECT_EQ(ClusterAddress("", "10.2.2.2", 11112), "10.2.2.2:11112");
  EXPECT_EQ(ClusterAddress("", "::1", 11113), "[::1]:11113");
  const std::string any = ClusterAddress("", "0.0.0.0", 11114);
  EXPECT_NE(any.find(":11114"), std::string::npos);
  EXPECT_EQ(any.find("0.0.0.0"), std::string::npos) << any;
}

TEST(RunningMonitorOptionsTest, StartRefusesAMissingAddressOrClient) {
  RunningMonitorOptions with_address;
  with_address.address = "127.0.0.1:1";
  RunningMonitor no_client(nullptr, with_address);
  EXPECT_FALSE(no_client.Start().ok());
  RunningMonitor no_address(nullptr, RunningMonitorOptions{});
  EXPECT_FALSE(no_address.Start().ok());
  EXPECT_FALSE(no_address.IsActive("x"));
}

TEST_F(RunningMonitorTest, ExactlyOneOfTwoServersIsActiveAndTheNodesAreCanals) {
  auto a = MakeServer("127.0.0.1:13511");
  auto b = MakeServer("127.0.0.1:13512");
  a->Join("one");
  b->Join("one");
  ASSERT_TRUE(WaitFor([&] { return a->monitor().IsActive("one") || b->monitor().IsActive("one"); }, 5s));
  // Stays exactly one for a while (a sample every 10 ms).
  const auto until = Clock::now() + 1s;
  while (Clock::now() < until) {
    ASSERT_NE(a->monitor().IsActive("one"), b->monitor().IsActive("one"));
    ASSERT_NE(a->running(), b->running());
    std::this_thread::sleep_for(10ms);
  }
  Server* active = a->monitor().IsActive("one") ? a.get() : b.get();
  Server* standby = active == a.get() ? b.get() : a.get();
  EXPECT_EQ(active->monitor().Active(), std::vector<std::string>{"one"});
  EXPECT_TRUE(standby->monitor().Active().empty());
  EXPECT_EQ(active->starts(), 1);
  EXPECT_EQ(standby->starts(), 0);

  std::string body;
  ASSERT_TRUE(observer_->Get("/otter/canal/destinations/one/running", &body).ok());
  const nlohmann::json json = nlohmann::json::parse(body);
  EXPECT_EQ(json, nlohmann::json::parse(R"({"active":true,"address":")" + active->address() + "\"}")) << body;

  const std::vector<std::string> both = {"127.0.0.1:13511", "127.0.0.1:13512"};
  EXPECT_EQ(Children("/otter/canal/cluster"), both);
  EXPECT_EQ(Children("/otter/canal/destinations/one/cluster"), both);
  EXPECT_NE(active->Log().find("won the running node"), std::string::npos) << active->Log();
  EXPECT_NE(standby->Log().find("lost the contention: server " + active->address() + " is active"),
            std::string::npos)
      << standby->Log();
}

TEST_F(RunningMonitorTest, ClosingTheActiveSessionHandsOverAndTheNewSessionContendsAgain) {
  auto a = MakeServer("127.0.0.1:13513");
  a->Join("handover");
  ASSERT_TRUE(WaitFor([&] { return a->monitor().IsActive("handover"); }, 5s));
  auto b = MakeServer("127.0.0.1:13514");
  b->Join("handover");
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/handover/cluster").size() == 2; }, 5s));
  std::this_thread::sleep_for(200ms);  // b reads the node and watches it
  ASSERT_FALSE(b->monitor().IsActive("handover"));

  // a's process dies: ZooKeeper drops its session and nodes at once.
  const auto closed = Clock::now();
  a->zk().Crash();
  ASSERT_TRUE(WaitFor([&] { return b->monitor().IsActive("handover"); }, kDelay + 3s)) << b->Log() << a->Log();
  const auto took = Clock::now() - closed;
  EXPECT_GE(took, kDelay - 50ms) << "the takeover delay was not waited";
  EXPECT_TRUE(b->running());
  // a noticed at once (its session is gone): stopped, sessions closed.
  ASSERT_TRUE(WaitFor([&] { return !a->running(); }, 2s));
  EXPECT_FALSE(a->monitor().IsActive("handover"));
  ASSERT_FALSE(a->closed().empty());
  EXPECT_NE(a->closed()[0].find("handover: fenced"), std::string::npos) << a->closed()[0];

  // a comes back (its reopening was refused meanwhile: retried, logged), opens a
  // new session and contends again: registered, standing by.
  std::this_thread::sleep_for(300ms);
  EXPECT_NE(a->Log().find("reopening the ZooKeeper session failed (retrying in"), std::string::npos) << a->Log();
  a->zk().Recover();
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/handover/cluster").size() == 2; }, 5s));
  EXPECT_EQ(Children("/otter/canal/cluster"), (std::vector<std::string>{"127.0.0.1:13513", "127.0.0.1:13514"}));
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(a->monitor().IsActive("handover"));
  EXPECT_TRUE(b->monitor().IsActive("handover"));

  // And takes over when b goes.
  b->zk().Crash();
  EXPECT_TRUE(WaitFor([&] { return a->monitor().IsActive("handover"); }, kDelay + 3s)) << a->Log();
  EXPECT_TRUE(a->running());
  EXPECT_EQ(a->starts(), 2);
  EXPECT_NE(b->Log().find("takes over in 300 ms"), std::string::npos) << b->Log();
}

TEST_F(RunningMonitorTest, AnExpiredSessionIsFencedAtOnceAndItsNewSessionContendsAgain) {
  auto a = MakeServer("127.0.0.1:13511");
  a->Join("expiry");
  ASSERT_TRUE(WaitFor([&] { return a->monitor().IsActive("expiry"); }, 5s));
  auto b = MakeServer("127.0.0.1:13512");
  b->Join("expiry");
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/expiry/cluster").size() == 2; }, 5s));
  std::this_thread::sleep_for(200ms);
  const int64_t old_session = a->zk().session_id();

  ASSERT_TRUE(coord::testing::ExpireSession(a->zk().inner()).ok());
  // (Expiring takes the test's second handle a moment, during which a may
  // already have fenced on its lease: either reason will do.)
  // The bound is generous for a loaded machine: what matters is that the fence
  // comes from the expiry itself, which the "fenced: " reason below shows.
  // Counted, not sampled: a may win the node back with its new session before
  // a poll of running() sees the gap.
  ASSERT_TRUE(WaitFor([&] { return a->stops() > 0; }, 5s));
  ASSERT_FALSE(a->closed().empty());
  EXPECT_NE(a->closed()[0].find("expiry: fenced: "), std::string::npos) << a->closed()[0];
  // A new session registers again; the node was a's own, so a contends at
  // once and (b waiting its takeover delay) normally wins it back. Either
  // way exactly one server ends up active.
  ASSERT_TRUE(WaitFor([&] { return a->zk().session_id() != old_session && a->zk().session_id() != 0; }, 5s));
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/expiry/cluster").size() == 2; }, 5s));
  ASSERT_TRUE(
      WaitFor([&] { return a->monitor().IsActive("expiry") || b->monitor().IsActive("expiry"); }, kDelay + 3s));
  std::this_thread::sleep_for(kDelay + 200ms);
  EXPECT_NE(a->monitor().IsActive("expiry"), b->monitor().IsActive("expiry"));
  EXPECT_NE(a->running(), b->running());
  EXPECT_NE(a->Log().find("expired; opening a new one"), std::string::npos) << a->Log();
}

TEST_F(RunningMonitorTest, LeavingReleasesTheDestinationToTheStandby) {
  auto a = MakeServer("127.0.0.1:13511");
  auto b = MakeServer("127.0.0.1:13512");
  a->Join("leave");
  ASSERT_TRUE(WaitFor([&] { return a->monitor().IsActive("leave"); }, 5s));
  b->Join("leave");
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/leave/cluster").size() == 2; }, 5s));
  std::this_thread::sleep_for(200ms);
  a->monitor().Leave("leave");
  EXPECT_FALSE(a->running());
  EXPECT_FALSE(a->monitor().IsActive("leave"));
  EXPECT_EQ(Children("/otter/canal/destinations/leave/cluster"), std::vector<std::string>{"127.0.0.1:13512"});
  EXPECT_TRUE(WaitFor([&] { return b->monitor().IsActive("leave"); }, kDelay + 3s));
}

// The destination's start (the handler's activate) may write its meta in ZooKeeper: MayWrite is
// true while this server holds the running node and starts it, before IsActive is. An MQ
// destination subscribes its publisher's client (1001) there, through the cursor writes' fence;
// with IsActive as the fence no MQ destination ever started on an HA pair.
TEST_F(RunningMonitorTest, AStartingDestinationMayWriteItsMetaBeforeItIsActive) {
  auto a = MakeServer("127.0.0.1:13511");
  std::atomic<int> may_write{-1}, active{-1};
  a->Join("starting", [&] {
    may_write = a->monitor().MayWrite("starting") ? 1 : 0;
    active = a->monitor().IsActive("starting") ? 1 : 0;
    return Status::OK();
  });
  ASSERT_TRUE(WaitFor([&] { return a->monitor().IsActive("starting"); }, 5s)) << a->Log();
  EXPECT_EQ(may_write.load(), 1);
  EXPECT_EQ(active.load(), 0);
  EXPECT_TRUE(a->monitor().MayWrite("starting"));
  EXPECT_FALSE(a->monitor().MayWrite("elsewhere"));
  a->monitor().Leave("starting");
  EXPECT_FALSE(a->monitor().MayWrite("starting"));
}

// A start that fails releases the running node and is tried again only after retry_max (500 ms
// here), not at once when the release's own deletion is seen (which made a loop of hundreds of
// attempts a second, never leaving the destination to another server); a standby takes it.
TEST_F(RunningMonitorTest, AFailedStartIsRetriedAfterTheBackoffAndTheStandbyTakesOver) {
  auto a = MakeServer("127.0.0.1:13511");
  std::atomic<int> attempts{0};
  a->Join("failing", [&] {
    ++attempts;
    return Status::IOError("the instance cannot start");
  });
  ASSERT_TRUE(WaitFor([&] { return attempts.load() >= 1; }, 5s)) << a->Log();
  std::this_thread::sleep_for(1200ms);  // (what must NOT happen: more than one attempt per 500 ms)
  EXPECT_LE(attempts.load(), 4) << a->Log();
  EXPECT_NE(a->Log().find("releasing it for another server"), std::string::npos) << a->Log();
  auto b = MakeServer("127.0.0.1:13512");
  b->Join("failing");
  EXPECT_TRUE(WaitFor([&] { return b->monitor().IsActive("failing"); }, 5s)) << b->Log();
  const int after = attempts.load();
  std::this_thread::sleep_for(1200ms);  // (a must not start it while b holds it)
  EXPECT_EQ(attempts.load(), after);
  EXPECT_TRUE(b->monitor().IsActive("failing"));
  EXPECT_FALSE(a->running());
}

TEST_F(RunningMonitorTest, ZooKeeperGoneFencesBeforeTheSessionCouldExpireAndItsReturnReactivates) {
  auto a = MakeServer("127.0.0.1:13511");
  a->Join("fence");
  ASSERT_TRUE(WaitFor([&] { return a->monitor().IsActive("fence"); }, 5s));
  auto b = MakeServer("127.0.0.1:13512");
  b->Join("fence");
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/fence/cluster").size() == 2; }, 5s));
  std::this_thread::sleep_for(200ms);
  const auto bound = a->monitor().fence_bound();
  ASSERT_EQ(bound.count(), kSessionMs / 2);  // half the granted timeout by default

  const auto stopping = Clock::now();
  ASSERT_TRUE(sandbox_->Stop()) << sandbox_->error();
  ASSERT_TRUE(WaitFor([&] { return !a->running(); }, std::chrono::milliseconds(kSessionMs)));
  const auto fenced_after = a->stopped_at() - stopping;
  EXPECT_LT(fenced_after, std::chrono::milliseconds(kSessionMs)) << "fenced after the session could expire";
  EXPECT_FALSE(a->monitor().IsActive("fence"));
  EXPECT_FALSE(b->monitor().IsActive("fence"));
  const std::string log = a->Log();
  EXPECT_NE(log.find("destination fence: fencing on server 127.0.0.1:13511: no word from ZooKeeper for"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("fencing bound 2000 ms of a 4000 ms session"), std::string::npos) << log;

  // ZooKeeper back within the session: the node is still a's, and a runs it again.
  ASSERT_TRUE(sandbox_->Start()) << sandbox_->error();
  EXPECT_TRUE(WaitFor([&] { return a->monitor().IsActive("fence"); }, 10s)) << a->Log();
  EXPECT_TRUE(a->running());
  EXPECT_EQ(a->starts(), 2);
  EXPECT_FALSE(b->monitor().IsActive("fence"));
  EXPECT_EQ(b->starts(), 0);
}

TEST_F(RunningMonitorTest, AFrozenZooKeeperClosesTheGateBeforeTheClientNoticesAnything) {
  // ZooKeeper stops answering but its sockets stay open: the client still says
  // connected until its own timeout; the lease says no much sooner.
  auto a = MakeServer("127.0.0.1:13513", 1000ms);
  a->Join("frozen-zk");
  ASSERT_TRUE(WaitFor([&] { return a->monitor().IsActive("frozen-zk"); }, 5s));
  const pid_t zk = ZkPid();
  ASSERT_GT(zk, 0);
  ASSERT_EQ(::kill(zk, SIGSTOP), 0);
  const auto frozen = Clock::now();
  const bool gated = WaitFor([&] { return !a->monitor().IsActive("frozen-zk"); }, 1500ms);
  const bool still_connected = a->zk().state() == coord::ZkState::kConnected;
  const auto gated_after = Clock::now() - frozen;
  const bool stopped = WaitFor([&] { return !a->running(); }, 500ms);
  ::kill(zk, SIGCONT);
  EXPECT_TRUE(gated);
  EXPECT_TRUE(still_connected) << "the client noticed before the lease ended (the test shows nothing then)";
  EXPECT_LE(gated_after, 1300ms);
  EXPECT_TRUE(stopped);
  EXPECT_TRUE(WaitFor([&] { return a->monitor().IsActive("frozen-zk"); }, 8s)) << a->Log();
}

// With an arbiter, the registry makes every instance but starts only the ones
// this server wins; Find() sees only those.
TEST_F(RunningMonitorTest, TheRegistryServesOnlyWhatIsActiveHere) {
  const fs::path root = fs::path(::testing::TempDir()) / ("canal_running_monitor_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "conf" / "reg");
  std::ofstream(root / "conf" / "canal.properties") << "canal.auto.scan=false\ncanal.destinations=reg\n";
  std::ofstream(root / "conf" / "reg" / "instance.properties") << "canal.instance.master.address=127.0.0.1:3306\ncanal.instance.dbUsername=canal\n";
  CanalConfig canal;
  ASSERT_TRUE(LoadCanalConfig((root / "conf" / "canal.properties").string(), {}, &canal,
                              [](const std::string&) { return std::optional<std::string>(); })
                  .ok());

  class Fake final : public ManagedDestination {
   public:
    explicit Fake(std::string name) : name_(std::move(name)) {}
    Status Start() override {
      running_ = true;
      return Status::OK();
    }
    void Stop() override { running_ = false; }
    const std::string& name() const override { return name_; }
    bool running() const override { return running_; }
    std::shared_ptr<store::RingStore> store() override { return nullptr; }
    meta::MetaManager* meta() override { return nullptr; }
    Status SetClientFilter(std::string_view) override { return Status::OK(); }

   private:
    std::string name_;
    std::atomic<bool> running_{false};
  };
  auto make_registry = [&](RunningMonitor* arbiter) {
    RegistryOptions options;
    options.arbiter = arbiter;
    options.factory = [](const InstanceConfig& config, std::shared_ptr<ManagedDestination>* out) {
      *out = std::make_shared<Fake>(config.destination);
      return Status::OK();
    };
    return std::make_unique<InstanceRegistry>(canal, std::move(options));
  };
  auto a = MakeServer("127.0.0.1:13511");
  auto b = MakeServer("127.0.0.1:13512");
  auto ra = make_registry(&a->monitor());
  std::vector<Status> failures;
  ASSERT_TRUE(ra->Start(&failures).ok());
  ASSERT_TRUE(failures.empty()) << failures[0].ToString();
  ASSERT_TRUE(WaitFor([&] { return ra->Find("reg") != nullptr; }, 5s)) << a->Log();
  EXPECT_TRUE(ra->Find("reg")->running());
  auto rb = make_registry(&b->monitor());
  ASSERT_TRUE(rb->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/reg/cluster").size() == 2; }, 5s));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(rb->Find("reg"), nullptr);
  EXPECT_TRUE(rb->Running().empty());
  EXPECT_EQ(ra->Running(), std::vector<std::string>{"reg"});

  a->zk().Crash();
  EXPECT_TRUE(WaitFor([&] { return ra->Find("reg") == nullptr; }, 100ms));  // the lost session closes the gate
  ASSERT_TRUE(WaitFor([&] { return rb->Find("reg") != nullptr; }, kDelay + 3s));
  EXPECT_TRUE(rb->Find("reg")->running());
  a->zk().Recover();
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/reg/cluster").size() == 2; }, 5s));
  rb->Stop();  // leaves: the standby a (new session) takes over
  EXPECT_TRUE(WaitFor([&] { return ra->Find("reg") != nullptr; }, kDelay + 5s));
  ra->Stop();
  fs::remove_all(root);
}

// ---- the session server's side of fencing (no ZooKeeper needed) ------------

// A registry whose destinations can be switched off, as the InstanceRegistry
// does while the arbiter says "not active here".
class GatedRegistry final : public DestinationRegistry {
 public:
  void Add(std::shared_ptr<Destination> d) { inner_.Add(std::move(d)); }
  void SetActive(bool active) { active_ = active; }
  std::shared_ptr<Destination> Find(std::string_view name) override {
    return active_ ? inner_.Find(name) : nullptr;
  }
  bool Arbitrated() const override { return true; }  // as InstanceRegistry with a RunningMonitor

 private:
  server::testing::MemoryRegistry inner_;
  std::atomic<bool> active_{true};
};

class SessionGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    one_ = std::make_shared<server::testing::MemoryDestination>("one");
    two_ = std::make_shared<server::testing::MemoryDestination>("two");
    registry_.Add(one_);
    registry_.Add(two_);
    SessionServerOptions o;
    o.ip = "127.0.0.1";
    o.port = 0;
    o.io_threads = 2;
    auto logger = std::make_shared<spdlog::logger>("gate-test");
    ASSERT_TRUE(SessionServer::Create(o, &registry_, logger, &server_).ok());
    server_->Start();
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  std::unique_ptr<server::testing::TestClient> Subscribed(const std::string& dest) {
    auto c = std::make_unique<server::testing::TestClient>(server_->port());
    EXPECT_TRUE(c->Login("canal", ""));
    auto ack = c->Subscribe(dest, "1001");
    EXPECT_TRUE(ack && ack->error_code() == 0);
    return c;
  }

  GatedRegistry registry_;
  std::shared_ptr<server::testing::MemoryDestination> one_, two_;
  std::unique_ptr<SessionServer> server_;
};

TEST_F(SessionGateTest, AGetAfterTheDestinationStoppedBeingActiveGetsAnErrorNeverData) {
  auto c = Subscribed("one");
  auto reply = c->Get("one", "1001", 10);
  ASSERT_TRUE(reply.received && reply.is_messages);
  registry_.SetActive(false);
  reply = c->Get("one", "1001", 10);
  ASSERT_TRUE(reply.received);
  EXPECT_FALSE(reply.is_messages);
  EXPECT_EQ(reply.ack.error_code(), 503);
  EXPECT_NE(reply.ack.error_message().find("destination one is not active on canal server"), std::string::npos)
      << reply.ack.error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionGateTest, AnAckAfterTheDestinationStoppedBeingActiveEndsTheSession) {
  auto c = Subscribed("one");
  registry_.SetActive(false);
  c->Ack("one", "1001", 1);
  protocol::Packet packet;
  ASSERT_TRUE(c->ReadPacket(&packet));
  protocol::Ack ack;
  ASSERT_TRUE(ack.ParseFromString(packet.body()));
  EXPECT_NE(ack.error_message().find("ack: destination one is not active on canal server"), std::string::npos)
      << ack.error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionGateTest, ASubscriptionWhileNotActiveIsRefused) {
  registry_.SetActive(false);
  server::testing::TestClient c(server_->port());
  ASSERT_TRUE(c.Login("canal", ""));
  auto ack = c.Subscribe("one", "1001");
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->error_code(), 404);
}

TEST_F(SessionGateTest, CloseDestinationClosesOnlyThatDestinationsSessions) {
  auto c1 = Subscribed("one");
  auto c2 = Subscribed("two");
  server::testing::TestClient idle(server_->port());  // not subscribed: stays
  ASSERT_TRUE(idle.Login("canal", ""));
  server_->CloseDestination("one", "fenced (test)");
  server_->CloseDestination("nosuch", "nothing to close");
  EXPECT_TRUE(c1->WaitClosed(5s));
  auto reply = c2->Get("two", "1001", 10);
  EXPECT_TRUE(reply.received && reply.is_messages);
  EXPECT_TRUE(idle.QuietFor(100ms));
  // The destination serves a new subscriber afterwards (its hold was released).
  auto again = Subscribed("one");
  EXPECT_TRUE(again->Get("one", "1001", 10).is_messages);
}

// ---- the HA keys of canal.properties -------------------------------------

class HaConfigTest : public ::testing::Test {
 protected:
  Status Load(const std::string& text, CanalConfig* out) {
    const fs::path dir = fs::path(::testing::TempDir()) / ("canal_ha_config_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "canal.properties", std::ios::trunc) << text;
    return LoadCanalConfig((dir / "canal.properties").string(), {}, out,
                           [](const std::string&) { return std::optional<std::string>(); });
  }
};

TEST_F(HaConfigTest, WithoutZkServersNothingOfHaIsOn) {
  CanalConfig c;
  ASSERT_TRUE(Load("canal.port=11111\n", &c).ok());
  EXPECT_TRUE(c.zk_servers.empty());
  EXPECT_EQ(c.meta_mode, CanalConfig::MetaMode::kFile);
  EXPECT_EQ(c.zk_session_timeout_ms, 6000);
  EXPECT_EQ(c.zk_fence_timeout_ms, 0);
  EXPECT_EQ(c.zk_takeover_delay_ms, 1000);
  EXPECT_EQ(c.zk_flush_period_ms, 1000);
}

TEST_F(HaConfigTest, ReadsCanalsAndOurKeys) {
  CanalConfig c;
  Status s = Load(
      "canal.zkServers=10.0.0.1:2181,10.0.0.2:2181/canal\ncanal.zookeeper.flush.period=500\n"
      "canal.zookeeper.session.timeout=10000\ncanal.zookeeper.fence.timeout=4000\n"
      "canal.zookeeper.takeover.delay=0\ncanal.register.ip=10.0.0.9\n",
      &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.zk_servers, "10.0.0.1:2181,10.0.0.2:2181/canal");
  EXPECT_EQ(c.zk_flush_period_ms, 500);
  EXPECT_EQ(c.zk_session_timeout_ms, 10000);
  EXPECT_EQ(c.zk_fence_timeout_ms, 4000);
  EXPECT_EQ(c.zk_takeover_delay_ms, 0);
  EXPECT_EQ(c.register_ip, "10.0.0.9");
  EXPECT_EQ(c.meta_mode, CanalConfig::MetaMode::kZookeeper);  // auto with ZooKeeper
  ASSERT_TRUE(Load("canal.zkServers=zk1:2181\ncanal.meta.mode=file\n", &c).ok());
  EXPECT_EQ(c.meta_mode, CanalConfig::MetaMode::kFile);
}

TEST_F(HaConfigTest, RefusesBadValuesNamingKeyAndFix) {
  const std::pair<const char*, const char*> cases[] = {
      {"canal.zkServers=zk1\n", "canal.zkServers"},
      {"canal.zkServers=zk1:\n", "canal.zkServers"},
      {"canal.zkServers=zk1:2181,,zk2:2181\n", "canal.zkServers"},
      {"canal.zkServers=zk1:99999\n", "canal.zkServers"},
      {"canal.zkServers=zk1:2181/\n", "canal.zkServers"},
      {"canal.zkServers=zk 1:2181\n", "canal.zkServers"},
      {"canal.zkServers=zk1:2181\ncanal.zookeeper.session.timeout=abc\n", "canal.zookeeper.session.timeout"},
      {"canal.zkServers=zk1:2181\ncanal.zookeeper.session.timeout=10\n", "canal.zookeeper.session.timeout"},
      {"canal.zkServers=zk1:2181\ncanal.zookeeper.fence.timeout=6000\n", "must be below"},
      {"canal.zkServers=zk1:2181\ncanal.zookeeper.fence.timeout=-1\n", "canal.zookeeper.fence.timeout"},
      {"canal.zkServers=zk1:2181\ncanal.zookeeper.takeover.delay=soon\n", "canal.zookeeper.takeover.delay"},
      {"canal.zkServers=zk1:2181\ncanal.register.ip=myhost\n", "canal.register.ip"},
      {"canal.meta.mode=zookeeper\n", "canal.zkServers is empty"},
      {"canal.meta.mode=mysql\n", "auto, file or zookeeper"},
      {"canal.zkServers=zk1:2181\ncanal.port=0\n", "give canal.port a fixed port"},
  };
  for (const auto& [text, expected] : cases) {
    CanalConfig c;
    Status s = Load(text, &c);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.ToString().find(expected), std::string::npos) << text << " -> " << s.ToString();
  }
}

// The child of the test below: one server whose process gets frozen. It
// writes 1 or 0 (IsActive) every 5 ms to the file named by the environment.
TEST_F(RunningMonitorTest, DISABLED_FrozenChildProcess) {
  const char* out_path = std::getenv(kChildEnv);
  if (out_path == nullptr) GTEST_SKIP() << "run by FrozenProcessNeverServesAfterItsSessionExpired";
  const char* zk = std::getenv(kChildZkEnv);
  ASSERT_NE(zk, nullptr) << kChildZkEnv << " is not set";
  Server server(zk, "127.0.0.1:13514");
  ASSERT_TRUE(server.status().ok()) << server.status().ToString();
  server.Join("frozen");
  FILE* out = std::fopen(out_path, "a");
  ASSERT_NE(out, nullptr);
  for (;;) {  // until the parent kills us
    std::fputs(server.monitor().IsActive("frozen") ? "1\n" : "0\n", out);
    std::fflush(out);
    std::this_thread::sleep_for(5ms);
  }
}

TEST_F(RunningMonitorTest, FrozenProcessNeverServesAfterItsSessionExpired) {
  const fs::path out = fs::path(::testing::TempDir()) / ("canal_frozen_" + std::to_string(::getpid()) + ".txt");
  fs::remove(out);
  const std::string zk = sandbox_->servers();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv(kChildEnv, out.c_str(), 1);
    ::setenv(kChildZkEnv, zk.c_str(), 1);
    ::execl("/proc/self/exe", "running_monitor_child", "--gtest_also_run_disabled_tests",
            "--gtest_filter=RunningMonitorTest.DISABLED_FrozenChildProcess", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto read_from = [&](size_t offset) {
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    return offset < all.size() ? all.substr(offset) : std::string();
  };
  auto reap = [&] {
    ::kill(child, SIGCONT);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
  };
  if (!WaitFor([&] { return read_from(0).find('1') != std::string::npos; }, 10s)) {
    reap();
    FAIL() << "the child never became active: " << read_from(0).substr(0, 200);
  }
  auto b = MakeServer("127.0.0.1:13515");
  b->Join("frozen");
  ASSERT_TRUE(WaitFor([&] { return Children("/otter/canal/destinations/frozen/cluster").size() == 2; }, 5s));

  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  // b takes over once the child's session expired (timeout + delay).
  const bool took_over = WaitFor([&] { return b->monitor().IsActive("frozen"); }, 15s);
  std::this_thread::sleep_for(100ms);
  const size_t frozen_at = read_from(0).size();
  ASSERT_EQ(::kill(child, SIGCONT), 0);
  std::this_thread::sleep_for(1500ms);
  const std::string after = read_from(frozen_at);
  reap();
  fs::remove(out);
  ASSERT_TRUE(took_over) << b->Log();
  EXPECT_GT(after.size(), 20u) << "the child did not run after SIGCONT";
  EXPECT_EQ(after.find('1'), std::string::npos) << "the resumed process said active: " << after.substr(0, 200);
  EXPECT_TRUE(b->monitor().IsActive("frozen"));
}

}  // namespace
}  // namespace canal::server

namespace canal::server {
namespace {

// Placement (canal.cluster.placement = balanced): the monitor contends only for what Assign gives
// it, stops serving a destination the moment Assign takes it away, hands it over (instance
// stopped, running node deleted), and the assigned server takes it as soon as the node is gone.
TEST_F(RunningMonitorTest, UnderPlacementOnlyTheAssignedServerRunsADestinationAndAMoveHandsItOver) {
  auto a = MakeServer("127.0.0.1:21101", 0ms, /*placement=*/true);
  auto b = MakeServer("127.0.0.1:21102", 0ms, /*placement=*/true);
  a->Join("placed");
  b->Join("placed");
  const std::string running = coord::layout::ServerRunningPath("placed");
  // Nobody is assigned it: both register as able to run it, neither contends.
  ASSERT_TRUE(WaitFor([&] { return Children(coord::layout::DestinationPath("placed") + "/cluster").size() == 2; }, 10s));
  std::this_thread::sleep_for(3 * kDelay);  // (a wrong contention would have happened by now)
  bool exists = true;
  ASSERT_TRUE(observer_->Exists(running, &exists).ok());
  EXPECT_FALSE(exists);
  EXPECT_FALSE(a->running());
  EXPECT_FALSE(b->running());

  a->monitor().Assign({"placed"});
  ASSERT_TRUE(WaitFor([&] { return a->running() && a->monitor().IsActive("placed"); }, 10s)) << a->Log();
  EXPECT_EQ(a->monitor().Assigned(), std::vector<std::string>{"placed"});
  EXPECT_FALSE(b->running());

  // The move: the new owner learns first, the old one after (the order servers may read the
  // assignment in). The old one stops serving at once, then hands over; the new one takes it.
  b->monitor().Assign({"placed"});
  std::this_thread::sleep_for(2 * kDelay);
  EXPECT_FALSE(b->running()) << "the node is still a's: b must wait for it";
  a->monitor().Assign({});
  EXPECT_FALSE(a->monitor().IsActive("placed"));
  EXPECT_FALSE(a->monitor().MayWrite("placed"));
  ASSERT_TRUE(WaitFor([&] { return b->running() && b->monitor().IsActive("placed"); }, 10s)) << b->Log();
  EXPECT_FALSE(a->running());
  EXPECT_EQ(a->stops(), 1);
  EXPECT_NE(a->Log().find("the cluster's assignment moved it off server 127.0.0.1:21101; handing it over"),
            std::string::npos)
      << a->Log();
  EXPECT_NE(b->Log().find("its assigned server, takes it"), std::string::npos) << b->Log();
  std::string body;
  ASSERT_TRUE(observer_->Get(running, &body).ok());
  coord::layout::RunningNode node;
  ASSERT_TRUE(coord::layout::ParseRunningNode(body, &node).ok());
  EXPECT_EQ(node.address, "127.0.0.1:21102");
  // a, not assigned, never takes it back, even once b's node goes.
  b->monitor().Assign({});
  ASSERT_TRUE(WaitFor([&] { return !b->running(); }, 10s));
  std::this_thread::sleep_for(3 * kDelay);
  EXPECT_FALSE(a->running());
  ASSERT_TRUE(observer_->Exists(running, &exists).ok());
  EXPECT_FALSE(exists);
}

}  // namespace
}  // namespace canal::server
