// /status: the same ServerReport as JSON (for tools, for canal-cli's
// failing-destination warning and for the admin page's script, with each
// destination's recent history) and as the admin page for a person
// (admin_page.h: a live section the script fills, then these details).
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "canal/server/admin_page.h"
#include "canal/server/status_history.h"
#include "canal/server/status_report.h"

namespace canal::server {

namespace {

using nlohmann::json;

json Position(const LogPosition& p) {
  if (p.empty()) return nullptr;
  return {{"journal", p.journal_name},
          {"file_index", BinlogFileIndex(p.journal_name)},
          {"offset", p.position},
          {"timestamp_ms", p.timestamp_ms},
          {"gtid", p.gtid}};
}

json DestinationJson(const DestinationReport& d, int64_t now_ms) {
  json j = {{"name", d.name},
            {"state", d.state},
            {"role", d.role},
            {"streaming", d.state == "streaming"},
            {"configured", d.configured}};
  const InstanceStatus& s = d.status;
  if (d.has_status) {
    const store::RingStoreStats& ring = s.store;
    j["primary"] = s.primary;
    j["position_read"] = Position(s.parser.position);
    j["lag_ms"] = d.delay_ms;
    j["ack_delay_ms"] = d.ack_delay_ms;
    j["transactions"] = s.sink.transactions;
    j["reconnects"] = s.parser.reconnects;
    // Which candidate the stream is on and why (docs/replication.md, "Failover").
    j["server"] = s.parser.server;
    j["failover"] = {{"moves", s.parser.failovers},
                     {"lost_transactions", s.parser.failover_lost_transactions},
                     {"new_transactions", s.parser.failover_new_transactions},
                     {"timestamp_fallbacks", s.parser.failover_timestamp_fallbacks}};
    j["detecting_failures"] = s.parser.detecting_failures;
    j["received_bytes"] = s.parser.bytes;
    j["ring"] = {{"entries", ring.put_sequence - ring.ack_sequence},
                 {"not_fetched", ring.put_sequence - ring.get_sequence},
                 {"capacity", s.store_capacity},
                 {"bytes", ring.held_bytes},
                 {"byte_bound", s.store_byte_bound}};
    j["errors_by_kind"] = s.parser.errors;
    if (s.snapshot_active) {
      const snapshot::SnapshotRunStatus& sn = s.snapshot;
      j["snapshot"] = {{"id", sn.id},
                       {"state", sn.state},
                       {"tables_total", sn.tables_total},
                       {"tables_done", sn.tables_done},
                       {"rows_read", sn.rows_read},
                       {"rows_sent", sn.rows_sent},
                       {"rows_estimate", sn.rows_estimate},
                       {"rows_per_second", sn.rows_per_second},
                       {"eta_ms", sn.eta_ms},
                       {"chunks", sn.chunks},
                       {"chunks_read_again", sn.redone},
                       {"rows_left_to_the_stream", sn.dropped_rows},
                       {"elapsed_ms", sn.elapsed_ms},
                       {"last_error", sn.last_error.empty() ? json(nullptr) : json(sn.last_error)}};
    } else {
      j["snapshot"] = nullptr;
    }
    j["snapshots_after_purged_binlog"] = s.purged_resnapshots;
    if (!s.parser.last_error.empty()) {
      j["last_error"] = {{"message", s.parser.last_error},
                         {"time_ms", s.parser.last_error_ms},
                         {"age_ms", now_ms > s.parser.last_error_ms ? now_ms - s.parser.last_error_ms : 0}};
    } else {
      j["last_error"] = nullptr;
    }
  }
  j["cursor_acked"] = d.acked ? Position(*d.acked) : json(nullptr);
  j["subscriptions"] = d.subscriptions;
  if (d.client) {
    const ClientConnection c = d.client->connection();
    j["client"] = {{"connected", c.connected},
                   {"address", c.address},
                   {"client_id", c.client_id},
                   {"subscribed_ms", c.since_ms},
                   {"last_request_ms", d.client->last_request_ms()},
                   {"get_rows", d.client->get_rows()},
                   {"ack_rows", d.client->ack_rows()}};
  } else {
    j["client"] = nullptr;
  }
  j["ha"] = {{"fencing_events", d.ha.fencing_events},
             {"last_deactivation",
              d.ha.last_ms == 0 ? json(nullptr) : json{{"reason", d.ha.last_reason}, {"time_ms", d.ha.last_ms}}}};
  return j;
}

void Html(std::string_view text, std::string* out) {
  for (char c : text) {
    switch (c) {
      case '&':
        *out += "&amp;";
        break;
      case '<':
        *out += "&lt;";
        break;
      case '>':
        *out += "&gt;";
        break;
      case '"':
        *out += "&quot;";
        break;
      case '\'':
        *out += "&#39;";
        break;
      default:
        *out += c;
    }
  }
}

void Row(std::string_view key, std::string_view value, std::string* out) {
  *out += "<tr><th>";
  Html(key, out);
  *out += "</th><td>";
  Html(value, out);
  *out += "</td></tr>\n";
}

std::string PositionText(const json& p) {
  if (p.is_null()) return "-";
  return p["journal"].get<std::string>() + ":" + std::to_string(p["offset"].get<uint64_t>());
}

// Parallel arrays, oldest first: compact, and what a sparkline draws.
json HistoryJson(const std::vector<HistorySample>& samples, std::chrono::milliseconds every) {
  json time = json::array(), rows = json::array(), lag = json::array();
  for (const HistorySample& s : samples) {
    time.push_back(s.time_ms);
    rows.push_back(s.rows_per_second ? json(std::round(*s.rows_per_second * 10) / 10) : json(nullptr));
    lag.push_back(s.lag_ms ? json(*s.lag_ms) : json(nullptr));
  }
  return {{"interval_ms", every.count()}, {"time_ms", std::move(time)}, {"rows_per_second", std::move(rows)},
          {"lag_ms", std::move(lag)}};
}

std::string Age(int64_t now_ms, int64_t then_ms) {
  if (then_ms <= 0) return "never";
  return std::to_string(now_ms > then_ms ? now_ms - then_ms : 0) + " ms ago";
}

}  // namespace

std::string RenderStatusJson(const ServerReport& report, const StatusHistory* history) {
  json destinations = json::array();
  for (const DestinationReport& d : report.destinations) {
    json j = DestinationJson(d, report.now_ms);
    if (history != nullptr) j["history"] = HistoryJson(history->Samples(d.name), history->every());
    destinations.push_back(std::move(j));
  }
  std::string why;
  const bool healthy = Healthy(report, &why);
  json j = {{"server", {{"address", report.server_address}, {"time_ms", report.now_ms}, {"ha", report.ha}}},
            {"healthy", healthy},
            {"destinations", std::move(destinations)}};
  if (report.cluster) {
    const ClusterReport& c = *report.cluster;
    j["cluster"] = {{"placement", "balanced"},      {"leader", c.leader_address}, {"is_leader", c.leader},
                    {"generation", c.generation},   {"assignment", c.assignment}, {"unassigned", c.unassigned},
                    {"assigned_here", c.assigned_here}};
  }
  if (report.has_process) {
    const metrics::ProcessStats& p = report.process;
    j["server"]["process"] = {{"cpu_seconds", p.cpu_seconds}, {"resident_bytes", p.resident_bytes},
                              {"open_fds", p.open_fds},       {"max_fds", p.max_fds},
                              {"threads", p.threads},         {"start_time_seconds", p.start_time_seconds}};
  }
  // Names, errors and addresses come from files and the network: never let
  // a bad byte make the page unreadable.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string RenderStatusHtml(const ServerReport& report) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>canal-server status</title>\n"
      // Served from this port: the page's policy allows nothing inline.
      "<link rel=\"stylesheet\" href=\"/status.css\"><script src=\"/status.js\" defer></script>\n"
      "</head><body>\n<h1>canal-server ";
  Html(report.server_address, &out);
  out += "</h1>\n";
  std::string why;
  out += Healthy(report, &why)
             ? "<p id=\"healthy\" class=\"ok\">healthy: every destination active here is streaming</p>\n"
             : "<p id=\"healthy\" class=\"bad\">not healthy</p>\n";
  out += AdminPageSection();
  if (report.cluster) {
    // A balanced cluster: who leads, what is here, and what runs nowhere (and why).
    const ClusterReport& c = *report.cluster;
    out += "<h2>Cluster</h2>\n<table id=\"cluster\">\n";
    Row("leader", (c.leader_address.empty() ? std::string("none yet") : c.leader_address) +
                      (c.leader ? " (this server)" : ""),
        &out);
    Row("assignment", "generation " + std::to_string(c.generation) + ", " + std::to_string(c.assignment.size()) +
                          " destination(s) placed",
        &out);
    std::string here;
    for (const std::string& d : c.assigned_here) here += (here.empty() ? "" : ", ") + d;
    Row("here", here.empty() ? std::string("none") : here, &out);
    for (const auto& [d, why] : c.unassigned) Row("unassigned " + d, why, &out);
    out += "</table>\n";
  }
  out += "<h2>Details</h2>\n<p class=\"note\">as of this page load</p>\n";
  if (report.destinations.empty()) out += "<p>no destinations</p>\n";
  for (const DestinationReport& d : report.destinations) {
    const json j = DestinationJson(d, report.now_ms);
    const bool good = d.role != "active" || d.state == "streaming";
    out += "<h2 class=\"";
    out += good ? "ok" : "bad";
    out += "\">";
    Html(d.name, &out);
    out += ": ";
    Html(d.state, &out);
    out += "</h2>\n<table>\n";
    Row("role", d.role, &out);
    if (d.has_status) {
      Row("primary", j["primary"].get<std::string>(), &out);
      Row("position read", PositionText(j["position_read"]), &out);
      Row("lag", std::to_string(d.delay_ms) + " ms", &out);
      const json& ring = j["ring"];
      Row("ring",
          std::to_string(ring["entries"].get<uint64_t>()) + " / " + std::to_string(ring["capacity"].get<uint64_t>()) +
              " entries, " + std::to_string(ring["bytes"].get<uint64_t>()) + " bytes, " +
              std::to_string(ring["not_fetched"].get<uint64_t>()) + " not yet fetched",
          &out);
      Row("transactions", std::to_string(d.status.sink.transactions), &out);
      Row("reconnects", std::to_string(d.status.parser.reconnects), &out);
      if (!d.status.parser.server.empty()) Row("server", d.status.parser.server, &out);
      if (d.status.parser.failovers != 0) {
        Row("failovers",
            std::to_string(d.status.parser.failovers) + " (lost " +
                std::to_string(d.status.parser.failover_lost_transactions) + ", new " +
                std::to_string(d.status.parser.failover_new_transactions) + " transactions" +
                (d.status.parser.failover_timestamp_fallbacks != 0
                     ? ", " + std::to_string(d.status.parser.failover_timestamp_fallbacks) + " by time"
                     : std::string()) +
                ")",
            &out);
      }
      if (!d.status.parser.last_error.empty()) {
        Row("last error", d.status.parser.last_error + " (" + Age(report.now_ms, d.status.parser.last_error_ms) + ")",
            &out);
      }
    }
    Row("cursor acked", PositionText(j["cursor_acked"]), &out);
    if (d.client) {
      const ClientConnection c = d.client->connection();
      Row("client", (c.connected ? "connected " : "last ") + c.address + " (client id " + c.client_id + ")", &out);
      Row("last request", Age(report.now_ms, d.client->last_request_ms()), &out);
    } else {
      Row("client", "none yet", &out);
    }
    if (d.ha.last_ms != 0) {
      Row("last HA stop", d.ha.last_reason + " (" + Age(report.now_ms, d.ha.last_ms) + ")", &out);
    }
    out += "</table>\n";
  }
  out +=
      "<p><a href=\"/metrics\">metrics</a> &middot; <a href=\"/status\">JSON</a> &middot; "
      "<a href=\"/health\">health</a></p>\n</body></html>\n";
  return out;
}

}  // namespace canal::server
