// MemoryTrimmer: hands memory freed after a burst (a huge transaction, a big
// row, a flood of connections) back to the system. glibc keeps freed heap
// pages resident until malloc_trim; this thread calls it every `interval`
// when the heap holds more than `min_free_bytes` free, so RSS falls back
// within about one interval of the burst. Thread-safe; Stop() joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>

namespace spdlog {
class logger;
}

namespace canal::server {

class MemoryTrimmer {
 public:
  MemoryTrimmer(std::chrono::milliseconds interval, size_t min_free_bytes, std::shared_ptr<spdlog::logger> logger);
  ~MemoryTrimmer();  // Stop()s
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  void Start();
  void Stop();

  // One round now: the bytes of free heap it found; trims when over the bound.
  size_t TrimNow();

 private:
  void Loop();

  const std::chrono::milliseconds interval_;
  const size_t min_free_bytes_;
  std::shared_ptr<spdlog::logger> log_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace canal::server
