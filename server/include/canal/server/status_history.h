// StatusHistory: the recent past of each destination, for the sparklines of
// the admin page (/status JSON "history", docs/admin.md "The page"): rows put
// per second and the lag, sampled every `every` (the metrics endpoint's own
// timer) into a small ring per destination, so that a page opened now shows
// the last minutes at once instead of starting empty.
//
// Bounded: `capacity` samples per destination; a destination that leaves
// the report is forgotten. Thread-safe (the endpoint records on its thread,
// tests read from theirs).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace canal::server {

struct ServerReport;

struct HistorySample {
  int64_t time_ms = 0;
  // Rows put (binlog and snapshot) per second since the sample before;
  // empty for a destination's first sample and while it reports no status
  // (standby, not configured).
  std::optional<double> rows_per_second;
  std::optional<int64_t> lag_ms;  // Canal's delay, as /status; empty without status
};

class StatusHistory {
 public:
  static constexpr size_t kDefaultCapacity = 120;
  static constexpr std::chrono::milliseconds kDefaultEvery{5000};  // 120 x 5 s: the last 10 minutes

  explicit StatusHistory(size_t capacity = kDefaultCapacity, std::chrono::milliseconds every = kDefaultEvery);

  // One sample of every destination in `report` (at report.now_ms).
  void Record(const ServerReport& report);
  // Oldest first; empty for a destination never recorded.
  std::vector<HistorySample> Samples(std::string_view destination) const;

  size_t capacity() const { return capacity_; }
  std::chrono::milliseconds every() const { return every_; }

 private:
  struct Track {
    std::vector<HistorySample> ring;  // up to capacity_, `next` is the oldest once full
    size_t next = 0;
    bool has_rows = false;  // rows/last_ms hold the previous sample's counter
    uint64_t rows = 0;
    int64_t last_ms = 0;
  };

  const size_t capacity_;
  const std::chrono::milliseconds every_;
  mutable std::mutex mu_;
  std::map<std::string, Track, std::less<>> tracks_;
};

}  // namespace canal::server
