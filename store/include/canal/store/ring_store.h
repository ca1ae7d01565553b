// RingStore: the bounded ring of serialised entries between one destination's
// sink (the producer) and the client session subscribed to it (the consumer).
//
// Every entry was serialised once by the sink; the ring takes that buffer
// into a slot and hands the slot's old buffer back for the next entry (or,
// from a string_view, copies into a slot whose buffer it reuses), so a
// steady stream of entries neither allocates nor copies. Three sequences count entries from 0:
//
//   ack <= get <= put,   put - ack <= buffer_size
//
// [ack, get) has been handed out and awaits Ack or Rollback, [get, put) waits
// for the next Get. Entry number s lives in slot s % buffer_size until acked.
// In MEMSIZE mode the bytes of [ack, put) are also bounded, by
// buffer_size * memunit: a Put that would exceed either bound waits, so the
// parser feels the back-pressure and memory stays bounded however slow the
// client. (One exception keeps a huge entry from wedging the ring: an entry
// larger than the whole byte bound is admitted once the ring is empty.)
//
// Under the server's memory budget (JoinBudget) the ring uses only as many of
// its slots as its share pays for (a power of two, at most buffer_size, at
// least kMinBudgetSlots): entry s then lives in slot (s - base) % slots, and
// the count bound is that number. The producer changes the number only when
// the ring is empty (every entry acked), so the consumer never sees two: a
// smaller number makes the producer wait for the ring to drain, then the
// slots it leaves are destroyed and their pages given back (madvise); a
// larger one waits until the ring happens to be empty. So a ring of 16384
// slots costs its share's slot part once it cycles, not its whole 3 MiB array.
//
// The buffers of acked entries stay in their slots for reuse, within a
// retained budget of buffer_size * memunit bytes (both modes): Ack keeps an
// acked slot's buffer while the kept buffers fit the budget and frees it
// otherwise, and the producer takes a kept buffer back when it reuses the
// slot. So a ring of small entries recycles every buffer, and a long run of
// big ones (more of them than fit the budget) holds at most the budget in
// idle buffers, not buffer_size of them.
//
// Threads: exactly one producer calls Put/TryPut; exactly one consumer calls
// Get/TryGet/Ready/NotifyWhen/CancelNotify/Ack/Rollback. The
// consumer's calls need not come from one OS thread (an Asio strand is fine)
// but must be sequenced, never concurrent. Stop, stopped and stats are safe
// from any thread. Producer and consumer share only atomics; the hot paths
// take no mutex.
//
// Waiting for data from an asynchronous server: the consumer arms a one-shot
// callback with NotifyWhen(rule, batch_size, cb). It runs once, on the
// producer's thread (or the thread calling Stop or Rollback), as soon as
// Ready(rule, batch_size) holds or the store stops. It must be quick
// and must not call the RingStore: post to the session's executor and call
// TryGet there. A timed wait arms a timer beside it; when the timer wins,
// CancelNotify() says whether the callback was withdrawn (false: it has run
// or is running, so the session must tolerate that late call, e.g. by a
// generation number).
// The blocking Get is built on the same mechanism, for tests and tools.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/store/ring_store_options.h"

