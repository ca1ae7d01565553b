#include "canal/parser/gtid_state.h"

namespace canal::parser {

void GtidStateTracker::Reset() {
  known_ = false;
  state_ = binlog::GtidSet();
  base_.reset();
  base_behind_ = false;
}

void GtidStateTracker::SetTracking(bool on) {
  tracking_ = on;
  if (!on) Reset();
}

void GtidStateTracker::Start(const binlog::GtidSet& state) {
  Reset();
  if (!tracking_) return;
  // An empty state is a real one (a primary that never wrote a GTID).
  known_ = true;
  state_ = state;
  Rebase();
}

void GtidStateTracker::OnGtidList(const binlog::GtidSet& state) {
  if (!tracking_) return;
  if (known_) {
    // The file's list includes every domain so far; ours may know one the list does not
    // (a fake list of a GTID start names only the requested state): keep the union. MySQL:
    // what was executed before the file is in the state already, or was skipped by a GTID
    // dump because the start's set has it; the union is right either way.
    if (!state_.Add(state).ok()) return;
  } else {
    known_ = true;
    state_ = state;
  }
  Rebase();
}

void GtidStateTracker::Rebase() {
  // The text is made in a kept buffer and copied into the shared one: a single allocation
  // for a short state (one domain), where making it apart took two.
  text_.clear();
  state_.AppendTo(&text_);
  base_ = std::make_shared<const std::string>(text_);
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

void GtidStateTracker::DeliveredMysql(const std::array<uint8_t, 16>& sid, std::string_view tag, int64_t gno) {
  if (!known_) return;
  if (!state_.AddMysql(sid, tag, gno).ok()) {
    Reset();  // a MariaDB state cannot take it: not tracked
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
  return out->Add(own).WithContext("the cursor's gtid");
}

}  // namespace canal::parser
