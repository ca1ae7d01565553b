#include "canal/store/ring_store.h"

#include "canal/store/memory_budget.h"

#include "buffer_pool.h"

#include <algorithm>
#include <new>
#include <cstring>
#include <cerrno>
#include <condition_variable>
#include <limits>
#include <utility>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace canal::store {
namespace {

// Memory orders, by role. Entries travel by release/acquire on put_ (slots to
// the consumer) and ack_ (slots back to the producer). The wake-up handshakes
// are store-then-load on two variables from two threads (the producer
// publishes put_ then reads notify_target_; the consumer arms notify_target_
// then reads put_; the same shape for producer_waiting_ against ack_), which
// only a full fence on both sides orders.
constexpr auto kSeqCst = std::memory_order_seq_cst;
constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr auto kAcquire = std::memory_order_acquire;
constexpr auto kRelease = std::memory_order_release;

// Buffers the pool may hold: about a batch of entries, enough to carry the
// producer from one ack to the next (bytes are bounded by the retained budget).
constexpr size_t kPoolBuffers = 1024;

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
  return a * b;
}

// The largest power of two <= n (n >= 1).
uint64_t PowerOfTwoFloor(uint64_t n) { return uint64_t{1} << (63 - __builtin_clzll(n)); }

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b;
}

// A full fence per put would cost more than the rest of the put (it waits
// for the store buffer to drain). So the put side of the put_/notify_target_
// handshake uses only a compiler barrier, and the side that arms a wait, once
// per wait, issues membarrier(PRIVATE_EXPEDITED), which runs a full fence on
// every running thread of the process (the "asymmetric fence" of folly and
// the Linux kernel). Where membarrier is unavailable, and under
// ThreadSanitizer, which models neither membarrier nor fences, both sides
// use a sequentially consistent read-modify-write of one shared word instead.
#if defined(__SANITIZE_THREAD__)
#define CANAL_STORE_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CANAL_STORE_UNDER_TSAN 1
#endif
#endif

bool AsymmetricFencesAvailable() {
#if defined(CANAL_STORE_UNDER_TSAN) || !defined(__linux__)
  return false;
#else
  static const bool available = [] {
    const long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }();
  return available;
#endif
}

bool Membarrier() {
#if !defined(CANAL_STORE_UNDER_TSAN) && defined(__linux__)
  return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

// Heap bytes a string holds: none while its contents fit inline.
size_t HeapCapacity(const std::string& s) {
  static const size_t kInline = std::string().capacity();
  return s.capacity() > kInline ? s.capacity() : 0;
}

bool SameStreamPosition(const LogPosition& a, const LogPosition& b) {
  return a.position == b.position && a.included == b.included && a.journal_name == b.journal_name;
}

}  // namespace

Status RingStore::Create(const RingStoreOptions& options, std::unique_ptr<RingStore>* out) {
  CANAL_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<RingStore> ring(new RingStore(options));
  if (ring->slots_ == nullptr) {
    return Status::IOError("cannot map " + std::to_string(ring->FixedBytes()) + " bytes for a ring of " +
                           std::to_string(options.buffer_size) + " slots: " + std::strerror(errno));
  }
  *out = std::move(ring);
  return Status::OK();
}

void RingStore::PrepareProcess() { (void)AsymmetricFencesAvailable(); }