namespace canal::store {

// What an entry is, as far as batching and resuming care.
enum class EntryKind : uint8_t {
  kOther,             // ROWDATA, heartbeat, GTID log, ...
  kTransactionBegin,  // TRANSACTIONBEGIN
  kTransactionEnd,    // TRANSACTIONEND
  kDdl,               // a RowChange with isDdl (batched alone under ddl_isolation)
};

// What the ring knows about an entry besides its bytes.
struct EntryMeta {
  // (The flags come first: with the slot's byte view they make the one cache
  // line a consumer reads per entry.)
  EntryKind kind = EntryKind::kOther;
  // True when a resume after this entry neither repeats nor skips: the sink
  // sets it on TRANSACTIONEND, on a DDL, and on the last entry of each piece
  // of a large transaction that it flushes in pieces.
  bool safe_resume_point = false;
  // Table rows in the entry (a ROWDATA entry's row changes; 0 otherwise), for
  // the put/get/ack rows metrics.
  uint32_t rows = 0;
  LogPosition position;
};

// One entry of a batch: a view into the ring, valid until the entry is acked
// (a Rollback keeps it valid; the next Get hands it out again).
struct EntryView {
  uint64_t sequence = 0;
  std::string_view bytes;           // one serialised Entry
  const EntryMeta* meta = nullptr;  // never null in a batch
};

// The result of a Get. Reuse one Batch across calls: Get clears it and keeps
// its vector's capacity.
struct Batch {
  std::vector<EntryView> entries;
  uint64_t first_sequence = 0;  // sequence of entries.front()
  uint64_t end_sequence = 0;    // one past entries.back(): Ack(end_sequence) frees the batch
  uint64_t bytes = 0;           // sum of the entries' sizes
  LogPosition first_position;
  LogPosition last_position;
  // Where a cursor may move once this batch is acked: the position of the
  // last safe resume point in the batch; absent when the batch holds none
  // (the middle of a transaction), so the cursor must stay where it is.
  std::optional<LogPosition> safe_position;

  bool empty() const { return entries.empty(); }
  size_t size() const { return entries.size(); }
};

// A snapshot for metrics and tests; approximate when read while the
// producer and consumer run.
struct RingStoreStats {
  uint64_t put_sequence = 0;
  uint64_t get_sequence = 0;
  uint64_t ack_sequence = 0;
  uint64_t held_bytes = 0;  // bytes of the entries in [ack, put)
  uint64_t put_bytes = 0;   // bytes ever put (Canal's store_produce_mem)
  uint64_t ack_bytes = 0;   // bytes ever acked (Canal's store_consume_mem)
  uint64_t put_blocked_ns = 0;  // time Put spent waiting for space (back-pressure)
  // Heap bytes of the buffers acked slots keep for reuse (at most
  // retained_budget_bytes once the consumer's acks are seen).
  uint64_t retained_bytes = 0;
  uint64_t retained_budget_bytes = 0;
  // The bytes of un-acked entries the ring may hold now: its MEMSIZE bound or
  // the server budget's share, the smaller; 0 when neither bounds it.
  uint64_t held_bound = 0;
  // Slots in use: buffer_size, or fewer under the server's budget.
  uint64_t slots = 0;
};

// The server budget's limits for one ring (MemoryBudget computes them from
// the ring's share); 0 in a field: no limit of the budget's.
struct RingBudgetLimits {
  uint64_t held_bytes = 0;      // bytes of un-acked entries
  uint64_t retained_bytes = 0;  // bytes of acked buffers kept for reuse
  uint64_t slot_bytes = 0;      // slots in use, at SlotCost() each
  uint64_t batch_bytes = 0;     // bytes of one batch (one entry larger than that still comes alone)
};

class BufferPool;
class MemoryBudget;

class RingStore {
 public:
  using DataCallback = std::function<void()>;

  // Get's timeout, following the protocol: negative (kNoWait) returns what
  // is there now; zero waits until a full batch is ready; positive waits at
  // most that long for a full batch, then returns what is there.
  static constexpr std::chrono::nanoseconds kNoWait{-1};

  // Validates `options` (InvalidArgument naming the key) and allocates the
  // slots.
  static Status Create(const RingStoreOptions& options, std::unique_ptr<RingStore>* out);

  // Optional, once, at the start of a process before it starts any thread:
  // registers the process for the rings' asymmetric fences (membarrier). The
  // kernel registers a single-threaded process at once, a multi-threaded one
  // only after an RCU grace period (10-14 ms here), which the first ring
  // would otherwise pay on a destination's way to its first row.
  static void PrepareProcess();

  RingStore(const RingStore&) = delete;
  RingStore& operator=(const RingStore&) = delete;
  ~RingStore();

  const RingStoreOptions& options() const { return options_; }

  // ---- producer ----------------------------------------------------------

  // Copies `bytes` and `meta` into the next slot, waiting while the ring is
  // full by count or (MEMSIZE) by bytes. Aborted once Stop has been called
  // (also when Stop ends the wait); the entry is then not stored.
  Status Put(std::string_view bytes, const EntryMeta& meta);

