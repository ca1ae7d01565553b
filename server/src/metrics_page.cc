// RenderMetrics: the /metrics page. Canal's series keep Canal's names, types,
// labels and units (milliseconds for delays and blocking times) so that its
// Grafana dashboards and alerts work unchanged; ours follow the same style
// (canal_instance_*, label destination). docs/operations.md lists them all.
#include <array>
#include <string>

#include <spdlog/spdlog.h>

#include "canal/metrics/exposition.h"
#include "canal/server/status_report.h"

namespace canal::server {

namespace {

using metrics::Labels;
using metrics::MetricType;
using metrics::TextWriter;

// Canal's PacketType names, by number.
constexpr std::array<const char*, ClientStats::kPacketTypes> kPacketNames = {
    "UNKNOWN",       "HANDSHAKE",    "CLIENTAUTHENTICATION",
    "ACK",           "SUBSCRIPTION", "UNSUBSCRIPTION",
    "GET",           "MESSAGES",     "CLIENTACK",
    "SHUTDOWN",      "DUMP",         "HEARTBEAT",
    "CLIENTROLLBACK"};
// The request types a client sends: always exported, so a dashboard sees 0.
constexpr std::array<int, 5> kClientRequestTypes = {4, 5, 6, 8, 12};

constexpr std::array<const char*, 5> kParserStates = {"connecting", "streaming", "reconnecting", "stopped", "failed"};
constexpr std::array<const char*, 3> kRoles = {"active", "standby", "fenced"};

// Writes one family; every series of the page goes through here so that a
// refused name (a bug) drops that family only, never the whole page.
class Page {
 public:
  template <typename Fn>
  void Family(const char* name, const char* help, MetricType type, Fn&& samples) {
    if (!w_.Family(name, help, type)) return;
    samples(w_);
  }
  // A refused call is a bug in this file (every name here is a constant):
  // said once a page, and the rest of the page still served.
  std::string Take() {
    if (!w_.status().ok()) {
      spdlog::warn("metrics page: {} series refused, the first: {}", w_.refused(), w_.status().ToString());
    }
    return w_.Take();
  }

