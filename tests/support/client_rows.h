// The row changes of a batch a client SDK Connector received. Header-only:
// only test targets that link canal_client include it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "canal/client/message.h"
#include "canal/common/status.h"
#include "support/delivery_ledger.h"

namespace canal::testing {

// The value of column `name` of a row's after image (before image for a
// delete), or "" when absent.
inline std::string ColumnText(const canal::entry::RowData& row, const std::string& name) {
  const auto& columns = row.aftercolumns().empty() ? row.beforecolumns() : row.aftercolumns();
  for (const canal::entry::Column& c : columns) {
    if (c.name() == name) return c.value();
  }
  return "";
}

// Calls fn(header, event type, row) for every inserted, updated or deleted
// row of the batch's row entries (DDL, transaction markers and statements
// have no rows); Corruption when a RowChange does not parse.
inline Status ForEachRow(
    client::Message& m,
    const std::function<void(const canal::entry::Header&, canal::entry::EventType, const canal::entry::RowData&)>&
        fn) {
  CANAL_RETURN_IF_ERROR(m.ParseEntries());
  for (const canal::entry::Entry& e : m.entries()) {
    if (client::EntryTypeOf(e) != canal::entry::ROWDATA) continue;
    canal::entry::RowChange change;
    if (!change.ParseFromString(e.storevalue())) {
      return Status::Corruption("RowChange of batch " + std::to_string(m.batch_id()) + " at " +
                                e.header().logfilename() + ":" + std::to_string(e.header().logfileoffset()));
    }
    if (client::IsDdl(change)) continue;
    const canal::entry::EventType type = client::EventTypeOf(change);
    if (type != canal::entry::INSERT && type != canal::entry::UPDATE && type != canal::entry::DELETE) continue;
    for (const canal::entry::RowData& row : change.rowdatas()) fn(e.header(), type, row);
  }
  return Status::OK();
}

// Appends the load-row numbers (load_table.h) of the batch's rows to *rows,
// in order; -1 for a row that is not a load row.
inline Status AppendLoadRows(client::Message& m, const DeliveryLedger& ledger, std::vector<int64_t>* rows) {
  return ForEachRow(m, [&](const canal::entry::Header&, canal::entry::EventType, const canal::entry::RowData& row) {
    rows->push_back(ledger.RowNumber(ColumnText(row, "txn"), ColumnText(row, "seq")));
  });
}

}  // namespace canal::testing