  // Put without the copy: takes the buffer of `*bytes` into the slot and
  // leaves in `*bytes` the slot's old buffer (contents unspecified) to build
  // the next entry in, so buffers circulate between producer and ring. A
  // buffer far larger than its entry (more than twice it and more than
  // max(memunit, 256) bytes) is copied from instead and released, so neither
  // side keeps a huge entry's buffer for small ones. On error `*bytes` is
  // unchanged.
  Status Put(std::string* bytes, const EntryMeta& meta);

  // Put without the copy of an entry that starts `offset` bytes into
  // `*bytes`: room its producer kept in front of bytes it wrote first, for a
  // prefix it could only write last (a snapshot entry's header before rows
  // rendered into the buffer). The slot keeps the whole buffer; a get hands
  // out bytes [offset, size) and counts only those. InvalidArgument when
  // `offset` is past the end.
  Status Put(std::string* bytes, size_t offset, const EntryMeta& meta);

  // The capacity up to which a moving Put keeps any buffer, whatever the
  // size of its entry: max(memunit, 256) bytes. A producer that gives a
  // small entry's buffer headroom keeps it within this, or the buffer is
  // dropped the first time a small entry is put in it.
  size_t spare_capacity() const { return retained_capacity_; }

  // Waits until an entry of `size` bytes would be taken at once (the rule
  // Put waits on), without putting anything: a producer about to build a
  // huge entry waits here first, so it does not hold that entry and the
  // ring's unacked ones at the same time. Aborted once stopped.
  Status WaitForRoom(uint64_t size);

  // Put without waiting: false when the ring is full or stopped (stopped()
  // tells which); the entry is then not stored.
  bool TryPut(std::string_view bytes, const EntryMeta& meta);

  // ---- consumer ----------------------------------------------------------

  // Hands out the entries after `get` (at most a batch: batch_size entries
  // in ITEMSIZE mode, batch_size * memunit bytes in MEMSIZE mode, and under
  // the server's budget at most the share's batch part in bytes, where a
  // single entry larger than that still comes alone), waiting as `timeout`
  // says. Under ddl_isolation a DDL entry comes in a batch of its own. An
  // empty batch is a normal outcome. InvalidArgument for batch_size 0;
  // Aborted once stopped.
  Status Get(size_t batch_size, std::chrono::nanoseconds timeout, Batch* out);
  Status TryGet(size_t batch_size, Batch* out) { return Get(batch_size, kNoWait, out); }

  // What a waiting consumer waits for; Ready says whether it holds now, and
  // NotifyWhen arms a one-shot callback for when it comes to hold.
  //  kBatch: a Get(batch_size) would be a full batch: a batch's worth of
  //    entries or bytes is waiting, or (ddl_isolation) a DDL is waiting, or
  //    the producer is blocked because the ring is full (more cannot arrive
  //    until the consumer acks), or the store is stopped. Always true for
  //    batch_size 0.
  //  kAny: any entry is waiting after get, or the store is stopped
  //    (batch_size is not used).
  //  kLowLatency: catch-up aware low latency. A producer that reads a stream
  //    (the parser) calls TrackCatchUp() once, then ProducerCaughtUp() each
  //    time it is about to wait for more input: it has put everything it
  //    had. The wait then ends when kBatch holds or, with entries waiting,
  //    when the producer has caught up; while a backlog is still being put it
  //    waits for the full batch, instead of taking every entry singly (and an
  //    ack and a cursor write each). Without TrackCatchUp() the producer
  //    counts as caught up whenever it is not putting, so this is kAny. A
  //    quarter of the ring (of entries, or of MEMSIZE bytes) also ends it: a
  //    batch as big as the ring would leave the producer nothing to do while
  //    the client reads it, and a client that keeps its next GET in flight
  //    (the SDK's prefetch) holds two batches at once: with half a ring each,
  //    the producer stopped until the older was acked, and that ack's reply
  //    waits for the cursor's fsync (docs/performance-journal.md, entry 25).
  //    A quarter each leaves it room. batch_size 0 means kAny.
  enum class WaitRule : uint8_t { kBatch, kAny, kLowLatency };
  bool Ready(WaitRule rule, size_t batch_size) const;