 private:
  TextWriter w_;
};

double Ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

// A sample for each active destination with a status report.
template <typename Fn>
void PerInstance(TextWriter& w, const ServerReport& r, Fn&& value) {
  for (const DestinationReport& d : r.destinations) {
    if (d.has_status) w.Sample({{"destination", d.name}}, value(d));
  }
}

template <typename Fn>
void PerClient(TextWriter& w, const ServerReport& r, Fn&& value) {
  for (const DestinationReport& d : r.destinations) {
    if (d.has_status && d.client) w.Sample({{"destination", d.name}}, value(*d.client));
  }
}

void CanalSeries(Page& p, const ServerReport& r) {
  p.Family("canal_instance", "Canal instance", MetricType::kGauge, [&](TextWriter& w) {
    for (const DestinationReport& d : r.destinations) {
      if (d.has_status) w.Sample({{"destination", d.name}, {"mode", "spring"}}, 1);
    }
  });
  p.Family("canal_instance_subscriptions", "Canal instance subscriptions", MetricType::kGauge,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.subscriptions; }); });
  p.Family(
      "canal_instance_transactions", "Transactions counter of canal instance", MetricType::kCounter,
      [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.status.sink.transactions; }); });
  p.Family("canal_instance_traffic_delay", "Traffic delay of canal instance in milliseconds", MetricType::kGauge,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.delay_ms; }); });
  p.Family("canal_instance_received_binlog_bytes", "Received binlog bytes", MetricType::kCounter,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.status.parser.bytes; }); });
  p.Family("canal_instance_parser_mode", "Parser mode(parallel/serial) of instance", MetricType::kGauge,
           [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (d.has_status) {
                 w.Sample({{"destination", d.name}, {"parallel", d.status.parser.parallel ? "true" : "false"}}, 1);
               }
             }
           });
  // One thread decodes and puts, so the dump thread is blocked publishing
  // exactly while the sink waits for room in the store.
  p.Family("canal_instance_publish_blocking_time", "Publish blocking time of dump thread in milliseconds",
           MetricType::kCounter, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return Ms(d.status.store.put_blocked_ns); });
           });
  p.Family("canal_instance_sink_blocking_time", "Total sink blocking time in milliseconds", MetricType::kCounter,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return Ms(d.status.store.put_blocked_ns); });
           });
  p.Family("canal_instance_store_produce_seq", "Produced events counter of canal instance", MetricType::kCounter,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.store.put_sequence; });
           });
  p.Family("canal_instance_store_consume_seq", "Consumed events counter of canal instance", MetricType::kCounter,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.store.ack_sequence; });
           });
  p.Family("canal_instance_store", "Canal instance info", MetricType::kGauge, [&](TextWriter& w) {
    for (const DestinationReport& d : r.destinations) {
      if (!d.has_status) continue;
      const std::string size = std::to_string(d.status.store_capacity);
      const char* mode = d.status.store_mode == store::BatchMode::kMemSize ? "MEMSIZE" : "ITEMSIZE";
      w.Sample({{"destination", d.name}, {"batchMode", mode}, {"size", size}}, 1);
    }
  });
  p.Family(
      "canal_instance_store_produce_mem", "Produced mem bytes of canal instance", MetricType::kCounter,
      [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.status.store.put_bytes; }); });
  p.Family(
      "canal_instance_store_consume_mem", "Consumed mem bytes of canal instance", MetricType::kCounter,
      [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.status.store.ack_bytes; }); });
  p.Family("canal_instance_put_delay", "Traffic delay of canal instance put", MetricType::kGauge,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.delay_ms; }); });
  p.Family("canal_instance_get_delay", "Traffic delay of canal instance get", MetricType::kGauge,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.get_delay_ms; }); });
  p.Family("canal_instance_ack_delay", "Traffic delay of canal instance ack", MetricType::kGauge,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.ack_delay_ms; }); });
  p.Family("canal_instance_put_rows", "Put table rows of canal instance", MetricType::kCounter,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.status.sink.rows; }); });
  p.Family("canal_instance_get_rows", "Got table rows of canal instance", MetricType::kCounter,
           [&](TextWriter& w) { PerClient(w, r, [](const ClientStats& c) { return c.get_rows(); }); });
  p.Family("canal_instance_ack_rows", "Acked table rows of canal instance", MetricType::kCounter,
           [&](TextWriter& w) { PerClient(w, r, [](const ClientStats& c) { return c.ack_rows(); }); });

  p.Family("canal_instance_client_packets", "Total packets sent to client.", MetricType::kCounter, [&](TextWriter& w) {
    for (const DestinationReport& d : r.destinations) {
      if (!d.has_status || !d.client) continue;
      for (int type = 0; type < ClientStats::kPacketTypes; ++type) {
        const uint64_t n = d.client->packets(type);
        const bool usual =
            std::find(kClientRequestTypes.begin(), kClientRequestTypes.end(), type) != kClientRequestTypes.end();
        if (n == 0 && !usual) continue;
        w.Sample({{"destination", d.name}, {"packetType", kPacketNames[type]}}, static_cast<double>(n));
      }
    }
  });
  p.Family("canal_instance_client_bytes", "Total bytes sent to client.", MetricType::kCounter,
           [&](TextWriter& w) { PerClient(w, r, [](const ClientStats& c) { return c.bytes(); }); });
  p.Family("canal_instance_client_empty_batches", "Total empty batches sent to client.", MetricType::kCounter,
           [&](TextWriter& w) { PerClient(w, r, [](const ClientStats& c) { return c.empty_batches(); }); });
  p.Family("canal_instance_client_request_error", "Total client request errors.", MetricType::kCounter,
           [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (!d.has_status || !d.client) continue;
               for (size_t i = 0; i < ClientStats::kErrorCodes.size(); ++i) {
                 const std::string code = std::to_string(ClientStats::kErrorCodes[i]);
                 w.Sample({{"destination", d.name}, {"errorCode", code}}, static_cast<double>(d.client->errors(i)));
               }
               if (const uint64_t other = d.client->other_errors(); other != 0) {
                 w.Sample({{"destination", d.name}, {"errorCode", "other"}}, static_cast<double>(other));
               }
             }
           });
  p.Family("canal_instance_client_request_latency", "Client request latency.", MetricType::kHistogram,
           [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (d.has_status && d.client) {
                 w.HistogramSample({{"destination", d.name}}, d.client->latency());
               }
             }
           });
}

