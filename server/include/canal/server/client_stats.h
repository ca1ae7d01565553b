// ClientStats: what the session server counts per destination for metrics and
// /status — Canal's client profiler series (packets by type, bytes sent,
// empty batches, request errors by code, request latency) plus rows handed
// out and acked, the event time of the last entry handed out and acked (the
// get/ack delays), the cursor flush latency, and who is connected.
//
// Sessions update the counters on their strand with relaxed atomics (see
// metrics/metric.h); the scrape reads them from another thread. The
// connection fields change only at subscribe and unsubscribe, under a mutex.
//
// ClientStatsBook: one ClientStats per destination name, created on first
// use and kept for the life of the server, so counters never go backwards
// across reconnects (Prometheus counters must not).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "canal/metrics/metric.h"

namespace canal::server {

struct ClientConnection {
  bool connected = false;
  std::string address;  // client ip:port
  std::string client_id;
  int64_t since_ms = 0;  // subscribed at (ms since the epoch)
};

class ClientStats {
 public:
  // Canal's PacketType numbers run 1..12; 0 collects anything else.
  static constexpr int kPacketTypes = 13;
  // The error codes the server sends (400 general, 401 identity missing,
  // 402 batch id missing); others count under "other".
  static constexpr std::array<int, 3> kErrorCodes = {400, 401, 402};

  ClientStats();

  // One answered request: its packet type, the bytes written, whether it
  // was a GET answered with no entries, the error code (0: none) and the
  // time from reading the request to writing the answer.
  void Request(int packet_type, uint64_t bytes, bool empty_get, int error_code, double latency_ms, int64_t now_ms);
  void Got(uint64_t rows, int64_t exec_ms);
  void Acked(uint64_t rows, int64_t exec_ms);
  void Flushed(double latency_ms) { flush_latency_.Observe(latency_ms); }
  void Subscribed(std::string address, std::string client_id, int64_t now_ms);
  void Unsubscribed();

  uint64_t packets(int packet_type) const;
  uint64_t errors(size_t code_index) const { return errors_[code_index].value(); }  // index into kErrorCodes
  uint64_t other_errors() const { return errors_[kErrorCodes.size()].value(); }
  uint64_t bytes() const { return bytes_.value(); }
  uint64_t empty_batches() const { return empty_batches_.value(); }
  uint64_t get_rows() const { return get_rows_.value(); }
  uint64_t ack_rows() const { return ack_rows_.value(); }
  int64_t get_exec_ms() const { return get_exec_ms_.value(); }
  int64_t ack_exec_ms() const { return ack_exec_ms_.value(); }
  int64_t last_request_ms() const { return last_request_ms_.value(); }
  metrics::HistogramSnapshot latency() const { return latency_.Snapshot(); }
  metrics::HistogramSnapshot flush_latency() const { return flush_latency_.Snapshot(); }
  ClientConnection connection() const;

 private:
  std::array<metrics::Counter, kPacketTypes> packets_;
  std::array<metrics::Counter, kErrorCodes.size() + 1> errors_;
  metrics::Counter bytes_, empty_batches_, get_rows_, ack_rows_;
  metrics::Gauge get_exec_ms_, ack_exec_ms_, last_request_ms_;
  metrics::Histogram latency_;        // ms, Canal's buckets
  metrics::Histogram flush_latency_;  // ms

  mutable std::mutex mu_;
  ClientConnection connection_;  // guarded by mu_
};

class ClientStatsBook {
 public:
  // The destination's stats, created on first use. Any thread.
  std::shared_ptr<ClientStats> For(std::string_view destination);
  // Null when no client ever subscribed to it.
  std::shared_ptr<const ClientStats> Find(std::string_view destination) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ClientStats>, std::less<>> by_destination_;
};

}  // namespace canal::server
