// End-to-end benchmark client: the C++ SDK against a running canal-server,
// driven by bench/run_e2e_bench.sh. One JSON object on stdout per run.
//
//   e2e_client catchup --address H:P --destination D --rows N [--t0-ms T]
//       get + ack until N row changes have been acked; reports rows/s from
//       T (epoch ms the server was started; default: this program's start)
//       to the ack of the last row. --touch-columns also reads every
//       after-image column (name and value), as a client that uses the rows.
//   e2e_client latency --address H:P --destination D --mysql-port P
//       [--rate R] [--seconds S] [--rows-per-tx N]
//       writes R rows per second for S seconds into bench.latency, N rows
//       per transaction (one multi-row INSERT; default 1), sent_us = the
//       microsecond time just before the INSERT, over 4 connections, while
//       the client receives them;
//       reports p50/p99/max of receipt time minus sent_us. The client polls
//       (get without timeout, 0.5 ms pause when empty). Also split in two:
//       the commit (sent_us to the INSERT's return, the source's own time)
//       and the delivery (the INSERT's return to receipt, ours), p99/max of
//       each: a stall in the source's commit is not one in the stream.
//       --trace FILE: one line per get (when asked and answered, rows, the
//       oldest row's age), to place a stall.
//   e2e_client slow --address H:P --destination D [--batch N] [--pause-ms M]
//       [--seconds S]
//       a client that acks slowly: N rows per batch, a pause after each.
#include <mysql.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "canal/client/connector.h"
#include "canal/client/entry_view.h"

namespace {

using namespace canal;
using Clock = std::chrono::system_clock;

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
}

