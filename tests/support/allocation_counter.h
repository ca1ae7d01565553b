// Counts heap allocations made by the current thread, for tests that prove a
// path allocates nothing once warm. Replaces the global operator new/delete
// (all of them, so that sanitizers see matching pairs): include this header
// in exactly one source file of a test binary.
#pragma once

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace canal::testing {
inline thread_local bool g_count_allocations = false;
inline thread_local size_t g_allocations = 0;
// While counting: heap bytes this thread allocated less those it freed (blocks
// freed that were made before counting began make it go below zero), and the
// highest it reached: what a path holds at once.
inline thread_local long long g_live_bytes = 0;
inline thread_local long long g_peak_live_bytes = 0;

// Counts while alive; allocations() says how many happened so far.
class CountAllocations {
 public:
  CountAllocations() {
    g_allocations = 0;
    g_count_allocations = true;
  }
  ~CountAllocations() { g_count_allocations = false; }
  size_t allocations() const { return g_allocations; }
};

// Measures the peak of g_live_bytes while alive.
class PeakBytes {
 public:
  PeakBytes() {
    g_live_bytes = g_peak_live_bytes = 0;
    g_count_allocations = true;
  }
  ~PeakBytes() { g_count_allocations = false; }
  long long peak() const { return g_peak_live_bytes; }
};
}  // namespace canal::testing

// GCC sees free() meet a pointer from operator new; both are ours, made by malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (void* p = std::malloc(n == 0 ? 1 : n)) {
    if (canal::testing::g_count_allocations) {
      ++canal::testing::g_allocations;
      canal::testing::g_live_bytes += static_cast<long long>(malloc_usable_size(p));
      canal::testing::g_peak_live_bytes = std::max(canal::testing::g_peak_live_bytes, canal::testing::g_live_bytes);
    }
    return p;
  }
  throw std::bad_alloc();
}
namespace canal::testing {
inline void CountFree(void* p) {
  if (g_count_allocations && p != nullptr) g_live_bytes -= static_cast<long long>(malloc_usable_size(p));
}
}  // namespace canal::testing
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept {
  canal::testing::CountFree(p);
  std::free(p);
}
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }
#pragma GCC diagnostic pop
