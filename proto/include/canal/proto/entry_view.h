// Zero-copy views of serialised canal.entry messages (Entry, Header, RowChange,
// RowData, Column, Pair, TransactionBegin, TransactionEnd).
//
// Parsing an Entry with protobuf allocates a std::string per string field:
// about three per column, so a stream of 10-column rows costs some 30
// allocations per row. These views instead walk the protobuf wire format and
// hand out std::string_view into the caller's bytes; nothing is allocated
// and nothing is copied.
//
//   canal::proto::EntryView e;
//   CANAL_RETURN_IF_ERROR(canal::proto::EntryView::Parse(m.raw_entry(i), &e));
//   if (e.entry_type() != canal::entry::ROWDATA) continue;
//   canal::proto::RowChangeView rc;
//   CANAL_RETURN_IF_ERROR(canal::proto::RowChangeView::Parse(e.store_value(), &rc));
//   canal::proto::RowDataView row;
//   canal::Status s;
//   while (rc.NextRow(&row, &s)) {
//     canal::proto::ColumnView col;
//     while (row.NextAfter(&col, &s)) Use(col.name(), col.value());
//     CANAL_RETURN_IF_ERROR(s);
//   }
//   CANAL_RETURN_IF_ERROR(s);
//
// Lifetime: a view points into the bytes it was parsed from (and the views it
// hands out point there too). Keep those bytes alive and unchanged while any
// view of them is in use.
//
// Values: every accessor returns what the protobuf-generated class of
// proto/canal/entry.proto returns for the same bytes, default included: an
// absent field reads as 0 / false / "" (an absent optional enum reads as its
// placeholder 0). Canal's old proto2 defaults sit behind has_*() exactly as in
// the generated classes; EntryTypeOf, EventTypeOf, IsNull and IsDdl below
// return them, as the client SDK's overloads (canal/client/message.h) do for
// parsed entries. A field
// that appears more than once reads as its last occurrence, and a repeated
// Header is merged (later fields win, props concatenate), as protobuf does.
//
// Cursors: repeated fields are read with cursors, `bool Next...(View*, Status*)`:
// true hands out the next element; false means the end (status OK) or malformed
// bytes (status Corruption). Parse checks the message's own fields; an
// element's insides are checked when the cursor reaches it. So malformed bytes
// are reported in the parts you read, and a loop that stops early never looks
// at the rest. A copy of a view is an independent cursor; Rewind*() starts over.
//
// Malformed input is Corruption, never a crash or a read outside the bytes:
// every length is checked against the bytes left; varints longer than 10
// bytes, tags above 32 bits, field number 0 and wire types 3, 4 (groups, which
// Canal's schema has none of), 6 and 7 are refused. Unknown fields, and known
// field numbers with an unexpected wire type, are skipped as protobuf skips
// them. Unlike protobuf, string fields are not checked for valid UTF-8: they
// are the bytes the server sent.
//
// Thread-safety: a view is a small value; const methods may be called from
// several threads, cursor methods need one thread per view.
#pragma once

#include <cstdint>
#include <string_view>

#include "canal/common/status.h"
#include "canal/entry.pb.h"
#include "canal/proto/field_numbers.h"

namespace canal::proto {

// One key/value property (canal.entry.Pair).
class PairView {
 public:
  static Status Parse(std::string_view pair_bytes, PairView* out);

  std::string_view key() const { return key_; }
  std::string_view value() const { return value_; }

 private:
  std::string_view key_, value_;
};

// Walks the props of a Header (all of its occurrences, in order).
class PairCursor {
 public:
  PairCursor() = default;

  // True with the next Pair; false at the end (status OK) or on malformed bytes.
  bool Next(PairView* pair, Status* status);
  void Rewind();

 private:
  friend class HeaderView;
  // Walks `bytes` for field `outer_field` and, in each occurrence, for field `inner_field`.
  PairCursor(std::string_view bytes, uint32_t outer_field, uint32_t inner_field)
      : bytes_(bytes), outer_field_(outer_field), inner_field_(inner_field) {}

