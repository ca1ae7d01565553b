#include "support/delivery_ledger.h"

#include <algorithm>

#include "support/load_table.h"

namespace canal::testing {

DeliveryLedger::DeliveryLedger(int txns, int rows_per_txn)
    : rows_per_txn_(rows_per_txn),
      size_(int64_t{txns} * rows_per_txn),
      seen_(static_cast<size_t>(size_), 0),
      may_repeat_(static_cast<size_t>(size_), 0) {}

int64_t DeliveryLedger::RowNumber(std::string_view txn, std::string_view seq) const {
  return LoadRowNumber(txn, seq, rows_per_txn_);
}

void DeliveryLedger::Received(const std::vector<int64_t>& rows) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int64_t n : rows) {
    if (n < 0 || n >= size_) {
      ++foreign_;
      continue;
    }
    if (seen_[n]) {
      if (may_repeat_[n]) {
        may_repeat_[n] = 0;
        ++repeated_unconfirmed_;
      } else {
        ++duplicates_;
      }
      continue;
    }
    seen_[n] = 1;
    if (n < highest_) ++out_of_order_;
    highest_ = std::max(highest_, n);
    ++distinct_;
  }
  last_batch_ = rows;
}

void DeliveryLedger::Acked() {
  std::lock_guard<std::mutex> lock(mu_);
  unconfirmed_ = std::move(last_batch_);
  last_batch_.clear();
}

void DeliveryLedger::Answered() {
  std::lock_guard<std::mutex> lock(mu_);
  unconfirmed_.clear();
}

void DeliveryLedger::Reconnected() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int64_t n : unconfirmed_) {
    if (n >= 0 && n < size_) may_repeat_[n] = 1;
  }
  unconfirmed_.clear();
}

int64_t DeliveryLedger::distinct() const {
  std::lock_guard<std::mutex> lock(mu_);
  return distinct_;
}

bool DeliveryLedger::seen(int64_t row) const {
  std::lock_guard<std::mutex> lock(mu_);
  return row >= 0 && row < size_ && seen_[row] != 0;
}

int64_t DeliveryLedger::duplicates() const {
  std::lock_guard<std::mutex> lock(mu_);
  return duplicates_;
}

int64_t DeliveryLedger::gaps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return size_ - distinct_;
}

int64_t DeliveryLedger::out_of_order() const {
  std::lock_guard<std::mutex> lock(mu_);
  return out_of_order_;
}

int64_t DeliveryLedger::foreign() const {
  std::lock_guard<std::mutex> lock(mu_);
  return foreign_;
}

int64_t DeliveryLedger::repeated_unconfirmed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return repeated_unconfirmed_;
}

std::string DeliveryLedger::Faults() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  auto add = [&](int64_t count, const char* what) {
    if (count == 0) return;
    out += (out.empty() ? "" : ", ") + std::to_string(count) + " " + what;
  };
  add(duplicates_, "duplicates");
  add(size_ - distinct_, "gaps");
  add(out_of_order_, "out of order");
  add(foreign_, "foreign rows");
  return out;
}

std::string DeliveryLedger::Tally() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::to_string(repeated_unconfirmed_) + " unanswered-ack rows came again; " + std::to_string(duplicates_) +
         " duplicates, " + std::to_string(size_ - distinct_) + " gaps, " + std::to_string(out_of_order_) +
         " out of order";
}

}  // namespace canal::testing