RingStore::Slot* RingStore::MapSlots(uint64_t count) {
  void* p = ::mmap(nullptr, count * sizeof(Slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<Slot*>(p);
}

RingStore::RingStore(const RingStoreOptions& options)
    : options_(options),
      capacity_(options.buffer_size),
      asymmetric_fences_(AsymmetricFencesAvailable()),
      retained_capacity_(std::max<uint64_t>(options.buffer_memunit, 256)),
      retained_budget_(options.ByteBound()),
      slots_(MapSlots(options.buffer_size)),
      slots_in_use_(options.buffer_size),
      pool_(std::make_unique<BufferPool>(std::min<size_t>(options.buffer_size, kPoolBuffers))),
      active_slots_(options.buffer_size),
      active_mask_(options.buffer_size - 1) {}

RingStore::~RingStore() {
  // First: the budget stops calling SetBudgetLimits on this ring.
  if (budget_) budget_->Detach(this);
  if (slots_ == nullptr) return;
  for (uint64_t i = 0; i < constructed_; ++i) slots_[i].~Slot();
  ::munmap(slots_, capacity_ * sizeof(Slot));
}

uint64_t RingStore::FixedBytes() const {
  return std::min(capacity_, kMinBudgetSlots) * SlotCost() +
         std::min<uint64_t>(capacity_, kPoolBuffers) * sizeof(std::string);
}

void RingStore::JoinBudget(std::shared_ptr<MemoryBudget> budget, uint64_t overhead_bytes) {
  if (budget == nullptr || budget_ != nullptr) return;
  budget_ = std::move(budget);
  budget_->Attach(this, FixedBytes() + overhead_bytes);
}

void RingStore::SetBudgetLimits(const RingBudgetLimits& limits) {
  budget_held_.store(limits.held_bytes, kRelaxed);
  budget_retained_.store(limits.retained_bytes, kRelaxed);
  budget_batch_.store(limits.batch_bytes, kRelaxed);
  uint64_t slots = 0;
  if (limits.slot_bytes != 0) {
    slots = std::min(capacity_, PowerOfTwoFloor(std::max<uint64_t>(limits.slot_bytes / SlotCost(), 1)));
    slots = std::max(slots, std::min(capacity_, kMinBudgetSlots));
  }
  budget_slots_.store(slots, kRelaxed);
  space_epoch_.fetch_add(1, kSeqCst);
  space_epoch_.notify_all();
}

uint64_t RingStore::BatchByteLimit(size_t batch_size) const {
  const uint64_t limit = SaturatingMul(batch_size, options_.buffer_memunit);
  const uint64_t shared = budget_batch_.load(kRelaxed);
  return shared != 0 && shared < limit ? shared : limit;
}

void RingStore::Reshape(uint64_t put, uint64_t slots) {
  // Every entry is acked (the caller saw ack == put with acquire), so the
  // consumer touches no slot until it sees a put past this one, and then it
  // reads the new geometry. The slots beyond the new number go: their kept
  // buffers leave the retained count as the producer's taking would.
  if (slots < constructed_) {
    for (uint64_t i = slots; i < constructed_; ++i) {
      TakeRetained(slots_[i]);
      slots_[i].~Slot();
    }
    ReleaseSlotPages(slots, constructed_);
    constructed_ = slots;
  }
  active_slots_ = slots;
  active_mask_ = slots - 1;
  active_base_ = put;
  base_.store(put, kRelaxed);
  slots_in_use_.store(slots, kRelaxed);  // published to the consumer by the next put's release
}

void RingStore::ReleaseSlotPages(uint64_t from, uint64_t to) {
#if defined(__linux__)
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  // The page holding slot from-1's end stays; the last page may go whole, as
  // no slot after `to` is constructed.
  const uint64_t begin = (from * sizeof(Slot) + page - 1) / page * page;
  const uint64_t end = (to * sizeof(Slot) + page - 1) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<char*>(slots_) + begin, end - begin, MADV_DONTNEED);
#else
  (void)from;
  (void)to;
#endif
}

void RingStore::LightFence() {
  if (asymmetric_fences_) {
    std::atomic_signal_fence(kSeqCst);
  } else {
    fence_word_.fetch_add(1, kSeqCst);
  }
}

void RingStore::HeavyFence() {
  // membarrier cannot fail once registered; the fallback keeps us correct
  // only if the producer also fences, so it is a last resort.
  if (asymmetric_fences_ && Membarrier()) return;
  fence_word_.fetch_add(1, kSeqCst);
}

// ---- producer ---------------------------------------------------------------

uint64_t RingStore::HeldBound() const {
  uint64_t bound = MemSize() ? options_.ByteBound() : kUnbounded;
  const uint64_t shared = budget_held_.load(kRelaxed);
  return shared != 0 && shared < bound ? shared : bound;
}

bool RingStore::Fits(uint64_t put, uint64_t put_bytes, uint64_t size) {
  if (const uint64_t want = budget_slots_.load(kRelaxed); want != 0 && want != active_slots_) [[unlikely]] {
    if (put == cached_ack_) {
      Reshape(put, want);
    } else if (want < active_slots_) {
      return false;  // fewer slots: wait for the ring to drain first
    }
  }
  if (put - cached_ack_ >= active_slots_) return false;
  const uint64_t bound = HeldBound();
  if (bound == kUnbounded) return true;
  const uint64_t held = put_bytes - cached_ack_bytes_;
  // An entry larger than the whole bound may enter an empty ring; otherwise
  // it could never enter at all.
  return held == 0 || held + size <= bound;
}

bool RingStore::RefreshAndFits(uint64_t put, uint64_t put_bytes, uint64_t size) {
  // ack_ first: seeing an ack implies seeing the ack_bytes_ stored before it.
  cached_ack_ = ack_.load(kSeqCst);
  cached_ack_bytes_ = ack_bytes_.load(kAcquire);
  return Fits(put, put_bytes, size);
}

Status RingStore::WaitForSpace(uint64_t put, uint64_t put_bytes, uint64_t size) {
  blocked_size_.store(size, kRelaxed);
  producer_waiting_.store(true, kSeqCst);
  const auto wait_start = std::chrono::steady_clock::now();
  Status result;
  for (;;) {
    // Read the epoch before re-checking, so an Ack landing after the check
    // has bumped it and the wait below returns at once.
    const uint32_t epoch = space_epoch_.load(kSeqCst);
    if (stopped_.load(kSeqCst)) {
      result = Status::Aborted("ring store stopped while waiting for space");
      break;
    }
    if (RefreshAndFits(put, put_bytes, size)) break;
    // A full ring is a full batch: a consumer waiting for more must take
    // what is there and ack, or neither side moves.
    if (notify_target_.load(kSeqCst) != kNotArmed) FireNotify(/*force=*/true, 0, false);
    space_epoch_.wait(epoch, kSeqCst);
  }
  producer_waiting_.store(false, kRelaxed);
  blocked_ns_.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                                  wait_start).count()),
      kRelaxed);
  return result;
}

