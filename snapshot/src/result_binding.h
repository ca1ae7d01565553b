// The Connector/C reading of a chunk statement's result columns and the binding of its key
// parameters (internal to the chunk reader).
//
// Result columns are read in place: Connector/C's result callback (STMT_ATTR_CB_RESULT) hands
// each column's bytes in the row packet to Decode, which reads the binary protocol's value as
// the server sent it: integers as int64/uint64 (by the column's UNSIGNED flag), FLOAT/DOUBLE as
// double, DATE/DATETIME/TIMESTAMP/TIME as their fields, everything else as a view of its bytes.
// Nothing is copied into bound buffers (that conversion and copy were ~15% of a snapshot's CPU),
// and a value, however large, is held once: in the connection's packet buffer.
// Key parameters are bound back in the same types: a DECIMAL as MYSQL_TYPE_NEWDECIMAL (compared as
// a decimal, never as a double), a binary string as a BLOB (binary, no charset conversion), text
// as a string in the connection's charset, which the server converts to the column's.
#pragma once

#include <mysql.h>

#include <span>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/snapshot/chunk_reader.h"

namespace canal::snapshot {

class ResultBinding {
 public:
  // From the statement's result metadata; Corruption when it has not `columns` columns.
  Status Setup(MYSQL_RES* meta, size_t columns);
  // Makes `stmt`'s fetches hand their columns to this binding (before its first fetch).
  Status Bind(MYSQL_STMT* stmt);
  // After a fetch: whether every column of the row was read (Corruption naming the column when
  // one ran past the packet or had a length its type cannot have). fields() and row_bytes() are
  // the row's until the next fetch.
  Status CompleteRow() const;
  std::span<const FieldValue> fields() const { return fields_; }
  uint64_t row_bytes() const { return row_bytes_; }
  // The values of `columns` (key order) into *key, reusing its strings.
  Status CopyKey(const std::vector<size_t>& columns, std::vector<KeyValue>* key) const;

 private:
  // One column of a row in the binary protocol (OnColumn's): *at points at its bytes (nullptr:
  // NULL), `end` is where the readable bytes end. Fills fields()[column] and moves *at past it.
  void Decode(unsigned int column, const unsigned char** at, const unsigned char* end);
  struct Column {
    enum_field_types type = MYSQL_TYPE_NULL;  // the server's
    FieldKind kind = FieldKind::kBytes;
    bool binary = false;
    uint8_t fixed_bytes = 0;  // BinaryFixedBytes
  };
  static void OnColumn(void* self, unsigned int column, unsigned char** row);
  void Fail(unsigned int column, const char* why);

  std::vector<Column> columns_;
  std::vector<FieldValue> fields_;
  uint64_t row_bytes_ = 0;
  MYSQL_STMT* stmt_ = nullptr;  // the one fetching, for the packet buffer's end
  std::string error_;           // the row's first decoding error ("" when none)
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