// Connects and subscribes, retrying while the server starts (up to 60 s).
// Connects as soon as the server listens (every 5 ms for a minute): started beside the
// server, the time to the first row is the server's, not a retry interval's.
Status Open(client::Connector* c) {
  Status s;
  for (int attempt = 0; attempt < 12000; ++attempt) {
    s = c->Connect();
    if (s.ok()) s = c->Subscribe();
    if (s.ok()) return s;
    c->Disconnect();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return s;
}

// Row changes in a message; `on_row` sees each row (its after-image is read
// with RowDataView::NextAfter). Reads the entries in place through the
// zero-copy views, allocating nothing per row: the way a client keeps up with
// a fast stream.
template <typename F>
Status ForEachRow(const client::Message& m, F&& on_row) {
  client::EntryView e;
  client::RowChangeView rc;
  client::RowDataView row;
  for (size_t i = 0; i < m.raw_entry_count(); ++i) {
    CANAL_RETURN_IF_ERROR(m.View(i, &e));
    if (e.entry_type() != entry::ROWDATA) continue;
    CANAL_RETURN_IF_ERROR(client::RowChangeView::Parse(e.store_value(), &rc));
    if (rc.is_ddl()) continue;
    Status s;
    while (rc.NextRow(&row, &s)) on_row(e, row);
    CANAL_RETURN_IF_ERROR(s);
  }
  return Status::OK();
}

int Fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "e2e_client: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

int Catchup(client::ConnectorOptions o, uint64_t rows, int64_t t0_ms, int batch, int timeout_ms,
            bool touch_columns) {
  client::Connector c(o);
  Status s = Open(&c);
  if (!s.ok()) return Fail("subscribe", s);
  uint64_t seen = 0, batches = 0, value_bytes = 0;
  int64_t first_row_us = -1;  // from t0 (the server's start) to the first row in hand
  client::Message m;  // one for every get: each batch is read into the buffer the last one held
  while (seen < rows) {
    s = timeout_ms < 0 ? c.GetWithoutAck(batch, &m)
                       : c.GetWithoutAck(batch, timeout_ms, client::TimeUnit::kMilliseconds, &m);
    if (!s.ok()) return Fail("get", s);
    if (m.batch_id() < 0) continue;
    Status column_error;
    s = ForEachRow(m, [&](const client::EntryView&, client::RowDataView& row) {
      if (seen++ == 0) first_row_us = NowUs() - t0_ms * 1000;
      if (!touch_columns) return;
      client::ColumnView col;
      Status cs;
      while (row.NextAfter(&col, &cs)) value_bytes += col.name().size() + col.value().size();
      if (!cs.ok()) column_error = cs;
    });
    if (s.ok()) s = column_error;
    if (!s.ok()) return Fail("entries", s);
    s = c.Ack(m.batch_id());
    if (!s.ok()) return Fail("ack", s);
    ++batches;
  }
  // The ack is fire-and-forget: a round trip makes sure the server has it.
  // With --prefetch the next get is already on the server, waiting for rows
  // that will not come: the run ends at the ack, as canal-cli's does.
  if (!o.prefetch) {
    s = c.GetWithoutAck(1, &m);
    if (!s.ok()) return Fail("final get", s);
  }
  const double secs = (NowUs() / 1000 - t0_ms) / 1000.0;
  std::printf("{\"mode\":\"catchup\",\"rows\":%llu,\"batches\":%llu,\"seconds\":%.3f,\"rows_per_s\":%.0f",
              static_cast<unsigned long long>(seen), static_cast<unsigned long long>(batches), secs, seen / secs);
  if (touch_columns) std::printf(",\"column_bytes\":%llu", static_cast<unsigned long long>(value_bytes));
  std::printf(",\"first_row_ms\":%.1f}\n", static_cast<double>(first_row_us) / 1000.0);
  return 0;
}

int Latency(client::ConnectorOptions o, int mysql_port, int rate, int seconds, int rows_per_tx,
            const std::string& trace_path) {
  if (rate < rows_per_tx || rows_per_tx < 1 || seconds < 1) {
    std::fprintf(stderr, "e2e_client: latency needs --rows-per-tx >= 1, --rate >= it and --seconds >= 1\n");
    return 2;
  }
  client::Connector c(o);
  Status s = Open(&c);
  if (!s.ok()) return Fail("subscribe", s);
  // Drain what is already there, so only this run's rows are timed.
  for (;;) {
    client::Message m;
    s = c.Get(4096, 200, client::TimeUnit::kMilliseconds, &m);
    if (!s.ok()) return Fail("drain", s);
    if (m.batch_id() < 0) break;
  }
  constexpr int kWriters = 4;
  const int64_t transactions = int64_t{rate} * seconds / rows_per_tx;
  const int64_t total = transactions * rows_per_tx;  // rows
  const int64_t tx_rate = std::max(1, rate / rows_per_tx);
  std::atomic<int64_t> next{0};
  std::atomic<bool> writer_failed{false};
  // When each transaction's INSERT returned, and how long it took (its writer's slots; read
  // after the join).
  std::vector<int64_t> committed_us(static_cast<size_t>(transactions), 0);
  std::vector<int64_t> commit_took_us(static_cast<size_t>(transactions), 0);
  const int64_t start_us = NowUs() + 200'000;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      MYSQL* db = mysql_init(nullptr);
      if (mysql_real_connect(db, "127.0.0.1", "root", "", "bench", static_cast<unsigned>(mysql_port), nullptr, 0) ==
          nullptr) {
        std::fprintf(stderr, "e2e_client: writer %d: %s\n", w, mysql_error(db));
        writer_failed = true;
        mysql_close(db);
        return;
      }
      std::string sql;
      for (;;) {
        const int64_t i = next.fetch_add(1);
        if (i >= transactions) break;
        // Paced: transaction i is due at start + i / tx_rate.
        const int64_t due = start_us + i * 1'000'000 / tx_rate;
        const int64_t wait = due - NowUs();
        if (wait > 0) std::this_thread::sleep_for(std::chrono::microseconds(wait));
        const int64_t sent_at = NowUs();
        const std::string sent = std::to_string(sent_at);
        sql = "INSERT INTO bench.latency (seq, sent_us) VALUES ";
        for (int r = 0; r < rows_per_tx; ++r) {
          if (r != 0) sql += ',';
          sql += "(" + std::to_string(i * rows_per_tx + r) + "," + sent + ")";
        }
        if (mysql_real_query(db, sql.data(), sql.size()) != 0) {
          std::fprintf(stderr, "e2e_client: writer %d: %s\n", w, mysql_error(db));
          writer_failed = true;
          break;
        }
        committed_us[static_cast<size_t>(i)] = NowUs();
        commit_took_us[static_cast<size_t>(i)] = committed_us[static_cast<size_t>(i)] - sent_at;
      }
      mysql_close(db);
    });
  }
  std::vector<int64_t> latencies, received_seq, received_us;
  latencies.reserve(static_cast<size_t>(total));
  received_seq.reserve(static_cast<size_t>(total));
  received_us.reserve(static_cast<size_t>(total));
  const int64_t deadline = start_us + int64_t{seconds} * 1'000'000 + 10'000'000;
  Status column_error;
  // --trace: per get, when it was sent and answered (µs since start_us), the rows it carried and the oldest
  // row's age, so a stall can be told apart: a slow answer (the server) or a late ask (this client).
  struct GetTrace {
    int64_t sent, answered, rows, worst;
  };
  std::vector<GetTrace> trace;
  if (!trace_path.empty()) trace.reserve(1 << 20);
  while (static_cast<int64_t>(latencies.size()) < total && NowUs() < deadline && !writer_failed) {
    // A get with a timeout waits for a full batch (Canal's rule), which a
    // trickle of single-row transactions never fills: poll instead, as
    // latency-minded Canal clients do. A low-latency get (our server) waits
    // on the server and ends at the first entries, as canal-cli reads.
    client::Message m;
    const int64_t asked = NowUs();
    s = o.low_latency_get ? c.GetWithoutAck(1000, 100, client::TimeUnit::kMilliseconds, &m)
                          : c.GetWithoutAck(1000, &m);
    if (!s.ok()) return Fail("get", s);
    const size_t seen_before = latencies.size();
    if (m.batch_id() < 0) {
      if (!trace_path.empty() && trace.size() < trace.capacity())
        trace.push_back({asked - start_us, NowUs() - start_us, 0, 0});
      if (!o.low_latency_get) std::this_thread::sleep_for(std::chrono::microseconds(500));
      continue;
    }
    const int64_t now = NowUs();
    s = ForEachRow(m, [&](const client::EntryView&, client::RowDataView& row) {
      client::ColumnView col;
      Status cs;
      while (row.NextAfter(&col, &cs)) {
        const bool is_seq = col.name() == "seq";
        if (!is_seq && col.name() != "sent_us") continue;
        int64_t number = 0;
        const std::string_view v = col.value();
        if (std::from_chars(v.data(), v.data() + v.size(), number).ec != std::errc()) {
          cs = Status::Corruption(std::string(col.name()) + " is not a number: '" + std::string(v) + "'");
          break;
        }
        if (is_seq) {
          received_seq.push_back(number);
          received_us.push_back(now);
        } else {
          latencies.push_back(now - number);
        }
      }
      if (!cs.ok()) column_error = cs;
    });
    if (s.ok()) s = column_error;
    if (!s.ok()) return Fail("entries", s);
    if (!trace_path.empty() && trace.size() < trace.capacity()) {
      int64_t worst = 0;
      for (size_t k = seen_before; k < latencies.size(); ++k) worst = std::max(worst, latencies[k]);
      trace.push_back({asked - start_us, now - start_us, static_cast<int64_t>(latencies.size() - seen_before), worst});
    }
    s = c.Ack(m.batch_id());
    if (!s.ok()) return Fail("ack", s);
  }
  for (auto& t : writers) t.join();
  if (writer_failed) return 1;
  if (!trace_path.empty()) {
    FILE* f = std::fopen(trace_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "e2e_client: cannot write %s\n", trace_path.c_str());
      return 1;
    }
    std::fprintf(f, "# epoch_us_at_0 %lld\n# sent_us answered_us rows worst_age_us\n", static_cast<long long>(start_us));
    for (const GetTrace& g : trace)
      std::fprintf(f, "%lld %lld %lld %lld\n", static_cast<long long>(g.sent), static_cast<long long>(g.answered),
                   static_cast<long long>(g.rows), static_cast<long long>(g.worst));
    std::fclose(f);
  }
  if (static_cast<int64_t>(latencies.size()) < total) {
    std::fprintf(stderr, "e2e_client: received %zu of %lld rows\n", latencies.size(), static_cast<long long>(total));
    return 1;
  }
  // The two halves per row: the source's commit, and our delivery after it.
  std::vector<int64_t> commit, delivery;
  commit.reserve(received_seq.size());
  delivery.reserve(received_seq.size());
  for (size_t k = 0; k < received_seq.size(); ++k) {
    const int64_t tx = received_seq[k] / rows_per_tx;
    if (tx < 0 || tx >= transactions || committed_us[static_cast<size_t>(tx)] == 0) continue;
    const int64_t done = committed_us[static_cast<size_t>(tx)];
    commit.push_back(commit_took_us[static_cast<size_t>(tx)]);
    delivery.push_back(std::max<int64_t>(received_us[k] - done, 0));
  }
  auto pct = [](std::vector<int64_t>& v, double p) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(p * (v.size() - 1))] / 1000.0;
  };
  auto max_ms = [](const std::vector<int64_t>& v) { return v.empty() ? 0.0 : v.back() / 1000.0; };
  const double p50 = pct(latencies, 0.5), p99 = pct(latencies, 0.99);
  const double commit_p99 = pct(commit, 0.99), delivery_p99 = pct(delivery, 0.99);
  std::printf(
      "{\"mode\":\"latency\",\"rows\":%zu,\"rate\":%d,\"rows_per_tx\":%d,\"p50_ms\":%.2f,\"p99_ms\":%.2f,"
      "\"max_ms\":%.2f,\"commit_p99_ms\":%.2f,\"commit_max_ms\":%.2f,\"delivery_p99_ms\":%.2f,"
      "\"delivery_max_ms\":%.2f}\n",
      latencies.size(), rate, rows_per_tx, p50, p99, max_ms(latencies), commit_p99, max_ms(commit), delivery_p99,
      max_ms(delivery));
  return 0;
}

