// Test events for the ReadAheadStream suites: event i of a given size, with a byte pattern of
// its own, so that a byte out of place or an event handed over twice shows.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog_source.h"

namespace canal::parser::read_ahead_test {

inline std::string Pattern(size_t i, size_t size) {
  std::string s(size, '\0');
  for (size_t k = 0; k < size; ++k) s[k] = static_cast<char>((i * 131 + k * 7) & 0xff);
  return s;
}

// A source over a list of events, like a replica connection: one buffer, overwritten at each read
// (a view kept past the next read shows the next event's bytes); after the last event, `end`.
// Subclasses decide when a read may go on (waiting on cv_ under mu_), then call Next.
class QueuedEvents : public RawEventStream {
 public:
  QueuedEvents(std::vector<std::string> events, Status end) : events_(std::move(events)), end_(std::move(end)) {}
  void Shutdown() override {
    std::lock_guard<std::mutex> lock(mu_);
    shut_ = true;
    cv_.notify_all();
  }

 protected:
  // Under mu_: the next event, the end, or the shutdown's error.
  Status Next(std::string_view* event) {
    if (shut_) return Status::IOError("shut down (test)");
    if (next_ >= events_.size()) return end_;
    buffer_ = events_[next_++];
    *event = buffer_;
    return Status::OK();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
  Status end_;
  std::string buffer_;
  size_t next_ = 0;
  bool shut_ = false;
};

}  // namespace canal::parser::read_ahead_test
