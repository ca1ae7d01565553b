#include "support/entry_wire_reference.h"

#include "canal/entry.pb.h"
#include "canal/render/canal_sql_type.h"
#include "canal/sink/entry_wire.h"

namespace canal::sink::wire {

namespace {

void FillHeader(const EntryContext& ctx, std::string_view schema, std::string_view table, int event_type,
                entry::Header* h) {
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
  if (event_type != kNoEventType) h->set_eventtype(static_cast<entry::EventType>(event_type));
  h->set_gtid(ctx.position.gtid);
}

void AddProps(std::span<const HeaderProp> props, entry::Header* h) {
  for (const HeaderProp& prop : props) {
    entry::Pair* p = h->add_props();
    p->set_key(std::string(prop.key));
    p->set_value(std::string(prop.value));
  }
}

bool Keep(const EntryBuilderOptions& options, const binlog::TableMap& t, const binlog::ColumnInfo& c) {
  if (options.fields && options.fields->ColumnsFor(t.db, t.table) && !options.fields->Lists(t.db, t.table, c.name)) {
    return false;
  }
  if (options.black_fields && options.black_fields->Lists(t.db, t.table, c.name)) return false;
  return true;
}

Status AddColumns(const EntryBuilderOptions& options, const binlog::TableMap& t, const binlog::RowImage& img,
                  const binlog::RowImage* before, bool after, bool insert,
                  google::protobuf::RepeatedPtrField<entry::Column>* out, std::string& before_text,
                  std::string& after_text) {
  for (size_t i = 0; i < img.values.size(); ++i) {
    const binlog::ColumnValue& v = img.values[i];
    const binlog::ColumnInfo& info = t.columns[i];
    if (!v.is_present() || !Keep(options, t, info)) continue;
    entry::Column* c = out->Add();
    c->set_index(static_cast<int32_t>(i));
    c->set_sqltype(render::CanalSqlTypeOf(info, v));
    c->set_name(info.name);
    c->set_iskey(info.is_key);
    c->set_isnull(v.is_null());
    after_text.clear();
    if (!v.is_null()) CANAL_RETURN_IF_ERROR(render::AppendCanalValue(v, info, options.values, &after_text));
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
          CANAL_RETURN_IF_ERROR(render::AppendCanalValue(b, info, options.values, &before_text));
          updated = before_text != after_text;
        }
      }
    }
    c->set_updated(updated);
    c->set_value(after_text);
    c->set_mysqltype(render::CanalMysqlType(info, options.values, t.integer_display_widths));
  }
  return Status::OK();
}

}  // namespace

struct ReferenceRowsEntryBuilder::State {
  EntryBuilderOptions options;
  entry::Entry e;
  entry::RowChange change;
  binlog::RowsReader reader;
  binlog::RowChange row;
  std::string before_text, after_text;
};

ReferenceRowsEntryBuilder::ReferenceRowsEntryBuilder(const EntryBuilderOptions& options)
    : state_(std::make_unique<State>()) {
  state_->options = options;
}
ReferenceRowsEntryBuilder::~ReferenceRowsEntryBuilder() = default;

Status ReferenceRowsEntryBuilder::Write(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out,
                                        uint64_t* row_count, std::span<const HeaderProp> extra_props) {
  State& m = *state_;
  const EntryBuilderOptions& options = m.options;
  entry::Entry& e = m.e;
  entry::RowChange& change = m.change;
  binlog::RowsReader& reader = m.reader;
  binlog::RowChange& row = m.row;
  e.Clear();
  change.Clear();
  const binlog::TableMap& t = *rows.table;
  const int type = rows.info.kind == binlog::RowsKind::kWrite    ? entry::INSERT
                   : rows.info.kind == binlog::RowsKind::kUpdate ? entry::UPDATE
                                                                 : entry::DELETE;
  FillHeader(ctx, t.db, t.table, type, e.mutable_header());
  change.set_tableid(static_cast<int64_t>(rows.table_id));
  change.set_eventtype(static_cast<entry::EventType>(type));
  change.set_isddl(false);
  reader.Reset(rows);
  uint64_t n = 0;
  while (true) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader.Next(&row, &done));
    if (done) break;
    ++n;
    entry::RowData* rd = change.add_rowdatas();
    Status s;
    if (row.has_before) {
      s = AddColumns(options, t, row.before, nullptr, false, false, rd->mutable_beforecolumns(), m.before_text,
                     m.after_text);
    }
    if (s.ok() && row.has_after) {
      s = AddColumns(options, t, row.after, row.has_before ? &row.before : nullptr, true, !row.has_before,
                     rd->mutable_aftercolumns(), m.before_text, m.after_text);
    }
    if (!s.ok()) {
      return s.WithContext(ctx.position.journal_name + ": offset " + std::to_string(ctx.position.position) + ": `" +
                           t.db + "`.`" + t.table + "` row " + std::to_string(n));
    }
  }
  entry::Pair* p = e.mutable_header()->add_props();
  p->set_key("rowsCount");
  p->set_value(std::to_string(n));
  AddProps(extra_props, e.mutable_header());
  e.set_entrytype(entry::ROWDATA);
  change.SerializeToString(e.mutable_storevalue());
  out->clear();
  e.SerializeToString(out);
  *row_count = n;
  return Status::OK();
}

std::string ReferenceTransactionEntry(const EntryContext& ctx, bool begin, uint64_t thread_id,
                                      const std::string& transaction_id, std::span<const HeaderProp> props) {
  entry::Entry e;
  FillHeader(ctx, "", "", kNoEventType, e.mutable_header());
  AddProps(props, e.mutable_header());
  if (begin) {
    entry::TransactionBegin b;
    b.set_executetime(ctx.position.timestamp_ms);
    b.set_threadid(static_cast<int64_t>(thread_id));
    e.set_entrytype(entry::TRANSACTIONBEGIN);
    b.SerializeToString(e.mutable_storevalue());
  } else {
    entry::TransactionEnd t;
    t.set_executetime(ctx.position.timestamp_ms);
    t.set_transactionid(transaction_id);
    e.set_entrytype(entry::TRANSACTIONEND);
    t.SerializeToString(e.mutable_storevalue());
  }
  std::string out;
  e.SerializeToString(&out);
  return out;
}

}  // namespace canal::sink::wire
