// Counts heap allocations made by the current thread, for tests that prove a
// path allocates nothing once warm. Replaces the global operator new/delete
// (all of them, so that sanitizers see matching pairs): include this header
// in exactly one source file of a test binary.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace canal::testing {
inline thread_local bool g_count_allocations = false;
inline thread_local size_t g_allocations = 0;

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
}  // namespace canal::testing

// GCC sees free() meet a pointer from operator new; both are ours, made by malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (canal::testing::g_count_allocations) ++canal::testing::g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