  // Arms `callback` to run once when Ready(rule, batch_size) becomes true
  // (see the file comment). Returns true when armed; false when it holds
  // already, the store is stopped, the callback is empty or (kBatch)
  // batch_size is 0, in which case the callback is dropped without running
  // and the caller should TryGet now. Arming again replaces an earlier
  // callback that has not run.
  bool NotifyWhen(WaitRule rule, size_t batch_size, DataCallback callback);

  // For kLowLatency (see there).
  void TrackCatchUp() { tracks_catch_up_.store(true, std::memory_order_relaxed); }
  void ProducerCaughtUp();

  // Withdraws the armed callback. True when withdrawn before running; false
  // when none was armed or it has run or is about to run.
  bool CancelNotify();

  // Frees the entries with sequence < end_sequence (a batch's
  // end_sequence): their slots keep their buffers for the producer while the
  // retained budget allows, and release them otherwise. InvalidArgument when that is beyond get (never handed
  // out, or handed out before a Rollback) or frees nothing new.
  Status Ack(uint64_t end_sequence);

  // Ack(batch.end_sequence); InvalidArgument for an empty batch.
  Status Ack(const Batch& batch);

  // Frees the entries up to and including the first un-acked, handed-out
  // entry at `last_position` (same journal name, offset and included flag).
  // InvalidArgument when no entry in [ack, get) is at that position.
  Status Ack(const LogPosition& last_position);

  // get = ack: everything handed out and not acked comes again.
  void Rollback();

  // ---- any thread --------------------------------------------------------

  // Wakes every waiter; Put, TryPut and Get fail with Aborted from now on.
  // Idempotent.
  void Stop();
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }

  RingStoreStats stats() const;

  // Shares the server's budget (canal.memory.budget) from now until the ring
  // is destroyed: its un-acked bytes, kept buffers, slots in use and batches
  // are then bounded by its share as well as by its own options.
  // `overhead_bytes`: what the ring's destination costs besides the ring
  // (its parser's connection buffer, threads...), which the budget sets
  // aside too. Call once, before the first Put.
  void JoinBudget(std::shared_ptr<MemoryBudget> budget, uint64_t overhead_bytes = 0);
  // MemoryBudget's call: the share's parts. Wakes a producer waiting for
  // space, as a limit may have grown.
  void SetBudgetLimits(const RingBudgetLimits& limits);

  // Slots a ring under a budget uses at least, however small its share.
  static constexpr uint64_t kMinBudgetSlots = 128;
  // What one slot in use costs: the slot itself and the heap its position's
  // texts take (a journal name and a GTID of up to about 40 characters).
  static constexpr uint64_t kSlotHeapBytes = 96;
  static constexpr uint64_t SlotCost();
  // What a ring under a budget costs whatever its share: its smallest slot
  // array and the buffer pool's own array.
  uint64_t FixedBytes() const;

 private:
  // Cache-line aligned, and ordered so that what a get reads for every entry
  // (the bytes' pointer and size, end_bytes, kind, safe flag) shares a line.
  struct alignas(64) Slot {
    std::string bytes;
    uint64_t end_bytes = 0;  // put_bytes_ after this entry, so acks are O(1)
    uint64_t end_heap = 0;   // put_heap_ after this entry: acks within budget are O(1) too
    uint32_t offset = 0;     // where the entry starts in `bytes` (Put with an offset)
    EntryMeta meta;

    std::string_view entry() const { return std::string_view(bytes).substr(offset); }
  };
  static constexpr uint64_t kNotArmed = ~uint64_t{0};

  explicit RingStore(const RingStoreOptions& options);
  // The slot array, mapped (nullptr when the mapping fails).
  static Slot* MapSlots(uint64_t count);

