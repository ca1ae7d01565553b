// The process basics every Prometheus exporter publishes (process_* series),
// read from /proc/self at scrape time.
#pragma once

#include <cstdint>

#include "canal/common/status.h"

namespace canal::metrics {

struct ProcessStats {
  double cpu_seconds = 0;  // user + system
  uint64_t resident_bytes = 0;
  uint64_t virtual_bytes = 0;
  uint64_t open_fds = 0;
  uint64_t max_fds = 0;  // the soft RLIMIT_NOFILE
  uint64_t threads = 0;
  double start_time_seconds = 0;  // since the epoch
};

// IOError naming the /proc file that could not be read or parsed.
Status ReadProcessStats(ProcessStats* out);

}  // namespace canal::metrics
