// Catch-up throughput: a replica streaming already-written rows from a local
// MariaDB into decoded transactions, against the file decoder on the same
// binlog files in the same run (their ratio is what the network path costs).
//
//   CATCHUP_PORT=13399 CATCHUP_DATA=build/bench-data build/bin/catchup_bench
//
// bench/run_catchup_bench.sh sets this up (a sandbox holding the 1M-row binlog
// of bench/gen_bench_binlog.sh) and judges the target. CATCHUP_DATA holds
// copies of the server's binlog files and their MANIFEST (rows=N). Both
// benchmarks group events into transactions with TransactionBuffer and decode
// every row of every transaction into typed values with RowsReader: the same
// work, from a socket or from memory. Rows per second are items_per_second,
// binlog bytes per second bytes_per_second.
#include <benchmark/benchmark.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/transaction_buffer.h"

namespace {

using namespace canal;

struct Setup {
  int port = 0;
  std::string data_dir;
  std::vector<std::string> files;  // names, in order
  uint64_t rows = 0;
  std::string error;
};

const Setup& GetSetup() {
  static const Setup setup = [] {
    Setup s;
    const char* port = std::getenv("CATCHUP_PORT");
    const char* data = std::getenv("CATCHUP_DATA");
    if (port == nullptr || data == nullptr) {
      s.error = "set CATCHUP_PORT and CATCHUP_DATA (bench/run_catchup_bench.sh does)";
      return s;
    }
    s.port = std::atoi(port);
    s.data_dir = data;
    std::ifstream manifest(s.data_dir + "/MANIFEST");
    std::string line;
    while (std::getline(manifest, line)) {
      if (line.rfind("rows=", 0) == 0) s.rows = std::strtoull(line.c_str() + 5, nullptr, 10);
      if (line.rfind("files=", 0) == 0) {
        std::istringstream names(line.substr(6));
        std::string n;
        while (names >> n) s.files.push_back(n);
      }
    }
    if (s.rows == 0 || s.files.empty()) s.error = "no rows= / files= in " + s.data_dir + "/MANIFEST";
    return s;
  }();
  return setup;
}

// Decodes every row of every transaction; counts rows and signals the target.
class RowCountingSink : public parser::TransactionSink {
 public:
  explicit RowCountingSink(uint64_t target) : target_(target) {}
  Status OnTransaction(const parser::Transaction& txn) override {
    for (const parser::TxEvent& e : txn.events) {
      if (e.kind != parser::TxEventKind::kRows) continue;
      reader_.Reset(e.rows);
      for (;;) {
        bool done = false;
        CANAL_RETURN_IF_ERROR(reader_.Next(&change_, &done));
        if (done) break;
        ++rows_;
      }
    }
    if (rows_ >= target_) {
      std::lock_guard<std::mutex> lock(mu_);
      reached_ = true;
      cv_.notify_all();
    }
    return Status::OK();
  }
  bool WaitForTarget(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [this] { return reached_; });
  }
  uint64_t rows() const { return rows_; }

 private:
  const uint64_t target_;
  uint64_t rows_ = 0;
  binlog::RowsReader reader_;
  binlog::RowChange change_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool reached_ = false;
};

// False, with the benchmark marked skipped for the reason, when the setup failed.
bool SetupOrSkip(benchmark::State& state) {
  const Setup& s = GetSetup();
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return false;
  }
  return true;
}

void BM_CatchUpFromMariadb(benchmark::State& state) {
  if (!SetupOrSkip(state)) return;
  const Setup& s = GetSetup();
  uint64_t rows = 0, bytes = 0;
  for (auto _ : state) {
    RowCountingSink sink(s.rows);
    parser::EventParserOptions o;
    o.destination = "catchup";
    o.master.host = "127.0.0.1";
    o.master.port = static_cast<uint16_t>(s.port);
    o.master.user = "canal";
    o.master.password = "canal";
    o.master.tls = mysql::TlsMode::kDisabled;  // loopback; TLS would measure OpenSSL
    o.start.journal_name = s.files.front();
    o.start.position = 4;
    parser::EventParser p(o, &sink);
    const auto t0 = std::chrono::steady_clock::now();
    p.Start();
    const bool reached = sink.WaitForTarget(std::chrono::seconds(120));
    const auto t1 = std::chrono::steady_clock::now();
    const parser::ParserStatus st = p.status();
    p.Stop();
    if (!reached) {
      state.SkipWithError(("catch-up did not reach the row count: " + st.last_error).c_str());
      return;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    rows += sink.rows();
    bytes += st.bytes;
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_CatchUpFromMariadb)->UseManualTime()->Iterations(1)->Repetitions(3)->Unit(benchmark::kMillisecond);

void BM_FileDecodeSameBinlog(benchmark::State& state) {
  if (!SetupOrSkip(state)) return;
  const Setup& s = GetSetup();
  uint64_t rows = 0, bytes = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    RowCountingSink sink(s.rows);
    parser::TransactionBuffer buffer(&sink);
    binlog::EventDecoder decoder;
    binlog::BinlogFileReader reader(&decoder);
    uint64_t file_bytes = 0;
    for (size_t i = 0; i < s.files.size(); ++i) {
      // Memory-mapped: after the first round the files are in the page cache,
      // as they are on the server.
      Status st = reader.Open(s.data_dir + "/" + s.files[i]);
      file_bytes += reader.size();
      for (; st.ok();) {
        binlog::Event ev;
        bool eof = false;
        st = reader.Next(&ev, &eof);
        if (!st.ok() || eof) break;
        st = buffer.Add(ev, decoder, s.files[i], ev.offset, reader.position());
      }
      if (!st.ok()) {
        state.SkipWithError(st.ToString().c_str());
        return;
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    rows += sink.rows();
    bytes += file_bytes;
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_FileDecodeSameBinlog)->UseManualTime()->Iterations(1)->Repetitions(3)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