  bool MemSize() const { return options_.batch_mode == BatchMode::kMemSize; }
  // The consumer's view of where entries live: slot (s - base) & mask. It
  // changes only while the ring is empty, so the view taken after seeing an
  // entry holds for every entry up to it.
  struct Geometry {
    uint64_t base;
    uint64_t mask;
  };
  Geometry ConsumerGeometry() const {
    return Geometry{base_.load(std::memory_order_relaxed), slots_in_use_.load(std::memory_order_relaxed) - 1};
  }
  Slot& SlotAt(const Geometry& g, uint64_t sequence) const { return slots_[(sequence - g.base) & g.mask]; }
  // Producer, ring empty at `put`: uses `slots` slots from entry `put` on,
  // destroying the ones it leaves and giving back their pages.
  void Reshape(uint64_t put, uint64_t slots);
  // Gives back the pages of slots [from, to), none of them constructed now.
  void ReleaseSlotPages(uint64_t from, uint64_t to);
  // The bytes of un-acked entries the ring may hold: its MEMSIZE bound or the
  // budget's share, the smaller; kUnbounded for ITEMSIZE without a budget.
  static constexpr uint64_t kUnbounded = ~uint64_t{0};
  uint64_t HeldBound() const;
  // The put (MEMSIZE: put_bytes) an armed callback waits for: a full batch
  // of `batch_size`, or any entry when it is 0.
  uint64_t NotifyTarget(size_t batch_size) const;
  bool BatchReady(size_t batch_size) const;
  bool AnyReady() const;
  bool LowLatencyReady(size_t batch_size) const;
  bool Arm(size_t batch_size, WaitRule rule, DataCallback callback);
  bool RingShareWaiting() const;
  // For a tracked low-latency waiter (else kNotArmed): the put_ at which a
  // quarter of the ring waits; lowers a MEMSIZE *target to a quarter of its bytes.
  uint64_t RingShareTarget(WaitRule rule, size_t batch_size, uint64_t* target) const;
  uint64_t BatchByteLimit(size_t batch_size) const;
  // Producer: also reshapes the ring when the budget wants another number of
  // slots and the ring is empty (and refuses while a smaller one waits for that).
  bool Fits(uint64_t put, uint64_t put_bytes, uint64_t size);
  bool RefreshAndFits(uint64_t put, uint64_t put_bytes, uint64_t size);
  Status WaitForSpace(uint64_t put, uint64_t put_bytes, uint64_t size);
  Slot& SlotToFill(uint64_t put);
  void CopyInto(Slot& slot, std::string_view bytes) const;
  bool MayKeep(size_t capacity, size_t size) const;
  // Producer: the slot's buffer (kept at its ack, or freed) leaves the
  // retained count as the producer reuses the slot.
  void TakeRetained(const Slot& slot);
  // Producer: *bytes has no heap buffer: take a pooled one, if any.
  void TakePooled(std::string* bytes);
  // Consumer: keeps (in their slots or the pool) or frees the buffers of the
  // slots of [from, to).
  void RetainOrRelease(uint64_t from, uint64_t to);
  // Publishes the entry now in `slot` (its bytes already filled in).
  void Publish(uint64_t put, uint64_t put_bytes, Slot& slot, const EntryMeta& meta);
  // Runs the armed callback if any; unless `force`, only if the producer's
  // progress (`put` or bytes) reached the target or a DDL arrived.
  void FireNotify(bool force, uint64_t progress, bool ddl);
  Status CollectBatch(size_t batch_size, Batch* out);
  // The two halves of the put/arm handshake (see ring_store.cc): light on
  // every put, heavy once per armed wait.
  void LightFence();
  void HeavyFence();
  // Consumer side: the waiting producer's entry does not fit, so nothing
  // more can arrive until the consumer acks.
  bool RingFullForBlockedProducer(uint64_t put) const;

