// WatchedReads (placement_internal.h): reads that arm one-shot watches, and
// the table that keeps them from piling up.
#include "canal/coord/zk_client.h"
#include "placement_internal.h"

namespace canal::coord::internal {

// ZooKeeper calls watches on its own thread, possibly after the reads are
// gone (a one-shot watch outlives its reader): they go through this.
struct WatchedReads::Gate {
  std::mutex mu;
  WatchedReads* owner = nullptr;  // guarded by mu; null once closed
  std::function<void(char)> fired;

  void Fire(const std::string& key, uint64_t serial) {
    std::lock_guard<std::mutex> lock(mu);
    if (owner == nullptr) return;
    owner->Disarm(key, serial);
    fired(key[0]);
  }
};

WatchedReads::WatchedReads(ZkClient* zk, std::function<void(char kind)> fired)
    : zk_(zk), gate_(std::make_shared<Gate>()) {
  gate_->owner = this;
  gate_->fired = std::move(fired);
}

WatchedReads::~WatchedReads() { Close(); }

void WatchedReads::Close() {
  std::lock_guard<std::mutex> lock(gate_->mu);
  gate_->owner = nullptr;
}

uint64_t WatchedReads::Arm(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (armed_.count(key) != 0) return 0;
  // Entered before the call: its watch may fire before the call returns.
  return armed_[key] = ++next_serial_;
}

void WatchedReads::Disarm(const std::string& key, uint64_t serial) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = armed_.find(key);
  if (it != armed_.end() && it->second == serial) armed_.erase(it);
}

bool WatchedReads::Armed(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return armed_.count(key) != 0;
}

void WatchedReads::ForgetWatches() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_.clear();
}

void WatchedReads::ClearCache() {
  data_cache_.clear();
  children_cache_.clear();
}

Status WatchedReads::Get(char kind, const std::string& path, bool* exists, std::string* body) {
  std::string key(1, kind);
  key += path;
  const uint64_t serial = Arm(key);
  if (serial == 0) {
    Status s = zk_->Get(path, body);
    *exists = s.ok();
    return s.IsNotFound() ? Status::OK() : s;
  }
  Status s = zk_->GetAndWatch(
      path, [gate = gate_, key, serial] { gate->Fire(key, serial); }, exists, body);
  if (!s.ok()) Disarm(key, serial);
  return s;
}

Status WatchedReads::Children(char kind, const std::string& path, std::vector<std::string>* names) {
  std::string key(1, kind);
  key += path;
  const uint64_t serial = Arm(key);
  if (serial == 0) return zk_->Children(path, names);
  Status s = zk_->ChildrenAndWatch(
      path, [gate = gate_, key, serial] { gate->Fire(key, serial); }, names);
  if (!s.ok()) Disarm(key, serial);
  return s;
}

Status WatchedReads::CachedGet(const std::string& path, std::optional<std::string>* body) {
  const std::string key = kData + path;
  if (auto it = data_cache_.find(key); it != data_cache_.end() && Armed(key)) {
    *body = it->second;
    return Status::OK();
  }
  bool exists = false;
  std::string data;
  CANAL_RETURN_IF_ERROR(Get(kData, path, &exists, &data));
  *body = exists ? std::optional<std::string>(std::move(data)) : std::nullopt;
  data_cache_[key] = *body;
  return Status::OK();
}

Status WatchedReads::CachedChildren(const std::string& path, std::vector<std::string>* names) {
  const std::string key = kChildren + path;
  if (auto it = children_cache_.find(key); it != children_cache_.end() && Armed(key)) {
    *names = it->second;
    return Status::OK();
  }
  CANAL_RETURN_IF_ERROR(Children(kChildren, path, names));
  children_cache_[key] = *names;
  return Status::OK();
}

}  // namespace canal::coord::internal
