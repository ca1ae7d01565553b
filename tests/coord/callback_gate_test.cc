// CallbackGate (coord/callback_gate.h): a callback reaches its object only
// between Open and Close, and Close waits for a call that is running, so the
// object can be destroyed right after it.
#include "canal/coord/callback_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace canal::coord {
namespace {

using namespace std::chrono_literals;

struct Target {
  int calls = 0;
};

TEST(CallbackGateTest, CallsReachTheTargetOnlyWhileOpen) {
  auto gate = std::make_shared<CallbackGate<Target>>();
  Target t;
  gate->Call([](Target* x) { ++x->calls; });
  EXPECT_EQ(t.calls, 0) << "not opened yet";
  gate->Open(&t);
  gate->Call([](Target* x) { ++x->calls; });
  gate->Call([](Target* x) { ++x->calls; });
  EXPECT_EQ(t.calls, 2);
  gate->Close();
  bool ran = false;
  gate->Call([&](Target*) { ran = true; });
  EXPECT_FALSE(ran) << "closed";
  EXPECT_EQ(t.calls, 2);
}

TEST(CallbackGateTest, CloseWaitsForACallThatIsRunning) {
  auto gate = std::make_shared<CallbackGate<Target>>();
  auto t = std::make_unique<Target>();
  gate->Open(t.get());
  std::promise<void> inside, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> finished{false};
  std::thread callback([gate, &inside, released, &finished] {
    gate->Call([&](Target* x) {
      inside.set_value();
      released.wait();
      ++x->calls;  // the target must still be alive here
      finished = true;
    });
  });
  inside.get_future().wait();
  auto closed = std::async(std::launch::async, [&] { gate->Close(); });
  // Close cannot return while the call runs (bounded look: the call is held by `release`).
  EXPECT_EQ(closed.wait_for(50ms), std::future_status::timeout);
  release.set_value();
  closed.wait();
  EXPECT_TRUE(finished);
  t.reset();  // safe now: no call can reach it any more
  callback.join();
  bool ran = false;
  gate->Call([&](Target*) { ran = true; });
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace canal::coord