RingStore::Slot& RingStore::SlotToFill(uint64_t put) {
  // A default ring (16384 slots and their buffers) outgrows L2, and a slot
  // comes back to the producer only after the consumer has read it, so fetch
  // ahead: the slot itself a few puts ahead, then the file name it points to.
  // Not its entry buffer: until that slot is acked the consumer may move its
  // buffer into the pool or free it, and reading the pointer would race.
  const uint64_t index = (put - active_base_) & active_mask_;
  const char* ahead = reinterpret_cast<const char*>(&slots_[(index + 16) & active_mask_]);
  for (size_t off = 0; off < sizeof(Slot); off += 64) __builtin_prefetch(ahead + off, 1);
  if (index >= constructed_) {
    // The first lap over these slots: raw mapped memory until now (filled in
    // order from slot 0, so constructed_ is index).
    constructed_ = index + 1;
    return *new (&slots_[index]) Slot();
  }
  if (const uint64_t near = (index + 8) & active_mask_; near < constructed_) {
    __builtin_prefetch(slots_[near].meta.position.journal_name.data(), 1);
  }
  return slots_[index];
}

void RingStore::CopyInto(Slot& slot, std::string_view bytes) const {
  // A slot keeps a big entry's buffer only until a small one arrives, so an
  // idle ring's spare capacity stays near max(memunit, 256) bytes per slot.
  if (slot.bytes.capacity() > retained_capacity_ && bytes.size() <= retained_capacity_) {
    std::string().swap(slot.bytes);
  }
  slot.bytes.assign(bytes.data(), bytes.size());
  slot.offset = 0;
}

void RingStore::TakeRetained(const Slot& slot) {
  // Only this thread writes retained_taken_: no read-modify-write.
  if (const size_t held = HeapCapacity(slot.bytes); held != 0) {
    retained_taken_.store(retained_taken_.load(kRelaxed) + held, kRelaxed);
  }
}

void RingStore::TakePooled(std::string* bytes) {
  if (!pool_->Pop(bytes)) return;
  // Pooled bytes count as kept until taken, as a kept slot's do.
  retained_taken_.store(retained_taken_.load(kRelaxed) + HeapCapacity(*bytes), kRelaxed);
}

bool RingStore::MayKeep(size_t capacity, size_t size) const {
  // What a slot may hold: the spare a small entry may keep, or at most twice
  // its own entry (what a growing std::string reaches). Held bytes bound the
  // ring, so this bounds the buffers too.
  return capacity <= retained_capacity_ || capacity / 2 <= size;
}

