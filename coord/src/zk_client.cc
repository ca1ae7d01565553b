// ZkClient on ZooKeeper's multi-threaded C client.
//
// Every call uses the asynchronous C API and waits on its own completion with
// a deadline: the C client's synchronous calls wait without a bound while it
// reconnects, and a caller must never hang on a frozen ZooKeeper.
//
// Threads: the C client has an I/O thread and a completion thread; session
// events, watch events and completions arrive on the latter. Completions only
// fill a shared Call and wake its waiter. Session and watch events are turned
// into tasks for our own event thread, so user callbacks never run on the C
// client's thread: a callback that calls ZkClient again (to re-arm a watch)
// then cannot deadlock waiting for a completion that thread would deliver.
//
// Lifetime: zookeeper_close() joins the C client's threads, so no C callback
// runs after it returns; the destructor closes the handle before anything is
// freed. Each handle's context carries a generation, so that late events of a
// handle being replaced (Reopen) or closed are ignored. Watch contexts are
// plain ids looked up in a table, never pointers to freed memory.
#include "canal/coord/zk_client.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include <spdlog/spdlog.h>

namespace canal::coord {

const char* ZkStateName(ZkState state) {
  switch (state) {
    case ZkState::kConnecting: return "connecting";
    case ZkState::kConnected: return "connected";
    case ZkState::kExpired: return "expired";
    case ZkState::kClosed: return "closed";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;

// Our own failures, kept apart from ZooKeeper's codes (which are > -200).
constexpr int kRcNotConnected = -10001;  // no connection before the deadline
constexpr int kRcTimedOut = -10002;      // sent, no answer before the deadline
constexpr int kRcClosed = -10003;        // Close() was called

// The C client logs through this. Its errors and warnings (mostly refused
// connections while ZooKeeper restarts: three a second) become at most one
// warning of ours every few seconds; state listeners carry the real news.
void ForwardZkLog(const char* message) {
  std::string_view m(message != nullptr ? message : "");
  while (!m.empty() && (m.back() == '\n' || m.back() == '\r')) m.remove_suffix(1);
  if (m.find("ZOO_ERROR") == std::string_view::npos && m.find("ZOO_WARN") == std::string_view::npos) {
    spdlog::debug("zookeeper client: {}", m);
    return;
  }
  static std::mutex mu;
  static Clock::time_point last{};
  static int suppressed = 0;
  int dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto now = Clock::now();
    if (last != Clock::time_point{} && now - last < std::chrono::seconds(5)) {
      ++suppressed;
      return;
    }
    last = now;
    dropped = suppressed;
    suppressed = 0;
  }
  if (dropped > 0) {
    spdlog::warn("zookeeper client: {} ({} similar lines suppressed)", m, dropped);
  } else {
    spdlog::warn("zookeeper client: {}", m);
  }
}

void ConfigureZkLogOnce() {
  static std::once_flag once;
  std::call_once(once, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_WARN); });
}

Status CheckPath(std::string_view path, const char* what) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument(std::string("ZooKeeper ") + what + ": bad path '" + std::string(path) + "': " + why);
  };
  if (path.empty() || path[0] != '/') return bad("must start with '/'");
  if (path.size() > 1 && path.back() == '/') return bad("must not end with '/'");
  if (path.find('\0') != std::string_view::npos) return bad("contains a NUL byte");
  size_t start = 1;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part.empty()) return bad("empty component ('//')");
    if (part == "." || part == "..") return bad("'.' and '..' are not allowed");
    start = end + 1;
  }
  return Status::OK();
}

std::string ParentOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == 0 || slash == std::string_view::npos) return "/";
  return std::string(path.substr(0, slash));
}

std::string JoinPath(std::string_view parent, std::string_view child) {
  std::string out(parent);
  if (out != "/") out += '/';
  out += child;
  return out;
}

// One asynchronous request: the completion fills it, the caller waits on it.
struct Call {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
  int32_t version = -1;  // the node's data version, from the reply's Stat
  std::string data;
  std::vector<std::string> children;
};
using CallRef = std::shared_ptr<Call>;

