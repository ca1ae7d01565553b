// The binlog file decode_bench and sink_bench read: $BENCH_BINLOG
// (bench/gen_bench_binlog.sh makes a 1M-row one), else the MariaDB fixture
// under CANAL_SHARED_DIR (the including target defines it).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace canal::bench {

// Names the file in *path and reads it into *bytes; false, with *error saying
// what is missing, when there is no input or it cannot be opened.
inline bool ReadBenchBinlog(std::string* path, std::string* bytes, std::string* error) {
  if (const char* env = std::getenv("BENCH_BINLOG"); env != nullptr && *env != '\0') {
    *path = env;
  } else {
    *path = std::string(CANAL_SHARED_DIR) + "/fixtures/binlog/mariadb-10.11/mariadb-bin.000001";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec)) {
      *error = "no input: set BENCH_BINLOG (bench/gen_bench_binlog.sh makes one) or provide " + *path;
      return false;
    }
  }
  std::ifstream f(*path, std::ios::binary);
  if (!f) {
    *error = "cannot open " + *path;
    return false;
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  *bytes = std::move(ss).str();
  return true;
}

}  // namespace canal::bench