void RingStore::Publish(uint64_t put, uint64_t put_bytes, Slot& slot, const EntryMeta& meta) {
  const uint64_t size = slot.bytes.size() - slot.offset;
  slot.meta = meta;
  const uint64_t end_bytes = put_bytes + size;
  slot.end_bytes = end_bytes;
  put_heap_ += HeapCapacity(slot.bytes);
  slot.end_heap = put_heap_;
  // (Written only when it changes: the consumer reads this line.)
  if (tracks_catch_up_.load(kRelaxed) && !producer_active_.load(kRelaxed)) producer_active_.store(true, kRelaxed);
  put_bytes_.store(end_bytes, kRelease);
  put_.store(put + 1, kRelease);

  LightFence();
  const uint64_t target = notify_target_.load(kRelaxed);
  if (target != kNotArmed) {
    const uint64_t progress = MemSize() ? end_bytes : put + 1;
    const bool ddl = options_.ddl_isolation && meta.kind == EntryKind::kDdl;
    if (progress >= target || ddl) {
      FireNotify(/*force=*/false, progress, ddl);
    } else if (put + 1 >= notify_ring_share_.load(kRelaxed)) {
      FireNotify(/*force=*/true, progress, false);  // a quarter of the ring waits (tracked low latency)
    }
  }
}

Status RingStore::Put(std::string_view bytes, const EntryMeta& meta) {
  if (stopped_.load(kAcquire)) return Status::Aborted("ring store stopped");
  const uint64_t put = put_.load(kRelaxed);
  const uint64_t put_bytes = put_bytes_.load(kRelaxed);
  if (!Fits(put, put_bytes, bytes.size()) && !RefreshAndFits(put, put_bytes, bytes.size())) {
    CANAL_RETURN_IF_ERROR(WaitForSpace(put, put_bytes, bytes.size()));
  }
  Slot& slot = SlotToFill(put);
  TakeRetained(slot);
  CopyInto(slot, bytes);
  Publish(put, put_bytes, slot, meta);
  return Status::OK();
}

Status RingStore::WaitForRoom(uint64_t size) {
  if (stopped_.load(kAcquire)) return Status::Aborted("ring store stopped");
  const uint64_t put = put_.load(kRelaxed);
  const uint64_t put_bytes = put_bytes_.load(kRelaxed);
  if (Fits(put, put_bytes, size) || RefreshAndFits(put, put_bytes, size)) return Status::OK();
  return WaitForSpace(put, put_bytes, size);
}

Status RingStore::Put(std::string* bytes, const EntryMeta& meta) { return Put(bytes, 0, meta); }

Status RingStore::Put(std::string* bytes, size_t offset, const EntryMeta& meta) {
  if (stopped_.load(kAcquire)) return Status::Aborted("ring store stopped");
  if (offset > bytes->size() || offset > UINT32_MAX) {
    return Status::InvalidArgument("an entry put at offset " + std::to_string(offset) + " of a buffer of " +
                                   std::to_string(bytes->size()) + " bytes");
  }
  const uint64_t put = put_.load(kRelaxed);
  const uint64_t put_bytes = put_bytes_.load(kRelaxed);
  const uint64_t size = bytes->size() - offset;
  if (!Fits(put, put_bytes, size) && !RefreshAndFits(put, put_bytes, size)) {
    CANAL_RETURN_IF_ERROR(WaitForSpace(put, put_bytes, size));
  }
  Slot& slot = SlotToFill(put);
  TakeRetained(slot);
  if (MayKeep(bytes->capacity(), bytes->size())) {
    // The slot's old buffer (its entry acked) goes back to build the next
    // entry in: a steady stream neither allocates nor copies.
    slot.bytes.swap(*bytes);
    slot.offset = static_cast<uint32_t>(offset);
    // Unless it is the buffer of a far bigger entry than this one.
    if (!MayKeep(bytes->capacity(), size)) std::string().swap(*bytes);
  } else {
    // A buffer that once held a far bigger entry: copy, and drop that buffer
    // so the caller does not keep it either.
    CopyInto(slot, std::string_view(*bytes).substr(offset));
    std::string().swap(*bytes);
  }
  if (HeapCapacity(*bytes) == 0) TakePooled(bytes);
  Publish(put, put_bytes, slot, meta);
  return Status::OK();
}

