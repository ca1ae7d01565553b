// Expected row changes from zalora/binlog-parser's fixtures
// (shared/fixtures/binlog/zalora-binlog-parser/{fixtures,gtid-fixtures}/*.json),
// loaded into a form a test can compare with our decoded rows.
//
// The files: a stream of concatenated, pretty-printed JSON objects (no array, no
// commas), one per message that tool emitted:
//   "Header": {"Schema", "Table" ("(unknown)" for queries),
//              "BinlogMessageTime" (event timestamp, RFC 3339 UTC),
//              "BinlogPosition" (end_log_pos of the event = position of the next one),
//              "XId" (xid of the committing XID event; 0 for queries),
//              "GTID" (gtid-fixtures only: "uuid:gno", "" outside a GTID transaction)},
//   "Type": "Insert" | "Update" | "Delete" | "Query",
//   Insert/Delete: "Data": {"Row": {column: value}, "MappingNotice": text},
//   Update: "OldData" and "NewData", each like "Data",
//   Query: "Query": statement text (BEGIN / COMMIT are not emitted).
// Row keys are in name order (Go maps), not column order. The tool named columns
// from a live copy of the test_db schema (fixtures/test_db.sql) when the row's
// column count matched it, else "(unknown_<0-based position>)". Values: numbers
// for integer columns, strings otherwise (DATE "YYYY-MM-DD", TIMESTAMP
// "YYYY-MM-DD HH:MM:SS" in UTC, CHAR/VARCHAR text), null for NULL.
//
// Which binlog (and table filter) produced each file, per the upstream test list:
//   NN.json <- mysql-bin.NN (same folder), no filter;
//   fixtures/01-include-table.json <- mysql-bin.01, tables {buildings};
//   fixtures/01-no-events.json (empty) <- mysql-bin.01, tables {unknown_table};
//   gtid-fixtures/01-include-tables.json <- mysql-bin.01, tables {buildings, rooms}
//     (filter inferred: the file holds exactly those tables' rows and no queries).
// Any other file name is an error, as is any JSON that does not have this shape.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "canal/common/status.h"

namespace canal::testing {

struct ZaloraColumn {
  std::string name;      // key as in the JSON
  int index = -1;        // 0-based column position: from "(unknown_N)" or the test_db.sql
                         // column order; -1 when neither gives one
  nlohmann::json value;  // string, number or null
  std::string text;      // strings as they are, numbers as JSON text, "" for null
  bool is_null = false;
};

enum class ZaloraEventType : uint8_t { kInsert, kUpdate, kDelete, kQuery };

struct ZaloraEvent {
  ZaloraEventType type = ZaloraEventType::kQuery;
  std::string schema, table;
  uint64_t binlog_position = 0;  // end_log_pos of the event
  uint64_t xid = 0;
  std::string gtid;              // "" when absent
  std::string message_time;
  // Images like our RowChange: Insert -> after, Delete -> before, Update -> both.
  // Sorted by index when every column has one, else in the JSON's (name) order.
  std::vector<ZaloraColumn> before, after;
  std::string mapping_notice;  // from Data / NewData
  std::string query;           // Query only
};

struct ZaloraExpectedFile {
  std::string json_path;    // relative to fixtures/binlog/
  std::string binlog_path;  // relative to fixtures/binlog/
  std::vector<std::string> include_tables;  // table filter the tool ran with; empty = none
  std::vector<ZaloraEvent> events;
};

// table name -> column names in order.
using ZaloraSchema = std::map<std::string, std::vector<std::string>>;

// Every *.json under <binlog_dir>/zalora-binlog-parser/{fixtures,gtid-fixtures},
// sorted by path. Column positions come from fixtures/test_db.sql.
Status LoadZaloraExpectations(const std::string& binlog_dir, std::vector<ZaloraExpectedFile>* out);

// One file's text (a JSON object stream); `schema` may be null.
Status ParseZaloraJsonStream(std::string_view text, std::string_view source,
                             const ZaloraSchema* schema, std::vector<ZaloraEvent>* out);

// Column order of each CREATE TABLE in a mysqldump file.
Status ParseZaloraSchemaSql(std::string_view sql, std::string_view source, ZaloraSchema* out);

}  // namespace canal::testing
