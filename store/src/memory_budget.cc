#include "canal/store/memory_budget.h"

#include <algorithm>

#include "canal/store/ring_store.h"

namespace canal::store {

size_t MemoryBudget::rings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return members_.size();
}

uint64_t MemoryBudget::share() const {
  std::lock_guard<std::mutex> lock(mu_);
  return share_;
}

uint64_t MemoryBudget::fixed_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fixed_;
}

void MemoryBudget::Attach(RingStore* ring, uint64_t fixed_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  members_.push_back({ring, fixed_bytes});
  fixed_ += fixed_bytes;
  RebalanceLocked();
}

void MemoryBudget::Detach(RingStore* ring) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = members_.begin(); it != members_.end(); ++it) {
    if (it->ring != ring) continue;
    fixed_ -= it->fixed;
    members_.erase(it);
    break;
  }
  RebalanceLocked();
}

void MemoryBudget::RebalanceLocked() {
  if (members_.empty()) {
    share_ = 0;
    piece_bytes_.store(~uint64_t{0}, std::memory_order_relaxed);
    return;
  }
  const uint64_t set_aside = reserve() + fixed_;
  const uint64_t free = total_ > set_aside ? total_ - set_aside : 0;
  share_ = std::max(free / members_.size(), kMinShareBytes);
  const uint64_t eighth = share_ / 8;
  piece_bytes_.store(eighth, std::memory_order_relaxed);
  RingBudgetLimits limits;
  limits.held_bytes = share_ - 4 * eighth;  // the half, and what the eighths leave
  limits.retained_bytes = eighth;
  limits.slot_bytes = eighth;
  limits.batch_bytes = eighth;
  for (const Member& m : members_) m.ring->SetBudgetLimits(limits);
}

}  // namespace canal::store