  const RingStoreOptions options_;
  const uint64_t capacity_;  // slots mapped (buffer_size)
  const bool asymmetric_fences_;       // membarrier pairs with a compiler barrier per put
  const uint64_t retained_capacity_;  // spare bytes a slot's buffer may keep
  const uint64_t retained_budget_;    // heap bytes acked slots may keep in all (own option)
  // The server budget's share (0: none): bytes of un-acked entries, and of
  // kept buffers. Read relaxed on each put / ack; changed when rings come and go.
  std::atomic<uint64_t> budget_held_{0};
  std::atomic<uint64_t> budget_retained_{0};
  std::atomic<uint64_t> budget_slots_{0};  // slots the share pays for (0: no budget)
  std::atomic<uint64_t> budget_batch_{0};  // bytes of a batch
  std::shared_ptr<MemoryBudget> budget_;
  // Mapped, not allocated: untouched pages cost no memory, and a slot is
  // constructed when the producer first fills it, so a ring that has held few
  // entries (an idle destination) costs a few pages, not its whole array.
  // Slots [0, constructed_) are constructed.
  Slot* slots_ = nullptr;
  // The geometry (see Geometry): written by the producer while the ring is
  // empty, read by the consumer for the entries it is handed.
  std::atomic<uint64_t> slots_in_use_;
  std::atomic<uint64_t> base_{0};
  // Acked buffers on their way back to the producer (within the retained budget).
  std::unique_ptr<BufferPool> pool_;

  // Written by the producer only. put_ is the publication point: a slot's
  // contents are visible to whoever reads put_ past it.
  alignas(64) std::atomic<uint64_t> put_{0};
  std::atomic<uint64_t> put_bytes_{0};
  // The producer's last view of ack_/ack_bytes_; stale only on the safe side.
  uint64_t cached_ack_ = 0;
  uint64_t cached_ack_bytes_ = 0;
  // Heap bytes of kept buffers the producer has taken back (ever); the
  // consumer's retained_kept_ minus this is what the acked slots keep.
  std::atomic<uint64_t> retained_taken_{0};
  uint64_t put_heap_ = 0;  // heap bytes of every buffer published (ever)
  // The producer's copy of the geometry, and how many slots are constructed.
  uint64_t active_slots_;
  uint64_t active_mask_;
  uint64_t active_base_ = 0;
  uint64_t constructed_ = 0;

  // Written by the consumer only (atomic so that the producer and stats may
  // read them).
  alignas(64) std::atomic<uint64_t> ack_{0};
  std::atomic<uint64_t> ack_bytes_{0};
  std::atomic<uint64_t> get_{0};
  std::atomic<uint64_t> get_bytes_{0};
  std::atomic<uint64_t> retained_kept_{0};  // heap bytes of acked buffers kept (ever)
  uint64_t ack_heap_ = 0;                    // end_heap of the last acked entry

  // A blocked producer sleeps on space_epoch_; Ack (when producer_waiting_)
  // and Stop bump it.
  alignas(64) std::atomic<uint32_t> space_epoch_{0};
  std::atomic<bool> producer_waiting_{false};
  std::atomic<uint64_t> blocked_size_{0};  // size of the entry a waiting Put holds
  std::atomic<uint64_t> blocked_ns_{0};    // total wait of Put for space (slow path only)
  std::atomic<bool> stopped_{false};

  // The armed callback fires when the producer's progress (put_ in ITEMSIZE,
  // put_bytes_ in MEMSIZE) reaches notify_target_; kNotArmed otherwise. The
  // mutex guards only arming and firing, never a plain put.
  alignas(64) std::atomic<uint64_t> notify_target_{kNotArmed};
  std::atomic<uint32_t> fence_word_{0};  // the handshake's fence when membarrier is not used
  std::mutex notify_mu_;
  DataCallback notify_callback_;  // guarded by notify_mu_
  size_t notify_batch_size_ = 0;  // guarded by notify_mu_; 0: any entry (kAny)
  WaitRule notify_rule_ = WaitRule::kBatch;  // guarded by notify_mu_
  // With a tracked low-latency waiter: the put_ (entries) that makes a quarter
  // of the ring waiting, which fires it too; kNotArmed otherwise.
  std::atomic<uint64_t> notify_ring_share_{kNotArmed};

  // Catch-up tracking (TrackCatchUp): the producer sets producer_active_ at
  // every put and clears it in ProducerCaughtUp.
  std::atomic<bool> tracks_catch_up_{false};
  alignas(64) std::atomic<bool> producer_active_{false};
};

constexpr uint64_t RingStore::SlotCost() { return sizeof(Slot) + kSlotHeapBytes; }

}  // namespace canal::store
