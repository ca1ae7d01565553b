#include "canal/server/memory_trimmer.h"

#include <malloc.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace canal::server {

MemoryTrimmer::MemoryTrimmer(std::chrono::milliseconds interval, size_t min_free_bytes,
                             std::shared_ptr<spdlog::logger> logger)
    : interval_(interval), min_free_bytes_(min_free_bytes), log_(std::move(logger)) {}

MemoryTrimmer::~MemoryTrimmer() { Stop(); }

void MemoryTrimmer::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { Loop(); });
}

void MemoryTrimmer::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

// The process's resident bytes (0 when /proc cannot tell).
size_t ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return got == 2 ? resident * page : 0;
}

}  // namespace

size_t MemoryTrimmer::TrimNow() {
  // Free bytes in every arena (fordblks), the top chunk's included.
  const struct mallinfo2 info = ::mallinfo2();
  const size_t free_bytes = info.fordblks;
  if (free_bytes < min_free_bytes_) return free_bytes;
  ::malloc_trim(0);
  if (log_) log_->debug("memory: returned up to {} MiB of freed heap to the system", free_bytes >> 20);
  return free_bytes;
}

void MemoryTrimmer::Loop() {
  // Between rounds, a look at the resident size every eighth of the interval
  // (one read of /proc/self/statm): a rise of min_free_bytes over its lowest
  // since the last round brings the next round forward. So heap freed while
  // clients drain a burst (acked entries, whose memory the allocator keeps)
  // goes back within a fraction of the interval, not whole intervals later.
  const auto tick = std::max<std::chrono::milliseconds>(interval_ / 8, std::chrono::milliseconds(1));
  size_t low = ResidentBytes();
  auto next_round = std::chrono::steady_clock::now() + interval_;
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, tick, [this] { return stop_; })) {
    lock.unlock();
    const size_t rss = ResidentBytes();
    low = std::min(low, rss);
    if (std::chrono::steady_clock::now() >= next_round || rss >= low + min_free_bytes_) {
      TrimNow();
      low = ResidentBytes();
      next_round = std::chrono::steady_clock::now() + interval_;
    }
    lock.lock();
  }
}

}  // namespace canal::server
