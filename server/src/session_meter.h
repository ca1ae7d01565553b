// SessionMeter: a session's side of ClientStats. The session marks what
// each request was (type, empty GET, error code) while handling it and the
// meter records it once the answer is written, with the latency from the
// start of handling; the subscription attaches the destination's stats.
// Used on the session's strand only. Without a ClientStatsBook (tests) it
// records nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "canal/server/client_stats.h"

namespace canal::server {

class SessionMeter {
 public:
  using Clock = std::chrono::steady_clock;

  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  void Attach(ClientStatsBook* book, const std::string& destination, std::string peer, std::string client_id) {
    if (book == nullptr) return;
    if (stats_) stats_->Unsubscribed();
    stats_ = book->For(destination);
    stats_->Subscribed(std::move(peer), std::move(client_id), NowMs());
  }
  // The client left the destination; its last answer is still recorded.
  void Detach() {
    if (stats_) stats_->Unsubscribed();
  }

  void Begin() {
    start_ = Clock::now();
    type_ = 0;
    empty_get_ = false;
    error_code_ = 0;
  }
  void SetType(int type) { type_ = type; }
  void SetEmptyGet() { empty_get_ = true; }
  void SetError(int code) { error_code_ = code; }
  void End(uint64_t bytes) {
    if (!stats_ || type_ == 0) return;  // before any subscription: no destination to count it under
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
    stats_->Request(type_, bytes, empty_get_, error_code_, ms, NowMs());
  }

  void Got(uint64_t rows, int64_t exec_ms) {
    if (stats_) stats_->Got(rows, exec_ms);
  }
  void Acked(uint64_t rows, int64_t exec_ms) {
    if (stats_) stats_->Acked(rows, exec_ms);
  }
  void Flushed(Clock::time_point started) {
    if (stats_) stats_->Flushed(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  }

 private:
  std::shared_ptr<ClientStats> stats_;
  Clock::time_point start_;
  int type_ = 0;
  bool empty_get_ = false;
  int error_code_ = 0;
};

}  // namespace canal::server
