// Private to the sink's wire writer (entry_wire.cc, entry_wire_entries.cc):
// canal.entry's tags, the Header every entry starts with, and the part of a
// ROWDATA entry before its rows, each sized first and then written, as
// protobuf writes them (fields in number order, proto3 defaults left out).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/proto/field_numbers.h"
#include "canal/sink/entry_builder.h"
#include "canal/sink/entry_wire.h"

namespace canal::sink::wire {

// canal.entry's field numbers (canal/proto/field_numbers.h), as the one-byte
// tags they make.
namespace fields = proto::fields;
namespace values = proto::values;
namespace entry_field {
inline constexpr char kHeader = Tag(fields::entry::kHeader, kLengthDelimited);
inline constexpr char kEntryType = Tag(fields::entry::kEntryType, kVarint);
inline constexpr char kStoreValue = Tag(fields::entry::kStoreValue, kLengthDelimited);
}  // namespace entry_field
namespace header_field {
inline constexpr char kVersion = Tag(fields::header::kVersion, kVarint);
inline constexpr char kLogfileName = Tag(fields::header::kLogfileName, kLengthDelimited);
inline constexpr char kLogfileOffset = Tag(fields::header::kLogfileOffset, kVarint);
inline constexpr char kServerId = Tag(fields::header::kServerId, kVarint);
inline constexpr char kServerenCode = Tag(fields::header::kServerenCode, kLengthDelimited);
inline constexpr char kExecuteTime = Tag(fields::header::kExecuteTime, kVarint);
inline constexpr char kSourceType = Tag(fields::header::kSourceType, kVarint);
inline constexpr char kSchemaName = Tag(fields::header::kSchemaName, kLengthDelimited);
inline constexpr char kTableName = Tag(fields::header::kTableName, kLengthDelimited);
inline constexpr char kEventLength = Tag(fields::header::kEventLength, kVarint);
inline constexpr char kEventType = Tag(fields::header::kEventType, kVarint);
inline constexpr char kProps = Tag(fields::header::kProps, kLengthDelimited);
inline constexpr char kGtid = Tag(fields::header::kGtid, kLengthDelimited);
}  // namespace header_field
namespace transaction_field {  // TransactionBegin and TransactionEnd share these numbers
static_assert(fields::transaction_begin::kExecuteTime == fields::transaction_end::kExecuteTime &&
              fields::transaction_begin::kTransactionId == fields::transaction_end::kTransactionId);
inline constexpr char kExecuteTime = Tag(fields::transaction_begin::kExecuteTime, kVarint);
inline constexpr char kTransactionId = Tag(fields::transaction_begin::kTransactionId, kLengthDelimited);
inline constexpr char kThreadId = Tag(fields::transaction_begin::kThreadId, kVarint);
}  // namespace transaction_field
namespace pair_field {
inline constexpr char kKey = Tag(fields::pair::kKey, kLengthDelimited);
inline constexpr char kValue = Tag(fields::pair::kValue, kLengthDelimited);
}  // namespace pair_field
namespace change_field {
inline constexpr char kTableId = Tag(fields::row_change::kTableId, kVarint);
inline constexpr char kEventType = Tag(fields::row_change::kEventType, kVarint);
inline constexpr char kIsDdl = Tag(fields::row_change::kIsDdl, kVarint);
inline constexpr char kRowDatas = Tag(fields::row_change::kRowDatas, kLengthDelimited);
}  // namespace change_field

// canal.entry enum values the entries use.
inline constexpr uint64_t kEntryTypeRowData = values::entry_type::kRowData;
inline constexpr uint64_t kSourceTypeMysql = values::source_type::kMysql;
inline constexpr int32_t kEventInsert = values::event_type::kInsert, kEventUpdate = values::event_type::kUpdate,
                         kEventDelete = values::event_type::kDelete;

inline constexpr std::string_view kServerEncoding = "UTF-8";
inline constexpr std::string_view kRowsCountKey = "rowsCount";

// proto3 leaves a scalar out when it holds its default (0, "").
inline size_t OptionalVarintSize(uint64_t v) { return v == 0 ? 0 : 1 + VarintSize(v); }
inline size_t OptionalBytesSize(std::string_view s) { return s.empty() ? 0 : DelimitedSize(s.size()); }

inline char* WriteOptionalVarint(char tag, uint64_t v, char* p) {
  if (v == 0) return p;
  *p++ = tag;
  return WriteVarint(v, p);
}

inline char* WriteOptionalBytes(char tag, std::string_view s, char* p) {
  return s.empty() ? p : WriteDelimited(tag, s, p);
}

// A row count as the rowsCount prop's text, in `buf`.
inline std::string_view CountText(uint64_t n, char (&buf)[24]) {
  const char* end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  return std::string_view(buf, static_cast<size_t>(end - buf));
}

// An entry's Header: from the context, the table (empty for transaction
// boundaries), the event type, the rowsCount prop when `rows_count` is not
// empty, then `props`. Size first, then the bytes, as protobuf writes them.
struct HeaderFields {
  const EntryContext& ctx;
  std::string_view db, table;
  int32_t event_type = 0;  // kNoEventType: left out (transaction boundaries, as Canal's)
  std::string_view rows_count;
  std::span<const HeaderProp> props;

