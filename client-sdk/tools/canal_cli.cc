// canal-cli: subscribe to a Canal destination and print its changes.
//
//   canal-cli (--address HOST:PORT | --zk HOST:PORT[,...]) --destination D
//             [--user U --password P] [--client-id ID] [--no-client-ha]
//             [--filter F] [--batch N] [--count K] [--json] [--timeout-ms T]
//             [--low-latency (default) | --batch-wait]
//
// Human output looks like Canal's example client; --json prints one object per
// row change in the shape of `canal-binlog decode` (docs/client.md lists what
// differs). Every fully printed batch is acked; when --count stops the run in
// the middle of a batch, that batch is rolled back so nothing unprinted is lost.
// With --zk it follows the destination's running server through ZooKeeper and
// fails over (ClusterConnector), and by default first waits to be the one
// active client of its client id (--no-client-ha turns that off).
// Exit codes: see kExit* below and docs/client.md.
#include <charconv>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <string>

#include <CLI/CLI.hpp>

#include "canal/client/canal_connector.h"
#include "canal/client/cluster_connector.h"
#include "canal/client/connector.h"
#include "canal/client/entry_view.h"
#include "canal/tools/row_json.h"

namespace {

using canal::Status;
using canal::client::ClusterConnector;
using canal::client::Connector;
using canal::client::ColumnView;
using canal::client::EntryView;
using canal::client::HeaderView;
using canal::client::Message;
using canal::client::RowChangeView;
using canal::client::RowDataView;
namespace entry = canal::entry;

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

// Appends the decimal text of `v`.
void AppendNumber(int64_t v, std::string* out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

// Canal's name of an event type, without allocating for the valid ones.
std::string_view EventName(entry::EventType type, std::string* unknown) {
  if (type != entry::EVENT_TYPE_PLACEHOLDER && entry::EventType_IsValid(type)) return entry::EventType_Name(type);
  *unknown = canal::client::EventTypeName(type);
  return *unknown;
}

// Formats entries into `out`, counting row changes against a limit. Reads the
// entries in place through the zero-copy views (entry_view.h) and appends
// every piece straight to `out`: nothing is allocated per row or per value.
class Printer {
 public:
  Printer(bool json, int64_t limit) : json_(json), limit_(limit) {}

  bool LimitReached() const { return limit_ > 0 && rows_ >= limit_; }
  int64_t rows() const { return rows_; }

  // Appends what `e` prints, stopping at the row limit. *stopped_inside says
  // that some of the entry's row changes were left unprinted.
  Status Append(const EntryView& e, std::string* out, bool* stopped_inside) {
    *stopped_inside = false;
    const HeaderView& h = e.header();
    const auto type = canal::client::EntryTypeOf(e);
    if (type == entry::TRANSACTIONBEGIN || type == entry::TRANSACTIONEND) {
      if (!json_) AppendTransaction(e, type, out);
      return Status::OK();
    }
    if (type != entry::ROWDATA) return Status::OK();
    RowChangeView change;
    if (!RowChangeView::Parse(e.store_value(), &change).ok()) return Unparsable(h);
    const auto event = canal::client::EventTypeOf(change);
    const bool is_row = !canal::client::IsDdl(change) &&
                        (event == entry::INSERT || event == entry::UPDATE || event == entry::DELETE);
    if (!is_row) {
      if (!change.sql().empty()) AppendStatement(h, change, out);
      return Status::OK();
    }
    const std::string_view name = EventName(event, &unknown_name_);
    if (!json_) AppendRowHeadline(h, name, out);
    RowDataView row;
    Status s;
    while (true) {
      if (LimitReached()) {
        // Rows left in this entry stay unprinted.
        RowChangeView rest = change;
        *stopped_inside = rest.NextRow(&row, &s);
        return Status::OK();
      }
      if (!change.NextRow(&row, &s)) break;
      const bool ok = json_ ? AppendJsonRow(h, event, name, &row, out) : AppendTextRow(event, &row, out);
      if (!ok) return Unparsable(h);
      ++rows_;
    }
    return s.ok() ? Status::OK() : Unparsable(h);
  }

  // Whether `e` holds something this printer would print (row changes or a statement).
  static bool HasChanges(const EntryView& e) {
    if (canal::client::EntryTypeOf(e) != entry::ROWDATA) return false;
    RowChangeView change;
    return RowChangeView::Parse(e.store_value(), &change).ok() && (change.row_count() > 0 || !change.sql().empty());
  }

 private:
  static Status Unparsable(const HeaderView& h) {
    return Status::Corruption("entry at " + std::string(h.logfile_name()) + ":" + std::to_string(h.logfile_offset()) +
                              " holds no parsable RowChange");
  }

  static void AppendBinlogPrefix(const HeaderView& h, std::string* out) {
    out->append("================> binlog[");
    out->append(h.logfile_name());
    out->push_back(':');
    AppendNumber(h.logfile_offset(), out);
    out->push_back(']');
  }

  static void AppendTransaction(const EntryView& e, entry::EntryType type, std::string* out) {
    const HeaderView& h = e.header();
    AppendBinlogPrefix(h, out);
    out->append(" , executeTime : ");
    AppendNumber(h.execute_time(), out);
    out->append(" , gtid : (");
    out->append(h.gtid());
    out->append(")\n");
    if (type == entry::TRANSACTIONBEGIN) {
      canal::client::TransactionBeginView begin;
      if (canal::client::TransactionBeginView::Parse(e.store_value(), &begin).ok()) {
        out->append(" BEGIN ----> Thread id: ");
        AppendNumber(begin.thread_id(), out);
        out->push_back('\n');
      }
    } else {
      canal::client::TransactionEndView end;
      if (canal::client::TransactionEndView::Parse(e.store_value(), &end).ok()) {
        out->append(" END ----> transaction id: ");
        out->append(end.transaction_id());
        out->push_back('\n');
      }
    }
  }

  static void AppendRowHeadline(const HeaderView& h, std::string_view event_name, std::string* out) {
    AppendBinlogPrefix(h, out);
    out->append(" , name[");
    out->append(h.schema_name());
    out->push_back(',');
    out->append(h.table_name());
    out->append("] , eventType : ");
    out->append(event_name);
    out->push_back('\n');
  }

  // One image's columns as text; false on malformed bytes.
  template <typename Next>
  static bool AppendTextColumns(Next next, std::string* out) {
    ColumnView c;
    Status s;
    while (next(&c, &s)) {
      out->append(c.name());
      out->append(" : ");
      out->append(canal::client::IsNull(c) ? std::string_view("NULL") : c.value());
      out->append(c.updated() ? "    update=true\n" : "    update=false\n");
    }
    return s.ok();
  }

  static bool AppendTextRow(entry::EventType event, RowDataView* row, std::string* out) {
    auto before = [row](ColumnView* c, Status* s) { return row->NextBefore(c, s); };
    auto after = [row](ColumnView* c, Status* s) { return row->NextAfter(c, s); };
    if (event == entry::DELETE) return AppendTextColumns(before, out);
    if (event == entry::INSERT) return AppendTextColumns(after, out);
    out->append("-------> before\n");
    if (!AppendTextColumns(before, out)) return false;
    out->append("-------> after\n");
    return AppendTextColumns(after, out);
  }

  // {"file":..,"pos":..,"gtid":..,"ts":.. — as canal-binlog's lines begin.
  static void AppendJsonPosition(const HeaderView& h, std::string* out) {
    // executeTime is milliseconds; canal-binlog prints the event's seconds.
    canal::tools::AppendLineHead(h.logfile_name(), h.logfile_offset(), h.gtid(), h.execute_time() / 1000, out);
  }

  template <typename Next>
  static bool AppendJsonImage(Next next, std::string* out) {
    out->push_back('{');
    bool first = true;
    ColumnView c;
    Status s;
    while (next(&c, &s)) {
      if (!first) out->push_back(',');
      first = false;
      canal::tools::AppendJsonString(c.name(), out);
      out->push_back(':');
      if (canal::client::IsNull(c)) {
        out->append("null");
      } else {
        canal::tools::AppendJsonString(c.value(), out);
      }
    }
    out->push_back('}');
    return s.ok();
  }

  static bool AppendJsonRow(const HeaderView& h, entry::EventType event, std::string_view event_name,
                            RowDataView* row, std::string* out) {
    AppendJsonPosition(h, out);
    canal::tools::AppendRowTarget(h.schema_name(), h.table_name(), event_name, out);
    if (event == entry::UPDATE || event == entry::DELETE) {
      out->append(",\"before\":");
      if (!AppendJsonImage([row](ColumnView* c, Status* s) { return row->NextBefore(c, s); }, out)) return false;
    }
    if (event == entry::UPDATE || event == entry::INSERT) {
      out->append(",\"after\":");
      if (!AppendJsonImage([row](ColumnView* c, Status* s) { return row->NextAfter(c, s); }, out)) return false;
    }
    out->append("}\n");
    return true;
  }

  void AppendStatement(const HeaderView& h, const RowChangeView& change, std::string* out) {
    const bool ddl = canal::client::IsDdl(change);
    if (!json_) {
      AppendRowHeadline(h, EventName(canal::client::EventTypeOf(change), &unknown_name_), out);
      out->append(" sql ----> ");
      out->append(change.sql());
      out->push_back('\n');
      return;
    }
    AppendJsonPosition(h, out);
    canal::tools::AppendStatement(h.schema_name(), ddl, change.sql(), out);
    out->append("}\n");
  }

  const bool json_;
  const int64_t limit_;
  int64_t rows_ = 0;
  std::string unknown_name_;  // an unknown event type's name, e.g. UNKNOWN(99)
};

bool WriteOut(const std::string& text) {
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
  std::string out;
  std::string warning;  // the server's last warning about the destination
  while (!g_stop && !printer.LimitReached()) {
    Message m;
    Status s = connector.GetWithoutAck(o.batch, o.timeout_ms, canal::client::TimeUnit::kMilliseconds, &m);
    if (canal::client::IsNotActiveClient(s)) {
      std::fprintf(stderr, "canal-cli: %s\n", s.ToString().c_str());
      *lost_active = true;
      return kExitOk;
    }
    if (!cluster) {
      // Error 409: the server did not apply our last ack and delivers that
      // batch again; reconnect and go on (it is printed twice). A server that
      // no longer serves the destination then refuses the subscription.
      if (canal::client::IsAckNotApplied(s)) {
        std::fprintf(stderr, "canal-cli: %s; reconnecting\n", s.ToString().c_str());
        s = connector.Connect();
        if (s.ok()) s = connector.Subscribe(o.filter);
        if (!s.ok()) return Fail(s);
        continue;
      }
    } else {
      // (Error 409 never gets here: the cluster connector fails over on it.)
      // An ack the server could not make durable (e.g. ZooKeeper was away) is
      // reported on the next call; the cluster connector reconnects on the
      // call after it and the batch comes again (printed twice).
      if (!s.ok() && s.message().find("the earlier ack of batch") != std::string_view::npos) {
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
    out.clear();
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
      s = printer.Append(e, &out, &stopped_inside);
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
    if (!WriteOut(out)) {
      connector.Rollback(m.batch_id()).PermitUncheckedError();
      std::fprintf(stderr, "canal-cli: writing to stdout failed; batch %lld rolled back\n",
                   static_cast<long long>(m.batch_id()));
      return kExitOutput;
    }
    s = partial ? connector.Rollback(m.batch_id()) : connector.Ack(m.batch_id());
    if (s.IsNotFound()) {
      // The cluster connector failed over: the batch comes again (printed twice).
      std::fprintf(stderr, "canal-cli: %s\n", s.ToString().c_str());
      continue;
    }
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
