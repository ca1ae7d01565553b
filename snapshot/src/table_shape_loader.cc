#include "canal/snapshot/table_shape_loader.h"

#include <algorithm>
#include <string>

#include "canal/snapshot/chunk_query.h"  // QuoteIdentifier

namespace canal::snapshot {
namespace {

const std::string* Cell(const mysql::ResultRow& row, size_t i) {
  return i < row.size() && row[i].has_value() ? &*row[i] : nullptr;
}

}  // namespace

Status LoadTableShape(mysql::QueryConnection* conn, std::string_view schema, std::string_view table,
                      TableShape* shape) {
  *shape = TableShape{};
  shape->schema = std::string(schema);
  shape->table = std::string(table);
  const std::string name = QuoteIdentifier(schema) + "." + QuoteIdentifier(table);
  const std::string where =
      " WHERE TABLE_SCHEMA = " + conn->QuoteString(schema) + " AND TABLE_NAME = " + conn->QuoteString(table);

  mysql::ResultSet rs;
  Status s = conn->Query("SELECT TABLE_TYPE, ENGINE FROM information_schema.TABLES" + where, &rs);
  if (!s.ok()) return s.WithContext("reading the table type of " + name);
  if (!rs.rows.empty()) {
    const std::string* type = Cell(rs.rows[0], 0);
    const std::string* engine = Cell(rs.rows[0], 1);
    if (type != nullptr && *type == "VIEW") {
      // A view's rows change with no binlog event of its own: there is nothing to merge it with.
      return Status::InvalidArgument(name + " is a view; snapshot the tables it reads instead");
    }
    if (engine != nullptr) shape->engine = *engine;
  }

  s = conn->Query("SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE FROM information_schema.COLUMNS" + where +
                             " ORDER BY ORDINAL_POSITION",
                         &rs);
  if (!s.ok()) return s.WithContext("reading the columns of " + name);
  for (const mysql::ResultRow& row : rs.rows) {
    const std::string* column = Cell(row, 0);
    const std::string* type = Cell(row, 1);
    const std::string* nullable = Cell(row, 2);
    if (column == nullptr || type == nullptr || nullable == nullptr) {
      return Status::Corruption("information_schema.COLUMNS of " + name + " has a NULL name, type or nullability");
    }
    shape->columns.push_back({*column, *type, *nullable != "NO"});
  }
  if (shape->columns.empty()) {
    return Status::NotFound("table " + name + " does not exist, or user '" + conn->options().user +
                            "' may not see it (information_schema lists only tables the user holds a privilege "
                            "on; the snapshot needs GRANT SELECT ON " +
                            name + " TO '" + conn->options().user + "')");
  }

  s = conn->Query("SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS" + where +
                      " ORDER BY INDEX_NAME, SEQ_IN_INDEX",
                  &rs);
  if (!s.ok()) return s.WithContext("reading the indexes of " + name);
  std::vector<std::string> expression_indexes;
  for (const mysql::ResultRow& row : rs.rows) {
    const std::string* index = Cell(row, 0);
    const std::string* non_unique = Cell(row, 1);
    const std::string* column = Cell(row, 2);
    if (index == nullptr || non_unique == nullptr) {
      return Status::Corruption("information_schema.STATISTICS of " + name + " has a NULL index name or NON_UNIQUE");
    }
    if (shape->indexes.empty() || shape->indexes.back().name != *index) {
      shape->indexes.push_back({*index, *non_unique == "0", {}});
    }
    if (column == nullptr) expression_indexes.push_back(*index);
    else shape->indexes.back().columns.push_back(*column);
    if (Cell(row, 3) != nullptr) shape->indexes.back().prefix = true;
  }
  std::erase_if(shape->indexes, [&](const TableIndex& i) {
    return std::find(expression_indexes.begin(), expression_indexes.end(), i.name) != expression_indexes.end();
  });
  return Status::OK();
}

}  // namespace canal::snapshot
