#include "canal/meta/zk_meta_manager.h"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "canal/meta/meta_json.h"
#include "meta_state.h"

namespace canal::meta {

namespace {

constexpr char kDestinationsRoot[] = "/otter/canal/destinations";

// Client nodes are named by the decimal client id (a Java short in Canal);
// siblings such as "cluster" and "running" are not clients.
std::optional<int16_t> ParseClientId(const std::string& name) {
  int16_t id = 0;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data(), end, id);
  if (name.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  if (std::to_string(id) != name) return std::nullopt;  // "007", "+1": not what Canal writes
  return id;
}

ClientIdentity ClientOf(const std::string& destination, int16_t id) {
  ClientIdentity c;
  c.destination = destination;
  c.client_id = id;
  return c;
}

// One ZooKeeper change a flush makes.
struct Write {
  enum class Kind { kSubscription, kCursor, kDelete } kind;
  int16_t client_id;
  std::string filter;  // kSubscription
  std::string body;    // kCursor
};

}  // namespace

std::string ZkMetaManager::DestinationPath(const std::string& destination) {
  return std::string(kDestinationsRoot) + "/" + destination;
}
std::string ZkMetaManager::ClientPath(const ClientIdentity& client) {
  return DestinationPath(client.destination) + "/" + std::to_string(client.client_id);
}
std::string ZkMetaManager::FilterPath(const ClientIdentity& client) { return ClientPath(client) + "/filter"; }
std::string ZkMetaManager::CursorPath(const ClientIdentity& client) { return ClientPath(client) + "/cursor"; }

ZkMetaManager::ZkMetaManager(ZkMetaOptions options) : options_(std::move(options)) {}

ZkMetaManager::~ZkMetaManager() { Stop().PermitUncheckedError(); }

Status ZkMetaManager::Start() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    if (running_) return Status::OK();
  }
  if (options_.zk == nullptr) {
    return Status::InvalidArgument("ZkMetaManager: no ZooKeeper client given (ZkMetaOptions::zk)");
  }
  {
    std::lock_guard lock(mu_);
    state_->Clear();
    nodes_.clear();
    flusher_stop_ = false;
    background_status_ = Status::OK();
    running_ = true;
  }
  if (options_.flush_period.count() > 0) flusher_ = std::thread([this] { FlusherLoop(); });
  return Status::OK();
}

