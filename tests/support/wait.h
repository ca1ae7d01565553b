// Polling helpers of the tests that drive processes and threads.
#pragma once

#include <chrono>
#include <thread>

namespace canal::testing {

// Polls `pred` every `every` until it holds or `limit` passes; its last
// answer. The one poller of the tests: wait on a condition with it, never
// with a bare sleep. (A sleep stays only where nothing can be waited on: a
// check that something does NOT happen within a time, or pacing by design.)
template <typename Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds limit,
             std::chrono::milliseconds every = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(every);
  }
  return pred();
}

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace canal::testing
