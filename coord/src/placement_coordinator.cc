// PlacementCoordinator: registration, leader election and the leader's
// rounds, all on one worker thread (see the header for the protocol). The
// watched reads are WatchedReads, the leader's decision LeaderState
// (placement_internal.h).
#include "canal/coord/placement_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "canal/coord/backoff_loop.h"
#include "canal/coord/callback_gate.h"
#include "canal/coord/placement.h"
#include "canal/coord/zk_client.h"
#include "placement_internal.h"

namespace canal::coord {

namespace {

using Clock = internal::Clock;
using Reads = internal::WatchedReads;

}  // namespace

class PlacementCoordinator::Impl {
 public:
  Impl(ZkClient* zk, PlacementCoordinatorOptions options)
      : zk_(zk),
        o_(std::move(options)),
        log_(o_.logger ? o_.logger : std::make_shared<spdlog::logger>("canal-placement")),
        self_path_(layout::PlacementServerPath(o_.address)),
        destinations_(o_.destinations),
        reads_(zk, [gate = gate_](char kind) { gate->Call([kind](Impl* impl) { impl->OnWatch(kind); }); }),
        leader_(o_.address, o_.lost_server_delay, log_) {
    gate_->Open(this);
  }

  ~Impl() {
    Stop();
    reads_.Close();
    gate_->Close();
  }

  Status Start() {
    if (zk_ == nullptr) return Status::InvalidArgument("placement: no ZooKeeper client");
    if (!layout::ValidAddress(o_.address)) {
      return Status::InvalidArgument("placement: address '" + o_.address + "' is not ip:port");
    }
    for (const std::string& d : o_.destinations) {
      if (!layout::ValidNodeName(d)) return Status::InvalidArgument("placement: bad destination name '" + d + "'");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (started_) return Status::InvalidArgument("placement: started already");
      started_ = true;
      node_dirty_ = true;
    }
    // (No ZooKeeper call under mu_: the client's event thread takes mu_ in OnState.)
    listener_ = zk_->AddStateListener(
        [gate = gate_](ZkState state) { gate->Call([state](Impl* impl) { impl->OnState(state); }); });
    OnState(zk_->state());
    worker_ = std::thread(
        [this] { loop_.Run([this](Clock::time_point now) { return DueLocked(now); }, [this] { return Step(); }); });
    log_->info("placement: server {} joins ({} destinations in its conf, cap {})", o_.address,
               o_.destinations.size(), o_.cap);
    return Status::OK();
  }

  void Stop() {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!started_ || stop_called_) return;
      stop_called_ = true;
      draining_ = true;
      node_dirty_ = true;
      node_due_ = Clock::now();
      loop_.KickLocked();
      cv_.notify_all();
      log_->info("placement: server {} leaves: draining, waiting up to {} ms for its destinations to move",
                 o_.address, o_.stop_timeout.count());
      // Only while connected: cut off, nothing would tell us, and the node goes with the session anyway.
      cv_.wait_until(lock, Clock::now() + o_.stop_timeout, [&] {
        return state_.load() != ZkState::kConnected || (drain_written_ && HereLocked().empty());
      });
      loop_.StopLocked();
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
    zk_->RemoveStateListener(listener_);
    const bool led = is_leader_.exchange(false);
    if (zk_->state() == ZkState::kConnected) {
      if (Status s = zk_->Delete(self_path_); !s.ok()) {
        log_->warn("placement: removing {}: {}", self_path_, s.ToString());
      }
      // Resign at once rather than leave the others waiting for our session to end.
      std::string body, holder;
      const std::string path = layout::PlacementLeaderPath();
      if (led && zk_->Get(path, &body).ok() && layout::ParseLeader(path, body, &holder).ok() &&
          holder == o_.address) {
        if (Status s = zk_->Delete(path); !s.ok()) log_->warn("placement: resigning {}: {}", path, s.ToString());
      }
    }
    log_->info("placement: server {} left", o_.address);
  }

  void SetLoad(std::map<std::string, double> load) {
    std::lock_guard<std::mutex> lock(mu_);
    if (load == load_) return;
    load_ = std::move(load);
    const Clock::time_point due = std::max(Clock::now(), last_write_ + o_.load_interval);
    node_due_ = node_dirty_ ? std::min(node_due_, due) : due;
    node_dirty_ = true;
    loop_.KickLocked();
    cv_.notify_all();
  }

