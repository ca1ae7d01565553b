#include "canal/server/status_history.h"

#include <algorithm>

#include "canal/server/status_report.h"

namespace canal::server {

StatusHistory::StatusHistory(size_t capacity, std::chrono::milliseconds every)
    : capacity_(std::max<size_t>(capacity, 1)), every_(std::max(every, std::chrono::milliseconds(1))) {}

void StatusHistory::Record(const ServerReport& report) {
  std::lock_guard lock(mu_);
  std::map<std::string, Track, std::less<>> next;
  for (const DestinationReport& d : report.destinations) {
    // Move the destination's track over: whatever is not in this report is
    // dropped with the old map, so the map never outgrows the configuration.
    Track track;
    if (auto it = tracks_.find(d.name); it != tracks_.end()) track = std::move(it->second);
    HistorySample s;
    s.time_ms = report.now_ms;
    if (d.has_status) {
      const uint64_t rows = d.status.sink.rows + d.status.sink.snapshot_rows;
      if (track.has_rows && report.now_ms > track.last_ms) {
        const double seconds = static_cast<double>(report.now_ms - track.last_ms) / 1000.0;
        // A counter below the last one is a new run of the destination
        // (a restart starts a new sink): its rows all came since.
        const uint64_t delta = rows >= track.rows ? rows - track.rows : rows;
        s.rows_per_second = static_cast<double>(delta) / seconds;
      }
      s.lag_ms = d.delay_ms;
      track.has_rows = true;
      track.rows = rows;
      track.last_ms = report.now_ms;
    } else {
      track.has_rows = false;
    }
    if (track.ring.size() < capacity_) {
      track.ring.push_back(s);
    } else {
      track.ring[track.next] = s;
      track.next = (track.next + 1) % capacity_;
    }
    next.emplace(d.name, std::move(track));
  }
  tracks_ = std::move(next);
}

std::vector<HistorySample> StatusHistory::Samples(std::string_view destination) const {
  std::lock_guard lock(mu_);
  std::vector<HistorySample> out;
  auto it = tracks_.find(destination);
  if (it == tracks_.end()) return out;
  const Track& t = it->second;
  out.reserve(t.ring.size());
  for (size_t i = 0; i < t.ring.size(); ++i) out.push_back(t.ring[(t.next + i) % t.ring.size()]);
  return out;
}

}  // namespace canal::server