Status ZkMetaManager::Stop() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    running_ = false;  // refuse new calls: nothing changes while we write the last time
    flusher_stop_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  std::vector<std::string> dirty;
  {
    std::lock_guard lock(mu_);
    for (const auto& [destination, nodes] : nodes_) {
      if (nodes->loaded && nodes->version > nodes->durable_version) dirty.push_back(destination);
    }
  }
  Status first;
  for (const std::string& destination : dirty) {
    Status s = FlushDestination(destination);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status ZkMetaManager::Subscribe(const ClientIdentity& client) {
  CANAL_RETURN_IF_ERROR(MemoryMetaManager::Subscribe(client));
  return FlushDestination(client.destination);
}

Status ZkMetaManager::Unsubscribe(const ClientIdentity& client) {
  CANAL_RETURN_IF_ERROR(MemoryMetaManager::Unsubscribe(client));
  return FlushDestination(client.destination);
}

Status ZkMetaManager::Flush(const std::string& destination) {
  {
    std::lock_guard lock(mu_);
    CANAL_RETURN_IF_ERROR(EnterLocked(destination, "Flush"));
  }
  return FlushDestination(destination);
}

Status ZkMetaManager::Reload(const std::string& destination) {
  DestinationNodes* nodes;
  {
    std::lock_guard lock(mu_);
    if (!running_) return Status::Aborted("Reload: meta manager is not running");
    CANAL_RETURN_IF_ERROR(MetaState::ValidateDestination(destination, "Reload"));
    auto it = nodes_.find(destination);
    if (it == nodes_.end()) return Status::OK();  // never loaded
    nodes = it->second.get();
  }
  // write_mu: no flush of this destination is half-way while we forget.
  std::lock_guard write_lock(nodes->write_mu);
  std::lock_guard lock(mu_);
  nodes->loaded = false;
  nodes->written.clear();
  nodes->durable_version = nodes->version;
  return Status::OK();
}

Status ZkMetaManager::background_status() const {
  std::lock_guard lock(mu_);
  return background_status_;
}

Status ZkMetaManager::LoadDestinationLocked(const std::string& destination) {
  std::unique_ptr<DestinationNodes>& nodes = nodes_[destination];
  if (!nodes) nodes = std::make_unique<DestinationNodes>();
  if (nodes->loaded) return Status::OK();
  // Read under mu_: once per destination (per Reload), and nothing may see
  // the destination half loaded.
  coord::ZkClient* zk = options_.zk;
  const std::string context = "loading meta of destination " + destination + " from ZooKeeper";
  std::vector<std::string> names;
  Status s = zk->Children(DestinationPath(destination), &names);
  if (!s.ok() && !s.IsNotFound()) return s.WithContext(context);

  std::vector<int16_t> ids;
  for (const std::string& name : names) {
    if (auto id = ParseClientId(name)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());

  DestinationMeta meta;
  meta.destination = destination;
  std::map<int16_t, WrittenClient> written;
  for (int16_t id : ids) {
    ClientMeta client;
    client.client = ClientOf(destination, id);
    std::string filter;
    s = zk->Get(FilterPath(client.client), &filter);
    if (!s.ok() && !s.IsNotFound()) return s.WithContext(context);
    client.client.filter = s.ok() ? filter : "";
    std::string body;
    s = zk->Get(CursorPath(client.client), &body);
    if (!s.ok() && !s.IsNotFound()) return s.WithContext(context);
    WrittenClient w;
    w.filter = client.client.filter;
    if (s.ok()) {
      LogPosition position;
      LogIdentity identity;
      Status d = DecodeCursor(body, &position, &identity);
      if (!d.ok()) return d.WithContext("cursor node " + CursorPath(client.client));
      client.cursor = position;
      client.cursor_identity = identity;
      // Our own encoding: an untouched cursor is not rewritten by the next flush.
      w.cursor_json = EncodeCursor(position, identity);
    }
    written.emplace(id, std::move(w));
    meta.clients.push_back(std::move(client));
  }
  state_->Restore(meta);
  nodes->written = std::move(written);
  nodes->loaded = true;
  return Status::OK();
}

void ZkMetaManager::MarkDirtyLocked(const std::string& destination) { ++nodes_[destination]->version; }

Status ZkMetaManager::FlushDestination(const std::string& destination) {
  DestinationNodes* nodes;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(destination);
    if (it == nodes_.end() || !it->second->loaded) return Status::OK();
    nodes = it->second.get();
    if (nodes->durable_version >= nodes->version) return Status::OK();
  }
  std::lock_guard write_lock(nodes->write_mu);
  // Compare memory with what ZooKeeper holds: the writes to make.
  std::vector<Write> writes;
  uint64_t snapshot_version;
  {
    std::lock_guard lock(mu_);
    // A writer that held write_mu before us may have covered our changes:
    // this is where concurrent flushes coalesce.
    if (!nodes->loaded || nodes->durable_version >= nodes->version) return Status::OK();
    snapshot_version = nodes->version;
    const DestinationMeta meta = state_->Snapshot(destination);
    std::map<int16_t, bool> present;
    for (const ClientMeta& c : meta.clients) {
      present[c.client.client_id] = true;
      auto w = nodes->written.find(c.client.client_id);
      if (w == nodes->written.end() || w->second.filter != c.client.filter) {
        writes.push_back(Write{Write::Kind::kSubscription, c.client.client_id, c.client.filter, ""});
      }
      if (c.cursor) {
        std::string body = EncodeCursor(*c.cursor, c.cursor_identity);
        if (w == nodes->written.end() || w->second.cursor_json != body) {
          writes.push_back(Write{Write::Kind::kCursor, c.client.client_id, "", std::move(body)});
        }
      }
    }
    for (const auto& [id, w] : nodes->written) {
      if (!present.count(id)) writes.push_back(Write{Write::Kind::kDelete, id, "", ""});
    }
  }

  if (!writes.empty() && options_.write_fence) {
    CANAL_RETURN_IF_ERROR(
        options_.write_fence(destination).WithContext("writing meta of destination " + destination + " to ZooKeeper"));
  }
  coord::ZkClient* zk = options_.zk;
  for (const Write& w : writes) {
    const ClientIdentity client = ClientOf(destination, w.client_id);
    const std::string context = "writing meta of " + client.ToString() + " to ZooKeeper";
    switch (w.kind) {
      case Write::Kind::kSubscription: {
        bool created = false;
        CANAL_RETURN_IF_ERROR(
            zk->CreateNode(ClientPath(client), "", coord::ZkCreateMode::kPersistent, true, &created)
                .WithContext(context));
        // Canal writes a filter node only for a non-empty filter.
        if (w.filter.empty()) {
          CANAL_RETURN_IF_ERROR(zk->Delete(FilterPath(client)).WithContext(context));
        } else {
          CANAL_RETURN_IF_ERROR(zk->SetOrCreate(FilterPath(client), w.filter).WithContext(context));
        }
        zk_writes_.fetch_add(2, std::memory_order_relaxed);
        std::lock_guard lock(mu_);
        nodes->written[w.client_id].filter = w.filter;
        break;
      }
      case Write::Kind::kCursor: {
        CANAL_RETURN_IF_ERROR(zk->SetOrCreate(CursorPath(client), w.body).WithContext(context));
        zk_writes_.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard lock(mu_);
        nodes->written[w.client_id].cursor_json = w.body;
        break;
      }
      case Write::Kind::kDelete: {
        CANAL_RETURN_IF_ERROR(zk->Delete(ClientPath(client), true).WithContext(context));
        zk_writes_.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard lock(mu_);
        nodes->written.erase(w.client_id);
        break;
      }
    }
  }
  std::lock_guard lock(mu_);
  if (snapshot_version > nodes->durable_version) nodes->durable_version = snapshot_version;
  return Status::OK();
}

void ZkMetaManager::FlusherLoop() {
  std::unique_lock lock(mu_);
  while (!flusher_stop_) {
    if (flusher_cv_.wait_for(lock, options_.flush_period, [this] { return flusher_stop_; })) break;
    std::vector<std::string> dirty;
    for (const auto& [destination, nodes] : nodes_) {
      if (nodes->loaded && nodes->version > nodes->durable_version) dirty.push_back(destination);
    }
    lock.unlock();
    Status first;
    for (const std::string& destination : dirty) {
      Status s = FlushDestination(destination);
      if (!s.ok() && first.ok()) first = s;
    }
    lock.lock();
    background_status_ = first;
  }
}

}  // namespace canal::meta
