#include "canal/sink/entry_builder.h"

#include <cctype>

#include "canal/entry.pb.h"

namespace canal::sink {

namespace {

// Next word of `sql` after position *i (skipping blanks and /* comments */), upper-cased.
std::string NextWord(std::string_view sql, size_t* i) {
  auto skip = [&] {
    while (true) {
      while (*i < sql.size() && std::isspace(static_cast<unsigned char>(sql[*i]))) ++*i;
      if (*i + 1 < sql.size() && sql[*i] == '/' && sql[*i + 1] == '*') {
        size_t end = sql.find("*/", *i + 2);
        *i = end == std::string_view::npos ? sql.size() : end + 2;
        continue;
      }
      return;
    }
  };
  skip();
  std::string w;
  while (*i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[*i])) || sql[*i] == '_')) {
    w.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(sql[*i]))));
    ++*i;
  }
  return w;
}

}  // namespace

int ClassifyStatement(std::string_view sql, bool* is_ddl) {
  size_t i = 0;
  const std::string first = NextWord(sql, &i);
  std::string second = NextWord(sql, &i);
  *is_ddl = true;
  if (first == "CREATE") {
    while (second == "UNIQUE" || second == "FULLTEXT" || second == "SPATIAL" || second == "OR" ||
           second == "REPLACE" || second == "TEMPORARY") {
      second = NextWord(sql, &i);
    }
    return second == "INDEX" ? entry::CINDEX : entry::CREATE;
  }
  if (first == "DROP") return second == "INDEX" ? entry::DINDEX : entry::ERASE;
  if (first == "ALTER") return entry::ALTER;
  if (first == "TRUNCATE") return entry::TRUNCATE;
  if (first == "RENAME") return entry::RENAME;
  *is_ddl = false;
  return entry::QUERY;
}

struct EntryBuilder::Impl {
  EntryBuilderOptions options;
  entry::Entry entry;
  entry::RowChange change;
  binlog::RowsReader reader;
  binlog::RowChange row;
  std::string before_text, after_text;

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

  bool Keep(const binlog::TableMap& t, const binlog::ColumnInfo& c) const {
    if (options.fields && options.fields->ColumnsFor(t.db, t.table) && !options.fields->Lists(t.db, t.table, c.name)) {
      return false;
    }
    if (options.black_fields && options.black_fields->Lists(t.db, t.table, c.name)) return false;
    return true;
  }

  Status AddColumns(const binlog::TableMap& t, const binlog::RowImage& img, const binlog::RowImage* before,
                    bool after, bool insert, google::protobuf::RepeatedPtrField<entry::Column>* out) {
    for (size_t i = 0; i < img.values.size(); ++i) {
      const binlog::ColumnValue& v = img.values[i];
      const binlog::ColumnInfo& info = t.columns[i];
      if (!v.is_present() || !Keep(t, info)) continue;
      entry::Column* c = out->Add();
      c->set_index(static_cast<int32_t>(i));
      c->set_sqltype(binlog::CanalSqlType(info));
      c->set_name(info.name);
      c->set_iskey(info.is_key);
      c->set_isnull(v.is_null());
      after_text.clear();
      if (!v.is_null()) CANAL_RETURN_IF_ERROR(binlog::AppendCanalValue(v, info, options.values, &after_text));
      // Canal marks every column of an insert as updated, and an update's after
      // column when it differs from the before image (or had none there).
      bool updated = false;
      if (after) {
        if (insert || before == nullptr || !before->values[i].is_present()) {
          updated = true;
        } else {
          const binlog::ColumnValue& b = before->values[i];
          if (b.is_null() != v.is_null()) {
            updated = true;
          } else if (!v.is_null()) {
            before_text.clear();
            CANAL_RETURN_IF_ERROR(binlog::AppendCanalValue(b, info, options.values, &before_text));
            updated = before_text != after_text;
          }
        }
      }
      c->set_updated(updated);
      c->set_value(after_text);
      c->set_mysqltype(binlog::CanalMysqlType(info));
    }
    return Status::OK();
  }
};

EntryBuilder::EntryBuilder(EntryBuilderOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}
EntryBuilder::~EntryBuilder() = default;

Status EntryBuilder::RowsEntry(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out,
                               uint64_t* row_count) {
  Impl& m = *impl_;
  const binlog::TableMap& t = *rows.table;
  const int type = rows.info.kind == binlog::RowsKind::kWrite    ? entry::INSERT
                   : rows.info.kind == binlog::RowsKind::kUpdate ? entry::UPDATE
                                                                 : entry::DELETE;
  m.entry.Clear();
  m.change.Clear();
  m.FillHeader(ctx, t.db, t.table, type);
  m.change.set_tableid(static_cast<int64_t>(rows.table_id));
  m.change.set_eventtype(static_cast<entry::EventType>(type));
  m.change.set_isddl(false);
  m.reader.Reset(rows);
  uint64_t n = 0;
  while (true) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(m.reader.Next(&m.row, &done));
    if (done) break;
    ++n;
    entry::RowData* rd = m.change.add_rowdatas();
    Status s;
    if (m.row.has_before) s = m.AddColumns(t, m.row.before, nullptr, false, false, rd->mutable_beforecolumns());
    if (s.ok() && m.row.has_after) {
      s = m.AddColumns(t, m.row.after, m.row.has_before ? &m.row.before : nullptr, true, !m.row.has_before,
                       rd->mutable_aftercolumns());
    }
    if (!s.ok()) {
      return s.WithContext(ctx.position.journal_name + ": offset " + std::to_string(ctx.position.position) + ": `" +
                           t.db + "`.`" + t.table + "` row " + std::to_string(n));
    }
  }
  entry::Pair* p = m.entry.mutable_header()->add_props();
  p->set_key("rowsCount");
  p->set_value(std::to_string(n));
  m.entry.set_entrytype(entry::ROWDATA);
  m.change.SerializeToString(m.entry.mutable_storevalue());
  out->clear();
  m.entry.SerializeToString(out);
  *row_count = n;
  return Status::OK();
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
  Impl& m = *impl_;
  m.entry.Clear();
  m.FillHeader(ctx, "", "", entry::QUERY);
  entry::TransactionBegin b;
  b.set_executetime(ctx.position.timestamp_ms);
  b.set_threadid(static_cast<int64_t>(thread_id));
  m.entry.set_entrytype(entry::TRANSACTIONBEGIN);
  b.SerializeToString(m.entry.mutable_storevalue());
  out->clear();
  m.entry.SerializeToString(out);
  return Status::OK();
}

Status EntryBuilder::EndEntry(const EntryContext& ctx, std::string_view transaction_id, std::string* out) {
  Impl& m = *impl_;
  m.entry.Clear();
  m.FillHeader(ctx, "", "", entry::QUERY);
  entry::TransactionEnd e;
  e.set_executetime(ctx.position.timestamp_ms);
  e.set_transactionid(std::string(transaction_id));
  m.entry.set_entrytype(entry::TRANSACTIONEND);
  e.SerializeToString(m.entry.mutable_storevalue());
  out->clear();
  m.entry.SerializeToString(out);
  return Status::OK();
}

}  // namespace canal::sink
