#include "canal/mq/flat_message.h"

#include <cstdio>
#include <string>

#include "canal/common/json_string.h"
#include "canal/proto/entry_view.h"
#include "canal/proto/snapshot_marker.h"
#include "text.h"

namespace canal::mq {

namespace {

using canal::proto::ColumnView;
using canal::proto::EntryView;
using canal::proto::RowChangeView;
using canal::proto::RowDataView;

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  out->append(buf, static_cast<size_t>(n));
}

void AppendString(std::string_view s, std::string* out) { canal::AppendJsonString(s, out); }

// The columns are few: a linear scan beats hashing them.
bool Contains(const std::vector<std::string_view>& names, std::string_view name) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

void AppendRowMap(const FlatMessage& m, uint32_t begin, uint32_t end, std::string* out) {
  out->push_back('{');
  for (uint32_t i = begin; i < end; ++i) {
    const FlatValue& v = m.values[i];
    if (i != begin) out->push_back(',');
    AppendString(v.name, out);
    out->push_back(':');
    if (v.is_null) {
      out->append("null");
    } else {
      AppendString(v.value, out);
    }
  }
  out->push_back('}');
}

// `member` then {name: value(type), ...}, or null when no column was seen.
template <typename WriteValue>
void AppendTypeMap(const FlatMessage& m, std::string_view member, WriteValue write_value, std::string* out) {
  out->append(member);
  if (m.types.empty()) {
    out->append("null");
    return;
  }
  out->push_back('{');
  for (size_t i = 0; i < m.types.size(); ++i) {
    if (i != 0) out->push_back(',');
    AppendString(m.types[i].name, out);
    out->push_back(':');
    write_value(m.types[i]);
  }
  out->push_back('}');
}

}  // namespace

void FlatMessage::Clear() {
  id = 0;
  database = table = sql = gtid = type = logfile = {};
  is_ddl = is_snapshot = false;
  es = ts = logfile_offset = 0;
  pk_names.clear();
  types.clear();
  values.clear();
  rows.clear();
  updated_columns.clear();
}

std::string FlatMessage::Describe() const { return DescribeChange(database, table, logfile, logfile_offset); }

Status BuildFlatMessage(std::string_view entry_bytes, int64_t id, int64_t ts_ms, FlatMessage* out, bool* is_change) {
  *is_change = false;
  EntryView entry;
  CANAL_RETURN_IF_ERROR(EntryView::Parse(entry_bytes, &entry).WithContext("flat message: the entry"));
  if (canal::proto::EntryTypeOf(entry) != canal::entry::ROWDATA) return Status::OK();
  RowChangeView rc;
  CANAL_RETURN_IF_ERROR(RowChangeView::Parse(entry.store_value(), &rc).WithContext("flat message: the row change"));

  out->Clear();
  const auto& h = entry.header();
  out->id = id;
  out->database = h.schema_name();
  out->table = h.table_name();
  out->logfile = h.logfile_name();
  out->logfile_offset = h.logfile_offset();
  out->gtid = h.gtid();
  {
    canal::proto::PairCursor props = h.props();
    canal::proto::PairView prop;
    Status ps;
    while (props.Next(&prop, &ps)) {
      if (prop.key() == canal::proto::kSnapshotPropKey && prop.value() == canal::proto::kSnapshotPropValue) {
        out->is_snapshot = true;
      }
    }
    if (!ps.ok()) return ps.WithContext("flat message: the header props of " + out->Describe());
  }
  out->es = h.execute_time();
  out->ts = ts_ms;
  out->is_ddl = canal::proto::IsDdl(rc);
  out->sql = rc.sql();
  const canal::entry::EventType event_type = canal::proto::EventTypeOf(rc);
  out->type = canal::entry::EventType_Name(event_type);
  *is_change = true;
  if (out->is_ddl) return Status::OK();
  if (event_type != canal::entry::INSERT && event_type != canal::entry::UPDATE &&
      event_type != canal::entry::DELETE) {
    return Status::OK();  // a QUERY of a statement-format binlog: no rows
  }

  // Canal takes the key names from the first row only, and the updated
  // columns accumulate across the rows of the entry.
  std::vector<std::string_view>& updated = out->updated_columns;
  RowDataView row;
  Status s;
  bool first_row = true;
  while (rc.NextRow(&row, &s)) {
    FlatRow fr;
    fr.data_begin = static_cast<uint32_t>(out->values.size());
    ColumnView col;
    const bool use_before = event_type == canal::entry::DELETE;
    while (use_before ? row.NextBefore(&col, &s) : row.NextAfter(&col, &s)) {
      if (first_row && col.is_key()) out->pk_names.push_back(col.name());
      bool known = false;
      for (FlatColumnType& t : out->types) {
        if (t.name == col.name()) {
          t.sql_type = col.sql_type();  // a later row's type wins, as a map put does
          t.mysql_type = col.mysql_type();
          known = true;
          break;
        }
      }
      if (!known) out->types.push_back({col.name(), col.sql_type(), col.mysql_type()});
      out->values.push_back({col.name(), col.value(), canal::proto::IsNull(col)});
      if (col.updated() && !Contains(updated, col.name())) updated.push_back(col.name());
    }
    CANAL_RETURN_IF_ERROR(s.WithContext("flat message: a row of " + out->Describe()));
    fr.data_end = static_cast<uint32_t>(out->values.size());
    first_row = false;
    fr.old_begin = fr.old_end = fr.data_end;
    if (event_type == canal::entry::UPDATE) {
      while (row.NextBefore(&col, &s)) {
        if (Contains(updated, col.name())) out->values.push_back({col.name(), col.value(), canal::proto::IsNull(col)});
      }
      CANAL_RETURN_IF_ERROR(s.WithContext("flat message: a before image of " + out->Describe()));
      fr.old_end = static_cast<uint32_t>(out->values.size());
    }
    // Canal drops a row whose image has no column (never the case for
    // MySQL's row events, which always carry columns).
    if (fr.data_end != fr.data_begin) out->rows.push_back(fr);
  }
  CANAL_RETURN_IF_ERROR(s.WithContext("flat message: the rows of " + out->Describe()));
  return Status::OK();
}

