// Counter, Gauge, Histogram: the live metric values the server updates on its
// hot paths. Every update is a relaxed atomic read-modify-write (no lock, no
// allocation), so a counter costs about as much as the increment of a plain
// integer; readers (the scrape) see values that are each exact but not a
// consistent cut across metrics, which is what Prometheus expects.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace canal::metrics {

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Cumulative view of a histogram, as exposed: counts[i] observations <= bounds[i].
struct HistogramSnapshot {
  std::vector<double> bounds;
  std::vector<uint64_t> cumulative;  // same size as bounds
  uint64_t count = 0;                // all observations (the +Inf bucket)
  double sum = 0;
};

class Histogram {
 public:
  // `bounds` are the buckets' upper bounds, strictly increasing, finite
  // (the +Inf bucket is implicit). Unsorted or repeated bounds are sorted
  // and merged.
  explicit Histogram(std::vector<double> bounds);

  void Observe(double value);
  HistogramSnapshot Snapshot() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bucket (not cumulative); last is +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

}  // namespace canal::metrics
