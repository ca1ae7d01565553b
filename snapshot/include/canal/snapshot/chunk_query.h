// The statements a snapshot reads a table with, one chunk at a time.
//
// A keyed table is paged by its chunk key (chunk_key.h), each chunk starting after the last key
// of the one before, spelled out as index ranges:
//   first chunk:  SELECT <columns> FROM `s`.`t` FORCE INDEX (`k`) [WHERE (<filter>)]
//                 ORDER BY `a`, `b` LIMIT ?
//   next chunks:  SELECT <columns> FROM `s`.`t` FORCE INDEX (`k`)
//                 WHERE (`a` > ? OR (`a` = ? AND `b` > ?)) [AND (<filter>)] ORDER BY `a`, `b` LIMIT ?
// with the last row's key values bound to the placeholders (a prepared statement, so a value is
// compared as its column's type, never as text spliced into SQL) and each chunk's row limit to
// the last one (the reader fits it to the rows' width, so the server never sends rows past the
// chunk's byte bound). Not the row comparison
// (`a`, `b`) > (?, ?): it means the same, but MariaDB's range optimiser does not make a range of
// it, so every chunk would read the index from its start. A table without a key is one
// statement, SELECT <columns> FROM `s`.`t` [WHERE (<filter>)], read streamed.
//
// <filter> is the operator's `--where`: checked by CheckWhereClause so that it stays one
// parenthesised condition (it cannot close the parenthesis, end the statement or comment out the
// ORDER BY and LIMIT), then placed as written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/snapshot/chunk_key.h"

namespace canal::snapshot {

// `name` as a MySQL identifier: in backquotes, a backquote in it doubled.
std::string QuoteIdentifier(std::string_view name);

// The longest `--where` accepted.
inline constexpr size_t kMaxWhereClauseBytes = 4096;

// OK when `where` is one condition that can sit inside "(...)": at most kMaxWhereClauseBytes,
// not blank, quotes closed, parentheses balanced (never closing one it did not open), and no
// ';', comment ('--', '#', '/*') or backslash outside a quoted string (a backslash is refused
// outright: whether it escapes depends on the server's sql_mode; double the quote instead).
// InvalidArgument naming what is wrong, where, and the fix.
Status CheckWhereClause(std::string_view where);

struct ChunkQuery {
  std::string first;  // the first chunk (or the whole table when the table has no key)
  std::string next;   // after a chunk: its last row's key values bound ("" when keyless)
  // Key placeholders in `next`: n(n+1)/2 for a key of n columns. Both statements end with one
  // more, LIMIT ?.
  size_t parameters = 0;
  // For each key placeholder of `next`, in order, the key column (position in the key) bound to it.
  std::vector<size_t> parameter_keys;
};

// The statements for `shape` paged by `key`, at most `chunk_rows` rows a chunk (the bound the
// reader's LIMIT stays within), `where` ("" for none) applied to every chunk. InvalidArgument for a bad `where` (CheckWhereClause), a chunk_rows of 0,
// or a key naming columns the shape lacks.
Status PlanChunkQuery(const TableShape& shape, const ChunkKey& key, std::string_view where, uint64_t chunk_rows,
                      ChunkQuery* query);

}  // namespace canal::snapshot