bool RingStore::TryPut(std::string_view bytes, const EntryMeta& meta) {
  if (stopped_.load(kAcquire)) return false;
  const uint64_t put = put_.load(kRelaxed);
  const uint64_t put_bytes = put_bytes_.load(kRelaxed);
  if (!Fits(put, put_bytes, bytes.size()) && !RefreshAndFits(put, put_bytes, bytes.size())) {
    // Whoever waits for a full batch must hear that the ring is full.
    if (notify_target_.load(kSeqCst) != kNotArmed) FireNotify(/*force=*/true, 0, false);
    return false;
  }
  Slot& slot = SlotToFill(put);
  TakeRetained(slot);
  CopyInto(slot, bytes);
  Publish(put, put_bytes, slot, meta);
  return true;
}

void RingStore::FireNotify(bool force, uint64_t progress, bool ddl) {
  DataCallback callback;
  {
    std::lock_guard<std::mutex> lock(notify_mu_);
    if (!notify_callback_) return;
    // The consumer may have re-armed for a later target since we looked.
    if (!force && !ddl && progress < notify_target_.load(kRelaxed)) return;
    callback = std::move(notify_callback_);
    notify_callback_ = nullptr;
    notify_target_.store(kNotArmed, kSeqCst);
    notify_ring_share_.store(kNotArmed, kRelaxed);
  }
  callback();
}

// ---- consumer ---------------------------------------------------------------

bool RingStore::BatchReady(size_t batch_size) const {
  if (stopped_.load(kSeqCst) || batch_size == 0) return true;
  const uint64_t put = put_.load(kSeqCst);
  const uint64_t get = get_.load(kRelaxed);
  if (MemSize()) {
    if (put_bytes_.load(kAcquire) - get_bytes_.load(kRelaxed) >= BatchByteLimit(batch_size)) return true;
  } else if (put - get >= batch_size) {
    return true;
  } else if (const uint64_t shared = budget_batch_.load(kRelaxed);
             shared != 0 && put_bytes_.load(kAcquire) - get_bytes_.load(kRelaxed) >= shared) {
    return true;  // a batch's bytes under the budget
  }
  if (producer_waiting_.load(kSeqCst) && RingFullForBlockedProducer(put)) return true;
  if (options_.ddl_isolation && put != get) {
    // Fewer than a batch are waiting (by count, or by bytes and so by at most
    // capacity entries): a short scan.
    const Geometry g = ConsumerGeometry();
    for (uint64_t s = get; s < put; ++s) {
      if (SlotAt(g, s).meta.kind == EntryKind::kDdl) return true;
    }
  }
  return false;
}

bool RingStore::RingFullForBlockedProducer(uint64_t put) const {
  // Our own ack sequences are current; the producer may not have noticed an
  // ack yet, and then it is about to put, not stuck.
  const uint64_t ack = ack_.load(kRelaxed);
  const uint64_t slots = slots_in_use_.load(kRelaxed);
  if (put - ack >= slots) return true;
  // Waiting for the ring to drain before it uses fewer slots.
  if (const uint64_t want = budget_slots_.load(kRelaxed); want != 0 && want < slots && put != ack) return true;
  const uint64_t bound = HeldBound();
  if (bound == kUnbounded) return false;
  const uint64_t held = put_bytes_.load(kAcquire) - ack_bytes_.load(kRelaxed);
  return held != 0 && held + blocked_size_.load(kRelaxed) > bound;
}

bool RingStore::AnyReady() const {
  return stopped_.load(kSeqCst) || put_.load(kSeqCst) > get_.load(kRelaxed);
}

uint64_t RingStore::NotifyTarget(size_t batch_size) const {
  // Any entry: one more byte (every entry has some) or one more entry.
  if (batch_size == 0) return MemSize() ? get_bytes_.load(kRelaxed) + 1 : get_.load(kRelaxed) + 1;
  return MemSize() ? SaturatingAdd(get_bytes_.load(kRelaxed), BatchByteLimit(batch_size))
                   : SaturatingAdd(get_.load(kRelaxed), batch_size);
}

bool RingStore::NotifyWhen(WaitRule rule, size_t batch_size, DataCallback callback) {
  switch (rule) {
    case WaitRule::kBatch:
      if (batch_size == 0) return false;
      return Arm(batch_size, WaitRule::kBatch, std::move(callback));
    case WaitRule::kAny: return Arm(0, WaitRule::kAny, std::move(callback));
    case WaitRule::kLowLatency: break;
  }
  if (batch_size == 0) return Arm(0, WaitRule::kAny, std::move(callback));
  // Untracked, every put ends the wait (as kAny); tracked, a full batch
  // does, or ProducerCaughtUp with entries waiting.
  const bool tracked = tracks_catch_up_.load(kRelaxed);
  return Arm(tracked ? batch_size : 0, WaitRule::kLowLatency, std::move(callback));
}

