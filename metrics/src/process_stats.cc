#include "canal/metrics/process_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace canal::metrics {

namespace {

// Seconds since the epoch at boot (/proc/stat "btime").
bool BootTime(uint64_t* out) {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") return static_cast<bool>(in >> *out);
    in.ignore(1 << 20, '\n');
  }
  return false;
}

}  // namespace

Status ReadProcessStats(ProcessStats* out) {
  std::ifstream stat_file("/proc/self/stat");
  std::string line;
  if (!std::getline(stat_file, line)) return Status::IOError("reading /proc/self/stat failed");
  // The command name (field 2) may hold spaces and parentheses: the fields
  // after it start past the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return Status::IOError("/proc/self/stat: no ')' after the command name");
  std::istringstream fields(line.substr(close + 1));
  // Fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt majflt
  // cmajflt utime(14) stime(15) cutime cstime priority nice num_threads(20)
  // itrealvalue starttime(22) vsize(23) rss(24)
  std::string state;
  uint64_t v[22] = {};
  fields >> state;
  for (uint64_t& x : v) {
    if (!(fields >> x)) return Status::IOError("/proc/self/stat: fewer fields than expected");
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // v[0] is field 4 (ppid), so field N is v[N - 4].
  out->cpu_seconds = static_cast<double>(v[14 - 4] + v[15 - 4]) / ticks;
  out->threads = v[20 - 4];
  out->virtual_bytes = v[23 - 4];
  out->resident_bytes = v[24 - 4] * page;
  uint64_t boot = 0;
  if (BootTime(&boot)) out->start_time_seconds = static_cast<double>(boot) + static_cast<double>(v[22 - 4]) / ticks;

  std::error_code ec;
  uint64_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++fds;
  if (ec) return Status::IOError("listing /proc/self/fd failed: " + ec.message());
  out->open_fds = fds;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) out->max_fds = limit.rlim_cur;
  return Status::OK();
}

}  // namespace canal::metrics
