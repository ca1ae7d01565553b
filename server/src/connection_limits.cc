#include "canal/server/connection_limits.h"

namespace canal::server {

std::string ConnectionLimits::Admit(const std::string& address) {
  std::lock_guard lock(mu_);
  if (max_total_ > 0 && total_ >= max_total_) {
    return "the server holds " + std::to_string(total_) + " connections (canal.connections.max = " +
           std::to_string(max_total_) + ")";
  }
  auto it = per_address_.find(address);
  const size_t from_here = it == per_address_.end() ? 0 : it->second;
  if (max_per_address_ > 0 && from_here >= max_per_address_) {
    return std::to_string(from_here) + " connections from " + address +
           " are open (canal.connections.max.per.address = " + std::to_string(max_per_address_) + ")";
  }
  ++total_;
  if (it == per_address_.end()) {
    per_address_.emplace(address, 1);
  } else {
    ++it->second;
  }
  return {};
}

void ConnectionLimits::Release(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = per_address_.find(address);
  if (it == per_address_.end()) return;
  if (total_ > 0) --total_;
  if (--it->second == 0) per_address_.erase(it);
}

size_t ConnectionLimits::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

}  // namespace canal::server