  std::string_view bytes_;
  uint32_t outer_field_ = 0;
  uint32_t inner_field_ = 0;
  size_t outer_pos_ = 0;
  std::string_view inner_;  // the occurrence being walked
  size_t inner_pos_ = 0;
  bool in_inner_ = false;
};

// canal.entry.Header: where an entry comes from.
class HeaderView {
 public:
  bool has_version() const { return has_version_; }
  int32_t version() const { return version_; }  // Canal's default when absent: 1
  std::string_view logfile_name() const { return logfile_name_; }
  int64_t logfile_offset() const { return logfile_offset_; }
  int64_t server_id() const { return server_id_; }
  std::string_view serveren_code() const { return serveren_code_; }
  int64_t execute_time() const { return execute_time_; }  // ms since the epoch
  bool has_source_type() const { return has_source_type_; }
  canal::entry::Type source_type() const { return source_type_; }  // Canal's default: MYSQL
  std::string_view schema_name() const { return schema_name_; }
  std::string_view table_name() const { return table_name_; }
  int64_t event_length() const { return event_length_; }
  bool has_event_type() const { return has_event_type_; }
  canal::entry::EventType event_type() const { return event_type_; }  // Canal's default: UPDATE
  std::string_view gtid() const { return gtid_; }
  // The props, in order.
  PairCursor props() const { return PairCursor(entry_bytes_, fields::entry::kHeader, fields::header::kProps); }

 private:
  friend class EntryView;
  Status MergeFrom(std::string_view header_bytes);

  std::string_view entry_bytes_;  // for props, which may span several Header occurrences
  std::string_view logfile_name_, serveren_code_, schema_name_, table_name_, gtid_;
  int64_t logfile_offset_ = 0, server_id_ = 0, execute_time_ = 0, event_length_ = 0;
  int32_t version_ = 0;
  canal::entry::Type source_type_ = canal::entry::TYPE_PLACEHOLDER;
  canal::entry::EventType event_type_ = canal::entry::EVENT_TYPE_PLACEHOLDER;
  bool has_version_ = false, has_source_type_ = false, has_event_type_ = false;
};

// canal.entry.Entry: one change, transaction boundary or heartbeat.
class EntryView {
 public:
  // Reads the Entry's fields and its Header; store_value() is left unparsed.
  // Malformed bytes are Corruption, and *out is then unspecified.
  static Status Parse(std::string_view entry_bytes, EntryView* out);

  bool has_header() const { return has_header_; }
  const HeaderView& header() const { return header_; }
  bool has_entry_type() const { return has_entry_type_; }
  canal::entry::EntryType entry_type() const { return entry_type_; }  // Canal's default: ROWDATA
  // By entry type: a RowChange (ROWDATA), TransactionBegin, TransactionEnd,
  // or something else (a heartbeat's Pair).
  std::string_view store_value() const { return store_value_; }

 private:
  HeaderView header_;
  std::string_view store_value_;
  canal::entry::EntryType entry_type_ = canal::entry::ENTRY_TYPE_PLACEHOLDER;
  bool has_header_ = false, has_entry_type_ = false;
};

// canal.entry.Column: one column of a row image. Its props are skipped.
class ColumnView {
 public:
  static Status Parse(std::string_view column_bytes, ColumnView* out);

  int32_t index() const { return index_; }
  int32_t sql_type() const { return sql_type_; }  // java.sql.Types
  std::string_view name() const { return name_; }
  bool is_key() const { return is_key_; }
  bool updated() const { return updated_; }
  bool has_is_null() const { return has_is_null_; }
  bool is_null() const { return is_null_; }
  std::string_view value() const { return value_; }  // "" for SQL NULL
  int32_t length() const { return length_; }
  std::string_view mysql_type() const { return mysql_type_; }  // "int(11)", "varchar(64)"

