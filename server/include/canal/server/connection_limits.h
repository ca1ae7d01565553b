// ConnectionLimits: counts the connections a SessionServer holds, in total
// and per remote address, and refuses one past either limit
// (canal.connections.max, canal.connections.max.per.address). Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace canal::server {

class ConnectionLimits {
 public:
  // 0: no limit.
  ConnectionLimits(size_t max_total, size_t max_per_address)
      : max_total_(max_total), max_per_address_(max_per_address) {}

  // Counts a connection from `address` and returns "", or returns why it is
  // refused (naming the key to raise) and counts nothing.
  std::string Admit(const std::string& address);
  // Forgets a connection Admit counted.
  void Release(const std::string& address);

  size_t total() const;

 private:
  const size_t max_total_;
  const size_t max_per_address_;
  mutable std::mutex mu_;
  size_t total_ = 0;                                  // guarded by mu_
  std::unordered_map<std::string, size_t> per_address_;  // guarded by mu_
};

}  // namespace canal::server
