// canal-cli: subscribe to a Canal destination and print its changes.
//
//   canal-cli (--address HOST:PORT | --zk HOST:PORT[,...]) --destination D
//             [--user U --password P] [--client-id ID] [--no-client-ha]
//             [--filter F] [--batch N] [--count K] [--json] [--timeout-ms T]
//             [--low-latency (default) | --batch-wait] [--prefetch (default) | --no-prefetch]
//             [--tls [--tls-ca F] [--tls-cert F --tls-key F] [--tls-server-name N]]
//
// Human output looks like Canal's example client; --json prints one object per
// row change in the shape of `canal-binlog decode` (docs/client.md lists what
// differs). Every fully printed batch is acked; when --count stops the run in
// the middle of a batch, that batch is rolled back so nothing unprinted is lost.
// With --zk it follows the destination's running server through ZooKeeper and
// fails over (ClusterConnector), and by default first waits to be the one
// active client of its client id (--no-client-ha turns that off).
// Exit codes: see kExit* below and docs/client.md.
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "canal/client/canal_connector.h"
#include "canal/client/cluster_connector.h"
#include "canal/client/connector.h"
#include "canal/client/entry_view.h"
#include "cli_printer.h"

namespace {

using canal::Status;
using canal::client::ClusterConnector;
using canal::client::Connector;
using canal::cli::Printer;
using canal::client::EntryView;
using canal::client::Message;

constexpr int kExitOk = 0;             // --count reached, or stopped by SIGINT/SIGTERM
constexpr int kExitUsage = 1;          // bad command line
constexpr int kExitConnection = 2;     // cannot connect, connection lost, timed out
constexpr int kExitRefused = 3;        // the server answered with an error (auth, subscribe, get, ack)
constexpr int kExitBadData = 4;        // the server sent bytes that are not Canal's protocol/entries
constexpr int kExitOutput = 5;         // writing to stdout failed

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Status::Code::kAborted:
    case Status::Code::kNotSupported: return kExitRefused;
    case Status::Code::kCorruption: return kExitBadData;
    case Status::Code::kInvalidArgument: return kExitUsage;
    default: return kExitConnection;
  }
}

struct Options {
  canal::client::ConnectorOptions connector;
  std::string zk_servers;  // set: use the cluster connector
  bool client_ha = true;   // with zk_servers
  std::string filter;
  int32_t batch = 1000;
  int64_t count = 0;
  bool json = false;
  int64_t timeout_ms = 1000;
};

bool WriteOut(std::string_view text) {
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
}

int Fail(const Status& s) {
  std::fprintf(stderr, "canal-cli: %s\n", s.ToString().c_str());
  return ExitCodeFor(s);
}

