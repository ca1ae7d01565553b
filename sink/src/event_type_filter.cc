#include "canal/sink/event_type_filter.h"

#include <cctype>
#include <string>

#include "canal/common/trim.h"

namespace canal::sink {

StatementKind ClassifyStatementKind(std::string_view sql) { return canal::schema::ClassifyStatement(sql).kind; }

Status EventTypeFilter::Set(std::string_view key, std::string_view value) {
  bool* field = nullptr;
  if (key == "canal.instance.filter.query.dml") field = &query_dml;
  else if (key == "canal.instance.filter.query.ddl") field = &query_ddl;
  else if (key == "canal.instance.filter.query.dcl") field = &query_dcl;
  else if (key == "canal.instance.filter.dml.insert") field = &dml_insert;
  else if (key == "canal.instance.filter.dml.update") field = &dml_update;
  else if (key == "canal.instance.filter.dml.delete") field = &dml_delete;
  else if (key == "canal.instance.filter.transaction.entry") field = &transaction_entry;
  if (field == nullptr) return Status::NotFound(std::string(key) + " is not an event-type filter key");
  std::string v(Trim(value));
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true") {
    *field = true;
  } else if (v == "false") {
    *field = false;
  } else {
    return Status::InvalidArgument(std::string(key) + " = '" + std::string(value) + "': expected true or false");
  }
  return Status::OK();
}

bool EventTypeFilter::DropsRows(binlog::RowsKind kind) const {
  switch (kind) {
    case binlog::RowsKind::kWrite: return dml_insert;
    case binlog::RowsKind::kUpdate: return dml_update;
    case binlog::RowsKind::kDelete: return dml_delete;
  }
  return false;
}

bool EventTypeFilter::DropsStatement(std::string_view sql) const { return DropsKind(ClassifyStatementKind(sql)); }

bool EventTypeFilter::DropsKind(StatementKind kind) const {
  switch (kind) {
    case StatementKind::kDml: return query_dml;
    case StatementKind::kDdl: return query_ddl;
    case StatementKind::kDcl: return query_dcl;
    case StatementKind::kOther: return false;
  }
  return false;
}

}  // namespace canal::sink