bool RingStore::LowLatencyReady(size_t batch_size) const {
  if (BatchReady(batch_size)) return true;
  if (!AnyReady()) return false;
  if (!tracks_catch_up_.load(kRelaxed)) return true;
  return RingShareWaiting() || !producer_active_.load(kSeqCst);
}

bool RingStore::RingShareWaiting() const {
  const uint64_t slots = slots_in_use_.load(kRelaxed);
  if (put_.load(kSeqCst) - get_.load(kRelaxed) >= std::max<uint64_t>(slots / 4, 1)) return true;
  return MemSize() && put_bytes_.load(kAcquire) - get_bytes_.load(kRelaxed) >= HeldBound() / 4;
}

void RingStore::ProducerCaughtUp() {
  // Cleared first, the waiter read second; the arming side stores its waiter
  // first and reads the flag second (LowLatencyReady): one of us sees the
  // other. Rare (once per wait for input), so plain seq_cst is cheap enough.
  producer_active_.store(false, kSeqCst);
  if (notify_target_.load(kSeqCst) == kNotArmed || !AnyReady()) return;
  DataCallback callback;
  {
    std::lock_guard<std::mutex> lock(notify_mu_);
    if (!notify_callback_ || notify_rule_ != WaitRule::kLowLatency) return;
    callback = std::move(notify_callback_);
    notify_callback_ = nullptr;
    notify_target_.store(kNotArmed, kSeqCst);
    notify_ring_share_.store(kNotArmed, kRelaxed);
  }
  callback();
}

bool RingStore::Ready(WaitRule rule, size_t batch_size) const {
  switch (rule) {
    case WaitRule::kAny: return AnyReady();
    case WaitRule::kLowLatency: return batch_size == 0 ? AnyReady() : LowLatencyReady(batch_size);
    case WaitRule::kBatch: break;
  }
  return BatchReady(batch_size);
}

uint64_t RingStore::RingShareTarget(WaitRule rule, size_t batch_size, uint64_t* target) const {
  if (rule != WaitRule::kLowLatency || batch_size == 0) return kNotArmed;
  if (MemSize()) *target = std::min(*target, SaturatingAdd(get_bytes_.load(kRelaxed), HeldBound() / 4));
  return SaturatingAdd(get_.load(kRelaxed), std::max<uint64_t>(slots_in_use_.load(kRelaxed) / 4, 1));
}

bool RingStore::Arm(size_t batch_size, WaitRule rule, DataCallback callback) {
  if (!callback || stopped_.load(kSeqCst)) return false;
  uint64_t target = NotifyTarget(batch_size);
  const uint64_t ring_share = RingShareTarget(rule, batch_size, &target);
  {
    std::lock_guard<std::mutex> lock(notify_mu_);
    notify_callback_ = std::move(callback);
    notify_batch_size_ = batch_size;
    notify_rule_ = rule;
    notify_ring_share_.store(ring_share, kSeqCst);
    notify_target_.store(target, kSeqCst);
  }
  // Armed first, checked second: a put (or ProducerCaughtUp) that we do not
  // see here sees the target and fires.
  HeavyFence();
  if (!Ready(rule, batch_size)) return true;
  return !CancelNotify();
}

bool RingStore::CancelNotify() {
  std::lock_guard<std::mutex> lock(notify_mu_);
  if (!notify_callback_) return false;
  notify_callback_ = nullptr;
  notify_target_.store(kNotArmed, kSeqCst);
  notify_ring_share_.store(kNotArmed, kRelaxed);
  return true;
}

