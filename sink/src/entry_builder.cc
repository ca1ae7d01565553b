#include "canal/sink/entry_builder.h"

#include "canal/entry.pb.h"
#include "canal/sink/entry_wire.h"

namespace canal::sink {

int CanalEventType(const canal::schema::StatementClass& c, bool* is_ddl) {
  *is_ddl = c.kind == canal::schema::StatementKind::kDdl;
  if (!*is_ddl) return entry::QUERY;
  using canal::schema::DdlObject;
  // Canal types DDL on tables and indexes only; a database's, a view's, a
  // routine's... is a QUERY that is still DDL (its DruidDdlParser).
  if (c.object != DdlObject::kTable && c.object != DdlObject::kIndex) return entry::QUERY;
  switch (c.verb) {
    case canal::schema::DdlVerb::kCreate: return c.object == DdlObject::kIndex ? entry::CINDEX : entry::CREATE;
    case canal::schema::DdlVerb::kDrop: return c.object == DdlObject::kIndex ? entry::DINDEX : entry::ERASE;
    case canal::schema::DdlVerb::kAlter: return entry::ALTER;
    case canal::schema::DdlVerb::kTruncate: return entry::TRUNCATE;
    case canal::schema::DdlVerb::kRename: return entry::RENAME;
    case canal::schema::DdlVerb::kNone: break;
  }
  *is_ddl = false;
  return entry::QUERY;
}

int ClassifyStatement(std::string_view sql, bool* is_ddl) {
  return CanalEventType(canal::schema::ClassifyStatement(sql), is_ddl);
}

struct EntryBuilder::Impl {
  explicit Impl(const EntryBuilderOptions& o) : options(o), rows(o) {}

  EntryBuilderOptions options;
  entry::Entry entry;
  entry::RowChange change;
  // Rows entries, the hot path, skip the protobuf objects.
  wire::RowsEntryWriter rows;

  void FillHeader(const EntryContext& ctx, std::string_view schema, std::string_view table, int event_type) {
    entry::Header* h = entry.mutable_header();
    h->set_version(1);
    h->set_logfilename(ctx.position.journal_name);
    h->set_logfileoffset(static_cast<int64_t>(ctx.position.position));
    h->set_serverid(ctx.position.server_id);
    h->set_serverencode("UTF-8");
    h->set_executetime(ctx.position.timestamp_ms);
    h->set_sourcetype(entry::MYSQL);
    h->set_schemaname(std::string(schema));
    h->set_tablename(std::string(table));
    h->set_eventlength(static_cast<int64_t>(ctx.event_length));
    h->set_eventtype(static_cast<entry::EventType>(event_type));
    h->set_gtid(ctx.position.gtid);
  }
};

EntryBuilder::EntryBuilder(EntryBuilderOptions options) : impl_(std::make_unique<Impl>(options)) {}
EntryBuilder::~EntryBuilder() = default;

Status EntryBuilder::RowsEntry(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out,
                               uint64_t* row_count) {
  return impl_->rows.Write(ctx, rows, out, row_count);
}

Status EntryBuilder::QueryEntry(const EntryContext& ctx, std::string_view schema, std::string_view sql,
                                std::string* out, std::string_view table) {
  Impl& m = *impl_;
  bool is_ddl = false;
  const int type = ClassifyStatement(sql, &is_ddl);
  m.entry.Clear();
  m.change.Clear();
  m.FillHeader(ctx, schema, table, type);
  m.change.set_eventtype(static_cast<entry::EventType>(type));
  m.change.set_isddl(is_ddl);
  m.change.set_sql(std::string(sql));
  m.change.set_ddlschemaname(std::string(schema));
  m.entry.set_entrytype(entry::ROWDATA);
  m.change.SerializeToString(m.entry.mutable_storevalue());
  out->clear();
  m.entry.SerializeToString(out);
  return Status::OK();
}

Status EntryBuilder::BeginEntry(const EntryContext& ctx, uint64_t thread_id, std::string* out) {
  return BeginEntry(ctx, thread_id, {}, out);
}

Status EntryBuilder::EndEntry(const EntryContext& ctx, std::string_view transaction_id, std::string* out) {
  return EndEntry(ctx, transaction_id, {}, out);
}

Status EntryBuilder::BeginEntry(const EntryContext& ctx, uint64_t thread_id, std::span<const HeaderProp> props,
                                std::string* out) {
  // Written on the wire like rows entries: two per transaction, so on
  // single-row transactions protobuf objects here cost ~12% of the server.
  wire::WriteTransactionEntry(ctx, entry::TRANSACTIONBEGIN, static_cast<int64_t>(thread_id), {}, props, out);
  return Status::OK();
}

Status EntryBuilder::EndEntry(const EntryContext& ctx, std::string_view transaction_id,
                              std::span<const HeaderProp> props, std::string* out) {
  wire::WriteTransactionEntry(ctx, entry::TRANSACTIONEND, 0, transaction_id, props, out);
  return Status::OK();
}

Status EntryBuilder::SnapshotRow(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values,
                                 std::string* rows, uint64_t table_version) {
  return impl_->rows.AppendInsertRow(t, values, rows, table_version);
}

Status EntryBuilder::SnapshotRowAt(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values,
                                   std::string* buffer, size_t* at, uint64_t table_version) {
  return impl_->rows.AppendInsertRowAt(t, values, buffer, at, table_version);
}

Status EntryBuilder::SnapshotRowsEntryInPlace(const EntryContext& ctx, const binlog::TableMap& t, std::string* buffer,
                                              size_t rows_begin, size_t rows_end, uint64_t row_count,
                                              std::span<const HeaderProp> props, size_t* entry_begin) {
  return impl_->rows.WriteRowsEntryInPlace(ctx, t, buffer, rows_begin, rows_end, row_count, props, entry_begin);
}

Status EntryBuilder::SnapshotRowsEntry(const EntryContext& ctx, const binlog::TableMap& t, std::string_view rows,
                                       uint64_t row_count, std::span<const HeaderProp> props, std::string* out) {
  return impl_->rows.WriteRowsEntry(ctx, t, rows, row_count, props, out);
}

}  // namespace canal::sink
