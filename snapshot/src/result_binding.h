// The Connector/C binding of a chunk statement's result columns and of its key parameters, with
// the buffers kept between rows and chunks (internal to the chunk reader).
//
// Result columns are fetched as: integers into int64/uint64 (MYSQL_TYPE_LONGLONG, the column's
// UNSIGNED flag), FLOAT/DOUBLE into double, DATE/DATETIME/TIMESTAMP/TIME into MYSQL_TIME, and
// everything else as bytes into a buffer per column that grows to the longest value seen.
// Key parameters are bound back in the same types: a DECIMAL as MYSQL_TYPE_NEWDECIMAL (compared as
// a decimal, never as a double), a binary string as a BLOB (binary, no charset conversion), text
// as a string in the connection's charset, which the server converts to the column's.
#pragma once

#include <mysql.h>

#include <span>
#include <vector>

#include "canal/common/status.h"
#include "canal/snapshot/chunk_reader.h"

namespace canal::snapshot {

class ResultBinding {
 public:
  // From the statement's result metadata; Corruption when it has not `columns` columns.
  Status Setup(MYSQL_RES* meta, size_t columns);
  // Binds the buffers to `stmt` (again after a buffer grew).
  Status Bind(MYSQL_STMT* stmt);
  // After a fetch: reads values longer than their buffer again, fills fields() and row_bytes().
  Status CompleteRow(MYSQL_STMT* stmt);
  std::span<const FieldValue> fields() const { return fields_; }
  uint64_t row_bytes() const { return row_bytes_; }
  // After the row was used: a value buffer grown past kKeepValueBytes (one huge value) goes back
  // to its initial size, so a 64 MiB value is not held until the reader ends.
  Status ReleaseLargeBuffers(MYSQL_STMT* stmt);
  static constexpr size_t kKeepValueBytes = 1 << 20;
  // The values of `columns` (key order) into *key, reusing its strings.
  Status CopyKey(const std::vector<size_t>& columns, std::vector<KeyValue>* key) const;

 private:
  struct Column {
    enum_field_types type = MYSQL_TYPE_NULL;  // the server's
    FieldKind kind = FieldKind::kBytes;       // how it is fetched
    bool binary = false;
    int64_t i64 = 0;  // also uint64 and double, by kind
    double f64 = 0;
    MYSQL_TIME time{};
    std::vector<char> bytes;
    unsigned long length = 0;
    my_bool is_null = 0;
    my_bool error = 0;
  };
  std::vector<Column> columns_;
  std::vector<MYSQL_BIND> binds_;
  std::vector<FieldValue> fields_;
  uint64_t row_bytes_ = 0;
  bool holds_large_ = false;  // a value buffer grew past kKeepValueBytes
  MYSQL_STMT* bound_to_ = nullptr;
  bool rebind_ = false;
};

class ParamBinding {
 public:
  // Placeholder i gets key[placeholders[i]] (a key column is bound once per range it bounds);
  // the one after them, the statement's LIMIT ?, gets `limit`.
  Status Bind(MYSQL_STMT* stmt, const std::vector<KeyValue>& key, const std::vector<size_t>& placeholders,
              uint64_t limit);

 private:
  uint64_t limit_ = 0;
  std::vector<MYSQL_BIND> binds_;
  std::vector<MYSQL_TIME> times_;
  std::vector<unsigned long> lengths_;
};

}  // namespace canal::snapshot
