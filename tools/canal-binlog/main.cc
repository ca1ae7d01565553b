// canal-binlog: decode binlog files to JSON lines, or count what is in them.
#include <algorithm>
#include <cstdio>
#include <thread>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"

namespace {

// "+08:00", "-05:30", "UTC" -> seconds east of UTC.
bool ParseTzOffset(const std::string& s, int32_t* out) {
  if (s == "UTC" || s == "Z" || s == "+00:00") {
    *out = 0;
    return true;
  }
  int h = 0, m = 0;
  char sign = 0;
  if (std::sscanf(s.c_str(), "%c%d:%d", &sign, &h, &m) != 3 || (sign != '+' && sign != '-') || h > 14 || m > 59) {
    return false;
  }
  *out = (sign == '-' ? -1 : 1) * (h * 3600 + m * 60);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"canal-binlog: decode MySQL/MariaDB binlog files"};
  app.require_subcommand(1);

  canal::tools::DecodeCommandOptions dopts;
  std::string tz = "UTC";
  bool no_verify = false;
  auto* decode = app.add_subcommand(
      "decode", "print one JSON object per row change (and per DDL) on stdout");
  decode->add_option("inputs", dopts.inputs, "binlog files or directories (read in name order)")->required();
  decode->add_flag("--readable", dopts.readable, "ENUM/SET as labels and binary values as base64 (default: Canal's forms)");
  std::string value_format = "canal";
  decode->add_option("--value-format", value_format,
                     "FLOAT/DOUBLE text: canal (Java's, as Canal prints it: 100.0, 1.0E7; default) or mysql (100, 10000000)")
      ->check(CLI::IsMember({"canal", "mysql"}));
  decode->add_flag("--count-only", dopts.count_only, "decode every value but print only a throughput summary");
  decode->add_option("--timezone", tz, "offset for TIMESTAMP values, e.g. +08:00 (default UTC)");
  decode->add_flag("--no-verify-checksum", no_verify, "skip CRC32 verification");
  decode->add_option("--schema", dopts.schema_file,
                     "a schema history (a destination's schema_history.json) naming the columns of binlogs "
                     "written with binlog_row_metadata=MINIMAL");
  dopts.threads = static_cast<int>(std::min(4u, std::max(1u, std::thread::hardware_concurrency())));
  decode->add_option("--threads", dopts.threads,
                     "threads formatting rows into JSON (default: cores, at most 4; 0 = none besides the decoder)")
      ->check(CLI::Range(0, 64));

  std::vector<std::string> stat_inputs;
  bool stats_no_verify = false;
  auto* stats = app.add_subcommand("stats", "count events by type, transactions, and rows by table");
  stats->add_option("inputs", stat_inputs, "binlog files or directories")->required();
  stats->add_flag("--no-verify-checksum", stats_no_verify, "skip CRC32 verification");

  CLI11_PARSE(app, argc, argv);

  if (*decode) {
    dopts.mysql_forms = value_format == "mysql";
    if (!ParseTzOffset(tz, &dopts.tz_offset_seconds)) {
      std::fprintf(stderr, "canal-binlog: --timezone '%s' is not UTC or +HH:MM / -HH:MM\n", tz.c_str());
      return 2;
    }
    dopts.verify_checksum = !no_verify;
    return canal::tools::RunDecode(dopts);
  }
  return canal::tools::RunStats(stat_inputs, !stats_no_verify);
}
