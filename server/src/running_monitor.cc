#include "canal/server/running_monitor.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "canal/coord/backoff_loop.h"
#include "canal/coord/callback_gate.h"
#include "canal/coord/canal_layout.h"
#include "canal/coord/zk_client.h"

namespace canal::server {

namespace layout = coord::layout;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The watchdog looks at the lease this often at most; a fence is late by this at most.
constexpr milliseconds kWatchdogTick{50};
// A watchdog tick this late means the process itself was not running.
constexpr milliseconds kStall{500};
// Used only when the server reported no session timeout (it always does once connected).
constexpr milliseconds kFallbackBound{1000};

int64_t Nanos(Clock::time_point t) { return t.time_since_epoch().count(); }

std::string SessionText(int64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

int64_t Ms(Clock::duration d) { return std::chrono::duration_cast<milliseconds>(d).count(); }

}  // namespace

std::string ClusterAddress(const std::string& register_ip, const std::string& listen_ip, uint16_t port) {
  std::string ip = register_ip;
  if (ip.empty() && listen_ip != "0.0.0.0" && listen_ip != "::" && !listen_ip.empty()) ip = listen_ip;
  if (ip.empty()) {
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) == 0) {
      for (ifaddrs* a = list; a != nullptr && ip.empty(); a = a->ifa_next) {
        if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
        if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
        char text[INET_ADDRSTRLEN];
        const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
        if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) ip = text;
      }
      freeifaddrs(list);
    }
  }
  if (ip.empty()) ip = "127.0.0.1";
  if (ip.find(':') != std::string::npos) ip = "[" + ip + "]";
  return ip + ":" + std::to_string(port);
}

// ---------------------------------------------------------------------------

class RunningMonitor::Impl {
 public:
  Impl(coord::ZkClient* zk, RunningMonitorOptions options)
      : zk_(zk),
        o_(std::move(options)),
        log_(o_.logger ? o_.logger : std::make_shared<spdlog::logger>("canal-running")) {
    gate_->Open(this);
  }

  ~Impl() {
    Stop();
    gate_->Close();
  }

