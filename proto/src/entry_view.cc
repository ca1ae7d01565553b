#include "canal/proto/entry_view.h"

#include <string>

#include "canal/proto/field_numbers.h"
#include "canal/proto/in_order_fields.h"
#include "canal/proto/wire.h"

namespace canal::proto {
namespace {

using proto::wire::Field;
using proto::wire::kLengthDelimited;
using proto::wire::kVarint;
using proto::wire::Tag;
using proto::wire::WireReader;
namespace header_field = fields::header;
namespace column_field = fields::column;
namespace change_field = fields::row_change;

// Protobuf reads int32 and enum fields as a varint cut to 32 bits.
int32_t AsInt32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

// Advances `*pos` in `bytes` to the next length-delimited field `number` and
// returns its bytes in *out; false at the end or on malformed bytes (*status set).
bool NextOfField(std::string_view bytes, size_t* pos, uint32_t number, std::string_view message_name,
                 std::string_view* out, Status* status) {
  // Elements of a repeated field usually follow one another: take the next
  // one straight away when it is there.
  InOrderFields next(bytes, *pos);
  if (next.Bytes(Tag(number, kLengthDelimited), out)) {
    *pos = next.pos();
    return true;
  }
  WireReader r(bytes, *pos);
  Field f;
  while (r.Next(&f)) {
    if (f.number == number && f.wire_type == kLengthDelimited) {
      *pos = r.pos();
      *out = f.bytes;
      return true;
    }
  }
  *pos = bytes.size();
  *status = r.failed() ? r.Error(message_name) : Status::OK();
  return false;
}

}  // namespace

Status PairView::Parse(std::string_view bytes, PairView* out) {
  *out = PairView();
  WireReader r(bytes, 0);
  Field f;
  while (r.Next(&f)) {
    if (f.wire_type != kLengthDelimited) continue;
    if (f.number == fields::pair::kKey) out->key_ = f.bytes;
    if (f.number == fields::pair::kValue) out->value_ = f.bytes;
  }
  return r.failed() ? r.Error("canal.entry.Pair") : Status::OK();
}

bool PairCursor::Next(PairView* pair, Status* status) {
  for (;;) {
    if (in_inner_) {
      std::string_view pair_bytes;
      if (NextOfField(inner_, &inner_pos_, inner_field_, "canal.entry.Header", &pair_bytes, status)) {
        *status = PairView::Parse(pair_bytes, pair);
        if (!status->ok()) outer_pos_ = bytes_.size(), in_inner_ = false;
        return status->ok();
      }
      if (!status->ok()) return false;
      in_inner_ = false;
    }
    if (!NextOfField(bytes_, &outer_pos_, outer_field_, "canal.entry.Entry", &inner_, status)) return false;
    inner_pos_ = 0;
    in_inner_ = true;
  }
}

void PairCursor::Rewind() {
  outer_pos_ = 0;
  inner_ = {};
  inner_pos_ = 0;
  in_inner_ = false;
}

Status HeaderView::MergeFrom(std::string_view bytes) {
  InOrderFields in(bytes);
  uint64_t v;
  std::string_view skip;
  if (in.Varint(Tag(header_field::kVersion, kVarint), &v)) version_ = AsInt32(v), has_version_ = true;
  in.Bytes(Tag(header_field::kLogfileName, kLengthDelimited), &logfile_name_);
  if (in.Varint(Tag(header_field::kLogfileOffset, kVarint), &v)) logfile_offset_ = static_cast<int64_t>(v);
  if (in.Varint(Tag(header_field::kServerId, kVarint), &v)) server_id_ = static_cast<int64_t>(v);
  in.Bytes(Tag(header_field::kServerenCode, kLengthDelimited), &serveren_code_);
  if (in.Varint(Tag(header_field::kExecuteTime, kVarint), &v)) execute_time_ = static_cast<int64_t>(v);
  if (in.Varint(Tag(header_field::kSourceType, kVarint), &v)) source_type_ = static_cast<canal::entry::Type>(AsInt32(v)), has_source_type_ = true;
  in.Bytes(Tag(header_field::kSchemaName, kLengthDelimited), &schema_name_);
  in.Bytes(Tag(header_field::kTableName, kLengthDelimited), &table_name_);
  if (in.Varint(Tag(header_field::kEventLength, kVarint), &v)) event_length_ = static_cast<int64_t>(v);
  if (in.Varint(Tag(header_field::kEventType, kVarint), &v)) event_type_ = static_cast<canal::entry::EventType>(AsInt32(v)), has_event_type_ = true;
  while (in.Bytes(Tag(header_field::kProps, kLengthDelimited), &skip)) {
  }
  in.Bytes(Tag(header_field::kGtid, kLengthDelimited), &gtid_);
  if (in.done()) return Status::OK();
  WireReader r(bytes, in.pos());
  Field f;
  while (r.Next(&f)) {
    // A field whose wire type is not the schema's is an unknown field to protobuf.
    const bool varint = f.wire_type == kVarint;
    const bool ld = f.wire_type == kLengthDelimited;
    switch (f.number) {
      case header_field::kVersion:
        if (varint) version_ = AsInt32(f.varint), has_version_ = true;
        break;
      case header_field::kLogfileName:
        if (ld) logfile_name_ = f.bytes;
        break;
      case header_field::kLogfileOffset:
        if (varint) logfile_offset_ = static_cast<int64_t>(f.varint);
        break;
      case header_field::kServerId:
        if (varint) server_id_ = static_cast<int64_t>(f.varint);
        break;
      case header_field::kServerenCode:
        if (ld) serveren_code_ = f.bytes;
        break;
      case header_field::kExecuteTime:
        if (varint) execute_time_ = static_cast<int64_t>(f.varint);
        break;
      case header_field::kSourceType:
        if (varint) source_type_ = static_cast<canal::entry::Type>(AsInt32(f.varint)), has_source_type_ = true;
        break;
      case header_field::kSchemaName:
        if (ld) schema_name_ = f.bytes;
        break;
      case header_field::kTableName:
        if (ld) table_name_ = f.bytes;
        break;
      case header_field::kEventLength:
        if (varint) event_length_ = static_cast<int64_t>(f.varint);
        break;
      case header_field::kEventType:
        if (varint) event_type_ = static_cast<canal::entry::EventType>(AsInt32(f.varint)), has_event_type_ = true;
        break;
      case header_field::kProps:  // a Pair is checked when the props cursor reaches it
        break;
      case header_field::kGtid:
        if (ld) gtid_ = f.bytes;
        break;
      default:
        break;
    }
  }
  return r.failed() ? r.Error("canal.entry.Header") : Status::OK();
}

Status EntryView::Parse(std::string_view bytes, EntryView* out) {
  *out = EntryView();
  out->header_.entry_bytes_ = bytes;
  InOrderFields in(bytes);
  std::string_view header;
  uint64_t v;
  if (in.Bytes(Tag(fields::entry::kHeader, kLengthDelimited), &header)) {
    out->has_header_ = true;
    CANAL_RETURN_IF_ERROR(out->header_.MergeFrom(header));
  }
  if (in.Varint(Tag(fields::entry::kEntryType, kVarint), &v)) {
    out->entry_type_ = static_cast<canal::entry::EntryType>(AsInt32(v));
    out->has_entry_type_ = true;
  }
  in.Bytes(Tag(fields::entry::kStoreValue, kLengthDelimited), &out->store_value_);
  if (in.done()) return Status::OK();
  WireReader r(bytes, in.pos());
  Field f;
  while (r.Next(&f)) {
    if (f.number == fields::entry::kHeader && f.wire_type == kLengthDelimited) {
      // Protobuf merges a repeated singular message; so does MergeFrom.
      out->has_header_ = true;
      CANAL_RETURN_IF_ERROR(out->header_.MergeFrom(f.bytes));
    } else if (f.number == fields::entry::kEntryType && f.wire_type == kVarint) {
      out->entry_type_ = static_cast<canal::entry::EntryType>(AsInt32(f.varint));
      out->has_entry_type_ = true;
    } else if (f.number == fields::entry::kStoreValue && f.wire_type == kLengthDelimited) {
      out->store_value_ = f.bytes;
    }
  }
  return r.failed() ? r.Error("canal.entry.Entry") : Status::OK();
}

Status ColumnView::Parse(std::string_view bytes, ColumnView* out) {
  *out = ColumnView();
  InOrderFields in(bytes);
  uint64_t v;
  std::string_view skip;
  if (in.Varint(Tag(column_field::kIndex, kVarint), &v)) out->index_ = AsInt32(v);
  if (in.Varint(Tag(column_field::kSqlType, kVarint), &v)) out->sql_type_ = AsInt32(v);
  in.Bytes(Tag(column_field::kName, kLengthDelimited), &out->name_);
  if (in.Varint(Tag(column_field::kIsKey, kVarint), &v)) out->is_key_ = v != 0;
  if (in.Varint(Tag(column_field::kUpdated, kVarint), &v)) out->updated_ = v != 0;
  if (in.Varint(Tag(column_field::kIsNull, kVarint), &v)) out->is_null_ = v != 0, out->has_is_null_ = true;
  while (in.Bytes(Tag(column_field::kProps, kLengthDelimited), &skip)) {
  }
  in.Bytes(Tag(column_field::kValue, kLengthDelimited), &out->value_);
  if (in.Varint(Tag(column_field::kLength, kVarint), &v)) out->length_ = AsInt32(v);
  in.Bytes(Tag(column_field::kMysqlType, kLengthDelimited), &out->mysql_type_);
  if (in.done()) return Status::OK();
  WireReader r(bytes, in.pos());
  Field f;
  while (r.Next(&f)) {
    const bool varint = f.wire_type == kVarint;
    const bool ld = f.wire_type == kLengthDelimited;
    switch (f.number) {
      case column_field::kIndex:
        if (varint) out->index_ = AsInt32(f.varint);
        break;
      case column_field::kSqlType:
        if (varint) out->sql_type_ = AsInt32(f.varint);
        break;
      case column_field::kName:
        if (ld) out->name_ = f.bytes;
        break;
      case column_field::kIsKey:
        if (varint) out->is_key_ = f.varint != 0;
        break;
      case column_field::kUpdated:
        if (varint) out->updated_ = f.varint != 0;
        break;
      case column_field::kIsNull:
        if (varint) out->is_null_ = f.varint != 0, out->has_is_null_ = true;
        break;
      case column_field::kValue:
        if (ld) out->value_ = f.bytes;
        break;
      case column_field::kLength:
        if (varint) out->length_ = AsInt32(f.varint);
        break;
      case column_field::kMysqlType:
        if (ld) out->mysql_type_ = f.bytes;
        break;
      default:  // props, skipped
        break;
    }
  }
  return r.failed() ? r.Error("canal.entry.Column") : Status::OK();
}

Status RowDataView::Parse(std::string_view bytes, RowDataView* out) {
  *out = RowDataView();
  out->bytes_ = bytes;
  return Status::OK();
}

bool RowDataView::NextBefore(ColumnView* column, Status* status) {
  std::string_view col;
  if (!NextOfField(bytes_, &before_pos_, fields::row_data::kBeforeColumns, "canal.entry.RowData", &col, status)) return false;
  *status = ColumnView::Parse(col, column);
  if (!status->ok()) before_pos_ = bytes_.size();
  return status->ok();
}

bool RowDataView::NextAfter(ColumnView* column, Status* status) {
  std::string_view col;
  if (!NextOfField(bytes_, &after_pos_, fields::row_data::kAfterColumns, "canal.entry.RowData", &col, status)) return false;
  *status = ColumnView::Parse(col, column);
  if (!status->ok()) after_pos_ = bytes_.size();
  return status->ok();
}

Status RowChangeView::Parse(std::string_view bytes, RowChangeView* out) {
  *out = RowChangeView();
  out->bytes_ = bytes;
  InOrderFields in(bytes);
  uint64_t v;
  std::string_view skip;
  if (in.Varint(Tag(change_field::kTableId, kVarint), &v)) out->table_id_ = static_cast<int64_t>(v);
  if (in.Varint(Tag(change_field::kEventType, kVarint), &v)) {
    out->event_type_ = static_cast<canal::entry::EventType>(AsInt32(v));
    out->has_event_type_ = true;
  }
  if (in.Varint(Tag(change_field::kIsDdl, kVarint), &v)) out->is_ddl_ = v != 0, out->has_is_ddl_ = true;
  in.Bytes(Tag(change_field::kSql, kLengthDelimited), &out->sql_);
  while (in.Bytes(Tag(change_field::kRowDatas, kLengthDelimited), &skip)) ++out->row_count_;
  if (in.done()) return Status::OK();
  WireReader r(bytes, in.pos());
  Field f;
  while (r.Next(&f)) {
    const bool varint = f.wire_type == kVarint;
    const bool ld = f.wire_type == kLengthDelimited;
    switch (f.number) {
      case change_field::kTableId:
        if (varint) out->table_id_ = static_cast<int64_t>(f.varint);
        break;
      case change_field::kEventType:
        if (varint) {
          out->event_type_ = static_cast<canal::entry::EventType>(AsInt32(f.varint));
          out->has_event_type_ = true;
        }
        break;
      case change_field::kIsDdl:
        if (varint) out->is_ddl_ = f.varint != 0, out->has_is_ddl_ = true;
        break;
      case change_field::kSql:
        if (ld) out->sql_ = f.bytes;
        break;
      case change_field::kRowDatas:
        if (ld) ++out->row_count_;
        break;
      case change_field::kDdlSchemaName:
        if (ld) out->ddl_schema_name_ = f.bytes;
        break;
      default:  // props, skipped
        break;
    }
  }
  return r.failed() ? r.Error("canal.entry.RowChange") : Status::OK();
}

bool RowChangeView::NextRow(RowDataView* row, Status* status) {
  std::string_view row_bytes;
  if (!NextOfField(bytes_, &row_pos_, fields::row_change::kRowDatas, "canal.entry.RowChange", &row_bytes, status)) return false;
  *status = RowDataView::Parse(row_bytes, row);
  return status->ok();
}

Status TransactionBeginView::Parse(std::string_view bytes, TransactionBeginView* out) {
  *out = TransactionBeginView();
  WireReader r(bytes, 0);
  Field f;
  while (r.Next(&f)) {
    if (f.number == fields::transaction_begin::kExecuteTime && f.wire_type == kVarint) out->execute_time_ = static_cast<int64_t>(f.varint);
    if (f.number == fields::transaction_begin::kTransactionId && f.wire_type == kLengthDelimited) out->transaction_id_ = f.bytes;
    if (f.number == fields::transaction_begin::kThreadId && f.wire_type == kVarint) out->thread_id_ = static_cast<int64_t>(f.varint);
  }
  return r.failed() ? r.Error("canal.entry.TransactionBegin") : Status::OK();
}

Status TransactionEndView::Parse(std::string_view bytes, TransactionEndView* out) {
  *out = TransactionEndView();
  WireReader r(bytes, 0);
  Field f;
  while (r.Next(&f)) {
    if (f.number == fields::transaction_end::kExecuteTime && f.wire_type == kVarint) out->execute_time_ = static_cast<int64_t>(f.varint);
    if (f.number == fields::transaction_end::kTransactionId && f.wire_type == kLengthDelimited) out->transaction_id_ = f.bytes;
  }
  return r.failed() ? r.Error("canal.entry.TransactionEnd") : Status::OK();
}

}  // namespace canal::proto
