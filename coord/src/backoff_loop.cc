#include "canal/coord/backoff_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "canal/coord/zk_client.h"

namespace canal::coord {

BackoffLoop::BackoffLoop(std::mutex* mu, std::condition_variable* cv, std::chrono::milliseconds retry_min,
                         std::chrono::milliseconds retry_max)
    : mu_(mu), cv_(cv), retry_min_(retry_min), retry_max_(retry_max), backoff_(retry_min) {}

void BackoffLoop::Run(const std::function<Clock::time_point(Clock::time_point now)>& due,
                      const std::function<bool()>& step) {
  std::unique_lock<std::mutex> lock(*mu_);
  while (!stopping_) {
    const Clock::time_point wake = std::max(due(Clock::now()), retry_at_);
    cv_->wait_until(lock, wake, [this] { return stopping_ || kick_; });
    if (stopping_) break;
    kick_ = false;
    lock.unlock();
    const bool ok = step();
    lock.lock();
    if (ok) {
      backoff_ = retry_min_;
      retry_at_ = Clock::time_point::min();
    } else {
      retry_at_ = Clock::now() + backoff_;
      backoff_ = std::min(backoff_ * 2, retry_max_);
    }
  }
}

bool BackoffLoop::ReopenSession(ZkClient& zk, spdlog::logger& log, const std::string& what) const {
  if (Status s = zk.Reopen(); !s.ok()) {
    log.warn("{} (retrying in {} ms): {}", what, backoff_.count(), s.ToString());
    return false;
  }
  return true;
}

}  // namespace canal::coord
