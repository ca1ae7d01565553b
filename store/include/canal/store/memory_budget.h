// MemoryBudget: one byte budget that every destination's ring on a server
// shares (canal.memory.budget), so that the server's memory is bounded by one
// number whatever the number of destinations and however slow their clients.
//
// Each attached ring costs its slot array (fixed, buffer.size slots) and
// gets an equal share of what remains: at most 3/4 of the share in entries
// not yet acked (a Put past that waits, so the parser blocks instead of
// growing) and 1/4 in idle buffers kept for reuse. Shares are recomputed as
// rings come and go; a ring above its new share just waits for its acks.
// A ring's own bound (MEMSIZE: buffer.size * memunit) still applies when it
// is smaller.
//
// Threads: Attach/Detach/accessors from any thread (one mutex, taken only
// when rings come and go, never on a put or an ack).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace canal::store {

class RingStore;

class MemoryBudget {
 public:
  // No share is smaller than this, however many rings there are: a ring must
  // hold a few entries to move at all. (So a budget far too small for its
  // rings is exceeded; the server warns at the start.)
  static constexpr uint64_t kMinShareBytes = 256 * 1024;

  explicit MemoryBudget(uint64_t total_bytes) : total_(total_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  uint64_t total() const { return total_; }
  size_t rings() const;
  // The share of each ring now (entries plus kept buffers).
  uint64_t share() const;
  // The slot arrays of the attached rings (their fixed cost).
  uint64_t fixed_bytes() const;
  // A quarter of the share: the most a destination's parser holds of a large
  // transaction's piece while its ring is full (TransactionBufferOptions::
  // shared_max_bytes). Follows the share as rings come and go.
  const std::atomic<uint64_t>& piece_bytes() const { return piece_bytes_; }

 private:
  friend class RingStore;  // RingStore::JoinBudget attaches, its destructor detaches
  void Attach(RingStore* ring, uint64_t fixed_bytes);
  void Detach(RingStore* ring);
  void RebalanceLocked();

  struct Member {
    RingStore* ring;
    uint64_t fixed;
  };
  const uint64_t total_;
  mutable std::mutex mu_;
  std::vector<Member> members_;
  uint64_t fixed_ = 0;
  uint64_t share_ = 0;
  std::atomic<uint64_t> piece_bytes_{~uint64_t{0}};
};

}  // namespace canal::store
