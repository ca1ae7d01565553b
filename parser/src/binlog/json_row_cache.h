// JsonRowCache: the last known JSON documents of recently changed rows, so that
// a MySQL PARTIAL_UPDATE_ROWS event logged with binlog_row_image=MINIMAL (whose
// before image holds only the key, not the document) can still be turned into
// the full after-image document.
//
// Rows are identified by the columns MySQL puts in a MINIMAL before image (the
// primary key, or every column when there is none). Until a partial update has
// shown which columns those are, rows are matched by scanning newest first; then
// an index on those columns takes over. Bounded per table; a row that fell out
// of the cache, or that changed before the stream began, cannot be rebuilt and
// the caller reports that as an error instead of guessing. Internal to parser/.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"

namespace canal::binlog {

class JsonRowCache {
 public:
  static constexpr size_t kMaxRowsPerTable = 10000;
  static constexpr size_t kMaxDiffChain = 256;

  // Records the present columns of `image` (a full or MINIMAL after image, with
  // partial JSON values already rebuilt as text) for its row.
  // `rebuilt[i]` is 1 where column i's document came from Rebuild().
  void Remember(const TableMap& t, const RowImage& image, const RowImage* key_image,
                const std::vector<uint8_t>* rebuilt);
  // Drops the row (after a DELETE).
  void Forget(const TableMap& t, const RowImage& key_image);
  // Rebuilds JSON column `col` of the row whose key columns are the present
  // columns of `key_image`, applying `diffs`, into *out (JSON text).
  Status Rebuild(const TableMap& t, const RowImage& key_image, size_t col, std::string_view diffs, std::string* out);

 private:
  struct Doc {
    bool known = false;
    std::string base;                // binary JSON of the last full value
    std::vector<std::string> diffs;  // diff lists applied since `base`
  };
  struct Row {
    std::vector<std::string> values;  // raw bytes per column ("" when not known)
    std::vector<uint8_t> known;       // 1 when values[i] is known (0/1/2 = unknown/value/NULL)
    std::vector<Doc> docs;            // per column; only JSON columns used
  };
  struct Table {
    std::list<Row> rows;  // newest first
    std::vector<size_t> key_columns;
    std::unordered_map<std::string, std::list<Row>::iterator> index;
  };

  Table& TableFor(const TableMap& t);
  static bool KeyOf(const Table& tab, const RowImage& image, std::string* key);
  static bool KeyOfRow(const Table& tab, const Row& row, std::string* key);
  std::list<Row>::iterator Find(Table& tab, const RowImage& key_image);
  void Reindex(Table& tab, const RowImage& key_image);

  std::unordered_map<std::string, Table> tables_;
};

}  // namespace canal::binlog
