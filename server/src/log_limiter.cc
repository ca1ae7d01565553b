#include "canal/server/log_limiter.h"

#include <iterator>

namespace canal::server {

bool LogLimiter::Allow(std::string_view key, std::string* note, Clock::time_point now) {
  note->clear();
  std::lock_guard lock(mu_);
  auto it = windows_.find(std::string(key));
  if (it == windows_.end()) {
    // Keys come from client input too: forget finished windows before the
    // map grows past its bound, and share one key when it is still full.
    if (windows_.size() >= max_keys_) {
      for (auto w = windows_.begin(); w != windows_.end();) {
        w = now - w->second.start >= window_ && w->second.suppressed == 0 ? windows_.erase(w) : std::next(w);
      }
    }
    const std::string stored = windows_.size() >= max_keys_ ? std::string("(other)") : std::string(key);
    it = windows_.try_emplace(stored, Window{now, 0, 0}).first;
  }
  Window& w = it->second;
  if (now - w.start >= window_) {
    if (w.suppressed > 0) note->assign(" (" + std::to_string(w.suppressed) + " similar lines suppressed)");
    w = Window{now, 0, 0};
  }
  if (w.logged >= burst_) {
    ++w.suppressed;
    return false;
  }
  ++w.logged;
  return true;
}

}  // namespace canal::server
