#include "buffer_pool.h"

namespace canal::store {

BufferPool::BufferPool(size_t capacity) : mask_(capacity - 1), items_(new std::string[capacity]) {}

bool BufferPool::Full() const {
  return tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_acquire) > mask_;
}

bool BufferPool::Push(std::string* bytes) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  // Acquire: the producer's swap out of this item happens before we reuse it.
  if (tail - head_.load(std::memory_order_acquire) > mask_) return false;
  // The item holds what a Pop left there: an inline (heap-free) string.
  items_[tail & mask_].swap(*bytes);
  tail_.store(tail + 1, std::memory_order_release);
  return true;
}

bool BufferPool::Pop(std::string* out) {
  const uint64_t head = head_.load(std::memory_order_relaxed);
  if (head == tail_.load(std::memory_order_acquire)) return false;
  out->swap(items_[head & mask_]);
  head_.store(head + 1, std::memory_order_release);
  return true;
}

}  // namespace canal::store