// The completion owns one reference (a heap CallRef passed as `data`), so a
// caller that gave up on its deadline leaves nothing dangling.
template <typename Fill>
void Complete(const void* data, int rc, Fill&& fill) {
  auto* ref = static_cast<CallRef*>(const_cast<void*>(data));
  {
    std::lock_guard<std::mutex> lock((*ref)->mu);
    (*ref)->rc = rc;
    fill(**ref);
    (*ref)->done = true;
  }
  (*ref)->cv.notify_all();
  delete ref;
}

void VoidDone(int rc, const void* data) {
  Complete(data, rc, [](Call&) {});
}
void StatDone(int rc, const struct Stat* stat, const void* data) {
  Complete(data, rc, [&](Call& c) {
    if (rc == ZOK && stat != nullptr) c.version = stat->version;
  });
}
void StringDone(int rc, const char*, const void* data) {
  Complete(data, rc, [](Call&) {});
}
void DataDone(int rc, const char* value, int value_len, const struct Stat* stat, const void* data) {
  Complete(data, rc, [&](Call& c) {
    if (rc == ZOK && value != nullptr && value_len > 0) c.data.assign(value, static_cast<size_t>(value_len));
    if (rc == ZOK && stat != nullptr) c.version = stat->version;
  });
}
void StringsDone(int rc, const struct String_vector* strings, const void* data) {
  Complete(data, rc, [&](Call& c) {
    if (rc != ZOK || strings == nullptr) return;
    for (int32_t i = 0; i < strings->count; ++i) {
      if (strings->data[i] != nullptr) c.children.emplace_back(strings->data[i]);
    }
  });
}

// Runs callbacks one at a time on a thread of its own. Shared with that
// thread, so a ZkClient destroyed from a callback can let the thread finish
// alone (detached) without it touching freed memory.
struct EventQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  bool stop = false;

  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stop) return;
      tasks.push_back(std::move(task));
    }
    cv.notify_one();
  }
  bool Stopped() {
    std::lock_guard<std::mutex> lock(mu);
    return stop;
  }
  static void Run(std::shared_ptr<EventQueue> q) {
    std::unique_lock<std::mutex> lock(q->mu);
    for (;;) {
      q->cv.wait(lock, [&] { return q->stop || !q->tasks.empty(); });
      if (q->stop) return;
      auto task = std::move(q->tasks.front());
      q->tasks.pop_front();
      lock.unlock();
      task();
      task = nullptr;  // user state captured by the task goes before the lock is retaken
      lock.lock();
    }
  }
};

class ZkClientImpl;

// The context of one zhandle_t: which client, and which of its handles.
struct HandleContext {
  ZkClientImpl* client;
  uint64_t generation;
};

class ZkClientImpl final : public ZkClient {
 public:
  explicit ZkClientImpl(ZkOptions options) : options_(std::move(options)), events_(std::make_shared<EventQueue>()) {
    event_thread_ = std::thread(&EventQueue::Run, events_);
  }

  ~ZkClientImpl() override {
    // No callback may run once the owner starts tearing down what they use:
    // drop listeners, watches and queued events before closing the session.
    {
      std::lock_guard<std::mutex> lock(mu_);
      listeners_.clear();
      watches_.clear();
    }
    {
      std::lock_guard<std::mutex> lock(events_->mu);
      events_->stop = true;
      events_->tasks.clear();
    }
    events_->cv.notify_all();
    Close();
    if (std::this_thread::get_id() == event_thread_.get_id()) {
      event_thread_.detach();  // destroyed from a callback: the thread ends after it returns
    } else {
      event_thread_.join();
    }
  }

  Status Open() {
    std::unique_lock<std::shared_mutex> handle_lock(handle_mu_);
    return OpenLocked();
  }

  Status WaitConnected(std::chrono::milliseconds limit) override {
    const int rc = WaitUsable(Clock::now() + limit);
    if (rc == ZOK) return Status::OK();
    if (rc == kRcNotConnected) {
      return Status::IOError("ZooKeeper: not connected to " + options_.servers + " within " +
                             std::to_string(limit.count()) + " ms (is ZooKeeper running there? check canal.zkServers)");
    }
    return Error(rc, "connect", "");
  }