void OwnSeries(Page& p, const ServerReport& r) {
  p.Family("canal_instance_parser_state", "Parser state of the destination: 1 for the current state",
           MetricType::kGauge, [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (!d.has_status) continue;
               for (const char* state : kParserStates) {
                 w.Sample({{"destination", d.name}, {"state", state}}, d.state == state ? 1 : 0);
               }
             }
           });
  p.Family("canal_instance_upstream_connected", "1 while the destination streams from its primary", MetricType::kGauge,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.state == "streaming" ? 1 : 0; });
           });
  p.Family("canal_instance_upstream_errors", "Upstream sessions that ended in an error, by kind", MetricType::kCounter,
           [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (!d.has_status) continue;
               for (const auto& [kind, n] : d.status.parser.errors) {
                 w.Sample({{"destination", d.name}, {"kind", kind}}, static_cast<double>(n));
               }
             }
           });
  p.Family(
      "canal_instance_upstream_reconnects", "Reconnections to the primary", MetricType::kCounter,
      [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.status.parser.reconnects; }); });
  // Database failovers followed (docs/replication.md, "Failover").
  p.Family("canal_instance_failovers", "Moves of the stream to another server's binlog (by GTID state, or by time)",
           MetricType::kCounter,
           [&](TextWriter& w) { PerInstance(w, r, [](const DestinationReport& d) { return d.status.parser.failovers; }); });
  p.Family("canal_instance_failover_lost_transactions",
           "Delivered transactions a new primary lacked (canal.instance.failover.diverged=continue went on)",
           MetricType::kCounter, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.parser.failover_lost_transactions; });
           });
  p.Family("canal_instance_failover_timestamp_fallbacks",
           "Failovers without GTID state resumed by time (canal.instance.failover.timestamp.fallback): each "
           "delivers up to canal.instance.fallbackIntervalInSeconds of changes again",
           MetricType::kCounter, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.parser.failover_timestamp_fallbacks; });
           });
  p.Family("canal_instance_detecting_failures",
           "Runs of canal.instance.detecting.sql that failed on the primary", MetricType::kCounter,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.parser.detecting_failures; });
           });
  // Snapshots (docs/snapshot.md): progress of the one running or last run in this server run.
  p.Family("canal_instance_snapshot_rows_sent", "Snapshot rows sent to the destination's clients",
           MetricType::kCounter, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.snapshot.rows_sent; });
           });
  p.Family("canal_instance_snapshot_rows_read", "Snapshot rows read from the primary (chunks read again count)",
           MetricType::kCounter, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.snapshot.rows_read; });
           });
  p.Family("canal_instance_snapshot_tables_done", "Snapshot tables done", MetricType::kGauge, [&](TextWriter& w) {
    PerInstance(w, r, [](const DestinationReport& d) { return d.status.snapshot.tables_done; });
  });
  p.Family("canal_instance_snapshot_tables_total", "Snapshot tables in all", MetricType::kGauge, [&](TextWriter& w) {
    PerInstance(w, r, [](const DestinationReport& d) { return d.status.snapshot.tables_total; });
  });
  p.Family("canal_instance_snapshot_eta_seconds", "Estimated seconds left of the running snapshot (-1: unknown)",
           MetricType::kGauge, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) {
               const int64_t eta = d.status.snapshot.eta_ms;
               return eta < 0 ? -1.0 : static_cast<double>(eta) / 1000;
             });
           });
  p.Family("canal_instance_snapshot_after_purged_binlog", "Snapshots taken because the cursor's binlog was purged "
           "(canal.instance.snapshot.mode=when_needed)",
           MetricType::kCounter, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.purged_resnapshots; });
           });
  p.Family("canal_instance_binlog_read_file_index", "Number of the binlog file last read", MetricType::kGauge,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) {
               return BinlogFileIndex(d.status.parser.position.journal_name);
             });
           });
  p.Family("canal_instance_binlog_read_offset", "Offset in that file after the last event read", MetricType::kGauge,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.parser.position.position; });
           });
  p.Family("canal_instance_binlog_acked_file_index", "Number of the binlog file of the slowest client's cursor",
           MetricType::kGauge, [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (d.has_status && d.acked) {
                 w.Sample({{"destination", d.name}}, BinlogFileIndex(d.acked->journal_name));
               }
             }
           });
  p.Family("canal_instance_binlog_acked_offset", "Offset of the slowest client's cursor", MetricType::kGauge,
           [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (d.has_status && d.acked) {
                 w.Sample({{"destination", d.name}}, static_cast<double>(d.acked->position));
               }
             }
           });
  p.Family("canal_instance_store_entries", "Entries held in the ring (put, not acked)", MetricType::kGauge,
           [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) {
               return d.status.store.put_sequence - d.status.store.ack_sequence;
             });
           });
  p.Family("canal_instance_store_capacity", "Entries the ring holds at most (canal.instance.memory.buffer.size)",
           MetricType::kGauge, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) { return d.status.store_capacity; });
           });
  p.Family("canal_instance_store_bytes", "Bytes held in the ring", MetricType::kGauge, [&](TextWriter& w) {
    PerInstance(w, r, [](const DestinationReport& d) { return d.status.store.held_bytes; });
  });
  p.Family("canal_instance_store_fill_ratio", "Ring fill, 0..1, by entries or (MEMSIZE) bytes, whichever is fuller",
           MetricType::kGauge, [&](TextWriter& w) {
             PerInstance(w, r, [](const DestinationReport& d) {
               const auto& s = d.status;
               double fill = s.store_capacity == 0
                                 ? 0
                                 : static_cast<double>(s.store.put_sequence - s.store.ack_sequence) / s.store_capacity;
               if (s.store_byte_bound != 0) {
                 fill =
                     std::max(fill, static_cast<double>(s.store.held_bytes) / static_cast<double>(s.store_byte_bound));
               }
               return fill;
             });
           });
  p.Family("canal_instance_ha_role", "HA role of the destination on this server: 1 for the current role",
           MetricType::kGauge, [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               for (const char* role : kRoles) {
                 w.Sample({{"destination", d.name}, {"role", role}}, d.role == role ? 1 : 0);
               }
             }
           });
  p.Family("canal_instance_ha_fencing_events", "Times this server stopped serving the destination on losing its lease",
           MetricType::kCounter, [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               w.Sample({{"destination", d.name}}, static_cast<double>(d.ha.fencing_events));
             }
           });
  p.Family("canal_instance_cursor_flush_latency", "Time to make a client's acks durable, in milliseconds",
           MetricType::kHistogram, [&](TextWriter& w) {
             for (const DestinationReport& d : r.destinations) {
               if (d.has_status && d.client) {
                 w.HistogramSample({{"destination", d.name}}, d.client->flush_latency());
               }
             }
           });
}