  Status Start() {
    if (o_.address.empty()) return Status::InvalidArgument("running monitor: no address to announce in ZooKeeper");
    if (zk_ == nullptr) return Status::InvalidArgument("running monitor: no ZooKeeper client");
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (started_) return Status::InvalidArgument("running monitor: started already");
      started_ = true;
    }
    // (No ZooKeeper call under mu_: its event thread takes mu_ in OnState.)
    disconnected_since_ns_.store(Nanos(Clock::now()));
    listener_ = zk_->AddStateListener([gate = gate_](coord::ZkState state) {
      gate->Call([state](Impl* impl) { impl->OnState(state); });
    });
    OnState(zk_->state());
    std::lock_guard<std::mutex> lock(mu_);
    worker_ = std::thread(
        [this] { loop_.Run([this](Clock::time_point now) { return DueLocked(now); }, [this] { return Step(); }); });
    watchdog_ = std::thread([this] { WatchdogLoop(); });
    log_->info("HA: server {} contends for its destinations in ZooKeeper (takeover delay {} ms)", o_.address,
               o_.takeover_delay.count());
    return Status::OK();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!started_ || loop_.StoppingLocked()) return;
      loop_.StopLocked();
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
    if (watchdog_.joinable()) watchdog_.join();
    zk_->RemoveStateListener(listener_);
    std::vector<std::string> names;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [name, d] : dests_) names.push_back(name);
    }
    for (const std::string& name : names) Leave(name);
    if (zk_->state() == coord::ZkState::kConnected) {
      Status s = zk_->Delete(layout::ServerClusterPath(o_.address));
      if (!s.ok()) log_->warn("HA: removing {} at stop: {}", layout::ServerClusterPath(o_.address), s.ToString());
    }
    log_->info("HA: server {} stopped contending", o_.address);
  }

  void Join(const std::string& name, Handler handler) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Dest& d = dests_[name];
      d = Dest{};
      d.id = ++next_id_;
      d.handler = std::move(handler);
      if (MayContendLocked(name)) d.contend_at = Clock::now();
      loop_.KickLocked();
    }
    cv_.notify_all();
  }

  void Leave(const std::string& name) {
    bool held = false;
    {
      std::lock_guard<std::mutex> callbacks(callback_mu_);
      Dest d;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = dests_.find(name);
        if (it == dests_.end()) return;
        d = std::move(it->second);
        dests_.erase(it);
        held = d.held_session != 0 && d.held_session == session_;
      }
      if (d.active) Deactivate(name, d.handler, "this server no longer runs it");
    }
    // (Outside callback_mu_: ZooKeeper calls may take the operation timeout,
    // and fencing other destinations must not wait for them.)
    if (zk_->state() != coord::ZkState::kConnected) return;
    if (held) ReleaseRunning(name);
    if (Status s = zk_->Delete(layout::DestinationClusterPath(name, o_.address)); !s.ok()) {
      log_->warn("HA: destination {}: removing {}: {}", name, layout::DestinationClusterPath(name, o_.address),
                 s.ToString());
    }
  }

  bool IsActive(std::string_view name) const {
    if (!connected_.load(std::memory_order_acquire)) return false;
    if (!LeaseValid(Clock::now())) return false;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = dests_.find(name);
    return it != dests_.end() && it->second.active && MayContendLocked(name);
  }

  bool MayWrite(std::string_view name) const {
    if (!connected_.load(std::memory_order_acquire)) return false;
    if (!LeaseValid(Clock::now())) return false;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = dests_.find(name);
    return it != dests_.end() && (it->second.active || it->second.activating) && MayContendLocked(name);
  }

  void Assign(const std::vector<std::string>& mine) {
    if (!o_.placement) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::set<std::string, std::less<>> next(mine.begin(), mine.end());
      for (auto& [name, d] : dests_) {
        const bool now_mine = next.count(name) != 0;
        const bool was_mine = assigned_.count(name) != 0;
        if (now_mine == was_mine) continue;
        if (now_mine) {
          // Contend at once: the leader moved it here, so no takeover delay (the old owner
          // releases its running node, or loses it with its session).
          d.hand_over = false;
          if (!d.active && d.held_session == 0) d.contend_at = std::max(Clock::now(), d.retry_after);
        } else {
          d.contend_at.reset();
          d.hand_over = d.active || d.activating || d.held_session != 0;
        }
      }
      assigned_ = std::move(next);
      loop_.KickLocked();
    }
    cv_.notify_all();
  }

  std::vector<std::string> Assigned() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {assigned_.begin(), assigned_.end()};
  }

  std::vector<std::string> Active() const {
    std::vector<std::string> names;
    if (!connected_.load() || !LeaseValid(Clock::now())) return names;
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, d] : dests_) {
      if (d.active) names.push_back(name);
    }
    return names;
  }

  milliseconds fence_bound() const { return milliseconds(bound_ms_.load()); }
  const std::string& address() const { return o_.address; }

 private:
  struct Dest {
    uint64_t id = 0;  // tells a re-joined destination from the one a step started with
    bool hand_over = false;  // placement moved it away: stop it and release its running node
    Handler handler;
    bool active = false;      // activate succeeded and no deactivate since
    bool activating = false;  // the running node is ours and its handler's activate runs
    // After a failed start: contend again no sooner than this, even when our
    // own release of the running node (its deletion) says "contend at once".
    Clock::time_point retry_after{};
    bool registered = false;  // its cluster node exists in session_
    bool check = false;       // read (and watch) the running node at the next step
    std::optional<Clock::time_point> contend_at;  // try to create the running node then
    int64_t held_session = 0;  // the session that created our running node (0: none)
    std::string owner;         // address last seen in the running node
  };

  // ---- state shared with the ZooKeeper event thread and the watchdog ------

  void OnState(coord::ZkState state) {
    // ZooKeeper's event thread: note it and wake the worker, nothing more.
    const bool connected = state == coord::ZkState::kConnected;
    if (!connected && connected_.load()) disconnected_since_ns_.store(Nanos(Clock::now()));
    connected_.store(connected, std::memory_order_release);
    connecting_.store(state == coord::ZkState::kConnecting);
    {
      std::lock_guard<std::mutex> lock(mu_);
      loop_.KickLocked();
    }
    cv_.notify_all();
  }

  bool LeaseValid(Clock::time_point now) const {
    const int64_t start = lease_start_ns_.load(std::memory_order_acquire);
    const int64_t bound = bound_ms_.load(std::memory_order_acquire);
    if (start == 0 || bound <= 0) return false;
    return now - Clock::time_point(Clock::duration(start)) < milliseconds(bound);
  }

  // A call sent at `sent` succeeded: ZooKeeper keeps our session until at
  // least sent + session timeout.
  void Renew(Clock::time_point sent) {
    int64_t current = lease_start_ns_.load();
    const int64_t t = Nanos(sent);
    while (current < t && !lease_start_ns_.compare_exchange_weak(current, t)) {
    }
  }

  void Deactivate(const std::string& name, const Handler& handler, const std::string& reason) {
    if (handler.deactivate) handler.deactivate(reason);
    if (o_.on_deactivated) o_.on_deactivated(name, reason);
  }

  // Deactivates every active destination (callback_mu_ must not be held).
  // `why` is logged at WARN with each destination.
  void FenceAll(const std::string& why) {
    std::lock_guard<std::mutex> callbacks(callback_mu_);
    std::vector<std::pair<std::string, Handler>> fenced;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [name, d] : dests_) {
        if (!d.active) continue;
        d.active = false;
        d.check = true;  // back in touch: is the node still ours?
        fenced.emplace_back(name, d.handler);
      }
    }
    for (const auto& [name, handler] : fenced) {
      log_->warn("HA: destination {}: fencing on server {}: {}; stopping its instance and closing its client "
                 "sessions so that it never runs on two servers at once",
                 name, o_.address, why);
      Deactivate(name, handler, "fenced: " + why);
    }
  }

  void WatchdogLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    Clock::time_point last_tick = Clock::now();
    while (!loop_.StoppingLocked()) {
      cv_.wait_for(lock, kWatchdogTick, [this] { return loop_.StoppingLocked(); });
      if (loop_.StoppingLocked()) break;
      // A tick far later than asked: this process did not run (SIGSTOP, a
      // stalled VM), which is worth saying when it ends in a fence.
      const Clock::time_point tick = Clock::now();
      const Clock::duration stalled = tick - last_tick;
      last_tick = tick;
      bool any_active = false;
      for (const auto& [name, d] : dests_) any_active = any_active || d.active;
      if (!any_active) continue;
      const Clock::time_point now = Clock::now();
      if (LeaseValid(now)) continue;
      lock.unlock();
      const int64_t start = lease_start_ns_.load();
      const std::string silent =
          start == 0 ? std::string("no lease") : std::to_string(Ms(now - Clock::time_point(Clock::duration(start)))) + " ms";
      std::string disconnected = "still connected, but ZooKeeper does not answer";
      if (stalled > kStall) {
        disconnected = "this process did not run for " + std::to_string(Ms(stalled)) + " ms (frozen or starved)";
      } else if (!connected_.load()) {
        disconnected = "connection lost " +
                       std::to_string(Ms(now - Clock::time_point(Clock::duration(disconnected_since_ns_.load())))) +
                       " ms ago";
      }
      FenceAll("no word from ZooKeeper for " + silent + " (" + disconnected + "; fencing bound " +
               std::to_string(bound_ms_.load()) + " ms of a " + std::to_string(negotiated_ms_.load()) +
               " ms session)");
      lock.lock();
    }
  }

  // ---- the worker: all contention calls -------------------------------------

  // Under mu_: when the worker's next round is due (a kick comes sooner).
  Clock::time_point DueLocked(Clock::time_point now) const {
    Clock::time_point wake = now + o_.retry_max;  // disconnected: the state listener wakes us
    if (!connecting_.load()) {
      wake = std::min(wake, next_heartbeat_);
      for (const auto& [name, d] : dests_) {
        if (d.contend_at) wake = std::min(wake, *d.contend_at);
        if (d.check || !d.registered) wake = now;
      }
    }
    return wake;
  }

  // One round; false when a ZooKeeper call failed (the caller backs off).
  bool Step() {
    const coord::ZkState state = zk_->state();
    if (state == coord::ZkState::kExpired || state == coord::ZkState::kClosed) return SessionLost(state);
    if (state != coord::ZkState::kConnected) return true;  // the client reconnects by itself
    const int64_t sid = zk_->session_id();
    if (sid != session_) NewSession(sid);
    bool ok = true;
    if (Clock::now() >= next_heartbeat_ || !server_registered_) ok = Heartbeat() && ok;

    struct Work {
      std::string name;
      uint64_t id;
      bool registered, contend, check, hand_over;
    };
    std::vector<Work> work;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const Clock::time_point now = Clock::now();
      for (auto& [name, d] : dests_) {
        Work w{name, d.id, d.registered, d.contend_at && *d.contend_at <= now, d.check, d.hand_over};
        if (w.contend) d.contend_at.reset();
        if (w.check) d.check = false;
        d.hand_over = false;
        if (!w.registered || w.contend || w.check || w.hand_over) work.push_back(std::move(w));
      }
    }
    for (const Work& w : work) {
      if (!w.registered) ok = RegisterDestination(w.name, w.id) && ok;
      if (w.hand_over) {
        HandOver(w.name, w.id);
      } else if (w.contend) {
        ok = TryCreate(w.name, w.id) && ok;
      } else if (w.check) {
        ok = Inspect(w.name, w.id) && ok;
      }
    }
    return ok;
  }

  bool SessionLost(coord::ZkState state) {
    lease_start_ns_.store(0);
    if (session_ != 0) {
      // The ephemeral nodes went with the session: whatever was ours is not.
      FenceAll(std::string("ZooKeeper session ") + SessionText(session_) +
               (state == coord::ZkState::kExpired ? " expired" : " was closed"));
      log_->warn("HA: server {}: ZooKeeper session {} {}; opening a new one", o_.address, SessionText(session_),
                 state == coord::ZkState::kExpired ? "expired" : "was closed");
      std::lock_guard<std::mutex> lock(mu_);
      session_ = 0;
    }
    return loop_.ReopenSession(*zk_, *log_, "HA: server " + o_.address + ": reopening the ZooKeeper session failed");
  }

  void NewSession(int64_t sid) {
    const int negotiated = zk_->negotiated_session_timeout_ms();
    milliseconds bound = negotiated > 0 ? milliseconds(negotiated / 2) : kFallbackBound;
    if (o_.fence_after.count() > 0) {
      if (negotiated <= 0 || o_.fence_after.count() < negotiated) {
        bound = o_.fence_after;
      } else {
        log_->warn("HA: canal.zookeeper.fence.timeout {} ms is not below the session timeout ZooKeeper granted ({} "
                   "ms): fencing after {} ms instead (set it well below canal.zookeeper.session.timeout)",
                   o_.fence_after.count(), negotiated, bound.count());
      }
    }
    lease_start_ns_.store(0);
    bound_ms_.store(bound.count());
    negotiated_ms_.store(negotiated);
    if (session_ != 0) {
      // A session we did not see expire (another user of the client reopened
      // it): our nodes are gone.
      FenceAll("the ZooKeeper session changed from " + SessionText(session_) + " to " + SessionText(sid));
    }
    log_->info("HA: server {}: ZooKeeper session {} (timeout {} ms; fencing after {} ms without an answer)",
               o_.address, SessionText(sid), negotiated, bound.count());
    std::lock_guard<std::mutex> lock(mu_);
    session_ = sid;
    server_registered_ = false;
    next_heartbeat_ = Clock::now();
    for (auto& [name, d] : dests_) {
      d.registered = false;
      d.check = false;
      d.hand_over = false;  // our old node is gone with the session
      // Our old node is gone: contend at once (under placement, only for what is ours).
      if (MayContendLocked(name)) d.contend_at = Clock::now();
    }
  }

  milliseconds HeartbeatPeriod() const {
    return std::clamp(milliseconds(bound_ms_.load() / 5), milliseconds(20), milliseconds(2000));
  }

  // Creates an ephemeral node for this server, replacing one left by an
  // earlier process with our address (its session will die anyway).
  bool Register(const std::string& path) {
    bool created = false;
    const Clock::time_point sent = Clock::now();
    Status s = zk_->CreateNode(path, "", coord::ZkCreateMode::kEphemeral, true, &created);
    if (s.ok() && !created) {
      s = zk_->Delete(path);
      if (s.ok()) s = zk_->CreateNode(path, "", coord::ZkCreateMode::kEphemeral, true, &created);
    }
    if (!s.ok()) {
      log_->warn("HA: server {}: registering {} in ZooKeeper (retrying in {} ms): {}", o_.address, path,
                 loop_.backoff().count(), s.ToString());
      return false;
    }
    Renew(sent);
    return true;
  }

  // Renews the lease; re-registers the server node when it is missing.
  bool Heartbeat() {
    const std::string path = layout::ServerClusterPath(o_.address);
    bool ok = true;
    if (!server_registered_) {
      ok = Register(path);
    } else {
      bool exists = false;
      const Clock::time_point sent = Clock::now();
      Status s = zk_->Exists(path, &exists);
      if (s.ok()) {
        Renew(sent);
        if (!exists) ok = Register(path);
      } else {
        log_->warn("HA: server {}: ZooKeeper does not answer ({})", o_.address, s.ToString());
        ok = false;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (ok) server_registered_ = true;
    next_heartbeat_ = Clock::now() + HeartbeatPeriod();
    return ok;
  }

  bool RegisterDestination(const std::string& name, uint64_t id) {
    const bool ok = Register(layout::DestinationClusterPath(name, o_.address));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = dests_.find(name);
    if (it != dests_.end() && it->second.id == id && ok) it->second.registered = true;
    return ok;
  }

  void Watch(const std::string& name, uint64_t id) {
    // ZooKeeper's event thread: flag and wake the worker only.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = dests_.find(name);
    if (it == dests_.end() || it->second.id != id) return;
    it->second.check = true;
    loop_.KickLocked();
    cv_.notify_all();
  }

  // Tries to become the active server of `name`.
  bool TryCreate(const std::string& name, uint64_t id) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!MayContendLocked(name)) return true;  // moved away since it was scheduled
    }
    const std::string path = layout::ServerRunningPath(name);
    bool created = false;
    const Clock::time_point sent = Clock::now();
    Status s = zk_->CreateNode(path, layout::ServerRunningBody(o_.address), coord::ZkCreateMode::kEphemeral, true, &created);
    if (!s.ok()) {
      log_->warn("HA: destination {}: creating {} (retrying in {} ms): {}", name, path, loop_.backoff().count(),
                 s.ToString());
      Retry(name, id, /*contend=*/true);
      return false;
    }
    Renew(sent);
    if (!created) return Inspect(name, id);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = dests_.find(name);
      if (it != dests_.end() && it->second.id == id) it->second.held_session = session_;
    }
    log_->info("HA: destination {}: server {} won the running node {}", name, o_.address, path);
    // Watch our own node: deleted by hand (or a lost session) means not ours.
    return Inspect(name, id);
  }

  // Reads the running node, arms a watch on it, and acts on what it says.
  bool Inspect(const std::string& name, uint64_t id) {
    const std::string path = layout::ServerRunningPath(name);
    bool exists = false;
    std::string body;
    const Clock::time_point sent = Clock::now();
    Status s = zk_->GetAndWatch(
        path, [gate = gate_, name, id] { gate->Call([&](Impl* impl) { impl->Watch(name, id); }); }, &exists, &body);
    if (!s.ok()) {
      log_->warn("HA: destination {}: reading {} (retrying in {} ms): {}", name, path, loop_.backoff().count(),
                 s.ToString());
      Retry(name, id, /*contend=*/false);
      return false;
    }
    Renew(sent);
    std::string owner;
    if (exists) {
      layout::RunningNode node;
      if (Status p = layout::ParseRunningNode(body, &node); p.ok()) {
        owner = node.address;
      } else {
        log_->warn("HA: destination {}: {}: {}", name, path, p.message());
        owner = "(unreadable)";
      }
    }

    std::unique_lock<std::mutex> callbacks(callback_mu_);
    std::unique_lock<std::mutex> lock(mu_);
    auto it = dests_.find(name);
    if (it == dests_.end() || it->second.id != id) {
      // Left meanwhile: a node we created for it must go.
      const bool mine = exists && owner == o_.address && session_ != 0;
      lock.unlock();
      callbacks.unlock();
      if (mine) ReleaseRunning(name);
      return true;
    }
    Dest& d = it->second;
    const bool ours = exists && owner == o_.address && d.held_session == session_ && session_ != 0;
    if (!exists) {
      const bool was_ours = d.active || d.owner == o_.address || d.owner.empty();
      if (d.active) {
        d.active = false;
        Handler handler = d.handler;
        lock.unlock();
        log_->warn("HA: destination {}: the running node {} of server {} was deleted; stopping and contending again",
                   name, path, o_.address);
        Deactivate(name, handler, "its running node was deleted");
        lock.lock();
        it = dests_.find(name);
        if (it == dests_.end() || it->second.id != id) return true;
      }
      Dest& dd = it->second;
      dd.held_session = 0;
      if (o_.placement) {
        // The leader decides: contend now when it is ours (a planned move or a lost owner the
        // leader already replaced), never otherwise.
        if (MayContendLocked(name)) {
          dd.contend_at = std::max(Clock::now(), dd.retry_after);
          if (!was_ours) {
            log_->info("HA: destination {}: server {} released it; server {}, its assigned server, takes it", name,
                       dd.owner.empty() ? std::string("(none)") : dd.owner, o_.address);
          }
        }
      } else if (was_ours) {
        dd.contend_at = std::max(Clock::now(), dd.retry_after);
      } else {
        dd.contend_at = std::max(Clock::now() + o_.takeover_delay, dd.retry_after);
        log_->info("HA: destination {}: server {} (active) is gone; server {} takes over in {} ms", name, dd.owner,
                   o_.address, o_.takeover_delay.count());
      }
      dd.owner.clear();
      loop_.KickLocked();
      return true;
    }
    const std::string previous = d.owner;
    d.owner = owner;
    if (ours && !MayContendLocked(name)) {
      // Won before the assignment took it away: give it back unstarted.
      d.held_session = 0;
      lock.unlock();
      callbacks.unlock();
      ReleaseRunning(name);
      return true;
    }
    if (ours) {
      if (d.active) return true;
      if (!LeaseValid(Clock::now())) {  // (just renewed; only a very slow call gets here)
        d.check = true;
        return true;
      }
      Handler handler = d.handler;
      // (MayWrite: the handlers may write the destination's meta before it is active, e.g. an MQ
      // destination subscribing its publisher's client.)
      d.activating = true;
      lock.unlock();
      Status started = o_.before_activate ? o_.before_activate(name) : Status::OK();
      if (started.ok() && handler.activate) started = handler.activate();
      lock.lock();
      it = dests_.find(name);
      const bool still = it != dests_.end() && it->second.id == id;
      if (still) it->second.activating = false;
      if (started.ok() && still) {
        it->second.active = true;
        log_->info("HA: destination {}: active on server {}", name, o_.address);
        return true;
      }
      lock.unlock();
      if (!started.ok()) {
        log_->error("HA: destination {}: won it but the instance did not start ({}); releasing it for another "
                    "server and retrying in {} ms",
                    name, started.ToString(), o_.retry_max.count());
      } else if (handler.deactivate) {
        handler.deactivate("this server no longer runs it");
      }
      callbacks.unlock();
      ReleaseRunning(name);
      lock.lock();
      it = dests_.find(name);
      if (it != dests_.end() && it->second.id == id) {
        it->second.held_session = 0;
        // (Not sooner when the deletion of the node we just released is seen: the retry would
        // come at once, for ever, and never leave the destination to another server.)
        it->second.retry_after = Clock::now() + o_.retry_max;
        it->second.contend_at = it->second.retry_after;
      }
      return true;
    }
    // Someone else's (or our earlier session's, which will vanish).
    if (d.active) {
      d.active = false;
      Handler handler = d.handler;
      lock.unlock();
      log_->warn("HA: destination {}: the running node now names {}; server {} stops it", name, owner, o_.address);
      Deactivate(name, handler, "another server is active for it");
      return true;
    }
    if (owner != previous) {
      if (owner == o_.address) {
        log_->info("HA: destination {}: the running node still names this server {} from an earlier session; taking "
                   "it as soon as that session ends",
                   name, o_.address);
      } else if (o_.placement && !MayContendLocked(name)) {
        log_->info("HA: destination {}: server {} runs it; the cluster assigns it elsewhere than server {}", name,
                   owner, o_.address);
      } else {
        log_->info("HA: destination {}: lost the contention: server {} is active; server {} stands by", name, owner,
                   o_.address);
      }
    }
    return true;
  }

  // Under mu_: whether this server may contend for `name` (always without placement).
  bool MayContendLocked(std::string_view name) const {
    return !o_.placement || assigned_.find(name) != assigned_.end();
  }

  // Placement moved `name` away: stop its instance (which flushes its cursors), then delete its
  // running node so that the assigned server starts from those cursors at once.
  void HandOver(const std::string& name, uint64_t id) {
    {
      std::lock_guard<std::mutex> callbacks(callback_mu_);
      Handler handler;
      bool was_active = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = dests_.find(name);
        if (it == dests_.end() || it->second.id != id || MayContendLocked(name)) return;
        was_active = it->second.active;
        it->second.active = false;
        it->second.held_session = 0;
        handler = it->second.handler;
      }
      if (was_active) {
        log_->info("HA: destination {}: the cluster's assignment moved it off server {}; handing it over", name,
                   o_.address);
        Deactivate(name, handler, "moved to another server by the cluster's placement");
      }
    }
    ReleaseRunning(name);
  }

  void Retry(const std::string& name, uint64_t id, bool contend) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = dests_.find(name);
    if (it == dests_.end() || it->second.id != id) return;
    if (contend) {
      it->second.contend_at = Clock::now() + loop_.backoff();
    } else {
      it->second.check = true;
    }
  }

  // Deletes the running node when it names this server (never another's).
  void ReleaseRunning(const std::string& name) {
    const std::string path = layout::ServerRunningPath(name);
    std::string body, owner;
    Status s = zk_->Get(path, &body);
    if (s.IsNotFound()) return;
    layout::RunningNode node;
    if (s.ok() && layout::ParseRunningNode(body, &node).ok() && node.address != o_.address) return;
    if (s.ok()) s = zk_->Delete(path);
    if (!s.ok()) {
      log_->warn("HA: destination {}: releasing {}: {} (it goes with the session anyway)", name, path, s.ToString());
    } else {
      log_->info("HA: destination {}: server {} released the running node", name, o_.address);
    }
  }

  // ZooKeeper calls watches and listeners on its own thread, possibly after
  // the monitor is gone (a one-shot watch outlives us): they go through this.
  coord::ZkClient* const zk_;
  const RunningMonitorOptions o_;
  const std::shared_ptr<coord::CallbackGate<Impl>> gate_ = std::make_shared<coord::CallbackGate<Impl>>();
  std::shared_ptr<spdlog::logger> log_;

  // Serialises the handlers (activate / deactivate); taken before mu_.
  std::mutex callback_mu_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;   // guarded by mu_
  uint64_t next_id_ = 0;   // guarded by mu_
  std::map<std::string, Dest, std::less<>> dests_;  // guarded by mu_
  std::set<std::string, std::less<>> assigned_;     // guarded by mu_; placement's share for this server
  int listener_ = 0;

  // Worker state (session_ and server_registered_ are also read under mu_).
  int64_t session_ = 0;  // the session our nodes belong to; 0 none
  bool server_registered_ = false;
  Clock::time_point next_heartbeat_ = Clock::now();

  std::atomic<bool> connected_{false};
  std::atomic<bool> connecting_{true};  // the client reconnects by itself: nothing to do
  std::atomic<int64_t> disconnected_since_ns_{0};
  std::atomic<int64_t> lease_start_ns_{0};  // 0: no lease
  std::atomic<int64_t> bound_ms_{0};
  std::atomic<int64_t> negotiated_ms_{0};

  // The worker's loop; its flags (kick, stop) guarded by mu_.
  coord::BackoffLoop loop_{&mu_, &cv_, o_.retry_min, o_.retry_max};
  std::thread worker_;
  std::thread watchdog_;
};

RunningMonitor::RunningMonitor(coord::ZkClient* zk, RunningMonitorOptions options)
    : impl_(std::make_unique<Impl>(zk, std::move(options))) {}
RunningMonitor::~RunningMonitor() = default;
Status RunningMonitor::Start() { return impl_->Start(); }
void RunningMonitor::Stop() { impl_->Stop(); }
void RunningMonitor::Join(const std::string& destination, Handler handler) {
  impl_->Join(destination, std::move(handler));
}
void RunningMonitor::Leave(const std::string& destination) { impl_->Leave(destination); }
bool RunningMonitor::IsActive(std::string_view destination) const { return impl_->IsActive(destination); }
bool RunningMonitor::MayWrite(std::string_view destination) const { return impl_->MayWrite(destination); }
std::vector<std::string> RunningMonitor::Active() const { return impl_->Active(); }
void RunningMonitor::Assign(const std::vector<std::string>& mine) { impl_->Assign(mine); }
std::vector<std::string> RunningMonitor::Assigned() const { return impl_->Assigned(); }
std::chrono::milliseconds RunningMonitor::fence_bound() const { return impl_->fence_bound(); }
const std::string& RunningMonitor::address() const { return impl_->address(); }

}  // namespace canal::server
