#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace canal::store {

// A bounded single-producer single-consumer free list of entry buffers. The
// ring's consumer pushes buffers its acks release; the ring's producer pops
// one when the slot it fills has none to hand back. On the ring's first lap
// every slot ahead of the producer is empty, so without it each entry was
// built in freshly allocated (and page-faulted) memory while acks freed
// buffers the producer would not reach for another lap.
class BufferPool {
 public:
  // `capacity`: a power of two.
  explicit BufferPool(size_t capacity);

  // Consumer: moves *bytes into the pool (leaving *bytes without a heap
  // buffer); false, *bytes untouched, when the pool is full.
  bool Push(std::string* bytes);
  // Consumer: whether a Push would fail.
  bool Full() const;
  // Producer: swaps a pooled buffer (its old contents left in, the caller
  // overwrites them) into *out, whose own buffer must be inline (no heap);
  // false when the pool is empty.
  bool Pop(std::string* out);

 private:
  const uint64_t mask_;
  std::unique_ptr<std::string[]> items_;
  alignas(64) std::atomic<uint64_t> head_{0};  // written by the producer (Pop)
  alignas(64) std::atomic<uint64_t> tail_{0};  // written by the consumer (Push)
};

}  // namespace canal::store