void AppendFlatMessageJson(const FlatMessage& m, const std::vector<uint32_t>* row_subset, std::string* out) {
  const size_t n = row_subset != nullptr ? row_subset->size() : m.rows.size();
  auto row_at = [&](size_t i) -> const FlatRow& { return m.rows[row_subset != nullptr ? (*row_subset)[i] : i]; };
  bool any_old = false;
  for (size_t i = 0; i < n && !any_old; ++i) any_old = row_at(i).old_end != row_at(i).old_begin;

  out->append("{\"data\":");
  if (n == 0) {
    out->append("null");
  } else {
    out->push_back('[');
    for (size_t i = 0; i < n; ++i) {
      if (i != 0) out->push_back(',');
      AppendRowMap(m, row_at(i).data_begin, row_at(i).data_end, out);
    }
    out->push_back(']');
  }
  const auto text = [out](std::string_view member, std::string_view value) {
    out->append(member);
    AppendString(value, out);
  };
  const auto number = [out](std::string_view member, int64_t value) {
    out->append(member);
    AppendInt(value, out);
  };
  text(",\"database\":", m.database);
  number(",\"es\":", m.es);
  text(",\"gtid\":", m.gtid);
  number(",\"id\":", m.id);
  out->append(m.is_ddl ? ",\"isDdl\":true" : ",\"isDdl\":false");
  // Only when set: stream messages stay Canal's JSON byte for byte.
  if (m.is_snapshot) out->append(",\"isSnapshot\":true");
  AppendTypeMap(m, ",\"mysqlType\":", [out](const FlatColumnType& t) { AppendString(t.mysql_type, out); }, out);
  out->append(",\"old\":");
  if (!any_old) {
    out->append("null");
  } else {
    // As Canal: only rows with a changed column contribute a map.
    out->push_back('[');
    bool first = true;
    for (size_t i = 0; i < n; ++i) {
      const FlatRow& r = row_at(i);
      if (r.old_end == r.old_begin) continue;
      if (!first) out->push_back(',');
      first = false;
      AppendRowMap(m, r.old_begin, r.old_end, out);
    }
    out->push_back(']');
  }
  out->append(",\"pkNames\":");
  if (m.pk_names.empty()) {
    out->append("null");
  } else {
    out->push_back('[');
    for (size_t i = 0; i < m.pk_names.size(); ++i) {
      if (i != 0) out->push_back(',');
      AppendString(m.pk_names[i], out);
    }
    out->push_back(']');
  }
  text(",\"sql\":", m.sql);
  AppendTypeMap(m, ",\"sqlType\":", [out](const FlatColumnType& t) { AppendInt(t.sql_type, out); }, out);
  text(",\"table\":", m.table);
  number(",\"ts\":", m.ts);
  text(",\"type\":", m.type);
  out->push_back('}');
}

}  // namespace canal::mq
