#include "canal/server/status_report.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "canal/meta/meta_manager.h"
#include "canal/meta/slowest_cursor.h"

namespace canal::server {

namespace {

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t Since(int64_t now_ms, int64_t then_ms) { return then_ms > 0 && now_ms > then_ms ? now_ms - then_ms : 0; }

}  // namespace

void HaEventLog::OnDeactivated(const std::string& destination, const std::string& reason) {
  std::lock_guard lock(mu_);
  Record& r = records_[destination];
  r.last_was_fence = reason.starts_with("fenced");
  if (r.last_was_fence) ++r.fencing_events;
  r.last_reason = reason;
  r.last_ms = SystemNowMs();
}

HaEventLog::Record HaEventLog::Get(std::string_view destination) const {
  std::lock_guard lock(mu_);
  auto it = records_.find(destination);
  return it == records_.end() ? Record{} : it->second;
}

uint64_t BinlogFileIndex(std::string_view journal_name) {
  const size_t dot = journal_name.rfind('.');
  if (dot == std::string_view::npos) return 0;
  uint64_t n = 0;
  const char* first = journal_name.data() + dot + 1;
  const char* last = journal_name.data() + journal_name.size();
  auto [ptr, ec] = std::from_chars(first, last, n);
  return ec == std::errc() && ptr == last ? n : 0;
}

StatusCollector::StatusCollector(StatusSources sources) : sources_(std::move(sources)) {}

ServerReport StatusCollector::Collect() {
  ServerReport report;
  report.now_ms = sources_.now_ms ? sources_.now_ms() : SystemNowMs();
  report.server_address = sources_.server_address;
  report.ha = sources_.arbiter != nullptr;
  report.has_process = metrics::ReadProcessStats(&report.process).ok();
  if (sources_.cluster) report.cluster = sources_.cluster();
  const int64_t now = report.now_ms;

  std::vector<std::pair<std::string, std::shared_ptr<ManagedDestination>>> known;
  if (sources_.destinations) known = sources_.destinations();
  std::lock_guard lock(mu_);
  for (auto& [name, instance] : known) {
    DestinationReport d;
    d.name = name;
    d.configured = instance != nullptr;
    if (sources_.ha_events != nullptr) d.ha = sources_.ha_events->Get(name);
    if (sources_.clients != nullptr) d.client = sources_.clients->Find(name);
    const bool active = sources_.arbiter == nullptr || sources_.arbiter->IsActive(name);
    d.role = active ? "active" : (d.ha.last_was_fence ? "fenced" : "standby");
    if (!d.configured) {
      d.state = "not configured";
      report.destinations.push_back(std::move(d));
      continue;
    }
    d.has_status = active && instance->Report(&d.status);
    if (!active) {
      d.state = d.role;
    } else if (d.has_status) {
      d.state = d.status.parser.state.empty() ? std::string("stopped") : d.status.parser.state;
      if (!d.status.running) d.state = "stopped";
    } else {
      d.state = instance->running() ? "running" : "stopped";
    }
    if (meta::MetaManager* meta = instance->meta(); meta != nullptr && active) {
      std::vector<meta::ClientIdentity> clients;
      if (meta->ListClients(name, &clients).ok()) d.subscriptions = clients.size();
      std::optional<LogPosition> slowest;
      if (meta::SlowestCursor(meta, name, &slowest).ok()) d.acked = std::move(slowest);
    }

    // Canal's traffic delay is now minus the time of the last event put;
    // ours is the parser's lag while streaming (0 when caught up, from the
    // primary's heartbeats). While not streaming the delay grows from when
    // the destination was last seen streaming, so a dead primary alerts.
    if (d.state == "streaming") {
      last_streaming_ms_[name] = now;
      d.delay_ms = d.status.parser.lag_ms;
    } else if (d.has_status) {
      auto it = last_streaming_ms_.find(name);
      const int64_t since = it != last_streaming_ms_.end() ? Since(now, it->second) : 0;
      d.delay_ms = std::max(d.status.parser.lag_ms, since);
    }
    // Get and ack delays: 0 behind the put side when the client has taken
    // (acked) everything, else now minus the event time of the last entry
    // taken (acked); never below the stage before (as Canal's).
    const store::RingStoreStats& ring = d.status.store;
    const int64_t get_exec = d.client ? d.client->get_exec_ms() : 0;
    const int64_t ack_exec = d.client ? d.client->ack_exec_ms() : 0;
    d.get_delay_ms = ring.get_sequence >= ring.put_sequence ? d.delay_ms : std::max(d.delay_ms, Since(now, get_exec));
    d.ack_delay_ms =
        ring.ack_sequence >= ring.put_sequence ? d.get_delay_ms : std::max(d.get_delay_ms, Since(now, ack_exec));
    report.destinations.push_back(std::move(d));
  }
  return report;
}

bool Healthy(const ServerReport& report, std::string* why) {
  why->clear();
  for (const DestinationReport& d : report.destinations) {
    if (d.role != "active") continue;  // standing by is healthy: another server serves it
    if (d.state == "streaming") continue;
    *why += d.name + ": " + d.state;
    if (d.has_status && !d.status.parser.last_error.empty()) *why += " (" + d.status.parser.last_error + ")";
    *why += '\n';
  }
  return why->empty();
}

}  // namespace canal::server