int Slow(client::ConnectorOptions o, int batch, int pause_ms, int seconds) {
  client::Connector c(o);
  Status s = Open(&c);
  if (!s.ok()) return Fail("subscribe", s);
  uint64_t rows = 0;
  const int64_t end = NowUs() + int64_t{seconds} * 1'000'000;
  while (NowUs() < end) {
    client::Message m;
    s = c.GetWithoutAck(batch, 100, client::TimeUnit::kMilliseconds, &m);
    if (!s.ok()) return Fail("get", s);
    if (m.batch_id() >= 0) {
      s = ForEachRow(m, [&](const client::EntryView&, client::RowDataView&) { ++rows; });
      if (!s.ok()) return Fail("entries", s);
      s = c.Ack(m.batch_id());
      if (!s.ok()) return Fail("ack", s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  std::printf("{\"mode\":\"slow\",\"rows\":%llu,\"seconds\":%d}\n", static_cast<unsigned long long>(rows), seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"end-to-end benchmark client"};
  app.require_subcommand(1);
  client::ConnectorOptions o;
  o.read_timeout = std::chrono::milliseconds(30'000);
  std::string address = "127.0.0.1:11111", destination = "example";
  uint64_t rows = 1'000'000;
  int64_t t0_ms = NowUs() / 1000;
  int mysql_port = 13306, rate = 10'000, seconds = 10, batch = 100, pause_ms = 50, rows_per_tx = 1;
  auto common = [&](CLI::App* sub) {
    sub->add_option("--address", address);
    sub->add_option("--destination", destination);
  };
  CLI::App* catchup = app.add_subcommand("catchup");
  common(catchup);
  catchup->add_option("--rows", rows);
  catchup->add_option("--t0-ms", t0_ms);
  int catchup_batch = 4096, catchup_timeout_ms = 1000;
  catchup->add_option("--batch", catchup_batch);
  catchup->add_option("--timeout-ms", catchup_timeout_ms, "-1: return at once");
  bool touch_columns = false;
  catchup->add_flag("--touch-columns", touch_columns, "also read every after-image column's name and value");
  catchup->add_flag("--low-latency", o.low_latency_get,
                    "each get returns as soon as any entry is there (canal-cli's default), not when a batch is full");
  catchup->add_flag("--prefetch", o.prefetch,
                    "ask for the next batch as soon as one arrives (ConnectorOptions::prefetch, canal-cli's default)");
  CLI::App* latency = app.add_subcommand("latency");
  common(latency);
  latency->add_option("--mysql-port", mysql_port);
  latency->add_option("--rate", rate);
  latency->add_option("--seconds", seconds);
  latency->add_option("--rows-per-tx", rows_per_tx);
  latency->add_flag("--low-latency", o.low_latency_get,
                    "wait on the server for each batch (a low-latency get, ends at the first entries), not poll");
  latency->add_flag("--prefetch", o.prefetch, "ask for the next batch as soon as one arrives (with --low-latency)");
  std::string trace_path;
  latency->add_option("--trace", trace_path,
                      "write one line per get (sent, answered, rows, the oldest row's age; µs) to this file");
  CLI::App* slow = app.add_subcommand("slow");
  common(slow);
  slow->add_option("--batch", batch);
  slow->add_option("--pause-ms", pause_ms);
  slow->add_option("--seconds", seconds);
  CLI11_PARSE(app, argc, argv);
  o.address = address;
  o.destination = destination;
  if (catchup->parsed()) return Catchup(o, rows, t0_ms, catchup_batch, catchup_timeout_ms, touch_columns);
  if (latency->parsed()) return Latency(o, mysql_port, rate, seconds, rows_per_tx, trace_path);
  return Slow(o, batch, pause_ms, seconds);
}
