#include "canal/server/memory_trimmer.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

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
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    TrimNow();
    lock.lock();
  }
}

}  // namespace canal::server
