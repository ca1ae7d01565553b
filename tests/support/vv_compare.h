// Comparing our decode of a binlog file with `mariadb-binlog -vv` output for the
// same file: every row change, in order, every column value.
#pragma once

#include <string>

namespace canal::testing {

struct VvComparison {
  bool ok = false;
  uint64_t rows = 0;         // row changes compared
  uint64_t values = 0;       // column values compared
  std::string failure;       // first few mismatches, or why the comparison could not run
};

VvComparison CompareWithMariadbBinlogVv(const std::string& binlog_path, const std::string& vv_path);

}  // namespace canal::testing
