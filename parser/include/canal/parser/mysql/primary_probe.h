// Which of a destination's candidate servers is the primary (canal.instance.master.address
// with several host:port; docs/replication.md, "Failover"): one that answers, is not
// read-only and does not replicate from another server. Asked at start, after the current
// server failed canal.instance.detecting.retry.threshold times in a row, and when the
// current one stops being the primary (a planned switchover makes it read-only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/mysql/connection_options.h"

namespace canal::mysql {

class QueryConnection;

struct PrimaryProbe {
  std::string address;  // host:port
  bool reachable = false;
  std::string error;  // why not reachable
  bool read_only = false;
  bool replicating = false;    // a replication connection is configured and running (IO or SQL thread)
  std::string replicating_from;  // its primary, when replicating
  std::string replication_unknown;  // why the replication status could not be read ("" when it was)
  uint32_t server_id = 0;

  bool primary() const { return reachable && !read_only && !replicating; }
  // "read_only=OFF, not replicating (server_id 2)", "unreachable: ...", "read_only=ON".
  std::string Describe() const;
};

// The role of the server `query` is connected to.
Status ReadPrimaryRole(QueryConnection* query, PrimaryProbe* out);
// Connects to `options` (its connect timeout) and reads the role; never fails: an error is
// an unreachable probe.
PrimaryProbe ProbePrimary(const ConnectionOptions& options);

// The candidate to stream from: the current one while it is primary, else the first primary
// in list order; -1 when none is. `split` is set when more than one is (each not
// read-only and not replicating: the operator's to fix; the current or first one is taken).
int ChoosePrimary(const std::vector<PrimaryProbe>& probes, int current, bool* split);

}  // namespace canal::mysql
