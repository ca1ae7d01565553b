// LogLimiter: lets through at most `burst` log lines per key in each window
// and counts the rest, so that a flood of identical warnings (failed logins,
// refused connections, accept failures) costs a few lines, not a rotated
// log. The first line let through after a suppressed stretch says how many
// were left out. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace canal::server {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogLimiter(size_t burst = 5, std::chrono::milliseconds window = std::chrono::seconds(10),
                      size_t max_keys = 256)
      : burst_(burst), window_(window), max_keys_(max_keys) {}

  // Whether a line for `key` may be logged now. When it may, *note is ""
  // or " (N similar lines suppressed)" to append to it.
  bool Allow(std::string_view key, std::string* note, Clock::time_point now = Clock::now());

 private:
  struct Window {
    Clock::time_point start;
    size_t logged = 0;
    uint64_t suppressed = 0;
  };

  const size_t burst_;
  const std::chrono::milliseconds window_;
  const size_t max_keys_;
  std::mutex mu_;
  std::unordered_map<std::string, Window> windows_;  // guarded by mu_
};

}  // namespace canal::server
