// BackoffLoop (coord/backoff_loop.h): the worker loop of PlacementCoordinator
// and RunningMonitor. No ZooKeeper: steps are scripted, and the tests wait on
// what the steps record, never on a sleep.
#include "canal/coord/backoff_loop.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "canal/coord/zk_client.h"

namespace canal::coord {
namespace {

using namespace std::chrono_literals;
using Clock = BackoffLoop::Clock;
using std::chrono::milliseconds;

constexpr milliseconds kLimit = 10s;  // a generous bound on what must happen "at once"
constexpr milliseconds kLong = std::chrono::hours(1);

// A worker thread running a loop whose steps follow a script.
class Worker {
 public:
  struct Round {
    Clock::time_point at;
    milliseconds backoff;  // loop.backoff() during the step
  };

  Worker(milliseconds retry_min, milliseconds retry_max) : loop_(&mu_, &cv_, retry_min, retry_max) {}
  ~Worker() { Stop(); }

  // Steps return `script` in order, then true with nothing due until Kick().
  void Start(std::deque<bool> script, Clock::duration first_due = 0s) {
    std::lock_guard<std::mutex> lock(mu_);
    script_ = std::move(script);
    due_ = Clock::now() + first_due;
    thread_ = std::thread([this] {
      loop_.Run([this](Clock::time_point) { return due_; }, [this] { return Step(); });
    });
  }

  void Kick() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      loop_.KickLocked();
    }
    cv_.notify_all();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      loop_.StopLocked();
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  bool WaitRounds(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return seen_.wait_for(lock, kLimit, [&] { return rounds_.size() >= n; });
  }

  std::vector<Round> rounds() {
    std::lock_guard<std::mutex> lock(mu_);
    return rounds_;
  }

 private:
  bool Step() {
    std::lock_guard<std::mutex> lock(mu_);
    rounds_.push_back(Round{Clock::now(), loop_.backoff()});
    bool ok = true;
    if (!script_.empty()) {
      ok = script_.front();
      script_.pop_front();
    }
    if (script_.empty()) due_ = Clock::now() + kLong;
    seen_.notify_all();
    return ok;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable seen_;
  BackoffLoop loop_;
  std::deque<bool> script_;       // guarded by mu_
  Clock::time_point due_;         // guarded by mu_
  std::vector<Round> rounds_;     // guarded by mu_
  std::thread thread_;
};

TEST(BackoffLoopTest, RunsStepsWhileDue) {
  Worker w(10ms, 100ms);
  w.Start({true, true, true, true});
  ASSERT_TRUE(w.WaitRounds(4));
  for (const Worker::Round& r : w.rounds()) EXPECT_EQ(r.backoff, 10ms);
}

TEST(BackoffLoopTest, BacksOffDoublingToTheMaxThenResetsAfterASuccess) {
  Worker w(20ms, 80ms);
  w.Start({false, false, false, false, true, false, true});
  ASSERT_TRUE(w.WaitRounds(7));
  const std::vector<Worker::Round> r = w.rounds();
  const std::vector<milliseconds> expected = {20ms, 40ms, 80ms, 80ms, 80ms, 20ms, 40ms};
  ASSERT_EQ(r.size(), expected.size());
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i].backoff, expected[i]) << "round " << i;
  // After each failure the next round waits at least the backoff in force then.
  for (size_t i : {0, 1, 2, 3, 5}) {
    EXPECT_GE(r[i + 1].at - r[i].at, expected[i]) << "after round " << i;
  }
}

TEST(BackoffLoopTest, AKickWakesItAtOnce) {
  Worker w(kLong, kLong);
  w.Start({}, kLong);  // nothing due for an hour
  w.Kick();
  ASSERT_TRUE(w.WaitRounds(1));
  w.Kick();
  ASSERT_TRUE(w.WaitRounds(2));
}

TEST(BackoffLoopTest, AKickCutsABackoffShort) {
  Worker w(kLong, kLong);
  w.Start({false});  // fails at once: the next round would wait an hour
  ASSERT_TRUE(w.WaitRounds(1));
  w.Kick();
  ASSERT_TRUE(w.WaitRounds(2));
  EXPECT_EQ(w.rounds()[1].backoff, kLong);
}

TEST(BackoffLoopTest, StopsPromptly) {
  Worker w(kLong, kLong);
  w.Start({false});  // waiting out an hour's backoff
  ASSERT_TRUE(w.WaitRounds(1));
  std::future<void> stopped = std::async(std::launch::async, [&] { w.Stop(); });
  EXPECT_EQ(stopped.wait_for(kLimit), std::future_status::ready);
  EXPECT_EQ(w.rounds().size(), 1u);  // no step after the stop
}

// Only Reopen() is called.
class ReopenOnlyZk final : public ZkClient {
 public:
  explicit ReopenOnlyZk(Status reopen) : reopen_(std::move(reopen)) {}
  Status Reopen() override {
    ++reopens;
    return reopen_;
  }
  int reopens = 0;

  Status WaitConnected(milliseconds) override { return Unused(); }
  ZkState state() const override { return ZkState::kExpired; }
  int64_t session_id() const override { return 0; }
  int negotiated_session_timeout_ms() const override { return 0; }
  int AddStateListener(StateListener) override { return 0; }
  void RemoveStateListener(int) override {}
  void Close() override {}
  Status CreateNode(std::string_view, std::string_view, ZkCreateMode, bool, bool*) override { return Unused(); }
  Status SetOrCreate(std::string_view, std::string_view) override { return Unused(); }
  Status Get(std::string_view, std::string*) override { return Unused(); }
  Status GetVersioned(std::string_view, std::string*, int32_t*) override { return Unused(); }
  Status SetIfVersion(std::string_view, std::string_view, int32_t, int32_t*) override { return Unused(); }
  Status GetAndWatch(std::string_view, Watch, bool*, std::string*) override { return Unused(); }
  Status Exists(std::string_view, bool*) override { return Unused(); }
  Status Delete(std::string_view, bool) override { return Unused(); }
  Status Children(std::string_view, std::vector<std::string>*) override { return Unused(); }
  Status ChildrenAndWatch(std::string_view, Watch, std::vector<std::string>*) override { return Unused(); }
  const ZkOptions& options() const override { return options_; }

 private:
  static Status Unused() { return Status::NotSupported("not used by BackoffLoop"); }
  Status reopen_;
  ZkOptions options_;
};

TEST(BackoffLoopTest, ReopenSessionLogsAFailureWithTheBackoff) {
  std::mutex mu;
  std::condition_variable cv;
  BackoffLoop loop(&mu, &cv, 250ms, 1000ms);
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  sink->set_pattern("%l %v");
  spdlog::logger log("backoff-loop-test", sink);

  ReopenOnlyZk down(Status::IOError("zk down"));
  EXPECT_FALSE(loop.ReopenSession(down, log, "test: reopening the ZooKeeper session"));
  EXPECT_EQ(down.reopens, 1);
  EXPECT_EQ(out.str(), "warning test: reopening the ZooKeeper session (retrying in 250 ms): " +
                           Status::IOError("zk down").ToString() + "\n");

  out.str("");
  ReopenOnlyZk up(Status::OK());
  EXPECT_TRUE(loop.ReopenSession(up, log, "test: reopening the ZooKeeper session"));
  EXPECT_EQ(up.reopens, 1);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace canal::coord
