#include "canal/client/cluster_connector.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <limits>
#include <utility>

#include "canal/client/server_refusal.h"
#include "canal/coord/canal_layout.h"
#include "canal/coord/zk_client.h"

namespace canal::client {

using Clock = std::chrono::steady_clock;
using coord::ZkState;

namespace {

constexpr std::string_view kNotActiveMarker = "not the active client";

Clock::time_point After(std::chrono::milliseconds wait) {
  const auto now = Clock::now();
  if (wait.count() < 0 || wait >= std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now)) {
    return Clock::time_point::max();
  }
  return now + wait;
}

int64_t MillisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}


// Failures that another connection (to this or another server) may not have.
// An ack the server did not apply (409) ends that connection too: the batch
// comes again after the reconnect's rollback.
bool WorthFailover(const Status& s) {
  return s.code() == Status::Code::kIOError || s.code() == Status::Code::kCorruption || NotServedHere(s) ||
         IsAckNotApplied(s);
}

// Failures of a connection attempt worth another attempt. Refused
// authentication, a bad filter or options are not: every server would say so.
bool WorthAnotherAttempt(const Status& s) {
  return WorthFailover(s) || s.code() == Status::Code::kNotFound;
}

std::string DefaultClientAddress() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "localhost");
  return std::string(host) + ":" + std::to_string(::getpid());
}


}  // namespace

bool IsNotActiveClient(const Status& status) {
  return status.code() == Status::Code::kAborted && status.subcode() == kErrorNotActiveClient;
}

// What ZooKeeper's callbacks report. They run on the ZooKeeper client's
// thread, so they only set flags here and wake waiters; the calls act on them.
// `epoch` tells callbacks of a closed session (ignored) from the current one's.
struct ClusterConnector::Signals {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t events = 0;
  uint64_t epoch = 0;
  bool interrupted = false;          // Disconnect() wants waits to end
  bool session_expired = false;
  bool zk_disconnected = false;
  Clock::time_point disconnected_since;
  bool running_changed = false;      // the server running node changed since read
  bool running_watch_armed = false;
  bool client_node_changed = false;  // our client running node changed or went
  bool client_watch_armed = false;

  uint64_t Events() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }
  // Runs `change` under the lock if `from_epoch` is current, then wakes waiters.
  template <typename F>
  void Report(uint64_t from_epoch, F change) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (from_epoch != epoch) return;
      change();
      ++events;
    }
    cv.notify_all();
  }
};

ClusterConnector::ClusterConnector(ClusterConnectorOptions options)
    : options_(std::move(options)), signals_(std::make_shared<Signals>()) {}

ClusterConnector::~ClusterConnector() { Disconnect(); }

std::string ClusterConnector::Where() const {
  return "destination \"" + options_.destination + "\" (client id " + options_.client_id + ")";
}

std::string ClusterConnector::RunningPath() const { return coord::layout::ServerRunningPath(options_.destination); }

std::string ClusterConnector::ClientRunningPath() const {
  return coord::layout::ClientRunningPath(options_.destination, options_.client_id);
}

Clock::time_point ClusterConnector::CallDeadline() const { return After(options_.retry.give_up_after); }

Status ClusterConnector::ValidateOptions() const {
  const bool zk = !options_.zk_servers.empty();
  if (zk == !options_.addresses.empty()) {
    return Status::InvalidArgument(
        "cluster connector: give either ClusterConnectorOptions::zk_servers (to follow the running server) or "
        "ClusterConnectorOptions::addresses (a fixed list), not " + std::string(zk ? "both" : "neither"));
  }
  if (options_.destination.empty() || options_.destination.find('/') != std::string::npos) {
    return Status::InvalidArgument("cluster connector: destination \"" + options_.destination +
                                   "\" is empty or holds '/' (ClusterConnectorOptions::destination names the instance)");
  }
  if (options_.client_id.empty() || options_.client_id.find('/') != std::string::npos) {
    return Status::InvalidArgument("cluster connector: client id \"" + options_.client_id +
                                   "\" is empty or holds '/' (Canal's clients use 1001)");
  }
  for (const auto& a : options_.addresses) {
    if (a.rfind(':') == std::string::npos) {
      return Status::InvalidArgument("cluster connector: address \"" + a +
                                     "\" has no port (ClusterConnectorOptions::addresses holds host:port values)");
    }
  }
  if (options_.retry.max_attempts < 1) {
    return Status::InvalidArgument("cluster connector: RetryPolicy::max_attempts is " +
                                   std::to_string(options_.retry.max_attempts) + "; it must be at least 1");
  }
  return Status::OK();
}

