// Where a promoted MariaDB replica's history parts from what a stream
// delivered, in one replication domain: the failover's check that nothing
// delivered is silently missing from the new primary (docs/replication.md,
// "Failover"). Pure; thread-safe.
#pragma once

#include "canal/parser/binlog/gtid_set.h"

namespace canal::parser {

struct GtidDivergence {
  bool diverged = false;  // delivered transactions are missing from the new primary
  // The last GTID both histories share (null: none; the whole domain is lost).
  const binlog::GtidSet::DomainGtid* parts = nullptr;
};

// `delivered`: the stream's last GTID of the domain. `has`: the new
// primary's gtid_binlog_pos in that domain, `applied`: its gtid_slave_pos
// (what it last applied as a replica); null when it names none.
//
// A new primary whose last GTID is its own (another server id) replicated up
// to `applied` and wrote its own after, under the following numbers: the
// histories part at `applied`, however many of its own it has written yet
// (which is why its own sequence number says nothing). Otherwise it is simply
// behind when `has` is before `delivered`.
GtidDivergence FindGtidDivergence(const binlog::GtidSet::DomainGtid& delivered,
                                  const binlog::GtidSet::DomainGtid* has,
                                  const binlog::GtidSet::DomainGtid* applied);

}  // namespace canal::parser
