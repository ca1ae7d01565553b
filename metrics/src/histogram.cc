#include <algorithm>
#include <cmath>

#include "canal/metrics/metric.h"

namespace canal::metrics {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  std::erase_if(bounds_, [](double b) { return !std::isfinite(b); });
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  // A handful of bounds: a linear scan beats a binary search here.
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot s;
  s.bounds = bounds_;
  s.cumulative.resize(bounds_.size());
  uint64_t running = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = running;
  }
  // The +Inf bucket must hold every finite bucket's count, even when an
  // Observe runs between the loads above and this one.
  s.count = std::max(running + buckets_[bounds_.size()].load(std::memory_order_relaxed), running);
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace canal::metrics
