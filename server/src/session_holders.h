// DestinationHolders: which session consumes which destination. A
// destination's ring has exactly one consumer, so at most one live session may
// hold its subscription; a second subscriber is told who holds it.
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace canal::server {

class DestinationHolders {
 public:
  struct Holder {
    const void* owner = nullptr;  // the session
    std::string client_id;        // as the client sent it
    std::string peer;             // "ip:port" of the client
  };

  // Makes `holder` the holder of `destination` when nobody (or the same
  // owner) holds it; otherwise returns false and fills *current.
  bool Acquire(const std::string& destination, const Holder& holder, Holder* current) {
    std::lock_guard lock(mu_);
    auto [it, inserted] = held_.try_emplace(destination, holder);
    if (inserted || it->second.owner == holder.owner) {
      it->second = holder;
      return true;
    }
    *current = it->second;
    return false;
  }

  // Drops the hold when `owner` has it.
  void Release(const std::string& destination, const void* owner) {
    std::lock_guard lock(mu_);
    auto it = held_.find(destination);
    if (it != held_.end() && it->second.owner == owner) held_.erase(it);
  }

 private:
  std::mutex mu_;
  std::map<std::string, Holder> held_;  // guarded by mu_
};

}  // namespace canal::server
