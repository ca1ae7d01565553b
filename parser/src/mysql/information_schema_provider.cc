#include "canal/parser/mysql/information_schema_provider.h"

#include <string>
#include <utility>

#include "canal/parser/binlog/column_text.h"

namespace canal::mysql {

namespace {

bool IsBinaryStringType(std::string_view data_type) {
  for (std::string_view t : {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}) {
    if (data_type == t) return true;
  }
  return false;
}

std::string TableName(std::string_view db, std::string_view table) {
  return "`" + std::string(db) + "`.`" + std::string(table) + "`";
}

}  // namespace

Status InformationSchemaProvider::GetColumns(std::string_view db, std::string_view table,
                                             std::vector<binlog::SchemaColumn>* columns) {
  auto key = std::make_pair(std::string(db), std::string(table));
  if (auto it = cache_.find(key); it != cache_.end()) {
    *columns = it->second;
    return Status::OK();
  }
  if (!conn_->connected()) CANAL_RETURN_IF_ERROR(conn_->Connect());

  // Quoted after connecting: escaping follows the session's charset and sql_mode.
  auto build_sql = [&] {
    return "SELECT COLUMN_NAME, COLUMN_KEY, COLUMN_TYPE, DATA_TYPE, CHARACTER_SET_NAME "
           "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
           conn_->QuoteString(db) + " AND TABLE_NAME = " + conn_->QuoteString(table) + " ORDER BY ORDINAL_POSITION";
  };
  ResultSet rs;
  ++queries_;
  Status s = conn_->Query(build_sql(), &rs);
  if (!s.ok() && !conn_->connected()) {
    // The session died since the last query (server restart, wait_timeout):
    // one fresh connection, one retry.
    CANAL_RETURN_IF_ERROR(conn_->Connect());
    ++queries_;
    s = conn_->Query(build_sql(), &rs);
  }
  if (!s.ok()) return s.WithContext("reading the columns of " + TableName(db, table));
  if (rs.rows.empty()) {
    // Not cached: the table may be created later.
    return Status::NotFound("table " + TableName(db, table) + " is not in information_schema on " +
                            conn_->options().Address() + " (dropped, or no privilege to see it)");
  }

  std::vector<binlog::SchemaColumn> cols;
  cols.reserve(rs.rows.size());
  for (const ResultRow& row : rs.rows) {
    if (row.size() < 5 || !row[0] || !row[2] || !row[3]) {
      return Status::Corruption("information_schema.COLUMNS on " + conn_->options().Address() +
                                " returned a row without name or type for " + TableName(db, table));
    }
    binlog::SchemaColumn c;
    c.name = *row[0];
    c.is_key = row[1].value_or("") == "PRI";
    const std::string& column_type = *row[2];
    c.data_type = *row[3];
    for (char& ch : c.data_type) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    c.is_unsigned = column_type.find("unsigned") != std::string::npos;
    c.column_type = column_type;
    // MariaDB marks its own pre-10.1 temporal formats: "timestamp(3) /* mariadb-5.3 */".
    if (const size_t comment = c.column_type.find(" /* mariadb-"); comment != std::string::npos) {
      c.column_type.resize(comment);
    }
    if (row[4]) {
      c.charset = *row[4];
    } else if (IsBinaryStringType(c.data_type)) {
      c.charset = "binary";
    }
    if (c.data_type == "enum" || c.data_type == "set") {
      if (!binlog::ParseEnumOrSetLabels(column_type, &c.enum_or_set_labels)) {
        return Status::Corruption("cannot read the labels of " + c.data_type + " column `" + c.name + "` of " +
                                  TableName(db, table) + " from COLUMN_TYPE " + column_type);
      }
    }
    cols.push_back(std::move(c));
  }
  *columns = cols;
  cache_.emplace(std::move(key), std::move(cols));
  return Status::OK();
}

void InformationSchemaProvider::Invalidate(std::string_view db, std::string_view table) {
  cache_.erase(std::make_pair(std::string(db), std::string(table)));
}

}  // namespace canal::mysql
