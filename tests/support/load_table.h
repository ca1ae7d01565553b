// The load tables of the streaming tests: (id, txn, seq, pad), written as
// transactions 1..N of a fixed number of rows each, so that a consumer can
// number every row it receives ((txn - 1) * rows_per_txn + seq) and tell a
// duplicate, a gap or a reordering (delivery_ledger.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace canal::testing {

class MariadbSandbox;

// SQL that (re)creates `table` ("schema.table", its schema too if missing) as
// an empty load table.
std::string LoadTableSql(const std::string& table);

// Writes SQL for transactions first..last of `rows_per_txn` rows each into
// `table` to the file at `path`.
void WriteLoadSql(const std::string& path, const std::string& table, int first, int last, int rows_per_txn);

// Writes transactions 1..txns as `chunks` files of about equal parts,
// <path_prefix>0.sql, <path_prefix>1.sql, ...; their paths in order.
std::vector<std::string> WriteLoadChunks(const std::string& path_prefix, const std::string& table, int txns,
                                         int rows_per_txn, int chunks);

// The number of the row with these txn and seq column texts, -1 when they
// are not decimal numbers of a load row (txn >= 1, 0 <= seq < rows_per_txn).
int64_t LoadRowNumber(std::string_view txn, std::string_view seq, int rows_per_txn);

// The primary's binlog end now (SHOW MASTER STATUS); false with the
// sandbox's error() when it does not answer.
bool PrimaryEnd(MariadbSandbox& sandbox, std::string* file, uint64_t* position);

// instance.properties lines that start a destination at file:position.
std::string StartPositionProperties(const std::string& file, uint64_t position);

// The same lines for the primary's end now; "" and a test failure when
// SHOW MASTER STATUS does not answer.
std::string StartAtPrimaryEnd(MariadbSandbox& sandbox);

}  // namespace canal::testing