  uint64_t offset() const { return Int64Bits(static_cast<int64_t>(ctx.position.position)); }
  uint64_t server_id() const { return Int64Bits(ctx.position.server_id); }
  uint64_t time() const { return Int64Bits(ctx.position.timestamp_ms); }
  uint64_t event_length() const { return Int64Bits(static_cast<int64_t>(ctx.event_length)); }
  // A Pair's fields (a repeated message: written even when both are empty).
  static size_t PairSize(std::string_view key, std::string_view value) {
    return OptionalBytesSize(key) + OptionalBytesSize(value);
  }
  size_t PropsSize() const {
    size_t n = rows_count.empty() ? 0 : DelimitedSize(PairSize(kRowsCountKey, rows_count));
    for (const HeaderProp& p : props) n += DelimitedSize(PairSize(p.key, p.value));
    return n;
  }

  size_t Size() const {
    return 2 + OptionalBytesSize(ctx.position.journal_name) + OptionalVarintSize(offset()) +
           OptionalVarintSize(server_id()) + DelimitedSize(kServerEncoding.size()) + OptionalVarintSize(time()) + 2 +
           OptionalBytesSize(db) + OptionalBytesSize(table) + OptionalVarintSize(event_length()) +
           (event_type == kNoEventType ? 0 : 1 + VarintSize(Int32Bits(event_type))) + PropsSize() +
           OptionalBytesSize(ctx.position.gtid);
  }

  static char* WritePair(std::string_view key, std::string_view value, char* p) {
    *p++ = header_field::kProps;
    p = WriteVarint(PairSize(key, value), p);
    p = WriteOptionalBytes(pair_field::kKey, key, p);
    return WriteOptionalBytes(pair_field::kValue, value, p);
  }

  // Writes the Header message's fields (not its own tag and length).
  char* Write(char* p) const {
    *p++ = header_field::kVersion;
    *p++ = 1;
    p = WriteOptionalBytes(header_field::kLogfileName, ctx.position.journal_name, p);
    p = WriteOptionalVarint(header_field::kLogfileOffset, offset(), p);
    p = WriteOptionalVarint(header_field::kServerId, server_id(), p);
    p = WriteDelimited(header_field::kServerenCode, kServerEncoding, p);
    p = WriteOptionalVarint(header_field::kExecuteTime, time(), p);
    *p++ = header_field::kSourceType;
    p = WriteVarint(kSourceTypeMysql, p);
    p = WriteOptionalBytes(header_field::kSchemaName, db, p);
    p = WriteOptionalBytes(header_field::kTableName, table, p);
    p = WriteOptionalVarint(header_field::kEventLength, event_length(), p);
    if (event_type != kNoEventType) {
      *p++ = header_field::kEventType;
      p = WriteVarint(Int32Bits(event_type), p);
    }
    if (!rows_count.empty()) p = WritePair(kRowsCountKey, rows_count, p);
    for (const HeaderProp& prop : props) p = WritePair(prop.key, prop.value, p);
    return WriteOptionalBytes(header_field::kGtid, ctx.position.gtid, p);
  }
};

// Everything of a ROWDATA entry of rows before its first RowData: the
// header, the entry type, the RowChange's length and its fields before the
// rows (tableId, then eventType and isDdl: one-field oneofs, always written).
struct RowsPrefix {
  const HeaderFields& header;
  uint64_t table_id_bits = 0;
  int32_t type = 0;

  size_t ChangeFields() const { return OptionalVarintSize(table_id_bits) + 1 + VarintSize(Int32Bits(type)) + 2; }
  // Its size for rows taking `rows_size` bytes.
  size_t Size(size_t rows_size) const {
    return DelimitedSize(header.Size()) + 2 + 1 + VarintSize(ChangeFields() + rows_size) + ChangeFields();
  }

  // Writes it at `data`, which has Size(rows_size) bytes of room. The size
  // pass and the write pass disagreeing would be a bug in the writer, never
  // bad input (the tests compare every byte with protobuf's): Aborted, and the
  // entry is refused.
  Status Write(const binlog::TableMap& t, size_t rows_size, char* data) const {
    const size_t size = Size(rows_size);
    char* p = data;
    *p++ = entry_field::kHeader;
    p = WriteVarint(header.Size(), p);
    p = header.Write(p);
    *p++ = entry_field::kEntryType;
    p = WriteVarint(kEntryTypeRowData, p);
    *p++ = entry_field::kStoreValue;
    p = WriteVarint(ChangeFields() + rows_size, p);
    p = WriteOptionalVarint(change_field::kTableId, table_id_bits, p);
    *p++ = change_field::kEventType;
    p = WriteVarint(Int32Bits(type), p);
    *p++ = change_field::kIsDdl;
    *p++ = 0;
    if (static_cast<size_t>(p - data) == size) return Status::OK();
    const LogPosition& at = header.ctx.position;
    return Status::Aborted("internal error building the rows entry of `" + t.db + "`.`" + t.table + "` at " +
                           at.journal_name + ":" + std::to_string(at.position) + ": wrote " +
                           std::to_string(p - data) + " bytes of its prefix, sized " + std::to_string(size));
  }
};

}  // namespace canal::sink::wire
