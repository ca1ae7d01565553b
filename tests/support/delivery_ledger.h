// DeliveryLedger: what a consumer of a load stream received, judged against
// the delivery rule of the server: every row once and in order, except that
// the rows of the last acked batch with no answer since ("unconfirmed") may
// come once more after a reconnect (the ack may not have become durable).
//
// Rows are numbered as the load table numbers them (load_table.h). A consumer
// loop tells the ledger what happened on the wire:
//
//   DeliveryLedger ledger(kTxns, kRowsPerTxn);
//   Status s = c.GetWithoutAck(...);
//   if (!s.ok() || failed_over) ledger.Reconnected(); else ledger.Answered();
//   ... ledger.Received(row numbers of the batch); ledger.Acked(); c.Ack(id);
//   ...
//   EXPECT_EQ(ledger.Faults(), "");
//
// Thread-safe: a consumer thread records while the test thread polls.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace canal::testing {

class DeliveryLedger {
 public:
  // Expects transactions 1..txns of rows_per_txn rows each.
  DeliveryLedger(int txns, int rows_per_txn);

  // The row number of a load row from its txn and seq column text, -1 when
  // they are not one (it then counts as foreign when received).
  int64_t RowNumber(std::string_view txn, std::string_view seq) const;

  // The rows of one batch (or any run of rows), in the order received.
  void Received(const std::vector<int64_t>& rows);
  // The batch last Received was acked: until Answered(), its rows are
  // unconfirmed.
  void Acked();
  // The server answered a call made after the ack: the ack is durable.
  void Answered();
  // A new session began (the connection was lost, the client failed over,
  // or the ack was refused) before an answer: the unconfirmed rows may come
  // once more, each once.
  void Reconnected();

  int64_t size() const { return size_; }
  int64_t distinct() const;
  bool complete() const { return distinct() == size(); }
  int64_t transactions_complete() const { return distinct() / rows_per_txn_; }
  bool seen(int64_t row) const;

  // Rows received again beyond what the rule allows.
  int64_t duplicates() const;
  // Rows never received.
  int64_t gaps() const;
  // Rows first received after a higher-numbered one.
  int64_t out_of_order() const;
  // Received rows that are no row of the load.
  int64_t foreign() const;
  // Unconfirmed rows that came once more, as the rule allows.
  int64_t repeated_unconfirmed() const;

  // "" when every row came once and in order (beyond the allowed repeats);
  // otherwise the counts that are not zero ("3 duplicates, 12 gaps").
  std::string Faults() const;
  // The figures line's tail: "R unanswered-ack rows came again; D duplicates,
  // G gaps, O out of order".
  std::string Tally() const;

 private:
  const int rows_per_txn_;
  const int64_t size_;
  mutable std::mutex mu_;
  std::vector<uint8_t> seen_, may_repeat_;
  std::vector<int64_t> last_batch_, unconfirmed_;
  int64_t distinct_ = 0, duplicates_ = 0, repeated_unconfirmed_ = 0, out_of_order_ = 0, foreign_ = 0;
  int64_t highest_ = -1;
};

}  // namespace canal::testing
