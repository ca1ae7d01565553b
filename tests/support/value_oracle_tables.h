// Tables for the value oracle (tests/integration/value_oracle_test.cc): random
// MariaDB tables in which every column kind (integer widths signed and
// unsigned, BIT(1..64), YEAR, ENUM/SET, DATE, TIME/DATETIME/TIMESTAMP of each
// precision 0..6, DECIMAL, FLOAT/DOUBLE, text in utf8mb4, utf8mb3, latin1,
// gbk, utf16, ucs2 and utf32, binary strings, BLOB, JSON, GEOMETRY/POINT)
// follows every kind, with rows of edge values (min/max, zero dates, negative
// TIME, NULL, empty strings, multibyte text, values past 64 KiB).
//
// The database is the oracle: each column carries the SQL expression whose
// text is Canal's value of it (HEX()'d by the reader, so no client escaping is
// involved), and the rule that gives Canal's sqlType for a value
// (CanalSqlTypeOf below, read from Canal's RowsLogBuffer and LogEventConvert).
// mysqlType comes from information_schema.COLUMNS.COLUMN_TYPE at run time.
//
// Deterministic for a seed. Not thread-safe (one generator per thread).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace canal::testing {

// How a received value is compared with the expected text.
enum class OracleCompare : uint8_t {
  kText,           // byte for byte (UTF-8)
  kFloat,          // numerically, at FLOAT's precision
  kDouble,         // numerically, at DOUBLE's precision
  kLatin1Bytes,    // the expected bytes, each as its ISO-8859-1 character (Canal's binary form)
};

// What Canal's sqlType of a column depends on (besides NULL and the value).
enum class OracleSqlRule : uint8_t {
  kFixed,          // `sql_type` whatever the value; `null_sql_type` for NULL
  kUnsignedInt,    // integers: promoted one level when unsigned and above the signed range
};

struct OracleColumn {
  std::string name;         // c0, c1, ...; "id" for the key
  std::string kind;         // the coverage key: "int unsigned", "time(3)", "varchar gbk"
  std::string definition;   // "VARCHAR(17) CHARACTER SET gbk"
  std::string expected_sql; // SQL over `name` whose text is Canal's value of the column
  OracleCompare compare = OracleCompare::kText;
  OracleSqlRule sql_rule = OracleSqlRule::kFixed;
  int sql_type = 0;         // java.sql.Types of a non-NULL value (before any promotion)
  int null_sql_type = 0;    // java.sql.Types Canal sends for NULL
  int int_bytes = 0;        // integers: 1, 2, 3, 4, 8
  bool is_unsigned = false;
  std::vector<std::string> values;  // SQL literals the rows take, edge values first, "NULL" among them
};

struct OracleTable {
  std::string schema, name;
  std::vector<OracleColumn> columns;  // "id" (INT NOT NULL PRIMARY KEY) among them
  std::string CreateSql() const;
  // One INSERT of rows id = 1..rows; row r of a column takes values[(r - 1) % size].
  std::string InsertSql(int rows) const;
  // Lines "ROW\t<id>\t<HEX(expected) or NULL>..." in column order, ordered by id.
  std::string SelectSql() const;
  // Lines "COL\t<name>\t<HEX(COLUMN_TYPE)>" in column order.
  std::string ColumnTypesSql() const;
};

class ValueOracleTables {
 public:
  explicit ValueOracleTables(uint64_t seed);

  // Every kind's name (the coverage keys), in a fixed order.
  static std::vector<std::string> Kinds();

  // Tables whose adjacent columns hold every ordered pair of kinds once (an
  // Eulerian circuit of the complete graph of kinds, in an order drawn from
  // the seed), cut into tables of `columns_per_table` columns that overlap by
  // one so no pair is lost at a cut; "id" first or last. Named
  // <prefix>0001, <prefix>0002, ...
  std::vector<OracleTable> CoveringTables(const std::string& schema, const std::string& prefix,
                                          int columns_per_table);
  // One table of `columns` random kinds, "id" in a random position.
  OracleTable RandomTable(const std::string& schema, const std::string& name, int columns);

 private:
  OracleColumn MakeColumn(int kind, const std::string& name);
  std::mt19937_64 rng_;
  int bit_width_ = 0;  // BIT widths are taken in turn, so every width 1..64 comes up
};

// Canal's sqlType for a value of `column` (`value` is the expected text;
// ignored for NULL): LogEventConvert's promotion of unsigned integers above
// the signed range (TINYINT -> SMALLINT, SMALLINT -> INTEGER, INT -> BIGINT,
// BIGINT -> DECIMAL), RowsLogBuffer's type per column otherwise.
int CanalSqlTypeOf(const OracleColumn& column, bool is_null, std::string_view value);

// True when `bytes` is valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
// The oracle's own, on purpose: it judges what the server sends, so it does not borrow the
// server's validator (canal/common/utf8.h on main), whose mistakes it would share.
bool IsValidUtf8(std::string_view bytes);

// The UTF-8 text of `bytes` read as ISO-8859-1 (one character per byte).
std::string Latin1ToUtf8(std::string_view bytes);

}  // namespace canal::testing
