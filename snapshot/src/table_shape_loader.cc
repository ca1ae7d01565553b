#include "canal/snapshot/table_shape_loader.h"

#include <algorithm>
#include <cstdlib>
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

  // The collation's id is what the binlog's metadata carries for a character column.
  s = conn->Query(
      "SELECT c.COLUMN_NAME, c.DATA_TYPE, c.IS_NULLABLE, c.COLUMN_TYPE, c.CHARACTER_SET_NAME, co.ID, c.COLUMN_KEY, "
      "c.NUMERIC_PRECISION, c.NUMERIC_SCALE, c.DATETIME_PRECISION, c.CHARACTER_OCTET_LENGTH "
      "FROM information_schema.COLUMNS c LEFT JOIN information_schema.COLLATIONS co "
      "ON co.COLLATION_NAME = c.COLLATION_NAME" +
          where + " ORDER BY c.ORDINAL_POSITION",
      &rs);
  if (!s.ok()) return s.WithContext("reading the columns of " + name);
  auto number = [](const std::string* cell) -> uint64_t {
    return cell == nullptr ? 0 : std::strtoull(cell->c_str(), nullptr, 10);
  };
  for (const mysql::ResultRow& row : rs.rows) {
    const std::string* column = Cell(row, 0);
    const std::string* type = Cell(row, 1);
    const std::string* nullable = Cell(row, 2);
    const std::string* column_type = Cell(row, 3);
    if (column == nullptr || type == nullptr || nullable == nullptr || column_type == nullptr) {
      return Status::Corruption("information_schema.COLUMNS of " + name +
                                " has a NULL name, type, column type or nullability");
    }
    TableColumn c{*column, *type, *nullable != "NO"};
    c.column_type = *column_type;
    if (const std::string* charset = Cell(row, 4)) c.charset = *charset;
    c.collation_id = static_cast<uint32_t>(number(Cell(row, 5)));
    c.primary_key = Cell(row, 6) != nullptr && *Cell(row, 6) == "PRI";
    c.numeric_precision = static_cast<uint32_t>(number(Cell(row, 7)));
    c.numeric_scale = static_cast<uint32_t>(number(Cell(row, 8)));
    c.datetime_precision = static_cast<uint32_t>(number(Cell(row, 9)));
    c.octet_length = number(Cell(row, 10));
    shape->columns.push_back(std::move(c));
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

uint64_t EstimatedRows(mysql::QueryConnection* conn, std::string_view schema, std::string_view table) {
  mysql::ResultSet rs;
  if (!conn->Query("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
                       conn->QuoteString(schema) + " AND TABLE_NAME = " + conn->QuoteString(table),
                   &rs)
           .ok() ||
      rs.rows.empty() || rs.rows[0].empty() || !rs.rows[0][0].has_value()) {
    return 0;
  }
  return std::strtoull(rs.rows[0][0]->c_str(), nullptr, 10);
}

}  // namespace canal::snapshot
