#include "canal/parser/gtid_state.h"

namespace canal::parser {

void GtidStateTracker::Reset() {
  known_ = false;
  state_ = binlog::GtidSet();
  base_.reset();
  base_behind_ = false;
}

void GtidStateTracker::Start(const binlog::GtidSet& state) {
  Reset();
  if (state.flavor() == binlog::GtidSet::Flavor::kMysql) return;
  // An empty state is a real one (a primary that never wrote a GTID).
  known_ = true;
  state_ = state;
  Rebase();
}

void GtidStateTracker::OnGtidList(const binlog::GtidSet& state) {
  if (state.flavor() == binlog::GtidSet::Flavor::kMysql) return;
  if (known_) {
    // The file's list includes every domain so far; ours may know one the list does not
    // (a fake list of a GTID start names only the requested state): keep the union.
    if (!state_.Add(state).ok()) return;
  } else {
    known_ = true;
    state_ = state;
  }
  Rebase();
}

void GtidStateTracker::Rebase() {
  base_ = std::make_shared<const std::string>(state_.ToString());
  base_behind_ = false;
}

const std::shared_ptr<const std::string>& GtidStateTracker::Base() {
  // Exact for every transaction, not only for one of another domain than the last: the sink
  // puts resume points inside every transaction of more than one event (after its BEGIN, after
  // each rows event), and a cursor there resumes on the state before the transaction.
  if (known_ && base_behind_) Rebase();
  return base_;
}

void GtidStateTracker::Delivered(uint32_t domain, uint32_t server_id, uint64_t seq_no) {
  if (!known_) return;
  if (!state_.AddMariadb(domain, server_id, seq_no).ok()) {
    Reset();  // a MySQL state cannot take it: not tracked
    return;
  }
  base_behind_ = true;
}

Status GtidStateAt(const LogPosition& cursor, binlog::GtidSet* out) {
  *out = binlog::GtidSet();
  if (cursor.gtid_set == nullptr) return Status::NotFound("the cursor carries no GTID set");
  CANAL_RETURN_IF_ERROR(binlog::GtidSet::Parse(*cursor.gtid_set, out).WithContext("the cursor's gtidSet"));
  if (cursor.transaction_begin != 0 || cursor.gtid.empty()) return Status::OK();
  binlog::GtidSet own;
  CANAL_RETURN_IF_ERROR(binlog::GtidSet::Parse(cursor.gtid, &own).WithContext("the cursor's gtid"));
  if (own.flavor() != binlog::GtidSet::Flavor::kMariadb) {
    return Status::NotSupported("the cursor's gtid '" + cursor.gtid + "' is not a MariaDB GTID");
  }
  return out->Add(own).WithContext("the cursor's gtid");
}

}  // namespace canal::parser
