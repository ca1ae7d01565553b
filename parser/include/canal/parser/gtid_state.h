// GtidStateTracker: the GTID state a MariaDB stream has delivered, carried by every
// cursor so that a destination can resume on another server after a failover
// (docs/replication.md, "Failover").
//
// MariaDB's state is the last GTID of each replication domain; MySQL's the executed set
// (uuid[:tag]:intervals), which PREVIOUS_GTIDS gives at each file's start. A transaction
// carries the exact state before it as a shared `base` text (one text per
// transaction, shared by all its entries), and the state after it is `base` with
// the transaction's own GTID applied (GtidStateAt). The base must be exact: the
// sink puts resume points inside every transaction of more than one event, and a
// cursor there resumes on the state before the transaction. (A base shared across
// transactions would need the domain's previous GTID in the cursor as well: work
// for later, to save the text per transaction.)
//
// Unknown until a start names it (the cursor's set, a GTID start, the primary's
// BINLOG_GTID_POS for a binlog position) or a GTID_LIST / PREVIOUS_GTIDS event (the
// state at the start of every binlog file) does; meanwhile transactions carry no base
// and a cursor cannot move to another server.
// Thread-compatible: the parse thread's.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/binlog/gtid_set.h"

namespace canal::parser {

class GtidStateTracker {
 public:
  // Unknown again (a new start whose state is not known).
  void Reset();
  // Whether the stream's server has a GTID state to track at all (MySQL: gtid_mode=ON;
  // otherwise transactions are anonymous and no set describes a point of the stream). Off:
  // unknown, and file-start events do not make it known. On by default.
  void SetTracking(bool on);
  // The state at the stream's start (an empty set is a known, empty state).
  void Start(const binlog::GtidSet& state);
  // A GTID_LIST or PREVIOUS_GTIDS event: the state at that point of the binlog.
  void OnGtidList(const binlog::GtidSet& state);

  bool known() const { return known_; }
  const binlog::GtidSet& state() const { return state_; }

  // The base of the transaction being read: the exact state before it, as text (null while
  // unknown). Made once per transaction delivered, shared by every entry of the next one.
  const std::shared_ptr<const std::string>& Base();
  // A whole transaction with this MariaDB GTID was handed over.
  void Delivered(uint32_t domain, uint32_t server_id, uint64_t seq_no);
  // A whole transaction with this MySQL GTID was handed over.
  void DeliveredMysql(const std::array<uint8_t, 16>& sid, std::string_view tag, int64_t gno);

 private:
  void Rebase();

  bool tracking_ = true;
  bool known_ = false;
  binlog::GtidSet state_;
  std::shared_ptr<const std::string> base_;
  std::string text_;  // Rebase's buffer
  bool base_behind_ = false;  // state_ moved on since base_ was made
};

// The GTID state of the stream at `cursor`: after its transaction at a boundary, before it
// inside one (transaction_begin != 0). NotFound when the cursor carries no set.
Status GtidStateAt(const LogPosition& cursor, binlog::GtidSet* out);

}  // namespace canal::parser