  void SetDestinations(std::set<std::string> destinations) {
    for (auto it = destinations.begin(); it != destinations.end();) {
      if (layout::ValidNodeName(*it)) {
        ++it;
      } else {
        log_->warn("placement: destination name '{}' cannot be a ZooKeeper node name: ignored", *it);
        it = destinations.erase(it);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    destinations_ = std::move(destinations);
    node_dirty_ = true;
    node_due_ = Clock::now();
    loop_.KickLocked();
    cv_.notify_all();
  }

  void SetHints(std::map<std::string, layout::DestinationHints> hints) {
    std::lock_guard<std::mutex> lock(mu_);
    if (hints == hints_) return;
    hints_ = std::move(hints);
    node_dirty_ = true;
    node_due_ = Clock::now();
    loop_.KickLocked();
    cv_.notify_all();
  }

  bool IsLeader() const { return is_leader_.load() && state_.load() == ZkState::kConnected; }
  Assignment CurrentAssignment() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
  }
  std::set<std::string> AssignedHere() const {
    std::lock_guard<std::mutex> lock(mu_);
    return HereLocked();
  }
  const std::string& address() const { return o_.address; }

 private:
  std::set<std::string> HereLocked() const {
    std::set<std::string> here;
    for (const auto& [d, server] : current_.assignment) {
      if (server == o_.address) here.insert(d);
    }
    return here;
  }

  layout::ServerNode DesiredLocked() const {
    return layout::ServerNode{o_.address, o_.cap, destinations_, draining_, load_, hints_};
  }

  // ---- events (the client's event thread): flag and wake, nothing more ----

  void OnState(ZkState state) {
    state_.store(state);
    std::lock_guard<std::mutex> lock(mu_);
    loop_.KickLocked();
    cv_.notify_all();
  }

  void OnWatch(char kind) {
    std::lock_guard<std::mutex> lock(mu_);
    switch (kind) {
      case Reads::kSelf: self_check_ = true; break;
      case Reads::kLeader: leader_check_ = true; break;
      case Reads::kAssign: assignment_check_ = true; break;
      default: MarkLeadDirtyLocked(Clock::now() + o_.coalesce); break;
    }
    loop_.KickLocked();
    cv_.notify_all();
  }

  // The first change of a burst sets the time; later ones do not push it back.
  void MarkLeadDirtyLocked(Clock::time_point at) {
    recompute_at_ = lead_dirty_ ? std::min(recompute_at_, at) : at;
    lead_dirty_ = true;
  }

  // ---- the worker ---------------------------------------------------------

  // Under mu_: when the worker's next round is due (a kick comes sooner).
  Clock::time_point DueLocked(Clock::time_point now) const {
    Clock::time_point wake = now + o_.retry_max;  // a slow tick; events and state changes kick earlier
    const ZkState state = state_.load();
    if (state == ZkState::kConnected) {
      if (!registered_ || self_check_ || leader_check_ || assignment_check_) wake = now;
      if (node_dirty_) wake = std::min(wake, node_due_);
      if (is_leader_.load() && lead_dirty_) wake = std::min(wake, recompute_at_);
    } else if (state == ZkState::kExpired && o_.reopen_expired_session) {
      wake = now;
    }
    return wake;
  }

  // One round; false when a ZooKeeper call failed (the caller backs off).
  bool Step() {
    const ZkState state = zk_->state();
    if (state == ZkState::kExpired) return SessionLost();
    if (state != ZkState::kConnected) return true;  // reconnects by itself; a closed client is its owner's
    const int64_t sid = zk_->session_id();
    if (sid != session_) NewSession(sid);
    bool ok = SyncNode();
    ok = CheckLeader() && ok;
    ok = ReadAssignment() && ok;
    ok = Lead() && ok;
    return ok;
  }

  bool SessionLost() {
    if (session_ != 0) {
      log_->warn("placement: server {}: ZooKeeper session expired (its nodes are gone){}", o_.address,
                 o_.reopen_expired_session ? "; opening a new one" : "");
      LoseLeadership("session expired");
      session_ = 0;
    }
    if (!o_.reopen_expired_session) return true;
    return loop_.ReopenSession(*zk_, *log_, "placement: server " + o_.address + ": reopening the ZooKeeper session");
  }

  void NewSession(int64_t sid) {
    if (session_ != 0) LoseLeadership("the ZooKeeper session changed");
    session_ = sid;
    registered_ = false;
    ResetLeaderState();
    reads_.ForgetWatches();  // they died with their session
    std::lock_guard<std::mutex> lock(mu_);
    self_check_ = false;
    leader_check_ = true;
    assignment_check_ = true;
    lead_dirty_ = false;
    node_dirty_ = true;
    node_due_ = Clock::now();
  }

  // Registers this server's node, or brings its body up to date.
  bool SyncNode() {
    bool self_check = false;
    bool due = false;
    layout::ServerNode desired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      self_check = self_check_;
      self_check_ = false;
      due = node_dirty_ && Clock::now() >= node_due_;
      desired = DesiredLocked();
    }
    if (registered_ && self_check) {
      bool exists = false;
      std::string body;
      if (Status s = reads_.Get(Reads::kSelf, self_path_, &exists, &body); !s.ok()) {
        log_->warn("placement: reading {}: {}", self_path_, s.ToString());
        std::lock_guard<std::mutex> lock(mu_);
        self_check_ = true;
        return false;
      }
      if (!exists) {
        log_->warn("placement: server {}: its node {} was deleted; registering again", o_.address, self_path_);
        registered_ = false;
      }
    }
    Status s;
    if (!registered_) {
      s = Register(desired);
    } else if (due) {
      bool exists = false;
      s = zk_->Exists(self_path_, &exists);
      // (Never SetOrCreate a missing node: it would come back persistent and outlive us.)
      if (s.ok() && !exists) {
        registered_ = false;
        s = Register(desired);
      } else if (s.ok()) {
        s = zk_->SetOrCreate(self_path_, layout::ServerNodeBody(desired));
      }
    } else {
      return true;
    }
    if (!s.ok()) {
      log_->warn("placement: server {}: writing {} (retrying in {} ms): {}", o_.address, self_path_,
                 loop_.backoff().count(), s.ToString());
      return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (DesiredLocked() == desired) node_dirty_ = false;
    last_write_ = Clock::now();
    drain_written_ = desired.draining;
    cv_.notify_all();
    return true;
  }

  // Creates our ephemeral node, replacing one an earlier process with our
  // address left (its session ends anyway), and watches it.
  Status Register(const layout::ServerNode& desired) {
    const std::string body = layout::ServerNodeBody(desired);
    bool created = false;
    Status s = zk_->CreateNode(self_path_, body, ZkCreateMode::kEphemeral, true, &created);
    if (s.ok() && !created) {
      s = zk_->Delete(self_path_);
      if (s.ok()) s = zk_->CreateNode(self_path_, body, ZkCreateMode::kEphemeral, true, &created);
      if (s.ok() && !created) s = Status::IOError("placement: " + self_path_ + " keeps reappearing");
    }
    CANAL_RETURN_IF_ERROR(s);
    registered_ = true;
    log_->info("placement: server {} registered {}", o_.address, self_path_);
    bool exists = false;
    std::string ignored;
    if (!reads_.Get(Reads::kSelf, self_path_, &exists, &ignored).ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      self_check_ = true;  // arm it at the next round
    }
    return Status::OK();
  }

  bool CheckLeader() {
    bool draining = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!leader_check_) return true;
      leader_check_ = false;
      draining = draining_;
    }
    const std::string path = layout::PlacementLeaderPath();
    auto again = [&] {
      std::lock_guard<std::mutex> lock(mu_);
      leader_check_ = true;
    };
    bool exists = false;
    std::string body;
    Status s = reads_.Get(Reads::kLeader, path, &exists, &body);
    if (s.ok() && !exists) {
      LoseLeadership("the leader node is gone");
      if (draining) return true;  // a leaving server does not take the lead
      bool created = false;
      s = zk_->CreateNode(path, layout::LeaderBody(o_.address), ZkCreateMode::kEphemeral, true, &created);
      if (s.ok()) {
        if (created) BecomeLeader();
        else again();  // another won: read whom
        return true;
      }
    }
    if (!s.ok()) {
      log_->warn("placement: server {}: leader node {} (retrying in {} ms): {}", o_.address, path,
                 loop_.backoff().count(), s.ToString());
      again();
      return false;
    }
    std::string holder;
    if (Status p = layout::ParseLeader(path, body, &holder); !p.ok()) log_->warn("placement: {}", p.message());
    if (holder == o_.address) {
      if (session_ != 0 && leader_session_ == session_) return true;
      // Ours from an earlier session or process: it would keep everyone from leading until that session ends.
      log_->info("placement: leader node {} names server {} from an earlier session; replacing it", path, o_.address);
      again();
      return zk_->Delete(path).ok();
    }
    LoseLeadership("server " + (holder.empty() ? std::string("(unreadable)") : holder) + " leads now");
    return true;
  }

  void BecomeLeader() {
    leader_session_ = session_;
    ResetLeaderState();
    is_leader_.store(true);
    std::lock_guard<std::mutex> lock(mu_);
    MarkLeadDirtyLocked(Clock::now());
    log_->info("placement: server {} leads the placement", o_.address);
  }

  void LoseLeadership(const std::string& why) {
    leader_session_ = 0;
    if (is_leader_.exchange(false)) log_->info("placement: server {} no longer leads: {}", o_.address, why);
  }

  bool ReadAssignment() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!assignment_check_) return true;
      assignment_check_ = false;
    }
    const std::string path = layout::PlacementAssignmentPath();
    bool exists = false;
    std::string body;
    if (Status s = reads_.Get(Reads::kAssign, path, &exists, &body); !s.ok()) {
      log_->warn("placement: reading {} (retrying in {} ms): {}", path, loop_.backoff().count(), s.ToString());
      std::lock_guard<std::mutex> lock(mu_);
      assignment_check_ = true;
      return false;
    }
    Assignment a;
    Status p = exists ? layout::ParseAssignment(path, body, &a) : Status::OK();
    if (!exists || !p.ok()) {
      if (!p.ok()) log_->warn("placement: keeping the assignment in force: {}", p.message());
      DefendAssignment();
      return true;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (a != current_) DefendAssignmentLocked();  // another writer (by hand): the leader rewrites it
    }
    Deliver(a);
    return true;
  }

  // The leader writes the assignment node alone: one deleted, garbled or
  // written by someone else is recomputed and rewritten.
  void DefendAssignment() {
    std::lock_guard<std::mutex> lock(mu_);
    DefendAssignmentLocked();
  }
  void DefendAssignmentLocked() {
    if (is_leader_.load()) MarkLeadDirtyLocked(Clock::now() + o_.coalesce);
  }

  void Deliver(const Assignment& a) {
    size_t here = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      highest_generation_ = std::max(highest_generation_, a.generation);
      if (a == current_) return;
      current_ = a;
      here = HereLocked().size();
      cv_.notify_all();
    }
    log_->info("placement: generation {} (by {}) gives server {} {} of {} destinations ({} unassigned)", a.generation,
               a.leader, o_.address, here, a.assignment.size(), a.unassigned.size());
    if (o_.on_assignment) o_.on_assignment(a, a.generation);
  }

  // ---- the leader ---------------------------------------------------------

  void ResetLeaderState() {
    reads_.ClearCache();
    leader_.Reset(Clock::now());
  }

  bool Lead() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!is_leader_.load() || !lead_dirty_ || Clock::now() < recompute_at_) return true;
      lead_dirty_ = false;
    }
    internal::ClusterSnapshot g;
    Status s = internal::ReadSnapshot(zk_, &reads_, &leader_, &g);
    if (s.ok() && !g.has_base) {
      std::lock_guard<std::mutex> lock(mu_);
      g.base = current_;  // unreadable or missing: start from what we knew, and rewrite it
      g.base.unassigned.clear();
    }
    if (s.ok()) s = Recompute(g);
    if (s.ok()) return true;
    log_->warn("placement: leader {}: recomputing (retrying in {} ms): {}", o_.address, loop_.backoff().count(),
               s.ToString());
    std::lock_guard<std::mutex> lock(mu_);
    MarkLeadDirtyLocked(Clock::now());
    return false;
  }

  Status Recompute(const internal::ClusterSnapshot& g) {
    internal::LeaderDecision d = leader_.Decide(g, Clock::now());
    if (d.recheck_at) {
      std::lock_guard<std::mutex> lock(mu_);
      MarkLeadDirtyLocked(*d.recheck_at);
    }
    if (!d.changed) return Status::OK();
    Assignment& next = d.next;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Leadership in doubt (its watch fired): settle that first, then come back.
      if (leader_check_ || !is_leader_.load()) {
        MarkLeadDirtyLocked(Clock::now());
        return Status::OK();
      }
      next.generation = std::max(g.base.generation, highest_generation_) + 1;
    }
    CANAL_RETURN_IF_ERROR(zk_->SetOrCreate(layout::PlacementAssignmentPath(), layout::AssignmentBody(next)));
    log_->info("placement: leader {} wrote generation {}: {} assigned, {} unassigned, {} moves{}{}", o_.address,
               next.generation, next.assignment.size(), next.unassigned.size(), d.moves.size(),
               d.moves.empty() ? "" : ": ", internal::MovesText(d.moves));
    for (const auto& [dest, why] : next.unassigned) {
      if (g.base.unassigned.count(dest) == 0) log_->warn("placement: destination {} is unassigned: {}", dest, why);
    }
    Deliver(next);
    return Status::OK();
  }

  // ZooKeeper calls watches and listeners on its own thread, possibly after
  // the coordinator is gone (a one-shot watch outlives us): they go through this.
  ZkClient* const zk_;
  const PlacementCoordinatorOptions o_;
  std::shared_ptr<spdlog::logger> log_;
  const std::string self_path_;
  const std::shared_ptr<CallbackGate<Impl>> gate_ = std::make_shared<CallbackGate<Impl>>();
  std::set<std::string> destinations_;  // guarded by mu_ (so are the fields down to current_)
  Reads reads_;
  internal::LeaderState leader_;  // the worker's

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;       // guarded by mu_
  bool stop_called_ = false;
  std::map<std::string, double> load_;
  std::map<std::string, layout::DestinationHints> hints_;
  bool draining_ = false;      // Stop() was called
  bool node_dirty_ = false;    // our node's body is behind
  Clock::time_point node_due_{};
  Clock::time_point last_write_{};
  bool drain_written_ = false;  // our node says draining
  bool self_check_ = false;
  bool leader_check_ = true;
  bool assignment_check_ = true;
  bool lead_dirty_ = false;
  Clock::time_point recompute_at_{};
  uint64_t highest_generation_ = 0;
  Assignment current_;

  std::atomic<ZkState> state_{ZkState::kConnecting};
  std::atomic<bool> is_leader_{false};
  int listener_ = 0;

  // The worker's own.
  int64_t session_ = 0;         // the session our nodes belong to; 0 none
  int64_t leader_session_ = 0;  // the session that created our leader node; 0 none
  bool registered_ = false;

  BackoffLoop loop_{&mu_, &cv_, o_.retry_min, o_.retry_max};  // its flags guarded by mu_
  std::thread worker_;
};

PlacementCoordinator::PlacementCoordinator(ZkClient* zk, PlacementCoordinatorOptions options)
    : impl_(std::make_unique<Impl>(zk, std::move(options))) {}
PlacementCoordinator::~PlacementCoordinator() = default;
Status PlacementCoordinator::Start() { return impl_->Start(); }
void PlacementCoordinator::Stop() { impl_->Stop(); }
void PlacementCoordinator::SetLoad(std::map<std::string, double> bytes_per_second) {
  impl_->SetLoad(std::move(bytes_per_second));
}
void PlacementCoordinator::SetHints(std::map<std::string, layout::DestinationHints> hints) {
  impl_->SetHints(std::move(hints));
}
void PlacementCoordinator::SetDestinations(std::set<std::string> destinations) {
  impl_->SetDestinations(std::move(destinations));
}
bool PlacementCoordinator::IsLeader() const { return impl_->IsLeader(); }
Assignment PlacementCoordinator::CurrentAssignment() const { return impl_->CurrentAssignment(); }
std::set<std::string> PlacementCoordinator::AssignedHere() const { return impl_->AssignedHere(); }
const std::string& PlacementCoordinator::address() const { return impl_->address(); }

}  // namespace canal::coord
