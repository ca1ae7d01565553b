// The key a table's snapshot is paged by, chosen from the table's own columns and indexes.
//
// Choice, first that applies (indexes over whole columns before those over a prefix of one):
//   1. the PRIMARY KEY;
//   2. a UNIQUE index whose every column is NOT NULL (NULLs are not unique, so a nullable unique
//      index could return a row in two chunks or in none); among several, the one with the
//      fewest columns, then the one with the most integer columns (cheaper to compare and to
//      bind), then by name, so the choice is the same on every start;
//   3. none: the table is read in one consistent read, streamed (ChunkKey::kind = kNone).
// An index with an ENUM, SET or BIT column is never a chunk key (IsPageableKeyType): the server
// orders those one way and compares them with a bound value another.
// An index that covers a column only by a prefix (KEY (c(10))) still orders and compares by the
// whole column, and its uniqueness carries over to the whole value, so it stays eligible; but the
// server cannot read it in the column's order (each chunk sorts the rest of the table), so any
// whole-column candidate, unique or primary, comes first.
//
// The table's shape comes from information_schema (COLUMNS, STATISTICS); nothing here talks to
// a database. A plain value; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::snapshot {

struct TableColumn {
  std::string name;
  std::string data_type;  // information_schema.COLUMNS.DATA_TYPE, e.g. "int", "varchar", "datetime"
  bool nullable = true;
  // What the binlog's column metadata says of the column, for rendering its values
  // (snapshot_render.h); LoadTableShape fills them, a shape built by hand may leave them.
  std::string column_type{};  // COLUMN_TYPE: "int(10) unsigned", "enum('a','b')", "decimal(10,2)"
  std::string charset{};      // CHARACTER_SET_NAME; "" when NULL (numbers, dates, binary strings)
  uint32_t collation_id = 0;  // information_schema.COLLATIONS.ID of COLLATION_NAME; 0 when NULL
  bool primary_key = false;   // COLUMN_KEY = 'PRI'
  uint32_t numeric_precision = 0, numeric_scale = 0;  // DECIMAL's precision and scale
  uint32_t datetime_precision = 0;                    // TIME, DATETIME, TIMESTAMP: fractional digits
  uint64_t octet_length = 0;                          // CHARACTER_OCTET_LENGTH: a string's bytes at most
};

struct TableIndex {
  std::string name;                  // "PRIMARY" for the primary key
  bool unique = false;               // NON_UNIQUE = 0
  std::vector<std::string> columns;  // in SEQ_IN_INDEX order
  bool prefix = false;               // some column indexed by a prefix only (STATISTICS.SUB_PART)
};

struct TableShape {
  std::string schema, table;
  std::string engine;                // information_schema.TABLES.ENGINE ("" when not known)
  std::vector<TableColumn> columns;  // in ORDINAL_POSITION order
  std::vector<TableIndex> indexes;
};

struct ChunkKey {
  enum class Kind : uint8_t {
    kPrimary,        // the PRIMARY KEY
    kUniqueNotNull,  // a UNIQUE index over NOT NULL columns
    kNone,           // no usable key: one consistent read of the whole table
  };
  Kind kind = Kind::kNone;
  std::string index;            // the index's name ("" for kNone)
  std::vector<size_t> columns;  // positions in TableShape::columns, in index order
};

// False for ENUM, SET and BIT: no index over such a column pages a table exactly.
bool IsPageableKeyType(std::string_view data_type);

// True for the integer types (TINYINT..BIGINT, YEAR, BIT is not one).
bool IsIntegerType(std::string_view data_type);

// The key `shape` is paged by. InvalidArgument when the shape is inconsistent (an index naming
// a column the table does not have, a table without columns), naming the table and the index.
Status ChooseChunkKey(const TableShape& shape, ChunkKey* key);

// "PRIMARY (id)", "UNIQUE uk_email (email)", "none (one consistent read)": for logs and /status.
std::string DescribeChunkKey(const TableShape& shape, const ChunkKey& key);

}  // namespace canal::snapshot
