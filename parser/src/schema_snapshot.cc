// The first start's snapshot of every table (SchemaTracker::Open).
#include <string>

#include "canal/schema/ddl.h"
#include "schema_tracker.h"

namespace canal::parser {
namespace {

constexpr int kAttempts = 5;

const std::string& Cell(const mysql::ResultRow& row, size_t i) {
  static const std::string kEmpty;
  return i < row.size() && row[i] ? *row[i] : kEmpty;
}

// COLUMN_TYPE ("int(10) unsigned", "enum('a','b')") read by the DDL parser.
Status ColumnFromInformationSchema(const mysql::ResultRow& row, bool mariadb, schema::Column* col) {
  schema::LexerOptions o;
  o.mariadb = mariadb;
  schema::DdlStatement ddl;
  const std::string sql = "CREATE TABLE t (c " + Cell(row, 4) + ")";
  Status s = schema::ParseDdl(sql, "d", o, &ddl);
  if (!s.ok() || ddl.columns.size() != 1) {
    return Status::Corruption("cannot read COLUMN_TYPE '" + Cell(row, 4) + "' of `" + Cell(row, 0) + "`.`" +
                              Cell(row, 1) + "`.`" + Cell(row, 2) + "`: " + s.ToString());
  }
  *col = std::move(ddl.columns[0]);
  col->name = Cell(row, 2);
  // information_schema's own words win over what the type text implies.
  std::string data_type = Cell(row, 5);
  for (char& ch : data_type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (!data_type.empty()) col->type = data_type;
  col->is_key = Cell(row, 3) == "PRI";
  col->nullable = Cell(row, 8) == "YES";
  if (!Cell(row, 6).empty()) col->charset = schema::NormalizeCharset(Cell(row, 6));
  if (!Cell(row, 7).empty()) col->collation = Cell(row, 7);
  if (col->type == "binary" || col->type == "varbinary" || col->type.ends_with("blob")) col->charset = "binary";
  return Status::OK();
}

Status ReadOnce(mysql::QueryConnection* query, const mysql::ServerInfo& info, schema::SchemaHistory* out) {
  static constexpr const char* kSystem =
      "('mysql','information_schema','performance_schema','sys')";
  mysql::ResultSet dbs;
  CANAL_RETURN_IF_ERROR(query->Query(std::string("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM "
                                                 "information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ") +
                                         kSystem,
                                     &dbs));
  for (const auto& row : dbs.rows) out->PutDatabase(Cell(row, 0), Cell(row, 1));
  mysql::ResultSet tables;
  CANAL_RETURN_IF_ERROR(query->Query(
      std::string("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION, TABLE_TYPE FROM information_schema.TABLES "
                  "WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA NOT IN ") + kSystem,
      &tables));
  // Every table, not only those in scope: an online schema change renames a
  // shadow table from outside the filter into it (docs/schema-history.md).
  std::map<std::pair<std::string, std::string>, schema::TableSchema> all;
  for (const auto& row : tables.rows) {
    if (Cell(row, 3) == "SYSTEM VERSIONED") {
      // information_schema hides the row_start/row_end columns its rows carry.
      out->MarkUnknown(Cell(row, 0), Cell(row, 1),
                       "system-versioned: information_schema does not show its row_start/row_end columns");
      continue;
    }
    schema::TableSchema t;
    t.db = Cell(row, 0);
    t.name = Cell(row, 1);
    t.collation = Cell(row, 2);
    t.charset = schema::CharsetOfCollation(t.collation);
    all.emplace(std::make_pair(t.db, t.name), std::move(t));
  }
  mysql::ResultSet cols;
  CANAL_RETURN_IF_ERROR(query->Query(
      std::string("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_KEY, COLUMN_TYPE, DATA_TYPE, "
                  "CHARACTER_SET_NAME, COLLATION_NAME, IS_NULLABLE FROM information_schema.COLUMNS "
                  "WHERE TABLE_SCHEMA NOT IN ") + kSystem + " ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
      &cols));
  for (const auto& row : cols.rows) {
    auto it = all.find(std::make_pair(Cell(row, 0), Cell(row, 1)));
    if (it == all.end()) continue;
    schema::Column c;
    CANAL_RETURN_IF_ERROR(ColumnFromInformationSchema(row, info.mariadb, &c));
    it->second.columns.push_back(std::move(c));
  }
  for (auto& [key, t] : all) out->PutTable(std::move(t));
  return Status::OK();
}

}  // namespace

Status ReadTableFromPrimary(mysql::QueryConnection* query, const mysql::ServerInfo& info, std::string_view db,
                            std::string_view table, schema::TableSchema* out, bool* found) {
  *found = false;
  const std::string where = "TABLE_SCHEMA = " + query->QuoteString(db) + " AND TABLE_NAME = " + query->QuoteString(table);
  mysql::ResultSet tables;
  CANAL_RETURN_IF_ERROR(query->Query("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION, TABLE_TYPE FROM "
                                     "information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND " + where,
                                     &tables));
  if (tables.rows.size() != 1) return Status::OK();
  schema::TableSchema t;
  t.db = Cell(tables.rows[0], 0);
  t.name = Cell(tables.rows[0], 1);
  t.collation = Cell(tables.rows[0], 2);
  t.charset = schema::CharsetOfCollation(t.collation);
  mysql::ResultSet cols;
  CANAL_RETURN_IF_ERROR(query->Query(
      "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_KEY, COLUMN_TYPE, DATA_TYPE, CHARACTER_SET_NAME, "
      "COLLATION_NAME, IS_NULLABLE FROM information_schema.COLUMNS WHERE " + where + " ORDER BY ORDINAL_POSITION",
      &cols));
  for (const auto& row : cols.rows) {
    schema::Column c;
    CANAL_RETURN_IF_ERROR(ColumnFromInformationSchema(row, info.mariadb, &c));
    t.columns.push_back(std::move(c));
  }
  *out = std::move(t);
  *found = true;
  return Status::OK();
}

Status TakeSchemaSnapshot(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                          const schema::SchemaHistory::Scope& scope, schema::SchemaHistory* out,
                          schema::BinlogPoint* at) {
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    mysql::MasterStatus before, after;
    CANAL_RETURN_IF_ERROR(query->ShowMasterStatus(&before).WithContext("schema snapshot"));
    schema::SchemaHistory h(scope);
    CANAL_RETURN_IF_ERROR(ReadOnce(query, info, &h).WithContext("schema snapshot"));
    CANAL_RETURN_IF_ERROR(query->ShowMasterStatus(&after).WithContext("schema snapshot"));
    // Equal positions: no DDL (no write at all) fell between the two reads.
    if (before.file == after.file && before.position == after.position) {
      *out = std::move(h);
      *at = schema::BinlogPoint{after.file, after.position};
      return Status::OK();
    }
  }
  return Status::Aborted("schema snapshot: the primary's binlog position moved during each of " +
                         std::to_string(kAttempts) + " attempts; retrying at the next start");
}

}  // namespace canal::parser