// Prints batches until --count, a signal or an error. `connector` is connected
// and subscribed; `cluster` says it is a ClusterConnector. *lost_active says
// the cluster connector stopped because another client became the active one
// (the caller waits to be elected again).
int Consume(canal::client::CanalConnector& connector, bool cluster, const Options& o, const std::string& where,
            Printer& printer, bool* lost_active) {
  *lost_active = false;
  std::string warning;  // the server's last warning about the destination
  Message m;  // one for every get: each batch is read into the buffer the last one held
  // The plain connector acks a printed batch together with the next get (one
  // write); the cluster connector acks at once (its ack may report a failover).
  int64_t pending_ack = -1;
  while (!g_stop && !printer.LimitReached()) {
    const int64_t ack = pending_ack;
    pending_ack = -1;
    Status s = ack != -1 ? connector.AckAndGetWithoutAck(ack, o.batch, o.timeout_ms,
                                                         canal::client::TimeUnit::kMilliseconds, &m)
                         : connector.GetWithoutAck(o.batch, o.timeout_ms, canal::client::TimeUnit::kMilliseconds, &m);
    if (canal::client::IsNotActiveClient(s)) {
      std::fprintf(stderr, "canal-cli: %s\n", s.ToString().c_str());
      *lost_active = true;
      return kExitOk;
    }
    if (!cluster) {
      // Error 409: the server did not apply our last ack and delivers that
      // batch again; 507: it applied acks it could not make durable. Either
      // way reconnect and go on (a batch may be printed twice). A server that
      // no longer serves the destination then refuses the subscription.
      if (canal::client::IsAckNotApplied(s) || canal::client::IsAcksNotDurable(s)) {
        std::fprintf(stderr, "canal-cli: %s; reconnecting\n", s.ToString().c_str());
        s = connector.Connect();
        if (s.ok()) s = connector.Subscribe(o.filter);
        if (!s.ok()) return Fail(s);
        continue;
      }
    } else {
      // (Error 409 never gets here: the cluster connector fails over on it.)
      // An ack the server could not make durable (e.g. ZooKeeper was away) is
      // reported on the next call as error 507; the cluster connector
      // reconnects on the call after it and the batch comes again (printed twice).
      if (canal::client::IsAcksNotDurable(s)) {
        std::fprintf(stderr, "canal-cli: %s; reconnecting\n", s.ToString().c_str());
        continue;
      }
    }
    if (!s.ok()) return Fail(s);
    if (m.server_warning() != warning) {
      // Once per change: the server repeats it with every empty batch.
      if (!m.server_warning().empty()) {
        std::fprintf(stderr, "canal-cli: warning: %s\n", m.server_warning().c_str());
      } else if (m.batch_id() != -1 || !warning.empty()) {
        std::fprintf(stderr, "canal-cli: the server reports the destination streaming again\n");
      }
      warning = m.server_warning();
    }
    if (m.batch_id() == -1) continue;
    printer.Clear();
    bool partial = false;
    const size_t n = m.raw_entry_count();
    EntryView e;
    for (size_t i = 0; i < n && !partial; ++i) {
      s = m.View(i, &e);
      if (!s.ok()) {
        connector.Rollback(m.batch_id()).PermitUncheckedError();  // exiting: give the batch back, best effort
        return Fail(s.WithContext(where));
      }
      bool stopped_inside = false;
      s = printer.Append(e, &stopped_inside);
      if (!s.ok()) {
        connector.Rollback(m.batch_id()).PermitUncheckedError();
        return Fail(s.WithContext(where + ": batch " + std::to_string(m.batch_id())));
      }
      if (stopped_inside) partial = true;
      if (printer.LimitReached()) {
        // Rows after the limit in later entries stay unprinted too (a bad entry counts as some).
        for (size_t j = i + 1; j < n && !partial; ++j) partial = !m.View(j, &e).ok() || Printer::HasChanges(e);
        break;
      }
    }
    if (!WriteOut(printer.output())) {
      connector.Rollback(m.batch_id()).PermitUncheckedError();
      std::fprintf(stderr, "canal-cli: writing to stdout failed; batch %lld rolled back\n",
                   static_cast<long long>(m.batch_id()));
      return kExitOutput;
    }
    if (!partial && !cluster) {
      pending_ack = m.batch_id();
      continue;
    }
    s = partial ? connector.Rollback(m.batch_id()) : connector.Ack(m.batch_id());
    if (s.IsNotFound()) {
      // The cluster connector failed over: the batch comes again (printed twice).
      std::fprintf(stderr, "canal-cli: %s\n", s.ToString().c_str());
      continue;
    }
    if (!s.ok()) return Fail(s);
  }
  if (pending_ack != -1) {
    const Status s = connector.Ack(pending_ack);
    if (!s.ok()) return Fail(s);
  }
  return kExitOk;
}

int Run(const Options& o) {
  Connector connector(o.connector);
  Status s = connector.Connect();
  if (s.ok()) s = connector.Subscribe(o.filter);
  if (!s.ok()) return Fail(s);
  Printer printer(o.json, o.count);
  bool lost_active = false;
  const int rc = Consume(connector, false, o, "canal server " + o.connector.address, printer, &lost_active);
  connector.Disconnect();  // no Unsubscribe: the server keeps our cursor for the next run
  return rc;
}

