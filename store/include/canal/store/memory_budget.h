// MemoryBudget: one byte budget that bounds the memory of every destination
// on a server (canal.memory.budget), so that the server's memory is bounded
// by one number whatever the number of destinations, the size of their
// transactions and however slow their clients.
//
// What it sets aside, from the total:
//  - a reserve for the server itself (kReserveBytes, at most a quarter of the
//    total): its program and libraries, its own threads, and heap freed but
//    not yet handed back to the system (the server's MemoryTrimmer);
//  - each destination's fixed cost: its ring's smallest slot array and pool
//    array (RingStore::FixedBytes) and what the destination costs besides its
//    ring (the overhead given to RingStore::JoinBudget: its parser's
//    connection buffer, threads and decoders);
// and what remains is split equally among the attached rings. Each ring's
// share pays for everything that grows with the stream:
//  - 1/2: entries not yet acked (a Put past that waits, so the parser blocks
//    instead of growing);
//  - 1/8: the slots in use (RingStore::SlotCost each; the ring uses fewer of
//    its buffer.size slots when the share is small);
//  - 1/8: acked buffers kept for reuse;
//  - 1/8: a large transaction's piece waiting in the parser (piece_bytes:
//    TransactionBufferOptions::shared_max_bytes);
//  - 1/8: one batch (a session copies a batch's small entries, or all of
//    them with auto-ack, into its reply).
// Shares are recomputed as rings come and go; a ring above its new share
// just waits for its acks (and a ring to use fewer slots for its ring to
// drain). A ring's own bounds (MEMSIZE: buffer.size * memunit) still apply
// when smaller.
//
// Threads: Attach/Detach/accessors from any thread (one mutex, taken only
// when rings come and go, never on a put or an ack).
#pragma once

#include <algorithm>
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
  // Set aside for the server itself, whatever the number of destinations
  // (never more than a quarter of the total).
  static constexpr uint64_t kReserveBytes = 48ull << 20;

  // The reserve: kReserveBytes, at most a quarter of the total.
  explicit MemoryBudget(uint64_t total_bytes)
      : MemoryBudget(total_bytes, std::min(kReserveBytes, total_bytes / 4)) {}
  // An explicit reserve (tests), at most the total.
  MemoryBudget(uint64_t total_bytes, uint64_t reserve_bytes)
      : total_(total_bytes), reserve_(std::min(reserve_bytes, total_bytes)) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  uint64_t total() const { return total_; }
  // The part set aside for the server itself.
  uint64_t reserve() const { return reserve_; }
  size_t rings() const;
  // The share of each ring now (see the file comment).
  uint64_t share() const;
  // The fixed costs of the attached rings and their destinations.
  uint64_t fixed_bytes() const;
  // An eighth of the share: the most a destination's parser holds of a large
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
  const uint64_t reserve_;
  mutable std::mutex mu_;
  std::vector<Member> members_;
  uint64_t fixed_ = 0;
  uint64_t share_ = 0;
  std::atomic<uint64_t> piece_bytes_{~uint64_t{0}};
};

}  // namespace canal::store
