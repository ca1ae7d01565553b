#include "support/load_table.h"

#include <charconv>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "support/mariadb_sandbox.h"

namespace canal::testing {
namespace {

// A whole decimal number, or false (no sign, spaces or trailing text).
bool ParseWhole(std::string_view text, int64_t* value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return !text.empty() && ec == std::errc() && ptr == end;
}

}  // namespace

std::string LoadTableSql(const std::string& table) {
  const std::string schema = table.substr(0, table.find('.'));
  return "CREATE DATABASE IF NOT EXISTS " + schema + "; DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table +
         " (id BIGINT AUTO_INCREMENT PRIMARY KEY, txn INT NOT NULL, seq INT NOT NULL, pad VARCHAR(40))";
}

void WriteLoadSql(const std::string& path, const std::string& table, int first, int last, int rows_per_txn) {
  std::ofstream out(path);
  for (int t = first; t <= last; ++t) {
    out << "BEGIN;\nINSERT INTO " << table << " (txn, seq, pad) VALUES ";
    for (int r = 0; r < rows_per_txn; ++r) {
      out << (r ? "," : "") << "(" << t << "," << r << ",'row-" << t << "-" << r << "')";
    }
    out << ";\nCOMMIT;\n";
  }
}

std::vector<std::string> WriteLoadChunks(const std::string& path_prefix, const std::string& table, int txns,
                                         int rows_per_txn, int chunks) {
  std::vector<std::string> files;
  for (int c = 0; c < chunks; ++c) {
    files.push_back(path_prefix + std::to_string(c) + ".sql");
    WriteLoadSql(files.back(), table, c * txns / chunks + 1, (c + 1) * txns / chunks, rows_per_txn);
  }
  return files;
}

int64_t LoadRowNumber(std::string_view txn, std::string_view seq, int rows_per_txn) {
  int64_t t = 0, q = 0;
  if (!ParseWhole(txn, &t) || !ParseWhole(seq, &q)) return -1;
  // txn is an INT column: the bound keeps the product far from overflow.
  if (t < 1 || t > INT32_MAX || q < 0 || q >= rows_per_txn) return -1;
  return (t - 1) * rows_per_txn + q;
}

bool PrimaryEnd(MariadbSandbox& sandbox, std::string* file, uint64_t* position) {
  std::string out;
  if (!sandbox.Sql("SHOW MASTER STATUS", &out)) return false;
  const size_t tab = out.find('\t');
  if (tab == std::string::npos) return false;
  *file = out.substr(0, tab);
  *position = std::strtoull(out.c_str() + tab + 1, nullptr, 10);
  return true;
}

std::string StartPositionProperties(const std::string& file, uint64_t position) {
  return "canal.instance.master.journal.name = " + file + "\ncanal.instance.master.position = " +
         std::to_string(position) + "\n";
}

std::string StartAtPrimaryEnd(MariadbSandbox& sandbox) {
  std::string file;
  uint64_t position = 0;
  if (!PrimaryEnd(sandbox, &file, &position)) {
    ADD_FAILURE() << "SHOW MASTER STATUS on the sandbox " << sandbox.dir() << ": " << sandbox.error();
    return "";
  }
  return StartPositionProperties(file, position);
}

}  // namespace canal::testing
