// RingStore throughput: small entries put by one thread, taken in batches by
// another with get -> ack, as between an instance's sink and its session.
// Reports entries/s (items_per_second) and ns_per_entry. Target:
// at least 10 million entries/s with batches of 1000.
//
//   build/bin/store_bench [--benchmark_filter=ItemSize]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "canal/store/ring_store.h"

namespace canal::store {
namespace {

// Entries per benchmark iteration: long enough to dwarf starting a thread.
constexpr uint64_t kEntriesPerIteration = 1 << 20;

// One iteration: a producer thread puts kEntriesPerIteration entries of
// `entry_bytes`; this thread gets them `batch_size` at a time, waiting for
// full batches as a session with timeout 0 would, reads each, and acks.
void RunPutGetAck(benchmark::State& state, BatchMode mode) {
  const size_t batch_size = static_cast<size_t>(state.range(0));
  const size_t entry_bytes = static_cast<size_t>(state.range(1));
  RingStoreOptions options;  // Canal's defaults: 16384 slots, 1024-byte units
  options.batch_mode = mode;
  std::unique_ptr<RingStore> store;
  if (!RingStore::Create(options, &store).ok()) {
    state.SkipWithError("RingStore::Create failed");
    return;
  }
  // In MEMSIZE mode a batch is counted in units, not entries.
  const uint64_t batch_entries = mode == BatchMode::kItemSize
                                     ? batch_size
                                     : batch_size * options.buffer_memunit / entry_bytes;

  const std::string payload(entry_bytes, 'r');
  Batch batch;
  uint64_t checksum = 0;
  double total_ns = 0;
  uint64_t total_entries = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::thread producer([&] {
      EntryMeta meta;
      meta.position.journal_name = "mysql-bin.000001";
      meta.position.server_id = 1;
      for (uint64_t i = 0; i < kEntriesPerIteration; ++i) {
        meta.position.position = i;
        meta.safe_resume_point = (i % 8 == 7);  // transactions of 8 entries
        if (!store->Put(payload, meta).ok()) return;
      }
    });
    uint64_t taken = 0;
    while (taken < kEntriesPerIteration) {
      const uint64_t left = kEntriesPerIteration - taken;
      // The tail is shorter than a batch: stop waiting for a full one.
      const auto timeout = left >= batch_entries ? std::chrono::nanoseconds::zero()
                                                 : std::chrono::nanoseconds(std::chrono::microseconds(100));
      if (!store->Get(batch_size, timeout, &batch).ok()) {
        state.SkipWithError("Get failed");
        break;
      }
      if (batch.empty()) continue;
      for (const EntryView& e : batch.entries) checksum += static_cast<unsigned char>(e.bytes[0]);
      taken += batch.size();
      if (!store->Ack(batch).ok()) {
        state.SkipWithError("Ack failed");
        break;
      }
    }
    producer.join();
    total_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    total_entries += taken;
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(static_cast<int64_t>(total_entries));
  state.SetBytesProcessed(static_cast<int64_t>(total_entries * entry_bytes));
  if (total_entries > 0) state.counters["ns_per_entry"] = total_ns / static_cast<double>(total_entries);
}

void BM_PutGetAckItemSize(benchmark::State& state) { RunPutGetAck(state, BatchMode::kItemSize); }
void BM_PutGetAckMemSize(benchmark::State& state) { RunPutGetAck(state, BatchMode::kMemSize); }

// Batches of 1000 entries of 64 bytes (the target), of 100, and in MEMSIZE
// mode batches of 64 KiB (1000 entries of 64 bytes).
BENCHMARK(BM_PutGetAckItemSize)->ArgNames({"batch", "bytes"})->Args({1000, 64})->Args({100, 64})
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PutGetAckMemSize)->ArgNames({"units", "bytes"})->Args({64, 64})
    ->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace canal::store

BENCHMARK_MAIN();
