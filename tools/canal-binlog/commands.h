// The canal-binlog subcommands: decode (JSON lines per row change) and stats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canal::tools {

struct DecodeCommandOptions {
  std::vector<std::string> inputs;
  bool readable = false;          // ENUM/SET labels, base64 binaries
  bool mysql_forms = false;       // FLOAT/DOUBLE in MySQL's text instead of Java's (Canal's)
  bool count_only = false;        // decode every value, print only a summary
  bool verify_checksum = true;
  int32_t tz_offset_seconds = 0;  // for TIMESTAMP rendering
  // Threads formatting rows events (0 = format on the decoding thread). Output
  // order is the binlog's whatever the count.
  int threads = 0;
  // A stored schema history (schema_history.json): names the columns of
  // binlogs written with binlog_row_metadata=MINIMAL.
  std::string schema_file;
};

// Both return the process exit status; errors go to stderr.
int RunDecode(const DecodeCommandOptions& options);
int RunStats(const std::vector<std::string>& inputs, bool verify_checksum);

}  // namespace canal::tools
