// RowLines: a TransactionSink that keeps one RenderRows line per row change,
// for tests that compare what the parser named (schema history tests).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "canal/parser/transaction.h"
#include "support/row_render.h"

namespace canal::testing {

struct RowLines : parser::TransactionSink {
  std::mutex mu;
  std::vector<std::string> rows;

  Status OnTransaction(const parser::Transaction& t) override {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& e : t.events) {
      if (e.kind == parser::TxEventKind::kRows) CANAL_RETURN_IF_ERROR(RenderRows(e.rows, &rows));
    }
    return Status::OK();
  }
  void OnIdle(const LogPosition&) override {}
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return rows.size();
  }
  // The lines of one table ("db.table"), in order.
  std::vector<std::string> Of(const std::string& table) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    for (const auto& r : rows) {
      if (r.rfind(table + " ", 0) == 0) out.push_back(r);
    }
    return out;
  }
};

}  // namespace canal::testing
