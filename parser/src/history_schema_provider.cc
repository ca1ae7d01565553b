#include "canal/parser/history_schema_provider.h"

namespace canal::parser {

std::string HistoryColumnType(const schema::Column& c) {
  std::string t = c.type;
  if (c.type == "enum" || c.type == "set") {
    t += '(';
    for (size_t i = 0; i < c.labels.size(); ++i) {
      if (i > 0) t += ',';
      t += '\'';
      for (char ch : c.labels[i]) {
        if (ch == '\'') t += '\'';
        t += ch;
      }
      t += '\'';
    }
    t += ')';
  } else if (c.type == "decimal" && c.precision >= 0) {
    t += "(" + std::to_string(c.precision) + "," + std::to_string(c.scale < 0 ? 0 : c.scale) + ")";
  } else if (c.length >= 0) {
    t += "(" + std::to_string(c.length) + ")";
  } else if ((c.type == "datetime" || c.type == "timestamp" || c.type == "time") && c.precision > 0) {
    t += "(" + std::to_string(c.precision) + ")";
  }
  if (c.is_unsigned) t += " unsigned";
  return t;
}

Status HistorySchemaProvider::GetColumns(std::string_view db, std::string_view table,
                                         std::vector<binlog::SchemaColumn>* columns) {
  if (history_ == nullptr) return Status::NotFound("no schema history");
  // The history holds every table, but only those in scope are named: rows of
  // the others are never delivered, and a doubt about them must stop nothing.
  if (strict_ && !history_->InScope(db, table)) return Status::NotFound("table outside the schema history's scope");
  const schema::TableSchema* t = history_->Find(db, table);
  if (t == nullptr && !strict_) return Status::NotFound("table not in the schema history");
  Status learned;
  if (t == nullptr && learn_missing_) {
    learned = learn_missing_(db, table);
    if (learned.ok()) t = history_->Find(db, table);
  }
  if (t == nullptr) {
    const std::string why = history_->Unknown(db, table);
    return Status::Corruption("the schema history holds no table `" + std::string(db) + "`.`" + std::string(table) +
                              "` although the binlog writes rows for it" + (why.empty() ? "" : " (" + why + ")") +
                              ", and its TABLE_MAP carries no column names (binlog_row_metadata=FULL on the "
                              "primary would name them; canal.instance.filter.black.regex would leave the table "
                              "out)" +
                              (learned.ok() ? "" : "; the primary's information_schema cannot stand in: " +
                                                       std::string(learned.message())) +
                              missing_hint_);
  }
  columns->clear();
  columns->reserve(t->columns.size());
  for (const schema::Column& c : t->columns) {
    binlog::SchemaColumn& sc = columns->emplace_back();
    sc.name = c.name;
    sc.is_key = c.is_key;
    sc.is_unsigned = c.is_unsigned;
    sc.data_type = c.type;
    sc.charset = c.charset;
    sc.enum_or_set_labels = c.labels;
    sc.column_type = HistoryColumnType(c);
  }
  return Status::OK();
}

}  // namespace canal::parser
