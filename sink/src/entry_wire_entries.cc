// The entries written around bytes made elsewhere: TRANSACTIONBEGIN/END, and
// the ROWDATA entry of snapshot rows rendered earlier by AppendInsertRow.
#include "canal/sink/entry_wire.h"

#include "entry_wire_fields.h"

namespace canal::sink::wire {

void WriteTransactionEntry(const EntryContext& ctx, uint64_t entry_type, int64_t thread_id,
                           std::string_view transaction_id, std::span<const HeaderProp> props, std::string* out) {
  const HeaderFields header{ctx, {}, {}, kNoEventType, {}, props};
  const size_t header_size = header.Size();
  // TransactionBegin / TransactionEnd: executeTime, transactionId, threadId
  // (begin only).
  const uint64_t time = Int64Bits(ctx.position.timestamp_ms);
  const uint64_t thread = Int64Bits(thread_id);
  const size_t value_size = OptionalVarintSize(time) + OptionalBytesSize(transaction_id) + OptionalVarintSize(thread);
  // storeValue is left out when empty, as protobuf leaves out empty bytes.
  const size_t total =
      DelimitedSize(header_size) + 1 + VarintSize(entry_type) + (value_size != 0 ? DelimitedSize(value_size) : 0);
  out->resize(total);
  char* p = out->data();
  *p++ = entry_field::kHeader;
  p = WriteVarint(header_size, p);
  p = header.Write(p);
  *p++ = entry_field::kEntryType;
  p = WriteVarint(entry_type, p);
  if (value_size != 0) {
    *p++ = entry_field::kStoreValue;
    p = WriteVarint(value_size, p);
    p = WriteOptionalVarint(transaction_field::kExecuteTime, time, p);
    p = WriteOptionalBytes(transaction_field::kTransactionId, transaction_id, p);
    p = WriteOptionalVarint(transaction_field::kThreadId, thread, p);
  }
  // The size pass and the write pass must agree (the rows entry checks the same way).
  if (static_cast<size_t>(p - out->data()) != total) out->resize(static_cast<size_t>(p - out->data()));
}

Status RowsEntryWriter::WriteRowsEntry(const EntryContext& ctx, const binlog::TableMap& t, std::string_view rows,
                                       uint64_t row_count, std::span<const HeaderProp> extra_props,
                                       std::string* out) {
  char count_buf[24];
  const HeaderFields header{ctx, t.db, t.table, kEventInsert, CountText(row_count, count_buf), extra_props};
  const RowsPrefix prefix{header, Int64Bits(static_cast<int64_t>(t.table_id)), kEventInsert};
  const size_t prefix_size = prefix.Size(rows.size());
  // clear() first: resize then fills only the prefix's bytes, and append
  // copies the rows once, into capacity *out keeps between entries.
  out->clear();
  out->resize(prefix_size);
  if (Status s = prefix.Write(t, rows.size(), out->data()); !s.ok()) {
    out->clear();
    return s;
  }
  out->append(rows);
  return Status::OK();
}

Status RowsEntryWriter::WriteRowsEntryInPlace(const EntryContext& ctx, const binlog::TableMap& t, std::string* buffer,
                                              size_t rows_begin, size_t rows_end, uint64_t row_count,
                                              std::span<const HeaderProp> extra_props, size_t* entry_begin) {
  if (rows_begin > rows_end || rows_end > buffer->size()) {
    return Status::InvalidArgument("snapshot rows at [" + std::to_string(rows_begin) + ", " +
                                   std::to_string(rows_end) + ") of a buffer of " + std::to_string(buffer->size()) +
                                   " bytes");
  }
  char count_buf[24];
  const HeaderFields header{ctx, t.db, t.table, kEventInsert, CountText(row_count, count_buf), extra_props};
  const RowsPrefix prefix{header, Int64Bits(static_cast<int64_t>(t.table_id)), kEventInsert};
  const size_t rows_size = rows_end - rows_begin;
  const size_t prefix_size = prefix.Size(rows_size);
  if (prefix_size > rows_begin) {
    return Status::NotFound("an entry prefix of " + std::to_string(prefix_size) + " bytes before " +
                            std::to_string(rows_begin) + " bytes of room");
  }
  CANAL_RETURN_IF_ERROR(prefix.Write(t, rows_size, buffer->data() + rows_begin - prefix_size));
  buffer->resize(rows_end);
  *entry_begin = rows_begin - prefix_size;
  return Status::OK();
}

}  // namespace canal::sink::wire