bool ClusterConnector::WaitForEvent(uint64_t seen, Clock::time_point until) {
  std::unique_lock<std::mutex> lock(signals_->mu);
  auto woken = [&] { return signals_->interrupted || signals_->events != seen; };
  if (until == Clock::time_point::max()) {
    signals_->cv.wait(lock, woken);
  } else {
    signals_->cv.wait_until(lock, until, woken);
  }
  return !signals_->interrupted;
}

// --- ZooKeeper session ------------------------------------------------------

void ClusterConnector::CloseZk() {
  {
    std::lock_guard<std::mutex> lock(signals_->mu);
    ++signals_->epoch;  // late callbacks of the old session are ignored
    signals_->session_expired = false;
    signals_->zk_disconnected = false;
    signals_->running_changed = false;
    signals_->running_watch_armed = false;
    signals_->client_node_changed = false;
    signals_->client_watch_armed = false;
  }
  if (zk_) {
    zk_->Close();  // ends the session: our ephemeral nodes go now, not after the timeout
    zk_.reset();
  }
  active_ = false;
}

Status ClusterConnector::EnsureZk(Clock::time_point deadline) {
  if (zk_ && zk_->state() == ZkState::kExpired) {
    if (active_) return LoseActive("its ZooKeeper session expired");
    CloseZk();
  }
  if (!zk_) {
    coord::ZkOptions zo;
    zo.servers = options_.zk_servers;
    zo.session_timeout_ms = options_.zk_session_timeout_ms;
    zo.operation_timeout_ms = static_cast<int>(std::clamp<int64_t>(options_.connect_timeout.count(), 100, 60'000));
    std::unique_ptr<coord::ZkClient> zk;
    Status s = coord::ZkClient::Create(zo, &zk);
    if (!s.ok()) return s.WithContext(Where() + ": ZooKeeper " + options_.zk_servers);
    uint64_t epoch;
    {
      std::lock_guard<std::mutex> lock(signals_->mu);
      epoch = signals_->epoch;
    }
    std::weak_ptr<Signals> weak = signals_;
    zk->AddStateListener([weak, epoch](ZkState state) {
      auto sig = weak.lock();
      if (!sig) return;
      sig->Report(epoch, [&] {
        if (state == ZkState::kExpired) sig->session_expired = true;
        if (state == ZkState::kConnecting && !sig->zk_disconnected) {
          sig->zk_disconnected = true;
          sig->disconnected_since = Clock::now();
        }
        if (state == ZkState::kConnected) sig->zk_disconnected = false;
      });
    });
    zk_ = std::move(zk);
  }
  if (zk_->state() == ZkState::kConnected) return Status::OK();
  auto limit = options_.connect_timeout;
  if (deadline != Clock::time_point::max()) {
    limit = std::min(limit, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
  }
  Status s = zk_->WaitConnected(std::max(limit, std::chrono::milliseconds(1)));
  if (!s.ok()) {
    return Status::IOError(Where() + ": cannot reach ZooKeeper at " + options_.zk_servers + " within " +
                           std::to_string(limit.count()) + " ms (ClusterConnectorOptions::zk_servers): " +
                           std::string(s.message()));
  }
  return Status::OK();
}

Status ClusterConnector::ReadAndWatch(const std::string& path, Watch watch, WatchMode mode, bool* exists,
                                      std::string* data) {
  const bool once = mode == WatchMode::kOnce || mode == WatchMode::kOnceAndReset;
  const bool reset = mode == WatchMode::kOnceAndReset || mode == WatchMode::kRearmAndReset;
  bool armed;
  uint64_t epoch;
  {
    std::lock_guard<std::mutex> lock(signals_->mu);
    armed = signals_.get()->*watch.armed;
    epoch = signals_->epoch;
    signals_.get()->*watch.armed = true;
    if (reset && watch.changed != nullptr) signals_.get()->*watch.changed = false;
  }
  if (once && armed) {
    Status s = zk_->Get(path, data);
    *exists = s.ok();
    return s.IsNotFound() ? Status::OK() : s;
  }
  std::weak_ptr<Signals> weak = signals_;
  Status s = zk_->GetAndWatch(
      path,
      [weak, epoch, watch] {
        if (auto sig = weak.lock()) sig->Report(epoch, [&] {
            if (watch.changed != nullptr) sig.get()->*watch.changed = true;
            sig.get()->*watch.armed = false;
          });
      },
      exists, data);
  if (!s.ok() && once) {
    std::lock_guard<std::mutex> lock(signals_->mu);
    signals_.get()->*watch.armed = false;
  }
  return s;
}

// --- client election ----------------------------------------------------------

Status ClusterConnector::Elect() {
  const std::string path = ClientRunningPath();
  const std::string data = coord::layout::ClientRunningBody(
      options_.client_address.empty() ? DefaultClientAddress() : options_.client_address, options_.client_id);
  const auto start = Clock::now();
  const auto give_up = After(options_.election_wait);
  std::string holder;
  while (true) {
    const uint64_t seen = signals_->Events();
    CANAL_RETURN_IF_ERROR(EnsureZk(After(options_.connect_timeout)));
    bool created = false;
    Status s = zk_->CreateNode(path, data, coord::ZkCreateMode::kEphemeral, /*make_parents=*/true, &created);
    if (!s.ok()) return s.WithContext(Where() + ": taking the client running node");
    if (created) {
      active_ = true;
      lost_active_ = false;
      lost_reason_.clear();
      // Watch our own node: its deletion (by an operator, or a session we
      // did not see expire) means another client may take over.
      bool exists = false;
      std::string ignored;
      s = ReadAndWatch(path, Watch{&Signals::client_watch_armed, &Signals::client_node_changed},
                       WatchMode::kRearmAndReset, &exists, &ignored);
      if (!s.ok() || !exists) {
        // Without the watch we could not see the node go: give it up now.
        return LoseActive(!s.ok() ? "its node could not be watched: " + std::string(s.message())
                                  : "its node vanished right after it was created");
      }
      return Status::OK();
    }
    // Another client holds it: watch it (once; the watch stays armed until it
    // fires). Its firing only wakes the wait: nothing to remember.
    bool exists = false;
    s = ReadAndWatch(path, Watch{&Signals::client_watch_armed, nullptr}, WatchMode::kOnce, &exists, &holder);
    if (!s.ok()) return s.WithContext(Where() + ": reading the client running node");
    if (!exists) continue;  // it just went: try to take it
    if (Clock::now() >= give_up || !WaitForEvent(seen, give_up)) {
      const bool interrupted = Clock::now() < give_up;
      return Status::Aborted(Where() + ": " + std::string(kNotActiveMarker) + ": " + path + " is held by " + holder +
                             (interrupted ? "; Disconnect() ended the wait"
                                          : "; waited " + std::to_string(MillisSince(start)) +
                                                " ms (ClusterConnectorOptions::election_wait): Connect() again "
                                                "to keep waiting"))
          .WithSubcode(kErrorNotActiveClient);
    }
  }
}

std::string ClusterConnector::DropConnection() {
  std::string was = std::move(current_address_);
  conn_.reset();
  current_address_.clear();
  for (int64_t id : held_batches_) stale_batches_[id] = was;
  held_batches_.clear();
  return was;
}

Status ClusterConnector::LoseActive(std::string_view why) {
  const std::string was = DropConnection();
  CloseZk();  // frees the node if it is still ours, so another client can take over
  lost_active_ = true;
  lost_reason_ = std::string(why);
  return Status::Aborted(Where() + ": " + std::string(kNotActiveMarker) + " any more: " + lost_reason_ +
                         "; stopped consuming" + (was.empty() ? "" : " (connection to " + was + " closed)") +
                         ". Unacked batches are delivered again to the active client; Connect() to wait to be "
                         "re-elected")
      .WithSubcode(kErrorNotActiveClient);
}

Status ClusterConnector::CheckActive() {
  if (options_.zk_servers.empty() || !options_.client_ha) return Status::OK();
  if (lost_active_) {
    return Status::Aborted(Where() + ": " + std::string(kNotActiveMarker) + " (" + lost_reason_ +
                           "): Connect() to wait to be re-elected")
        .WithSubcode(kErrorNotActiveClient);
  }
  if (!active_ || !zk_) {
    return Status::Aborted(Where() + ": " + std::string(kNotActiveMarker) + ": call Connect() first")
        .WithSubcode(kErrorNotActiveClient);
  }
  bool expired, node_changed, gone_too_long = false;
  int64_t gone_ms = 0;
  {
    std::lock_guard<std::mutex> lock(signals_->mu);
    expired = signals_->session_expired;
    node_changed = signals_->client_node_changed;
    signals_->client_node_changed = false;
    if (signals_->zk_disconnected) {
      gone_ms = MillisSince(signals_->disconnected_since);
      // The server expires the session after its timeout without us; another
      // client may then take the node, so stop before that can happen.
      int timeout = zk_->negotiated_session_timeout_ms();
      if (timeout <= 0) timeout = options_.zk_session_timeout_ms;
      gone_too_long = gone_ms >= timeout;
    }
  }
  if (expired || zk_->state() == ZkState::kExpired) return LoseActive("its ZooKeeper session expired");
  if (gone_too_long) {
    return LoseActive("ZooKeeper at " + options_.zk_servers + " has been unreachable for " + std::to_string(gone_ms) +
                      " ms, longer than the session timeout");
  }
  if (node_changed) {
    bool exists = true;
    std::string ignored;
    Status s = ReadAndWatch(ClientRunningPath(), Watch{&Signals::client_watch_armed, &Signals::client_node_changed},
                            WatchMode::kRearm, &exists, &ignored);
    if (!s.ok()) {
      // ZooKeeper unreachable for now: look again at the next call.
      std::lock_guard<std::mutex> lock(signals_->mu);
      signals_->client_node_changed = true;
      signals_->client_watch_armed = false;
    } else if (!exists) {
      return LoseActive("its client running node " + ClientRunningPath() + " was deleted");
    }
  }
  return Status::OK();
}

// --- finding the server -------------------------------------------------------

Status ClusterConnector::ReadRunningAddress(std::string* address) {
  address->clear();
  const std::string path = RunningPath();
  CANAL_RETURN_IF_ERROR(EnsureZk(After(options_.connect_timeout)));
  bool exists = false;
  std::string data;
  Status s = ReadAndWatch(path, Watch{&Signals::running_watch_armed, &Signals::running_changed},
                          WatchMode::kOnceAndReset, &exists, &data);
  if (!s.ok()) return s.WithContext(Where() + ": reading the running node");
  if (!exists) {
    return Status::NotFound("no canal server is running " + Where() + ": " + path +
                            " does not exist in ZooKeeper " + options_.zk_servers +
                            " (is a canal server with canal.zkServers set to it serving the destination?)");
  }
  coord::layout::RunningNode node;
  if (Status p = coord::layout::ParseRunningNode(data, &node); !p.ok()) {
    return Status::Corruption(Where() + ": the running node " + path + ": " + std::string(p.message()));
  }
  if (!node.active) {
    return Status::NotFound("the running node " + path + " of " + Where() + " says active:false (" + data + ")");
  }
  *address = node.address;
  return Status::OK();
}

Status ClusterConnector::NextAddress(std::string* address) {
  if (!options_.zk_servers.empty()) return ReadRunningAddress(address);
  *address = options_.addresses[next_address_ % options_.addresses.size()];
  next_address_ = (next_address_ + 1) % options_.addresses.size();
  return Status::OK();
}

Status ClusterConnector::ConnectTo(const std::string& address) {
  ConnectorOptions co;
  co.address = address;
  co.destination = options_.destination;
  co.username = options_.username;
  co.password = options_.password;
  co.client_id = options_.client_id;
  co.idle_timeout = options_.idle_timeout;
  co.read_timeout = options_.read_timeout;
  co.connect_timeout = options_.connect_timeout;
  co.low_latency_get = options_.low_latency_get;
  co.tls = options_.tls;
  auto c = std::make_unique<Connector>(co);
  CANAL_RETURN_IF_ERROR(c->Connect());
  if (subscribed_) {
    CANAL_RETURN_IF_ERROR(c->Subscribe(filter_));
    // As Canal's Java client does after a reconnect: every batch the old
    // connection handed out comes again (a server that ignored the rollback
    // sent before the subscription still gets this one).
    CANAL_RETURN_IF_ERROR(c->Rollback());
  }
  conn_ = std::move(c);
  current_address_ = address;
  return Status::OK();
}

Status ClusterConnector::ConnectWithRetries(std::string_view why, Clock::time_point deadline) {
  const auto start = Clock::now();
  auto backoff = std::max(options_.retry.initial_backoff, std::chrono::milliseconds(1));
  std::vector<std::string> tried;
  int attempt = 0;
  while (true) {
    ++attempt;
    const uint64_t seen = signals_->Events();
    CANAL_RETURN_IF_ERROR(CheckActive());
    std::string address;
    Status s = NextAddress(&address);
    if (s.ok()) s = ConnectTo(address);
    if (s.ok()) return Status::OK();
    tried.push_back((address.empty() ? std::string("finding the server") : address) + " (" + s.ToString() + ")");
    if (!WorthAnotherAttempt(s)) return s;
    if (attempt >= options_.retry.max_attempts || Clock::now() + backoff >= deadline) break;
    // A watch (the running node appearing or moving) ends the pause early.
    if (!WaitForEvent(seen, Clock::now() + backoff)) {
      return Status::Aborted(Where() + ": Disconnect() called while " + std::string(why));
    }
    backoff = std::min(backoff * 2, std::max(options_.retry.max_backoff, std::chrono::milliseconds(1)));
  }
  std::string list;
  for (size_t i = 0; i < tried.size(); ++i) list += (i ? "; " : "") + std::to_string(i + 1) + ": " + tried[i];
  return Status::IOError(Where() + ": gave up " + std::string(why) + " after " + std::to_string(attempt) +
                         " attempt(s) in " + std::to_string(MillisSince(start)) +
                         " ms (ClusterConnectorOptions::retry: max_attempts " +
                         std::to_string(options_.retry.max_attempts) + ", give_up_after " +
                         std::to_string(options_.retry.give_up_after.count()) + " ms). Tried " + list);
}

Status ClusterConnector::Failover(const Status& cause, std::string_view doing, Clock::time_point deadline) {
  const std::string was = DropConnection();
  // Bounded: a client that never acks after failovers must not grow this forever.
  while (stale_batches_.size() > 100'000) stale_batches_.erase(stale_batches_.begin());
  const std::string why = "reconnecting after " + std::string(doing) + (was.empty() ? "" : " on " + was) +
                          " failed (" + cause.ToString() + ")";
  CANAL_RETURN_IF_ERROR(ConnectWithRetries(why, deadline));
  ++reconnects_;
  return Status::OK();
}

Status ClusterConnector::EnsureConnection(std::string_view doing, Clock::time_point deadline) {
  if (!connect_called_) {
    return Status::IOError(Where() + ": not connected while " + std::string(doing) +
                           ": call Connect() (and Subscribe()) first");
  }
  CANAL_RETURN_IF_ERROR(CheckActive());
  if (conn_ && conn_->connected()) return Status::OK();
  // An earlier call left no connection (its error was returned): make one now.
  return Failover(Status::IOError("no connection"), "an earlier call", deadline);
}

Status ClusterConnector::FollowMovedServer(Clock::time_point deadline) {
  if (options_.zk_servers.empty()) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(signals_->mu);
    if (!signals_->running_changed) return Status::OK();
  }
  std::string address;
  // Unreadable or absent: nowhere to move to; keep the current server until it fails.
  if (!ReadRunningAddress(&address).ok() || address == current_address_) return Status::OK();
  return Failover(Status::Aborted("the running node now names " + address), "following the running node",
                  deadline);
}

Status ClusterConnector::WithFailover(std::string_view doing, Clock::time_point deadline,
                                      const std::function<Status()>& op) {
  for (int attempt = 1;; ++attempt) {
    CANAL_RETURN_IF_ERROR(EnsureConnection(doing, deadline));
    Status s = op();
    if (s.ok() || !WorthFailover(s)) return s;  // a refusal: returned; a closed connection is remade next call
    if (IsAckNotApplied(s)) ++acks_not_applied_;
    if (attempt >= options_.retry.max_attempts || Clock::now() >= deadline) {
      return s.WithContext(Where() + ": giving up after " + std::to_string(attempt) + " tries of the " +
                           std::string(doing));
    }
    CANAL_RETURN_IF_ERROR(Failover(s, doing, deadline));
  }
}

// --- public calls -------------------------------------------------------------

Status ClusterConnector::Connect() {
  std::lock_guard<std::mutex> lock(mu_);
  CANAL_RETURN_IF_ERROR(ValidateOptions());
  conn_.reset();
  current_address_.clear();
  subscribed_ = false;
  filter_.clear();
  held_batches_.clear();
  stale_batches_.clear();
  next_address_ = 0;
  connect_called_ = true;
  if (!options_.zk_servers.empty() && options_.client_ha) {
    if (lost_active_ || (zk_ && zk_->state() == ZkState::kExpired)) {
      CloseZk();
      lost_active_ = false;
    }
    if (active_) {
      CANAL_RETURN_IF_ERROR(CheckActive());
    } else {
      CANAL_RETURN_IF_ERROR(Elect());
    }
  }
  return ConnectWithRetries("connecting", CallDeadline());
}

Status ClusterConnector::Subscribe() { return Subscribe(options_.filter); }

Status ClusterConnector::Subscribe(std::string_view filter) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string f(filter);
  const std::string doing = "subscription of " + Where();
  CANAL_RETURN_IF_ERROR(WithFailover(doing, CallDeadline(), [&] { return conn_->Subscribe(f); }));
  subscribed_ = true;
  filter_ = f;
  held_batches_.clear();  // the subscription rolled them back
  return Status::OK();
}

Status ClusterConnector::Unsubscribe() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string doing = "unsubscription of " + Where();
  CANAL_RETURN_IF_ERROR(WithFailover(doing, CallDeadline(), [&] { return conn_->Unsubscribe(); }));
  subscribed_ = false;
  held_batches_.clear();
  return Status::OK();
}

Status ClusterConnector::GetLocked(int32_t batch_size, const Wait* wait, Message* out) {
  const auto deadline = CallDeadline();
  const std::string doing = "get from " + Where();
  // The connection's get empties *out itself, after taking its buffer for the
  // next frame (message.h): emptied here only on the paths that do not get
  // there, so that buffer is not lost.
  Status s = EnsureConnection(doing, deadline);
  if (s.ok()) s = FollowMovedServer(deadline);
  if (s.ok()) {
    s = WithFailover(doing, deadline, [&] {
      return wait != nullptr ? conn_->GetWithoutAck(batch_size, wait->timeout, wait->unit, out)
                             : conn_->GetWithoutAck(batch_size, out);
    });
  }
  if (!s.ok()) {
    *out = Message();
    return s;
  }
  if (out->batch_id() != -1) {
    held_batches_.insert(out->batch_id());
    stale_batches_.erase(out->batch_id());  // the id now means this connection's batch
  }
  return Status::OK();
}

Status ClusterConnector::Fetch(int32_t batch_size, const Wait* wait, bool ack, Message* out) {
  std::lock_guard<std::mutex> lock(mu_);
  CANAL_RETURN_IF_ERROR(GetLocked(batch_size, wait, out));
  return ack ? AckLocked(out->batch_id()) : Status::OK();
}

Status ClusterConnector::Ack(int64_t batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return AckLocked(batch_id);
}

Status ClusterConnector::AckLocked(int64_t batch_id) {
  if (batch_id == -1) return Status::OK();
  const std::string what = "ack of batch " + std::to_string(batch_id);
  // A batch of a replaced connection: not sent, as the id means another
  // batch (or none) on this one. Forgotten once reported.
  auto take_stale = [&](Status* redelivered) {
    auto it = stale_batches_.find(batch_id);
    if (it == stale_batches_.end()) return false;
    const std::string& from = it->second;
    *redelivered = Status::NotFound(Where() + ": " + what + " not sent: the batch came from the connection to " +
                                    (from.empty() ? std::string("an earlier server") : from) +
                                    ", which was replaced; the server delivers it again, so treat it as not done");
    stale_batches_.erase(it);
    return true;
  };
  Status redelivered;
  if (take_stale(&redelivered)) return redelivered;
  const auto deadline = CallDeadline();
  CANAL_RETURN_IF_ERROR(EnsureConnection(what, deadline));
  if (take_stale(&redelivered)) return redelivered;  // EnsureConnection reconnected
  const std::string to = current_address_;
  Status s = conn_->Ack(batch_id);
  if (s.ok()) {
    held_batches_.erase(batch_id);
    return s;
  }
  if (!WorthFailover(s)) return s;
  // Never resent: the outcome is unknown, and on another connection the id
  // names another batch (or none).
  Status f = Failover(s, what, deadline);
  stale_batches_.erase(batch_id);
  if (!f.ok()) {
    return Status::IOError(Where() + ": " + what + " to " + to + " failed (" + s.ToString() +
                           "); its outcome is unknown, and reconnecting failed too: " + f.ToString());
  }
  return Status::NotFound(Where() + ": " + what + " to " + to + " failed (" + s.ToString() +
                          "); not resent: reconnected to " + current_address_ +
                          " and rolled back, so the batch is delivered again (unless " + to +
                          " applied the ack first); treat it as not done");
}

Status ClusterConnector::Rollback() { return Rollback(0); }

Status ClusterConnector::Rollback(int64_t batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (batch_id == -1) return Status::OK();
  // A batch of a replaced connection was rolled back by the reconnect.
  if (batch_id != 0 && stale_batches_.erase(batch_id) > 0) return Status::OK();
  const auto deadline = CallDeadline();
  const std::string what = batch_id == 0 ? "rollback" : "rollback of batch " + std::to_string(batch_id);
  CANAL_RETURN_IF_ERROR(EnsureConnection(what, deadline));
  if (batch_id != 0 && stale_batches_.erase(batch_id) > 0) return Status::OK();
  Status s = batch_id == 0 ? conn_->Rollback() : conn_->Rollback(batch_id);
  if (s.ok() || !WorthFailover(s)) {
    if (s.ok()) batch_id == 0 ? held_batches_.clear() : (void)held_batches_.erase(batch_id);
    return s;
  }
  CANAL_RETURN_IF_ERROR(Failover(s, what, deadline));  // the reconnect rolled back everything
  if (batch_id == 0) stale_batches_.clear();
  stale_batches_.erase(batch_id);
  return Status::OK();
}

void ClusterConnector::Disconnect() {
  {
    std::lock_guard<std::mutex> lock(signals_->mu);
    signals_->interrupted = true;
  }
  signals_->cv.notify_all();
  std::lock_guard<std::mutex> lock(mu_);
  conn_.reset();
  current_address_.clear();
  CloseZk();
  lost_active_ = false;
  lost_reason_.clear();
  connect_called_ = false;
  subscribed_ = false;
  held_batches_.clear();
  stale_batches_.clear();
  std::lock_guard<std::mutex> signals_lock(signals_->mu);
  signals_->interrupted = false;
}

bool ClusterConnector::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return conn_ != nullptr && conn_->connected();
}

std::string ClusterConnector::current_address() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_address_;
}

bool ClusterConnector::is_active_client() const { return active_; }

int64_t ClusterConnector::reconnects() const { return reconnects_; }

int64_t ClusterConnector::acks_not_applied() const { return acks_not_applied_; }

}  // namespace canal::client
