// What the bad-broker tests of both brokers share (rabbitmq_mq_test.cc,
// kafka_bad_broker_test.cc): a TCP listener that accepts connections, reads
// what comes and never answers (a hung broker, or not a broker at all); the
// MQ client's cursor in meta.dat; the server's metrics; and the check that a
// destination whose broker takes nothing holds still: its ring fills, its
// parser waits, nothing is acked and the process does not grow.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/canal_install.h"
#include "support/loopback_http.h"
#include "support/wait.h"

namespace canal::mq::testing {

// 127.0.0.1 on a port the kernel picks: accepts every connection, reads and
// drops what the client sends, never writes a byte, and closes a connection
// only when the client does.
class SilentBroker {
 public:
  SilentBroker() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 64) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~SilentBroker() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  SilentBroker(const SilentBroker&) = delete;
  SilentBroker& operator=(const SilentBroker&) = delete;

  bool ok() const { return port_ != 0; }
  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_.load(); }
  int open_connections() const { return open_.load(); }
  uint64_t bytes_read() const { return bytes_.load(); }

 private:
  void Run() {
    std::vector<int> conns;
    std::vector<char> buf(65536);
    while (!stop_.load()) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (int c : conns) fds.push_back({c, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      for (size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const ssize_t n = ::recv(fds[i].fd, buf.data(), buf.size(), 0);
        if (n > 0) {
          bytes_ += static_cast<uint64_t>(n);
          continue;
        }
        ::close(fds[i].fd);
        conns.erase(std::find(conns.begin(), conns.end(), fds[i].fd));
      }
      if ((fds[0].revents & POLLIN) != 0) {
        const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          conns.push_back(c);
          ++accepted_;
        }
      }
      open_.store(static_cast<int>(conns.size()));
    }
    for (int c : conns) ::close(c);
  }

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0}, open_{0};
  std::atomic<uint64_t> bytes_{0};
};

// The cursor of client `client_id` in a meta.dat, plain JSON (as a clean stop
// leaves it) or the running server's two checksummed slots (the newest slot):
// "journal:position", "" when the client has no cursor (nothing acked), or
// "(unreadable: ...)".
inline std::string ClientCursor(const std::filesystem::path& meta, int client_id = 1001) {
  std::string text = canal::testing::ReadAll(meta);
  if (text.starts_with("canal-meta v1 ")) {
    // Slots: "canal-meta v1 seq=<hex> len=<hex> crc=<hex>\n" and len bytes of JSON.
    uint64_t best_seq = 0;
    std::string best;
    for (size_t at = text.find("canal-meta v1 "); at != std::string::npos; at = text.find("canal-meta v1 ", at + 1)) {
      const size_t eol = text.find('\n', at);
      const size_t seq = text.find("seq=", at), len = text.find("len=", at);
      if (eol == std::string::npos || seq > eol || len > eol) continue;
      const uint64_t s = std::strtoull(text.c_str() + seq + 4, nullptr, 16);
      const size_t n = std::strtoull(text.c_str() + len + 4, nullptr, 16);
      if (s >= best_seq && eol + 1 + n <= text.size()) {
        best_seq = s;
        best = text.substr(eol + 1, n);
      }
    }
    text = best;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("clientDatas")) return "(unreadable: " + meta.string() + ")";
  for (const auto& c : j["clientDatas"]) {
    if (c.value("clientIdentity", nlohmann::json::object()).value("clientId", -1) != client_id) continue;
    if (!c.contains("cursor") || c["cursor"].is_null()) return "";
    const auto& p = c["cursor"]["postion"];  // Canal's spelling
    return p.value("journalName", std::string()) + ":" + std::to_string(p.value("position", int64_t{0}));
  }
  return "";
}

// The value of `series` (the whole "name{labels}" text) on the server's /metrics page.
inline std::optional<double> ServerMetric(uint16_t metrics_port, const std::string& series) {
  const canal::testing::HttpReply r = canal::testing::HttpGet(metrics_port, "/metrics");
  if (r.status != 200) return std::nullopt;
  const size_t at = r.body.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(r.body.c_str() + at + 1 + series.size() + 1, nullptr);
}

