#include "canal/server/client_stats.h"

namespace canal::server {

ClientStats::ClientStats()
    // Canal's request latency buckets (milliseconds).
    : latency_({2.5, 10, 25, 100}),
      // A cursor flush is an fsync (file) or a ZooKeeper write.
      flush_latency_({0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 1000}) {}

void ClientStats::Request(int packet_type, uint64_t bytes, bool empty_get, int error_code, double latency_ms,
                          int64_t now_ms) {
  // Canal counts an empty GET answer only as an empty batch.
  if (empty_get) {
    empty_batches_.Add();
  } else {
    packets_[packet_type > 0 && packet_type < kPacketTypes ? packet_type : 0].Add();
  }
  bytes_.Add(bytes);
  if (error_code > 0) {
    size_t i = 0;
    while (i < kErrorCodes.size() && kErrorCodes[i] != error_code) ++i;
    errors_[i].Add();
  }
  latency_.Observe(latency_ms);
  last_request_ms_.Set(now_ms);
}

void ClientStats::Got(uint64_t rows, int64_t exec_ms) {
  get_rows_.Add(rows);
  if (exec_ms > 0) get_exec_ms_.Set(exec_ms);
}

void ClientStats::Acked(uint64_t rows, int64_t exec_ms) {
  ack_rows_.Add(rows);
  if (exec_ms > 0) ack_exec_ms_.Set(exec_ms);
}

void ClientStats::Subscribed(std::string address, std::string client_id, int64_t now_ms) {
  std::lock_guard lock(mu_);
  connection_ = {true, std::move(address), std::move(client_id), now_ms};
}

void ClientStats::Unsubscribed() {
  std::lock_guard lock(mu_);
  connection_.connected = false;  // the address stays: "last client"
}

uint64_t ClientStats::packets(int packet_type) const {
  return packets_[packet_type > 0 && packet_type < kPacketTypes ? packet_type : 0].value();
}

ClientConnection ClientStats::connection() const {
  std::lock_guard lock(mu_);
  return connection_;
}

std::shared_ptr<ClientStats> ClientStatsBook::For(std::string_view destination) {
  std::lock_guard lock(mu_);
  auto it = by_destination_.find(destination);
  if (it == by_destination_.end()) {
    it = by_destination_.emplace(std::string(destination), std::make_shared<ClientStats>()).first;
  }
  return it->second;
}

std::shared_ptr<const ClientStats> ClientStatsBook::Find(std::string_view destination) const {
  std::lock_guard lock(mu_);
  auto it = by_destination_.find(destination);
  return it == by_destination_.end() ? nullptr : it->second;
}

}  // namespace canal::server
