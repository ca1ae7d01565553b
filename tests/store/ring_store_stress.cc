// One producer, one consumer, random batch sizes, timeouts, rollbacks and
// acks. Meant for ThreadSanitizer (scripts/test.sh runs it there with 10
// million entries); CANAL_STORE_STRESS_ENTRIES shrinks it for quick runs.
//
// Checked: every entry is handed out in order with the bytes and position it
// was put with, acked exactly once and in order; batches respect their bound
// and DDL isolation; the bytes held never exceed the configured bound.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "canal/store/ring_store.h"

namespace canal::store {
namespace {

uint64_t EntriesToRun() {
  const char* env = std::getenv("CANAL_STORE_STRESS_ENTRIES");
  if (env != nullptr && *env != '\0') {
    const uint64_t n = std::strtoull(env, nullptr, 10);
    if (n > 0) return n;
  }
  return 10'000'000;
}

// Everything about entry `seq` follows from seq, so the consumer can check
// what it receives without sharing state with the producer.
size_t SizeOf(uint64_t seq) { return 8 + static_cast<size_t>((seq * 2654435761u) % 57); }
EntryKind KindOf(uint64_t seq) {
  switch ((seq * 40503u) % 97) {
    case 0: return EntryKind::kDdl;
    case 1: case 2: case 3: case 4: case 5: return EntryKind::kTransactionBegin;
    case 6: case 7: case 8: case 9: case 10: return EntryKind::kTransactionEnd;
    default: return EntryKind::kOther;
  }
}
bool SafeAfter(uint64_t seq) {
  const EntryKind k = KindOf(seq);
  return k == EntryKind::kTransactionEnd || k == EntryKind::kDdl;
}

void Fill(uint64_t seq, std::string* bytes) {
  bytes->assign(SizeOf(seq), static_cast<char>('a' + seq % 26));
  for (int i = 0; i < 8; ++i) (*bytes)[static_cast<size_t>(i)] = static_cast<char>(seq >> (8 * i));
}

const std::string& JournalOf(uint64_t seq) {
  thread_local uint64_t cached_file = 0;
  thread_local std::string cached;
  const uint64_t file = 100000 + seq / 100000;
  if (file != cached_file) {
    cached_file = file;
    cached = "mysql-bin." + std::to_string(file);
  }
  return cached;
}

// Reuses `m`'s strings: the test should spend its time in the store.
void FillMeta(uint64_t seq, EntryMeta* m) {
  // A new binlog file every 100,000 entries, so positions cross files.
  if (m->position.journal_name.empty() || seq % 100000 == 0) m->position.journal_name = JournalOf(seq);
  m->position.position = 4 + seq % 100000;
  m->position.server_id = 1;
  m->position.timestamp_ms = static_cast<int64_t>(seq);
  m->kind = KindOf(seq);
  m->safe_resume_point = SafeAfter(seq);
}

bool SameAsPut(uint64_t seq, const EntryMeta& got) {
  return got.position.journal_name == JournalOf(seq) &&
         got.position.position == 4 + seq % 100000 && got.position.server_id == 1 &&
         got.position.timestamp_ms == static_cast<int64_t>(seq) && got.kind == KindOf(seq) &&
         got.safe_resume_point == SafeAfter(seq);
}

struct StressConfig {
  uint32_t buffer_size;
  uint32_t memunit;
  BatchMode mode;
  bool ddl_isolation;
  size_t max_batch;
};

void RunStress(const StressConfig& config, uint64_t total) {
  RingStoreOptions options;
  options.buffer_size = config.buffer_size;
  options.buffer_memunit = config.memunit;
  options.batch_mode = config.mode;
  options.ddl_isolation = config.ddl_isolation;
  std::unique_ptr<RingStore> store;
  ASSERT_TRUE(RingStore::Create(options, &store).ok());
  const bool mem = config.mode == BatchMode::kMemSize;
  const uint64_t byte_bound = options.ByteBound();

  std::atomic<bool> producer_failed{false};
  std::atomic<uint64_t> peak_held{0};
  std::thread producer([&] {
    std::string bytes;
    EntryMeta meta;
    for (uint64_t seq = 0; seq < total; ++seq) {
      Fill(seq, &bytes);
      FillMeta(seq, &meta);
      // Both puts: the copy, and the move that hands a consumed slot's
      // buffer back to this thread.
      const Status put = seq % 2 == 0 ? store->Put(std::string_view(bytes), meta) : store->Put(&bytes, meta);
      if (!put.ok()) {
        producer_failed.store(true);
        return;
      }
      // Read by the producer, the ack side may be stale, which can only
      // overstate what is held: a strict check.
      const RingStoreStats s = store->stats();
      if (s.held_bytes > peak_held.load(std::memory_order_relaxed)) {
        peak_held.store(s.held_bytes, std::memory_order_relaxed);
      }
      if ((mem && s.held_bytes > byte_bound) || s.put_sequence - s.ack_sequence > config.buffer_size) {
        producer_failed.store(true);
        return;
      }
    }
  });

  std::mt19937_64 rng(20240601);
  uint64_t acked = 0;     // every entry below is acked, each exactly once
  uint64_t got = 0;       // next sequence the consumer expects from a get
  uint64_t gets = 0, rollbacks = 0, partial_acks = 0, empty_gets = 0, waits = 0;
  Batch batch;
  std::string want;
  bool ok = true;
  // A lost wake-up would hang rather than fail: give up after a minute
  // without progress.
  uint64_t last_acked = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (acked < total && ok) {
    if (acked != last_acked) {
      last_acked = acked;
      last_progress = std::chrono::steady_clock::now();
    } else if ((gets & 1023) == 0 && std::chrono::steady_clock::now() - last_progress > std::chrono::minutes(1)) {
      ADD_FAILURE() << "no ack for a minute at sequence " << acked << " (got " << got << ")";
      break;
    }
    const size_t batch_size = 1 + rng() % config.max_batch;
    // A zero timeout waits for a full batch: only ask for it when the rest of
    // the stream is sure to fill one (each entry has at least 8 bytes).
    const uint64_t needed = mem ? (batch_size * config.memunit + 7) / 8 : batch_size;
    std::chrono::nanoseconds timeout;
    switch (rng() % 4) {
      case 0: timeout = RingStore::kNoWait; break;
      case 1: timeout = total - got >= needed ? std::chrono::nanoseconds::zero() : RingStore::kNoWait; break;
      default: timeout = std::chrono::microseconds(1 + rng() % 200); break;
    }
    if (timeout >= std::chrono::nanoseconds::zero()) ++waits;
    Status s = store->Get(batch_size, timeout, &batch);
    ++gets;
    if (!s.ok()) {
      ADD_FAILURE() << "get: " << s.ToString();
      break;
    }
    if (batch.empty()) {
      ++empty_gets;
      // Everything is handed out: ack what is held, or the full ring would
      // leave both sides waiting on each other.
      if (got > acked) {
        if (!store->Ack(got).ok()) {
          ADD_FAILURE() << "ack of everything handed out";
          break;
        }
        acked = got;
      }
      continue;
    }
    // What came is what was put, in order.
    if (batch.first_sequence != got) {
      ADD_FAILURE() << "batch starts at " << batch.first_sequence << ", expected " << got;
      break;
    }
    uint64_t bytes = 0;
    const LogPosition* safe = nullptr;
    for (const EntryView& e : batch.entries) {
      Fill(got, &want);
      if (e.sequence != got || e.bytes != want || !SameAsPut(got, *e.meta)) {
        ADD_FAILURE() << "entry " << got << " differs from what was put";
        ok = false;
        break;
      }
      if (e.meta->safe_resume_point) safe = &e.meta->position;
      bytes += e.bytes.size();
      ++got;
    }
    if (!ok) break;
    if (batch.end_sequence != got || batch.bytes != bytes ||
        batch.first_position != batch.entries.front().meta->position ||
        batch.last_position != batch.entries.back().meta->position ||
        batch.safe_position.has_value() != (safe != nullptr) ||
        (safe != nullptr && *batch.safe_position != *safe)) {
      ADD_FAILURE() << "batch summary wrong at " << batch.first_sequence;
      break;
    }
    // Bounds of one batch.
    if (batch.size() > 1) {
      if (mem ? bytes > batch_size * config.memunit : batch.size() > batch_size) {
        ADD_FAILURE() << "batch of " << batch.size() << " entries, " << bytes << " bytes exceeds "
                      << batch_size << " " << BatchModeName(config.mode);
        break;
      }
      if (config.ddl_isolation) {
        for (const EntryView& e : batch.entries) {
          if (e.meta->kind == EntryKind::kDdl) {
            ADD_FAILURE() << "DDL " << e.sequence << " shares a batch";
            ok = false;
          }
        }
        if (!ok) break;
      }
    }
    if (mem && store->stats().held_bytes > byte_bound) {
      ADD_FAILURE() << "held bytes exceed the bound";
      break;
    }

    const unsigned action = rng() % 20;
    if (action < 2) {
      store->Rollback();
      ++rollbacks;
      got = acked;
    } else if (action < 4 && batch.size() > 1) {
      // Ack part of the batch; the rest stays handed out and is acked with
      // a later batch (acks free everything up to their end).
      const uint64_t end = batch.first_sequence + 1 + rng() % (batch.size() - 1);
      if (end <= acked || !store->Ack(end).ok()) {
        ADD_FAILURE() << "partial ack to " << end;
        break;
      }
      acked = end;
      ++partial_acks;
    } else if (action < 6) {
      // Keep the batch outstanding and get another first (several batches
      // in flight, as a client may have).
    } else {
      Status a = (action % 2 == 0) ? store->Ack(batch) : store->Ack(batch.last_position);
      if (!a.ok()) {
        ADD_FAILURE() << "ack: " << a.ToString();
        break;
      }
      acked = batch.end_sequence;
    }
    if (acked > got) {
      ADD_FAILURE() << "acked past what was handed out";
      break;
    }
    // Read after our own ack, the producer's take-backs can only be newer
    // than the ones the ack decided on: a strict check of the budget.
    if (const RingStoreStats r = store->stats(); r.retained_bytes > r.retained_budget_bytes) {
      ADD_FAILURE() << "acked slots keep " << r.retained_bytes << " bytes, over the budget of "
                    << r.retained_budget_bytes;
      break;
    }
  }
  if (acked < total) store->Stop();  // let the producer out after a failure
  producer.join();
  EXPECT_FALSE(producer_failed.load()) << "producer saw a bound exceeded or a failed put";
  EXPECT_EQ(acked, total);
  const RingStoreStats s = store->stats();
  EXPECT_EQ(s.ack_sequence, total);
  EXPECT_EQ(s.put_sequence, total);
  EXPECT_EQ(s.held_bytes, 0u);
  if (mem) {
    EXPECT_LE(peak_held.load(), byte_bound);
  }
  std::printf("stress %s%s: %llu entries, %llu gets (%llu empty, %llu waiting), %llu rollbacks, "
              "%llu partial acks, peak held %llu of %llu bytes\n",
              std::string(BatchModeName(config.mode)).c_str(), config.ddl_isolation ? "+ddl" : "",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(gets),
              static_cast<unsigned long long>(empty_gets), static_cast<unsigned long long>(waits),
              static_cast<unsigned long long>(rollbacks), static_cast<unsigned long long>(partial_acks),
              static_cast<unsigned long long>(peak_held.load()),
              static_cast<unsigned long long>(mem ? byte_bound : 0));
}

TEST(RingStoreStressTest, MemSizeEveryEntryAckedOnceInOrderWithinTheByteBound) {
  // 1024 slots of 16-byte units: a 16 KiB bound that entries of 8..64 bytes
  // hit long before the slot count.
  RunStress({/*buffer_size=*/1024, /*memunit=*/16, BatchMode::kMemSize, /*ddl_isolation=*/false,
             /*max_batch=*/128},
            EntriesToRun());
}

TEST(RingStoreStressTest, ItemSizeWithDdlIsolationEveryEntryAckedOnceInOrder) {
  RunStress({/*buffer_size=*/64, /*memunit=*/1024, BatchMode::kItemSize, /*ddl_isolation=*/true,
             /*max_batch=*/100},
            EntriesToRun() / 5);
}

}  // namespace
}  // namespace canal::store