Status RingStore::CollectBatch(size_t batch_size, Batch* out) {
  out->entries.clear();
  out->bytes = 0;
  out->safe_position.reset();
  const uint64_t put = put_.load(kAcquire);
  const uint64_t first = get_.load(kRelaxed);
  const bool mem = MemSize();
  // ITEMSIZE counts entries; the budget's batch part bounds the bytes too.
  const uint64_t shared = budget_batch_.load(kRelaxed);
  const uint64_t byte_limit = mem ? BatchByteLimit(batch_size) : shared != 0 ? shared : kUnbounded;
  const uint64_t count_limit = mem ? kUnbounded : batch_size;
  const Geometry g = ConsumerGeometry();
  const EntryMeta* safe = nullptr;
  uint64_t s = first;
  uint64_t bytes = 0;
  for (; s < put; ++s) {
    const Slot& slot = SlotAt(g, s);
    const bool ddl = options_.ddl_isolation && slot.meta.kind == EntryKind::kDdl;
    const std::string_view entry = slot.entry();
    const uint64_t size = entry.size();
    if (s != first) {
      if (ddl) break;
      if (bytes + size > byte_limit || s - first >= count_limit) break;
    }
    out->entries.push_back(EntryView{s, entry, &slot.meta});
    bytes += size;
    if (slot.meta.safe_resume_point) safe = &slot.meta;
    if (ddl) {
      ++s;
      break;
    }
  }
  out->first_sequence = first;
  out->end_sequence = s;
  out->bytes = bytes;
  if (s == first) return Status::OK();
  out->first_position = out->entries.front().meta->position;
  out->last_position = out->entries.back().meta->position;
  if (safe != nullptr) out->safe_position = safe->position;
  get_bytes_.store(SlotAt(g, s - 1).end_bytes, kRelaxed);
  get_.store(s, kRelaxed);
  return Status::OK();
}

Status RingStore::Get(size_t batch_size, std::chrono::nanoseconds timeout, Batch* out) {
  if (batch_size == 0) return Status::InvalidArgument("ring store get: batch size must be at least 1");
  if (timeout >= std::chrono::nanoseconds::zero() && !BatchReady(batch_size)) {
    // A waiter on this stack; the callback touches it under its mutex, and we
    // never leave while the callback may still run.
    struct Waiter {
      std::mutex mu;
      std::condition_variable cv;
      bool fired = false;
    } waiter;
    auto wake = [&waiter] {
      std::lock_guard<std::mutex> lock(waiter.mu);
      waiter.fired = true;
      waiter.cv.notify_one();  // under the lock: the waiter cannot vanish before it
    };
    if (NotifyWhen(WaitRule::kBatch, batch_size, wake)) {
      std::unique_lock<std::mutex> lock(waiter.mu);
      if (timeout == std::chrono::nanoseconds::zero()) {
        waiter.cv.wait(lock, [&] { return waiter.fired; });
      } else {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        waiter.cv.wait_until(lock, deadline, [&] { return waiter.fired; });
        if (!waiter.fired) {
          lock.unlock();
          const bool withdrawn = CancelNotify();
          lock.lock();
          if (!withdrawn) waiter.cv.wait(lock, [&] { return waiter.fired; });
        }
      }
    }
  }
  if (stopped_.load(kAcquire)) return Status::Aborted("ring store stopped");
  return CollectBatch(batch_size, out);
}

Status RingStore::Ack(uint64_t end_sequence) {
  const uint64_t ack = ack_.load(kRelaxed);
  const uint64_t get = get_.load(kRelaxed);
  if (end_sequence > get) {
    return Status::InvalidArgument("ring store ack up to sequence " + std::to_string(end_sequence) +
                                   " is beyond what was handed out (get " + std::to_string(get) + ")");
  }
  if (end_sequence <= ack) {
    return Status::InvalidArgument("ring store ack up to sequence " + std::to_string(end_sequence) +
                                   " frees nothing: already acked up to " + std::to_string(ack));
  }
  RetainOrRelease(ack, end_sequence);
  ack_bytes_.store(SlotAt(ConsumerGeometry(), end_sequence - 1).end_bytes, kRelease);
  // Releases the slots to the producer: our reads (and frees) of them happen
  // before.
  ack_.store(end_sequence, kSeqCst);
  if (producer_waiting_.load(kSeqCst)) {
    space_epoch_.fetch_add(1, kSeqCst);
    space_epoch_.notify_one();
  }
  return Status::OK();
}