void ProcessSeries(Page& p, const ServerReport& r) {
  if (!r.has_process) return;
  const metrics::ProcessStats& s = r.process;
  const auto one = [&](const char* name, const char* help, MetricType type, double v) {
    p.Family(name, help, type, [&](TextWriter& w) { w.Sample({}, v); });
  };
  one("canal_process_cpu_seconds", "User and system CPU time of the server, in seconds", MetricType::kCounter,
      s.cpu_seconds);
  one("canal_process_resident_memory_bytes", "Resident memory of the server", MetricType::kGauge,
      static_cast<double>(s.resident_bytes));
  one("canal_process_virtual_memory_bytes", "Virtual memory of the server", MetricType::kGauge,
      static_cast<double>(s.virtual_bytes));
  one("canal_process_open_fds", "Open file descriptors", MetricType::kGauge, static_cast<double>(s.open_fds));
  one("canal_process_max_fds", "File descriptor limit (soft RLIMIT_NOFILE)", MetricType::kGauge,
      static_cast<double>(s.max_fds));
  one("canal_process_threads", "Threads of the server", MetricType::kGauge, static_cast<double>(s.threads));
  one("canal_process_start_time_seconds", "Start time of the server, seconds since the epoch", MetricType::kGauge,
      s.start_time_seconds);
}

}  // namespace

std::string RenderMetrics(const ServerReport& report) {
  Page page;
  CanalSeries(page, report);
  OwnSeries(page, report);
  ProcessSeries(page, report);
  return page.Take();
}

}  // namespace canal::server
