// simple_client: the subscribe loop of Canal's example client, in C++.
//
//   simple_client host:port destination [user password] [filter]
//
// Connects, subscribes, and then forever: fetch up to 1000 entries (waiting up
// to 1 s), print every transaction boundary and row change, ack the batch. A
// batch that fails to print is rolled back, so the server sends it again. A
// lost connection is re-opened (the SDK leaves reconnecting to its caller).
// Ctrl-C unsubscribes and disconnects. Exits 1 when the server refuses us.
//
// TLS (a server with canal.tls.enabled) from the environment: CANAL_TLS=true,
// CANAL_TLS_CA (PEM CA file; default the system's store), CANAL_TLS_CERT and
// CANAL_TLS_KEY (a client certificate), CANAL_TLS_SERVER_NAME; any of the
// last four turns TLS on too.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>
#include <thread>

#include "canal/client/connector.h"

namespace {

using canal::Status;
using canal::client::Connector;
using canal::client::Message;
namespace entry = canal::entry;

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

// Prints the before (or after) image of a row, one column a line.
Status PrintColumns(canal::client::RowDataView& row, bool after) {
  canal::client::ColumnView c;
  Status s;
  while (after ? row.NextAfter(&c, &s) : row.NextBefore(&c, &s)) {
    const std::string_view value = c.is_null() ? std::string_view("NULL") : c.value();
    std::printf("%.*s : %.*s    update=%s\n", static_cast<int>(c.name().size()), c.name().data(),
                static_cast<int>(value.size()), value.data(), c.updated() ? "true" : "false");
  }
  return s;
}

std::string TimeText(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// printf's argument for a view: "%.*s".
int Len(std::string_view v) { return static_cast<int>(v.size()); }

// Prints one entry the way Canal's example client does, read in place
// (entry views: no protobuf objects, no copies).
Status PrintEntry(const canal::client::EntryView& e) {
  const canal::client::HeaderView& h = e.header();
  const std::string where = std::string(h.logfile_name()) + ":" + std::to_string(h.logfile_offset());
  const auto type = canal::client::EntryTypeOf(e);
  if (type == entry::TRANSACTIONBEGIN || type == entry::TRANSACTIONEND) {
    const int64_t delay = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count() - h.execute_time();
    std::printf("================> binlog[%.*s:%lld] , executeTime : %lld(%s) , gtid : (%.*s) , delay : %lldms\n",
                Len(h.logfile_name()), h.logfile_name().data(), static_cast<long long>(h.logfile_offset()),
                static_cast<long long>(h.execute_time()), TimeText(h.execute_time()).c_str(), Len(h.gtid()),
                h.gtid().data(), static_cast<long long>(delay));
    if (type == entry::TRANSACTIONBEGIN) {
      canal::client::TransactionBeginView begin;
      if (Status s = canal::client::TransactionBeginView::Parse(e.store_value(), &begin); !s.ok()) {
        return s.WithContext("TransactionBegin at " + where);
      }
      std::printf(" BEGIN ----> Thread id: %lld\n", static_cast<long long>(begin.thread_id()));
    } else {
      canal::client::TransactionEndView end;
      if (Status s = canal::client::TransactionEndView::Parse(e.store_value(), &end); !s.ok()) {
        return s.WithContext("TransactionEnd at " + where);
      }
      std::printf(" END ----> transaction id: %.*s\n", Len(end.transaction_id()), end.transaction_id().data());
    }
    return Status::OK();
  }
  if (type != entry::ROWDATA) return Status::OK();  // heartbeats, GTID entries

  canal::client::RowChangeView change;
  if (Status s = canal::client::RowChangeView::Parse(e.store_value(), &change); !s.ok()) {
    return s.WithContext("RowChange at " + where);
  }
  const auto event = canal::client::EventTypeOf(change);
  std::printf("================> binlog[%.*s:%lld] , name[%.*s,%.*s] , eventType : %s\n", Len(h.logfile_name()),
              h.logfile_name().data(), static_cast<long long>(h.logfile_offset()), Len(h.schema_name()),
              h.schema_name().data(), Len(h.table_name()), h.table_name().data(),
              canal::client::EventTypeName(event).c_str());
  if (canal::client::IsDdl(change)) {
    std::printf(" sql ----> %.*s\n", Len(change.sql()), change.sql().data());
    return Status::OK();
  }
  canal::client::RowDataView row;
  Status s;
  while (change.NextRow(&row, &s)) {
    if (event == entry::DELETE) {
      CANAL_RETURN_IF_ERROR(PrintColumns(row, false));
    } else if (event == entry::INSERT) {
      CANAL_RETURN_IF_ERROR(PrintColumns(row, true));
    } else {
      std::printf("-------> before\n");
      CANAL_RETURN_IF_ERROR(PrintColumns(row, false));
      std::printf("-------> after\n");
      CANAL_RETURN_IF_ERROR(PrintColumns(row, true));
    }
  }
  if (!s.ok()) return s.WithContext("RowChange at " + where);
  return Status::OK();
}

Status PrintBatch(const Message& m) {
  canal::client::EntryView e;
  for (size_t i = 0; i < m.raw_entry_count(); ++i) {
    CANAL_RETURN_IF_ERROR(m.View(i, &e));
    CANAL_RETURN_IF_ERROR(PrintEntry(e));
  }
  if (std::fflush(stdout) != 0) return Status::IOError("writing to stdout");
  return Status::OK();
}

bool IsRefusal(const Status& s) { return s.code() == Status::Code::kAborted || s.IsNotSupported(); }

// Connects and subscribes; on failure says why on stderr.
// Takes any CanalConnector: the same loop runs on a ClusterConnector.
Status Open(canal::client::CanalConnector& c, const std::string& filter) {
  Status s = c.Connect();
  if (s.ok()) s = c.Subscribe(filter);
  if (!s.ok()) std::fprintf(stderr, "simple_client: %s\n", s.ToString().c_str());
  return s;
}

// ConnectorOptions::tls from CANAL_TLS*; false (said on stderr) for a bad value.
bool TlsFromEnvironment(canal::client::TlsOptions* tls) {
  if (const char* on = std::getenv("CANAL_TLS"); on != nullptr && *on != '\0') {
    const std::string v = on;
    if (v != "true" && v != "false" && v != "1" && v != "0") {
      std::fprintf(stderr, "simple_client: CANAL_TLS=%s: write true or false\n", on);
      return false;
    }
    tls->enabled = v == "true" || v == "1";
  }
  const struct {
    const char* name;
    std::string* value;
  } files[] = {{"CANAL_TLS_CA", &tls->ca_file},
               {"CANAL_TLS_CERT", &tls->cert_file},
               {"CANAL_TLS_KEY", &tls->key_file},
               {"CANAL_TLS_SERVER_NAME", &tls->server_name}};
  for (const auto& f : files) {
    if (const char* v = std::getenv(f.name); v != nullptr && *v != '\0') {
      *f.value = v;
      tls->enabled = true;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4 && argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: %s host:port destination [user password] [filter]\n", argv[0]);
    return 2;
  }
  canal::client::ConnectorOptions options;
  options.address = argv[1];
  options.destination = argv[2];
  std::string filter;
  if (argc == 4) filter = argv[3];
  if (argc >= 5) {
    options.username = argv[3];
    options.password = argv[4];
  }
  if (argc == 6) filter = argv[5];
  // The largest frame accepted (ConnectorOptions::max_frame_bytes).
  if (const char* limit = std::getenv("CANAL_MAX_FRAME_BYTES"); limit != nullptr && *limit != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(limit, &end, 10);
    if (*end != '\0' || v < 1024 || v > 0x7fffffffULL) {
      std::fprintf(stderr, "simple_client: CANAL_MAX_FRAME_BYTES=%s is not a byte count from 1024 to 2147483647\n",
                   limit);
      return 2;
    }
    options.max_frame_bytes = static_cast<uint32_t>(v);
  }

  if (!TlsFromEnvironment(&options.tls)) return 2;

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  Connector connector(options);
  Status s = Open(connector, filter);
  if (!s.ok()) return 1;  // refused, or no server there: the first attempt decides

  int refusals = 0;
  while (!g_stop) {
    if (!connector.connected()) {
      // The SDK does not reconnect by itself; the server redelivers what we did
      // not ack. A server may refuse us for a moment while it notices that our
      // old connection is gone, so a few refusals in a row are tolerated.
      std::this_thread::sleep_for(std::chrono::seconds(1));
      s = Open(connector, filter);
      refusals = IsRefusal(s) ? refusals + 1 : 0;
      if (refusals >= 5) return 1;
      continue;
    }
    Message m;
    s = connector.GetWithoutAck(1000, 1, canal::client::TimeUnit::kSeconds, &m);
    if (!s.ok()) {
      // Lost connection, or the server refused this get or an earlier ack:
      // start over; a server that refuses the new session ends the program.
      if (s.IsCorruption()) {
        // Bytes we cannot take (a frame over our limit, say) come again on
        // every retry: stop and say so rather than loop forever.
        std::fprintf(stderr, "simple_client: %s; stopping\n", s.ToString().c_str());
        return 1;
      }
      std::fprintf(stderr, "simple_client: %s; reconnecting\n", s.ToString().c_str());
      connector.Disconnect();
      continue;
    }
    if (m.batch_id() == -1) continue;
    s = PrintBatch(m);
    if (s.ok()) {
      s = connector.Ack(m.batch_id());
    } else {
      std::fprintf(stderr, "simple_client: batch %lld: %s; rolling it back\n", static_cast<long long>(m.batch_id()),
                   s.ToString().c_str());
      s = connector.Rollback(m.batch_id());
    }
    if (!s.ok()) std::fprintf(stderr, "simple_client: %s\n", s.ToString().c_str());
  }

  if (connector.connected()) {
    s = connector.Unsubscribe();
    if (!s.ok()) std::fprintf(stderr, "simple_client: %s\n", s.ToString().c_str());
  }
  connector.Disconnect();
  return 0;
}
