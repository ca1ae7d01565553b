// RowsEvent: a WRITE/UPDATE/DELETE rows event kept raw, and RowsReader, which
// hands out its rows one change at a time, each only once the whole event is
// known to decode: a bad event yields its error and no row.
//
// Decoding rows is the hot path: RowsReader allocates nothing per row once its
// images have grown to the table's width; values are views into the event.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/event_type.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::binlog {

class JsonRowCache;

struct RowsEvent {
  RowsEventInfo info;
  uint64_t table_id = 0;
  uint16_t flags = 0;              // STMT_END_F = 1, ...
  uint32_t column_count = 0;
  std::string_view columns_before;  // bitmap: columns present in the before image (or only image)
  std::string_view columns_after;   // bitmap: columns present in the after image (updates)
  std::string_view rows;            // row images, back to back
  const TableMap* table = nullptr;  // set by the decoder; never null in a decoded event
  // Set by the decoder for tables with JSON columns on servers that can log
  // partial JSON updates (MySQL 8.0.3+); lets MINIMAL partial updates be rebuilt.
  JsonRowCache* json_rows = nullptr;
  // For error messages.
  std::string_view source;
  uint64_t offset = 0;

  bool statement_end() const { return flags & 1; }
};

// One image of one row: one value per table column (absent where the bitmap says).
struct RowImage {
  std::vector<ColumnValue> values;
};

// The images a change does not have (before for an insert, after for a delete)
// keep whatever the reader last put there: check has_before / has_after.
struct RowChange {
  RowsKind kind = RowsKind::kWrite;
  bool has_before = false, has_after = false;
  RowImage before, after;
};

class RowsReader {
 public:
  RowsReader() = default;
  // Starts reading `event` (which must outlive the reader's use of it).
  void Reset(const RowsEvent& event);

  // The next change into *change (swapped with the reader's storage: it may
  // come back with other buffers). Sets *done and returns OK at the end.
  // The first call decodes the whole event; an image that runs past the event,
  // a length outside it, or a value that does not fit its column is an error
  // naming the source, event offset, row number, column and byte offset, and
  // every call for that event returns it: no row of a bad event leaves.
  Status Next(RowChange* change, bool* done);

  // Number of changes returned so far.
  uint64_t row_index() const { return returned_; }

  // Changes decoded ahead and held until the event is known to be good: rows
  // of an event past this many values (rows x columns) are checked, then
  // decoded again when asked for, so that memory stays bounded (except for
  // events that use the JSON row cache, which are held whole: see CheckEvent).
  static constexpr size_t kHeldValues = 8192;

 private:
  // One column's decode step, precomputed from its TableMap column once per
  // table layout (not per value): what to read, how wide, and what to store.
  struct Step {
    uint8_t op = 0;      // rows_reader.cc's Op
    uint8_t width = 0;   // fixed bytes, or length-prefix bytes
    uint8_t drop = 0;    // 64 - 8 * width (integer and big-endian loads)
    uint8_t fsp = 0;     // TIME2/DATETIME2/TIMESTAMP2
    ColumnValue::Kind kind = ColumnValue::Kind::kNull;
    ColumnType type = ColumnType::kNull;  // the column's real_type
    // kBounded (CHAR/VARCHAR): the declared maximum in bytes, which a length past is corrupt.
    // 16 bits hold every CHAR/VARCHAR maximum, and keep a Step 8 bytes.
    uint16_t max_len = 0;
  };

  void BuildPlan(const TableMap& table);
  Status CheckEvent();
  // Decodes the change at p_; `slot` numbers its storage for built values.
  Status DecodeRow(RowChange* change, size_t slot);
  Status ReadImage(std::string_view present_bitmap, size_t present_count, bool after, RowImage* image);
  Status ReadValue(const ColumnInfo& col, size_t col_index, ColumnValue* v);
  Status ReadMariaHiresTemporal(const ColumnInfo& col, size_t col_index, ColumnValue* v);
  Status Error(std::string_view what, size_t col_index) const;

  const RowsEvent* event_ = nullptr;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint64_t row_index_ = 0;  // of the change being decoded (for errors)
  uint64_t returned_ = 0;
  // Per event: the held changes (batch_[0, held_)), the next to hand out, and
  // where the rows past them start (resume_ == end_ when every row is held).
  std::vector<RowChange> batch_;
  size_t held_ = 0, next_held_ = 0;
  RowChange scratch_;  // the checking pass over the rows past the held ones
  const uint8_t* resume_ = nullptr;
  uint64_t resume_row_ = 0;
  bool checked_ = false;
  Status check_status_;
  // The plan of the table last read, kept while the table's layout id says it
  // is the same layout (see TableMap::layout_id).
  std::vector<Step> plan_;
  const TableMap* plan_table_ = nullptr;
  uint64_t plan_layout_ = 0;
  // Per event: columns present in each image (the bitmaps do not change
  // between rows), and whether the bitmaps cover the event's columns.
  size_t present_before_ = 0, present_after_ = 0;
  bool bitmaps_fit_ = false;
  // Owned storage for values that had to be built (partial JSON documents):
  // one per column of each held change and of the one past them, so views stay
  // stable while a change is in use (a deque: growing moves no string).
  std::deque<std::string> built_;
  size_t built_base_ = 0;  // the decoding change's first slot
  std::string_view partial_json_bits_;
  bool after_partial_ = false;
  RowImage* before_for_partial_ = nullptr;
  std::vector<uint8_t> rebuilt_;  // per column: document rebuilt through json_rows
};

}  // namespace canal::binlog
