// BackoffLoop: the worker loop of a ZooKeeper client that works in rounds
// (PlacementCoordinator, server/'s RunningMonitor): wait until kicked or until
// the next round is due, run a step, and after a failed step wait a backoff
// that starts at `retry_min` and doubles up to `retry_max` (a success resets it).
//
// The loop shares its owner's mutex and condition variable, so the owner's
// state (what makes a round due) and the loop's flags are guarded together:
//
//   std::mutex mu_;
//   std::condition_variable cv_;
//   BackoffLoop loop_{&mu_, &cv_, retry_min, retry_max};
//   worker_ = std::thread([this] { loop_.Run([this](auto now) { return Due(now); }, [this] { return Step(); }); });
//   ... under mu_: loop_.KickLocked(); then cv_.notify_all()
//   ... Stop: under mu_: loop_.StopLocked(); then cv_.notify_all(); worker_.join()
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace spdlog {
class logger;
}

namespace canal::coord {

class ZkClient;

class BackoffLoop {
 public:
  using Clock = std::chrono::steady_clock;

  // `mu` and `cv` are the owner's and must outlive the loop.
  BackoffLoop(std::mutex* mu, std::condition_variable* cv, std::chrono::milliseconds retry_min,
              std::chrono::milliseconds retry_max);
  BackoffLoop(const BackoffLoop&) = delete;
  BackoffLoop& operator=(const BackoffLoop&) = delete;

  // Runs on the calling thread (the owner's worker) until StopLocked():
  // waits until `due(now)` (called under *mu; never sooner than the backoff
  // after a failed step allows) or until KickLocked(), whichever comes first,
  // then runs `step` without *mu. `step` returns false when it failed (a
  // ZooKeeper call did): the next round waits the backoff.
  void Run(const std::function<Clock::time_point(Clock::time_point now)>& due, const std::function<bool()>& step);

  // Under *mu: run a step now (the caller notifies *cv, unless it is the step itself).
  void KickLocked() { kick_ = true; }
  // Under *mu: Run() returns before its next step (the caller notifies *cv and joins the worker).
  void StopLocked() { stopping_ = true; }
  // Under *mu.
  bool StoppingLocked() const { return stopping_; }

  // The worker's (in a step): the wait after this step if it fails, for the
  // logs' "retrying in N ms".
  std::chrono::milliseconds backoff() const { return backoff_; }

  // The worker's (in a step): opens a new session after an expired one. On
  // failure logs "<what> (retrying in <backoff> ms): <error>" at WARN and
  // returns false (the step failed).
  bool ReopenSession(ZkClient& zk, spdlog::logger& log, const std::string& what) const;

 private:
  std::mutex* const mu_;
  std::condition_variable* const cv_;
  const std::chrono::milliseconds retry_min_;
  const std::chrono::milliseconds retry_max_;
  bool kick_ = false;      // guarded by *mu_
  bool stopping_ = false;  // guarded by *mu_
  // The worker's own.
  std::chrono::milliseconds backoff_;
  Clock::time_point retry_at_ = Clock::time_point::min();
};

}  // namespace canal::coord