void RingStore::RetainOrRelease(uint64_t from, uint64_t to) {
  // The producer's count may lag (it has taken more back than we see):
  // then we count too much as retained and free early, never late.
  const uint64_t taken = retained_taken_.load(kRelaxed);
  uint64_t kept = retained_kept_.load(kRelaxed);
  const Geometry g = ConsumerGeometry();
  const uint64_t end_heap = SlotAt(g, to - 1).end_heap;
  uint64_t retained_budget = retained_budget_;
  if (const uint64_t shared = budget_retained_.load(kRelaxed); shared != 0 && shared < retained_budget) {
    retained_budget = shared;
  }
  const uint64_t acked_heap = end_heap - ack_heap_;
  ack_heap_ = end_heap;
  if (kept - taken + acked_heap <= retained_budget) {
    // All of them fit (the usual case for small entries): the walk only
    // moves buffers into the pool while it has room (none once it is full).
    for (uint64_t s = from; s < to && !pool_->Full(); ++s) {
      std::string& bytes = SlotAt(g, s).bytes;
      if (HeapCapacity(bytes) != 0) pool_->Push(&bytes);
    }
    retained_kept_.store(kept + acked_heap, kRelaxed);
    return;
  }
  bool pool_full = pool_->Full();
  for (uint64_t s = from; s < to; ++s) {
    std::string& bytes = SlotAt(g, s).bytes;
    const size_t held = HeapCapacity(bytes);
    if (held == 0) continue;
    if (kept - taken + held <= retained_budget) {
      kept += held;
      // The pool first: the producer takes from it before it reaches this slot again.
      if (!pool_full && !pool_->Push(&bytes)) pool_full = true;
    } else {
      std::string().swap(bytes);
    }
  }
  retained_kept_.store(kept, kRelaxed);
}

Status RingStore::Ack(const Batch& batch) {
  if (batch.empty()) return Status::InvalidArgument("ring store ack of an empty batch");
  return Ack(batch.end_sequence);
}

Status RingStore::Ack(const LogPosition& last_position) {
  const uint64_t ack = ack_.load(kRelaxed);
  const uint64_t get = get_.load(kRelaxed);
  const Geometry g = ConsumerGeometry();
  for (uint64_t s = ack; s < get; ++s) {
    if (SameStreamPosition(SlotAt(g, s).meta.position, last_position)) return Ack(s + 1);
  }
  return Status::InvalidArgument("ring store ack: no handed-out, un-acked entry at " + last_position.ToString() +
                                 " (sequences " + std::to_string(ack) + " to " + std::to_string(get) + ")");
}

void RingStore::Rollback() {
  get_bytes_.store(ack_bytes_.load(kRelaxed), kRelaxed);
  get_.store(ack_.load(kRelaxed), kRelaxed);
  // An armed callback's target counted from the old get; the rewound
  // entries may already make a full batch.
  size_t batch_size = 0;
  WaitRule rule = WaitRule::kBatch;
  {
    std::lock_guard<std::mutex> lock(notify_mu_);
    if (!notify_callback_) return;
    batch_size = notify_batch_size_;
    rule = notify_rule_;
    uint64_t target = NotifyTarget(batch_size);
    notify_ring_share_.store(RingShareTarget(rule, batch_size, &target), kSeqCst);
    notify_target_.store(target, kSeqCst);
  }
  HeavyFence();
  if (batch_size == 0 ? AnyReady() : Ready(rule, batch_size)) FireNotify(/*force=*/true, 0, false);
}

// ---- any thread -------------------------------------------------------------

void RingStore::Stop() {
  if (stopped_.exchange(true, kSeqCst)) return;
  space_epoch_.fetch_add(1, kSeqCst);
  space_epoch_.notify_all();
  FireNotify(/*force=*/true, 0, false);
}

RingStoreStats RingStore::stats() const {
  RingStoreStats s;
  // Acks first, so that held bytes and counts never come out negative.
  s.ack_sequence = ack_.load(kSeqCst);
  const uint64_t ack_bytes = ack_bytes_.load(kAcquire);
  s.get_sequence = get_.load(kRelaxed);
  s.put_sequence = put_.load(kSeqCst);
  s.put_bytes = put_bytes_.load(kAcquire);
  s.held_bytes = s.put_bytes - ack_bytes;
  s.ack_bytes = ack_bytes;
  s.put_blocked_ns = blocked_ns_.load(kRelaxed);
  // Taken first: a count taken before its keep would come out negative.
  const uint64_t taken = retained_taken_.load(kAcquire);
  const uint64_t kept = retained_kept_.load(kAcquire);
  s.retained_bytes = kept >= taken ? kept - taken : 0;
  s.retained_budget_bytes = retained_budget_;
  s.held_bound = HeldBound() == kUnbounded ? 0 : HeldBound();
  s.slots = slots_in_use_.load(kRelaxed);
  if (const uint64_t shared = budget_retained_.load(kRelaxed); shared != 0 && shared < s.retained_budget_bytes) {
    s.retained_budget_bytes = shared;
  }
  return s;
}

}  // namespace canal::store