 private:
  std::string_view name_, value_, mysql_type_;
  int32_t index_ = 0, sql_type_ = 0, length_ = 0;
  bool is_key_ = false, updated_ = false, is_null_ = false, has_is_null_ = false;
};

// canal.entry.RowData: the before and after images of one row, read with two
// independent cursors. Its props are skipped.
class RowDataView {
 public:
  // Takes the bytes; they are checked as the cursors walk them.
  static Status Parse(std::string_view row_bytes, RowDataView* out);

  // The next column of beforeColumns / afterColumns.
  bool NextBefore(ColumnView* column, Status* status);
  bool NextAfter(ColumnView* column, Status* status);
  void RewindColumns() { before_pos_ = after_pos_ = 0; }

  std::string_view bytes() const { return bytes_; }

 private:
  std::string_view bytes_;
  size_t before_pos_ = 0, after_pos_ = 0;
};

// canal.entry.RowChange: the store value of a ROWDATA entry. Its props are skipped.
class RowChangeView {
 public:
  // Reads the RowChange's own fields and counts its rows; the rows are read by NextRow.
  static Status Parse(std::string_view store_value, RowChangeView* out);

  int64_t table_id() const { return table_id_; }
  bool has_event_type() const { return has_event_type_; }
  canal::entry::EventType event_type() const { return event_type_; }  // Canal's default: UPDATE
  bool has_is_ddl() const { return has_is_ddl_; }
  bool is_ddl() const { return is_ddl_; }
  std::string_view sql() const { return sql_; }
  std::string_view ddl_schema_name() const { return ddl_schema_name_; }
  int row_count() const { return row_count_; }

  // The next element of rowDatas.
  bool NextRow(RowDataView* row, Status* status);
  void RewindRows() { row_pos_ = 0; }

 private:
  std::string_view bytes_, sql_, ddl_schema_name_;
  int64_t table_id_ = 0;
  size_t row_pos_ = 0;
  int row_count_ = 0;
  canal::entry::EventType event_type_ = canal::entry::EVENT_TYPE_PLACEHOLDER;
  bool has_event_type_ = false, has_is_ddl_ = false, is_ddl_ = false;
};

// canal.entry.TransactionBegin: the store value of a TRANSACTIONBEGIN entry. Props skipped.
class TransactionBeginView {
 public:
  static Status Parse(std::string_view store_value, TransactionBeginView* out);

  int64_t execute_time() const { return execute_time_; }
  std::string_view transaction_id() const { return transaction_id_; }
  int64_t thread_id() const { return thread_id_; }

 private:
  std::string_view transaction_id_;
  int64_t execute_time_ = 0, thread_id_ = 0;
};

// canal.entry.TransactionEnd: the store value of a TRANSACTIONEND entry. Props skipped.
class TransactionEndView {
 public:
  static Status Parse(std::string_view store_value, TransactionEndView* out);

  int64_t execute_time() const { return execute_time_; }
  std::string_view transaction_id() const { return transaction_id_; }  // the XID

 private:
  std::string_view transaction_id_;
  int64_t execute_time_ = 0;
};

// Canal's proto2 defaults, as the SDK's overloads for parsed entries return them.
inline canal::entry::EntryType EntryTypeOf(const EntryView& e) {
  return e.has_entry_type() ? e.entry_type() : canal::entry::ROWDATA;
}
inline canal::entry::EventType EventTypeOf(const HeaderView& h) {
  return h.has_event_type() ? h.event_type() : canal::entry::UPDATE;
}
inline canal::entry::EventType EventTypeOf(const RowChangeView& rc) {
  return rc.has_event_type() ? rc.event_type() : canal::entry::UPDATE;
}
inline bool IsNull(const ColumnView& c) { return c.is_null(); }
inline bool IsDdl(const RowChangeView& rc) { return rc.is_ddl(); }

}  // namespace canal::proto