  ZkState state() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }
  int64_t session_id() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return session_id_;
  }
  int negotiated_session_timeout_ms() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return negotiated_timeout_ms_;
  }

  int AddStateListener(StateListener listener) override {
    std::lock_guard<std::mutex> lock(mu_);
    const int id = next_listener_id_++;
    listeners_.emplace(id, std::make_shared<StateListener>(std::move(listener)));
    return id;
  }
  void RemoveStateListener(int id) override {
    std::lock_guard<std::mutex> lock(mu_);
    listeners_.erase(id);
  }

  Status Reopen() override {
    std::unique_lock<std::shared_mutex> handle_lock(handle_mu_);
    CloseHandleLocked();
    return OpenLocked();
  }

  void Close() override {
    std::unique_lock<std::shared_mutex> handle_lock(handle_mu_);
    if (handle_ == nullptr && state() == ZkState::kClosed) return;
    CloseHandleLocked();
    SetState(ZkState::kClosed, 0, 0);
  }

  const ZkOptions& options() const override { return options_; }

  Status CreateNode(std::string_view path, std::string_view data, ZkCreateMode mode, bool make_parents,
                    bool* created) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "create"));
    if (path == "/") return Status::InvalidArgument("ZooKeeper create: '/' always exists");
    return CreateUntil(path, data, mode, make_parents, Deadline(), created);
  }

  Status SetOrCreate(std::string_view path, std::string_view data) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "set"));
    const auto deadline = Deadline();
    for (int attempt = 0; attempt < 3; ++attempt) {
      int rc = OpSet(path, data, deadline);
      if (rc == ZOK) return Status::OK();
      if (rc != ZNONODE) return Error(rc, "set", path);
      bool created = false;
      CANAL_RETURN_IF_ERROR(CreateUntil(path, data, ZkCreateMode::kPersistent, true, deadline, &created));
      if (created) return Status::OK();
      // Someone else created it between our set and create: set again.
    }
    return Status::IOError("ZooKeeper set " + std::string(path) + " on " + options_.servers +
                           ": the node keeps appearing and vanishing");
  }

  Status Get(std::string_view path, std::string* data) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "get"));
    const int rc = OpGet(path, 0, Deadline(), data);
    return rc == ZOK ? Status::OK() : Error(rc, "get", path);
  }

  Status GetVersioned(std::string_view path, std::string* data, int32_t* version) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "get"));
    const int rc = OpGet(path, 0, Deadline(), data, version);
    return rc == ZOK ? Status::OK() : Error(rc, "get", path);
  }

  Status SetIfVersion(std::string_view path, std::string_view data, int32_t expected, int32_t* version) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "set"));
    const auto deadline = Deadline();
    if (expected < 0) {
      bool created = false;
      CANAL_RETURN_IF_ERROR(CreateUntil(path, data, ZkCreateMode::kPersistent, true, deadline, &created));
      if (!created) {
        return Status::Aborted("ZooKeeper create " + std::string(path) + " on " + options_.servers +
                               ": another client created it first");
      }
      *version = 0;
      return Status::OK();
    }
    const int rc = OpSet(path, data, deadline, expected, version);
    if (rc == ZOK) return Status::OK();
    if (rc == ZBADVERSION || rc == ZNONODE) {
      return Status::Aborted("ZooKeeper set " + std::string(path) + " on " + options_.servers + ": another client " +
                             (rc == ZNONODE ? "deleted it" : "wrote it") + " after version " + std::to_string(expected));
    }
    return Error(rc, "set", path);
  }

  Status GetAndWatch(std::string_view path, Watch watch, bool* exists, std::string* data) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "get"));
    const auto deadline = Deadline();
    // One id for every registration below: whichever fires first runs the
    // callback, later ones find the id gone.
    const uint64_t id = RegisterWatch(std::move(watch));
    std::string value;
    int rc = OpGet(path, id, deadline, &value);
    if (rc == ZNONODE) {
      // A read of a missing node leaves no watch; exists() does, for creation.
      rc = OpExists(path, id, deadline);
      if (rc == ZOK) rc = OpGet(path, id, deadline, &value);  // created meanwhile
      if (rc == ZNONODE) {
        *exists = false;
        if (data != nullptr) data->clear();
        return Status::OK();
      }
    }
    if (rc != ZOK) {
      ForgetWatch(id);
      return Error(rc, "get (with watch)", path);
    }
    *exists = true;
    if (data != nullptr) *data = std::move(value);
    return Status::OK();
  }

  Status Exists(std::string_view path, bool* exists) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "exists"));
    const int rc = OpExists(path, 0, Deadline());
    if (rc != ZOK && rc != ZNONODE) return Error(rc, "exists", path);
    *exists = rc == ZOK;
    return Status::OK();
  }

  Status Delete(std::string_view path, bool recursive) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "delete"));
    if (path == "/") return Status::InvalidArgument("ZooKeeper delete: refusing to delete '/'");
    return DeleteUntil(path, recursive, Deadline(), 0);
  }

  Status Children(std::string_view path, std::vector<std::string>* names) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "children"));
    const int rc = OpChildren(path, 0, Deadline(), names);
    return rc == ZOK ? Status::OK() : Error(rc, "children", path);
  }

  Status ChildrenAndWatch(std::string_view path, Watch watch, std::vector<std::string>* names) override {
    CANAL_RETURN_IF_ERROR(CheckPath(path, "children"));
    const uint64_t id = RegisterWatch(std::move(watch));
    const int rc = OpChildren(path, id, Deadline(), names);
    if (rc == ZOK) return Status::OK();
    ForgetWatch(id);
    return Error(rc, "children (with watch)", path);
  }

  // canal/coord/testing/expire_session.h
  Status ExpireSession() {
    // Our client may win its connection back before the second handle's
    // close goes out (then the close is not sent): check and try again.
    for (int attempt = 0; attempt < 5; ++attempt) {
      CANAL_RETURN_IF_ERROR(CloseSessionFromAnotherHandle());
      std::unique_lock<std::mutex> lock(mu_);
      if (state_cv_.wait_for(lock, std::chrono::seconds(3), [&] { return state_ == ZkState::kExpired; })) {
        return Status::OK();
      }
    }
    return Status::IOError("ZooKeeper expire session: the session on " + options_.servers + " survived 5 attempts");
  }

  // ---- C callbacks (on the C client's completion thread) ----

  static void OnSessionEvent(zhandle_t* zh, int type, int state, const char*, void* context) {
    auto* ctx = static_cast<HandleContext*>(context);
    if (type != ZOO_SESSION_EVENT || ctx == nullptr) return;
    ZkClientImpl* self = ctx->client;
    if (ctx->generation != self->generation_.load()) return;  // a handle being replaced or closed
    if (state == ZOO_CONNECTED_STATE) {
      const clientid_t* id = zoo_client_id(zh);
      self->SetState(ZkState::kConnected, id != nullptr ? id->client_id : 0, zoo_recv_timeout(zh));
    } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
      self->SetState(ZkState::kExpired, 0, 0);
    } else if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE || state == ZOO_NOTCONNECTED_STATE) {
      self->SetState(ZkState::kConnecting, -1, -1);
    }
  }

  static void OnWatchEvent(zhandle_t* zh, int type, int, const char*, void* watch_ctx) {
    // Session events reach every watch too; state listeners report those.
    if (type == ZOO_SESSION_EVENT) return;
    auto* ctx = static_cast<HandleContext*>(const_cast<void*>(zoo_get_context(zh)));
    if (ctx == nullptr) return;
    ZkClientImpl* self = ctx->client;
    if (ctx->generation != self->generation_.load()) return;
    self->FireWatch(reinterpret_cast<uintptr_t>(watch_ctx));
  }

 private:
  // Joins our session from a second handle (same id and password), then
  // closes that handle, which ends the session on the server.
  Status CloseSessionFromAnotherHandle() {
    clientid_t id{};
    {
      std::shared_lock<std::shared_mutex> handle_lock(handle_mu_);
      if (handle_ == nullptr) return Status::IOError("ZooKeeper expire session: the client is closed");
      const clientid_t* current = zoo_client_id(handle_);
      if (current == nullptr || current->client_id == 0) {
        return Status::IOError("ZooKeeper expire session: no session with " + options_.servers + " yet");
      }
      id = *current;
    }
    struct Probe {
      std::mutex mu;
      std::condition_variable cv;
      int state = 0;
    } probe;
    auto watcher = [](zhandle_t*, int type, int state, const char*, void* ctx) {
      if (type != ZOO_SESSION_EVENT) return;
      auto* p = static_cast<Probe*>(ctx);
      {
        std::lock_guard<std::mutex> lock(p->mu);
        p->state = state;
      }
      p->cv.notify_all();
    };
    ConfigureZkLogOnce();
    zhandle_t* other = zookeeper_init2(options_.servers.c_str(), watcher, options_.session_timeout_ms, &id, &probe,
                                       0, &ForwardZkLog);
    if (other == nullptr) {
      return Status::IOError("ZooKeeper expire session: zookeeper_init failed for " + options_.servers + ": " +
                             std::strerror(errno));
    }
    {
      std::unique_lock<std::mutex> lock(probe.mu);
      probe.cv.wait_for(lock, std::chrono::milliseconds(options_.operation_timeout_ms), [&] {
        return probe.state == ZOO_CONNECTED_STATE || probe.state == ZOO_EXPIRED_SESSION_STATE;
      });
    }
    zookeeper_close(other);  // joins its threads before `probe` goes
    return Status::OK();
  }

  Clock::time_point Deadline() const {
    return Clock::now() + std::chrono::milliseconds(std::max(options_.operation_timeout_ms, 1));
  }

  Status OpenLocked() {
    ConfigureZkLogOnce();
    const uint64_t generation = ++next_generation_;
    auto ctx = std::make_unique<HandleContext>(HandleContext{this, generation});
    SetState(ZkState::kConnecting, 0, 0);
    generation_.store(generation);  // before init: its first event may come at once
    zhandle_t* zh = zookeeper_init2(options_.servers.c_str(), &ZkClientImpl::OnSessionEvent,
                                    options_.session_timeout_ms, nullptr, ctx.get(), 0, &ForwardZkLog);
    if (zh == nullptr) {
      const int err = errno;
      generation_.store(0);
      SetState(ZkState::kClosed, 0, 0);
      return Status::InvalidArgument("ZooKeeper: cannot start a client for '" + options_.servers +
                                     "': " + std::strerror(err) + " (canal.zkServers wants host:port[,host:port...])");
    }
    handle_ = zh;
    handle_context_ = std::move(ctx);
    return Status::OK();
  }

  // Needs handle_mu_ held exclusively.
  void CloseHandleLocked() {
    generation_.store(0);  // events of the closing handle are ignored from here
    {
      std::lock_guard<std::mutex> lock(mu_);
      watches_.clear();
    }
    if (handle_ != nullptr) {
      // Fails pending calls with ZCLOSING and joins the C client's threads;
      // a live session is closed on the server (its ephemeral nodes go).
      zookeeper_close(handle_);
      handle_ = nullptr;
    }
    handle_context_.reset();
  }

  // session_id / timeout < 0: keep the current values.
  void SetState(ZkState next, int64_t session_id, int timeout_ms) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (session_id >= 0) session_id_ = session_id;
      if (timeout_ms >= 0) negotiated_timeout_ms_ = timeout_ms;
      if (next == ZkState::kExpired || next == ZkState::kClosed) watches_.clear();  // they died with the session
      if (state_ == next) return;
      state_ = next;
    }
    state_cv_.notify_all();
    events_->Post([this, next, queue = events_] {
      std::vector<std::shared_ptr<StateListener>> listeners;
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& [id, l] : listeners_) listeners.push_back(l);
      }
      for (const auto& l : listeners) {
        if (queue->Stopped()) return;  // the client was destroyed by a listener
        (*l)(next);
      }
    });
  }

  uint64_t RegisterWatch(Watch watch) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = next_watch_id_++;
    watches_.emplace(id, std::move(watch));
    return id;
  }
  void ForgetWatch(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    watches_.erase(id);
  }
  void FireWatch(uint64_t id) {
    Watch watch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = watches_.find(id);
      if (it == watches_.end()) return;  // fired already through another registration
      watch = std::move(it->second);
      watches_.erase(it);
    }
    if (watch) events_->Post(std::move(watch));
  }

  // Waits for a connected session: ZOK, kRcNotConnected, ZSESSIONEXPIRED or kRcClosed.
  int WaitUsable(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    state_cv_.wait_until(lock, deadline, [&] { return state_ != ZkState::kConnecting; });
    switch (state_) {
      case ZkState::kConnected: return ZOK;
      case ZkState::kConnecting: return kRcNotConnected;
      case ZkState::kExpired: return ZSESSIONEXPIRED;
      case ZkState::kClosed: return kRcClosed;
    }
    return kRcClosed;
  }

  // Sends one request through `issue` (an asynchronous C call given the
  // handle and the completion's data) and waits for its answer.
  template <typename Issue>
  int Run(Clock::time_point deadline, Issue&& issue, Call* result) {
    int rc = WaitUsable(deadline);
    if (rc != ZOK) return rc;
    auto call = std::make_shared<Call>();
    {
      std::shared_lock<std::shared_mutex> handle_lock(handle_mu_);
      if (handle_ == nullptr) return kRcClosed;
      auto* ref = new CallRef(call);
      rc = issue(handle_, ref);
      if (rc != ZOK) {
        // A marshalling error may come after the completion was queued (and
        // will then run and free ref); every other early error comes before.
        if (rc != ZMARSHALLINGERROR) delete ref;
        return rc;
      }
    }
    std::unique_lock<std::mutex> lock(call->mu);
    if (!call->cv.wait_until(lock, deadline, [&] { return call->done; })) return kRcTimedOut;
    if (result != nullptr) {
      result->data = std::move(call->data);
      result->children = std::move(call->children);
      result->version = call->version;
    }
    return call->rc;
  }

  static void* WatchContext(uint64_t id) { return reinterpret_cast<void*>(static_cast<uintptr_t>(id)); }

  int OpCreate(std::string_view path, std::string_view data, ZkCreateMode mode, Clock::time_point deadline) {
    const std::string p(path);
    const int flags = mode == ZkCreateMode::kEphemeral ? ZOO_EPHEMERAL : ZOO_PERSISTENT;
    return Run(
        deadline,
        [&](zhandle_t* zh, const void* ref) {
          return zoo_acreate(zh, p.c_str(), data.data(), static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE, flags,
                             &StringDone, ref);
        },
        nullptr);
  }
  // `expected` -1: whatever the version; else only at that version (ZBADVERSION otherwise).
  int OpSet(std::string_view path, std::string_view data, Clock::time_point deadline, int32_t expected = -1,
            int32_t* version = nullptr) {
    if (data.size() > static_cast<size_t>(INT_MAX)) return ZBADARGUMENTS;
    const std::string p(path);
    Call result;
    const int rc = Run(
        deadline,
        [&](zhandle_t* zh, const void* ref) {
          return zoo_aset(zh, p.c_str(), data.data(), static_cast<int>(data.size()), expected, &StatDone, ref);
        },
        &result);
    if (rc == ZOK && version != nullptr) *version = result.version;
    return rc;
  }
  int OpDelete(std::string_view path, Clock::time_point deadline) {
    const std::string p(path);
    return Run(
        deadline, [&](zhandle_t* zh, const void* ref) { return zoo_adelete(zh, p.c_str(), -1, &VoidDone, ref); },
        nullptr);
  }
  int OpExists(std::string_view path, uint64_t watch_id, Clock::time_point deadline) {
    const std::string p(path);
    return Run(
        deadline,
        [&](zhandle_t* zh, const void* ref) {
          if (watch_id == 0) return zoo_aexists(zh, p.c_str(), 0, &StatDone, ref);
          return zoo_awexists(zh, p.c_str(), &ZkClientImpl::OnWatchEvent, WatchContext(watch_id), &StatDone, ref);
        },
        nullptr);
  }
  int OpGet(std::string_view path, uint64_t watch_id, Clock::time_point deadline, std::string* data,
            int32_t* version = nullptr) {
    const std::string p(path);
    Call result;
    const int rc = Run(
        deadline,
        [&](zhandle_t* zh, const void* ref) {
          if (watch_id == 0) return zoo_aget(zh, p.c_str(), 0, &DataDone, ref);
          return zoo_awget(zh, p.c_str(), &ZkClientImpl::OnWatchEvent, WatchContext(watch_id), &DataDone, ref);
        },
        &result);
    if (rc == ZOK && data != nullptr) *data = std::move(result.data);
    if (rc == ZOK && version != nullptr) *version = result.version;
    return rc;
  }
  int OpChildren(std::string_view path, uint64_t watch_id, Clock::time_point deadline,
                 std::vector<std::string>* names) {
    const std::string p(path);
    Call result;
    const int rc = Run(
        deadline,
        [&](zhandle_t* zh, const void* ref) {
          if (watch_id == 0) return zoo_aget_children(zh, p.c_str(), 0, &StringsDone, ref);
          return zoo_awget_children(zh, p.c_str(), &ZkClientImpl::OnWatchEvent, WatchContext(watch_id), &StringsDone,
                                    ref);
        },
        &result);
    if (rc == ZOK && names != nullptr) {
      std::sort(result.children.begin(), result.children.end());
      *names = std::move(result.children);
    }
    return rc;
  }

  Status CreateUntil(std::string_view path, std::string_view data, ZkCreateMode mode, bool make_parents,
                     Clock::time_point deadline, bool* created) {
    if (data.size() > static_cast<size_t>(INT_MAX)) {
      return Status::InvalidArgument("ZooKeeper create " + std::string(path) + ": data too large");
    }
    bool made = false;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const int rc = OpCreate(path, data, mode, deadline);
      if (rc == ZOK || rc == ZNODEEXISTS) {
        made = rc == ZOK;
        if (created != nullptr) *created = made;
        return Status::OK();
      }
      if (rc != ZNONODE || !make_parents) {
        if (rc == ZNONODE) {
          return Status::NotFound("ZooKeeper create " + std::string(path) + " on " + options_.servers + ": parent " +
                                  ParentOf(path) + " does not exist");
        }
        return Error(rc, "create", path);
      }
      // Parents, top down; a parent someone else made meanwhile is fine.
      const std::string parent = ParentOf(path);
      size_t pos = 0;
      while (pos != std::string::npos) {
        pos = parent.find('/', pos + 1);
        const std::string prefix = parent.substr(0, pos);
        if (prefix.empty() || prefix == "/") continue;
        const int prc = OpCreate(prefix, "", ZkCreateMode::kPersistent, deadline);
        if (prc != ZOK && prc != ZNODEEXISTS) return Error(prc, "create parent", prefix);
      }
    }
    return Status::IOError("ZooKeeper create " + std::string(path) + " on " + options_.servers +
                           ": its parents keep vanishing");
  }

  Status DeleteUntil(std::string_view path, bool recursive, Clock::time_point deadline, int depth) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      const int rc = OpDelete(path, deadline);
      if (rc == ZOK || rc == ZNONODE) return Status::OK();
      if (rc != ZNOTEMPTY || !recursive) {
        if (rc == ZNOTEMPTY) {
          return Status::IOError("ZooKeeper delete " + std::string(path) + " on " + options_.servers +
                                 ": the node has children (use recursive delete)");
        }
        return Error(rc, "delete", path);
      }
      std::vector<std::string> children;
      const int crc = OpChildren(path, 0, deadline, &children);
      if (crc == ZNONODE) return Status::OK();
      if (crc != ZOK) return Error(crc, "delete (listing children)", path);
      for (const auto& child : children) {
        CANAL_RETURN_IF_ERROR(DeleteUntil(JoinPath(path, child), true, deadline, depth + 1));
      }
    }
    return Status::IOError("ZooKeeper delete " + std::string(path) + " on " + options_.servers +
                           ": children keep appearing");
  }

  Status Error(int rc, const char* what, std::string_view path) const {
    std::string msg = std::string("ZooKeeper ") + what;
    if (!path.empty()) msg += " " + std::string(path);
    msg += " on " + options_.servers + ": ";
    const std::string timeout = std::to_string(options_.operation_timeout_ms) + " ms";
    switch (rc) {
      case ZNONODE: return Status::NotFound(msg + "no such node");
      case ZBADARGUMENTS: return Status::InvalidArgument(msg + "bad arguments");
      case kRcNotConnected:
        return Status::IOError(msg + "not connected within " + timeout + " (ZooKeeper down or unreachable?)");
      case kRcTimedOut: return Status::IOError(msg + "no answer within " + timeout + " (outcome unknown)");
      case kRcClosed: return Status::IOError(msg + "the client is closed");
      case ZCONNECTIONLOSS: return Status::IOError(msg + "connection lost (outcome unknown)");
      case ZOPERATIONTIMEOUT: return Status::IOError(msg + "operation timed out (outcome unknown)");
      case ZSESSIONEXPIRED:
      case ZINVALIDSTATE: return Status::IOError(msg + "session expired (Reopen() starts a new one)");
      case ZCLOSING: return Status::IOError(msg + "the client is closing");
      case ZNOCHILDRENFOREPHEMERALS: return Status::InvalidArgument(msg + "the parent is ephemeral (no children allowed)");
      case ZNOAUTH: return Status::IOError(msg + "not authorised (node ACL)");
      default: break;
    }
    const char* text = zerror(rc);
    return Status::IOError(msg + (text != nullptr ? text : "error") + " (code " + std::to_string(rc) + ")");
  }

  const ZkOptions options_;

  // Guards handle_ against Close/Reopen while calls use it (shared).
  std::shared_mutex handle_mu_;
  zhandle_t* handle_ = nullptr;
  std::unique_ptr<HandleContext> handle_context_;
  uint64_t next_generation_ = 0;           // under handle_mu_
  std::atomic<uint64_t> generation_{0};    // the live handle's, 0 when none

  mutable std::mutex mu_;
  std::condition_variable state_cv_;
  ZkState state_ = ZkState::kConnecting;
  int64_t session_id_ = 0;
  int negotiated_timeout_ms_ = 0;
  int next_listener_id_ = 1;
  std::map<int, std::shared_ptr<StateListener>> listeners_;
  uint64_t next_watch_id_ = 1;
  std::unordered_map<uint64_t, Watch> watches_;

  std::shared_ptr<EventQueue> events_;
  std::thread event_thread_;
};

}  // namespace

Status ZkClient::Create(ZkOptions options, std::unique_ptr<ZkClient>* out) {
  if (options.servers.empty()) {
    return Status::InvalidArgument("ZooKeeper: no servers given (set canal.zkServers to host:port[,host:port...])");
  }
  if (options.servers.find_first_of(" \t\r\n") != std::string::npos) {
    return Status::InvalidArgument("ZooKeeper: servers '" + options.servers +
                                   "' contain whitespace (want host:port[,host:port...])");
  }
  if (options.session_timeout_ms <= 0 || options.operation_timeout_ms <= 0) {
    return Status::InvalidArgument("ZooKeeper: session and operation timeouts must be positive");
  }
  auto client = std::make_unique<ZkClientImpl>(std::move(options));
  CANAL_RETURN_IF_ERROR(client->Open());
  *out = std::move(client);
  return Status::OK();
}

namespace testing {

Status ExpireSession(ZkClient& client) {
  auto* impl = dynamic_cast<ZkClientImpl*>(&client);
  if (impl == nullptr) return Status::NotSupported("ZooKeeper expire session: not a client ZkClient::Create made");
  return impl->ExpireSession();
}

}  // namespace testing
}  // namespace canal::coord