// A destination's ring and the process, from /metrics (-1: not there).
struct RingSample {
  double fill = -1;      // canal_instance_store_fill_ratio
  double produced = -1;  // entries put (canal_instance_store_produce_seq)
  double acked = -1;     // entries acked (canal_instance_store_consume_seq)
  double rss = -1;       // bytes resident (canal_process_resident_memory_bytes)
  std::string ToString() const {
    char b[160];
    std::snprintf(b, sizeof b, "fill %.3f, %.0f entries put, %.0f acked, %.1f MiB resident", fill, produced, acked,
                  rss / 1048576.0);
    return b;
  }
};

inline RingSample SampleRing(uint16_t metrics_port, const std::string& destination = "example") {
  const std::string labels = "{destination=\"" + destination + "\"}";
  RingSample s;
  s.fill = ServerMetric(metrics_port, "canal_instance_store_fill_ratio" + labels).value_or(-1);
  s.produced = ServerMetric(metrics_port, "canal_instance_store_produce_seq" + labels).value_or(-1);
  s.acked = ServerMetric(metrics_port, "canal_instance_store_consume_seq" + labels).value_or(-1);
  s.rss = ServerMetric(metrics_port, "canal_process_resident_memory_bytes").value_or(-1);
  return s;
}

// instance.properties lines for a small ring (256 entries, 256 KiB): a broker
// that takes nothing fills it with a few hundred transactions.
inline constexpr char kSmallRing[] =
    "canal.instance.memory.buffer.size = 256\ncanal.instance.memory.buffer.memunit = 1024\n";

// A destination whose broker takes nothing, with more changes written than
// its ring holds: the ring fills and the parser waits (nothing more is put
// while `write_more` writes as much again), nothing is acked, and the
// server's resident memory grows by less than 16 MiB. Prints the figures.
inline void ExpectHeldBack(uint16_t metrics_port, const std::function<bool()>& write_more) {
  using namespace std::chrono_literals;
  // Full: nearly all of it used (by entries or bytes), and nothing more put since the last look.
  RingSample full, last;
  const bool filled = canal::testing::WaitFor(
      [&] {
        last = full;
        full = SampleRing(metrics_port);
        return full.fill >= 0.9 && full.produced > 0 && full.produced == last.produced;
      },
      60s, 250ms);
  ASSERT_TRUE(filled) << "the ring did not fill: " << full.ToString();
  EXPECT_EQ(full.acked, 0) << full.ToString();
  ASSERT_TRUE(write_more());
  // The parser is stuck on the full ring: nothing can be put now. What is
  // checked is that nothing happens, so a fixed wait it is.
  std::this_thread::sleep_for(3s);
  const RingSample later = SampleRing(metrics_port);
  EXPECT_EQ(later.produced, full.produced) << "the parser put more into a full ring: " << later.ToString();
  EXPECT_EQ(later.acked, 0) << later.ToString();
  EXPECT_GE(later.fill, 0.9) << later.ToString();
  EXPECT_LT(later.rss - full.rss, 16.0 * 1048576) << full.ToString() << " -> " << later.ToString();
  std::printf("[ figures ] held back: %s -> %s\n", full.ToString().c_str(), later.ToString().c_str());
}

// The first line of `log` with `text` in it, or "".
inline std::string LineWith(const std::string& log, const std::string& text) {
  const size_t at = log.find(text);
  if (at == std::string::npos) return "";
  const size_t begin = log.rfind('\n', at);
  const size_t end = log.find('\n', at);
  return log.substr(begin == std::string::npos ? 0 : begin + 1,
                    (end == std::string::npos ? log.size() : end) - (begin == std::string::npos ? 0 : begin + 1));
}

}  // namespace canal::mq::testing
