// MemoryTrimmer: freed heap pinned under a live allocation (which glibc's
// own trimming of the heap's top cannot return) goes back to the system.
#include "canal/server/memory_trimmer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace canal::server {
namespace {

using namespace std::chrono_literals;

size_t RssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  }
  return 0;
}

// Keeps the compiler from eliding an allocation it can see freed.
void Escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }

struct Freer {
  void operator()(void* p) const { std::free(p); }
};
using Block = std::unique_ptr<char, Freer>;

// Allocates about `bytes` in small blocks (touched), frees all but a last
// one allocated above them, which keeps the heap's top in use. *held_rss is
// the RSS while all were held: a trimmer thread may trim as soon as they are
// freed, before a caller could read it (glibc alone gives none of it back).
Block BurstAndFree(size_t bytes, size_t* held_rss) {
  constexpr size_t kBlock = 4096;
  std::vector<char*> blocks;
  blocks.reserve(bytes / kBlock);
  for (size_t i = 0; i < bytes / kBlock; ++i) {
    char* b = static_cast<char*>(std::malloc(kBlock));
    std::memset(b, static_cast<int>(i), kBlock);
    Escape(b);
    blocks.push_back(b);
  }
  *held_rss = RssKiB();
  // The last block came from the heap's top, above all the others: kept.
  Block pin(blocks.back());
  blocks.pop_back();
  for (char* b : blocks) std::free(b);
  return pin;
}

// Sanitizers replace malloc: glibc's heap is not what is measured then.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcMalloc = false;
#else
constexpr bool kGlibcMalloc = true;
#endif

TEST(MemoryTrimmerTest, ReturnsFreedHeapToTheSystem) {
  if (!kGlibcMalloc) GTEST_SKIP() << "a sanitizer's allocator replaces glibc's";
  MemoryTrimmer trimmer(1h, 1u << 20, nullptr);
  size_t before = 0;
  auto pin = BurstAndFree(128u << 20, &before);
  EXPECT_GE(trimmer.TrimNow(), 64u << 20);  // it saw the freed bytes
  const size_t after = RssKiB();
  EXPECT_LT(after + (64u << 10), before) << "RSS " << before << " KiB -> " << after << " KiB";
}

TEST(MemoryTrimmerTest, ItsThreadTrimsWithinAnInterval) {
  if (!kGlibcMalloc) GTEST_SKIP() << "a sanitizer's allocator replaces glibc's";
  MemoryTrimmer trimmer(100ms, 1u << 20, nullptr);
  trimmer.Start();
  size_t before = 0;
  auto pin = BurstAndFree(128u << 20, &before);
  size_t after = before;
  for (int i = 0; i < 100 && after + (64u << 10) >= before; ++i) {
    std::this_thread::sleep_for(50ms);
    after = RssKiB();
  }
  trimmer.Stop();
  EXPECT_LT(after + (64u << 10), before) << "RSS " << before << " KiB -> " << after << " KiB";
}

TEST(MemoryTrimmerTest, LittleFreeHeapIsLeftAlone) {
  MemoryTrimmer trimmer(1h, size_t{1} << 40, nullptr);
  EXPECT_LT(trimmer.TrimNow(), size_t{1} << 40);
  trimmer.Stop();  // never started: fine
}

}  // namespace
}  // namespace canal::server