int RunCluster(const Options& o) {
  canal::client::ClusterConnectorOptions co;
  co.zk_servers = o.zk_servers;
  co.destination = o.connector.destination;
  co.username = o.connector.username;
  co.password = o.connector.password;
  co.client_id = o.connector.client_id;
  co.filter = o.filter;
  co.client_ha = o.client_ha;
  co.low_latency_get = o.connector.low_latency_get;
  co.tls = o.connector.tls;
  // Short election waits, so that a standby notices Ctrl-C.
  co.election_wait = std::chrono::milliseconds(500);
  ClusterConnector connector(co);
  Printer printer(o.json, o.count);
  bool said_standby = false;
  while (!g_stop) {
    Status s = connector.Connect();
    if (canal::client::IsNotActiveClient(s)) {
      if (!said_standby) std::fprintf(stderr, "canal-cli: standby: %s\n", s.ToString().c_str());
      said_standby = true;
      continue;
    }
    if (s.ok()) s = connector.Subscribe();
    if (!s.ok()) return Fail(s);
    if (said_standby) std::fprintf(stderr, "canal-cli: now the active client, consuming from %s\n",
                                   connector.current_address().c_str());
    said_standby = false;
    bool lost_active = false;
    const int rc = Consume(connector, true, o, "destination " + co.destination, printer, &lost_active);
    if (!lost_active) {
      connector.Disconnect();  // ends the ZooKeeper session: a standby takes over at once
      return rc;
    }
  }
  connector.Disconnect();
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Subscribe to a Canal destination and print its row changes"};
  Options o;
  auto* address = app.add_option("--address", o.connector.address, "Canal server host:port");
  auto* zk = app.add_option("--zk", o.zk_servers,
                            "ZooKeeper host:port[,...]: follow the destination's running server and fail over");
  address->excludes(zk);
  zk->excludes(address);
  app.add_flag("--client-ha,!--no-client-ha", o.client_ha,
               "with --zk: wait to be the one active client of the client id (default on)");
  app.add_option("--destination", o.connector.destination, "Canal destination (instance) name")->required();
  app.add_option("--user", o.connector.username, "canal.user of the server");
  app.add_option("--password", o.connector.password, "password (sent scrambled)");
  app.add_option("--client-id", o.connector.client_id, "client id (Canal's clients use 1001)")
      ->default_val("1001");
  app.add_option("--max-frame-bytes", o.connector.max_frame_bytes,
                 "largest frame accepted from the server (default 2147483647, what a server sends at most)")
      ->check(CLI::Range(uint32_t{1024}, uint32_t{0x7fffffff}));
  app.add_option("--filter", o.filter, "table filter replacing the destination's (Canal regex list)");
  app.add_option("--batch", o.batch, "entries per get")->default_val(1000)->check(CLI::Range(1, 1 << 20));
  app.add_option("--count", o.count, "stop after this many row changes (0 = run until Ctrl-C)")
      ->default_val(0)
      ->check(CLI::NonNegativeNumber);
  // A person or a script reading changes wants each as soon as it is there; Canal's full-batch rule
  // (kept by the SDK's default, for Canal's clients' sake) would hold the last rows for --timeout-ms.
  o.connector.low_latency_get = true;
  app.add_flag("--low-latency,!--batch-wait", o.connector.low_latency_get,
               "each get returns as soon as any change is there (default); --batch-wait: Canal's rule, a get "
               "waits for a full batch or --timeout-ms (the low-latency ask needs our server; Canal's ignores it)");
  // Overlap: the server builds and sends the next batch while this one is printed.
  o.connector.prefetch = true;
  app.add_flag("--prefetch,!--no-prefetch", o.connector.prefetch,
               "ask for the next batch as soon as one arrives, so the server builds it while this one is printed "
               "(default; the server holds one more unacked batch; --no-prefetch: one request at a time, as "
               "Canal's clients; --address only)");
  // TLS (a server with canal.tls.enabled); any --tls-* option implies --tls.
  app.add_flag("--tls", o.connector.tls.enabled, "connect with TLS (the server has canal.tls.enabled)");
  const auto tls_option = [&](const char* name, std::string* value, const char* what) {
    app.add_option(name, *value, what)->each([&o](const std::string&) { o.connector.tls.enabled = true; });
  };
  tls_option("--tls-ca", &o.connector.tls.ca_file,
             "PEM CA certificates the server's certificate must chain to (default: the system's store)");
  tls_option("--tls-cert", &o.connector.tls.cert_file,
             "PEM client certificate, for a server that requires one (canal.tls.clientCa)");
  tls_option("--tls-key", &o.connector.tls.key_file, "PEM private key of --tls-cert");
  tls_option("--tls-server-name", &o.connector.tls.server_name,
             "name or IP the server's certificate must hold (default: the host of --address)");
  app.add_flag("--json", o.json, "one JSON object per row change, shaped like `canal-binlog decode`");
  app.add_option("--timeout-ms", o.timeout_ms, "how long each get waits on the server for entries")
      ->default_val(1000)
      ->check(CLI::Range(int64_t{1}, int64_t{3'600'000}));
  try {
    app.parse(argc, argv);
    if (o.connector.address.empty() && o.zk_servers.empty()) {
      throw CLI::RequiredError("--address or --zk");
    }
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout is a write error we report, not a silent death
  return o.zk_servers.empty() ? Run(o) : RunCluster(o);
}
