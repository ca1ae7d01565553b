// Row-image decoding alone: RowsReader over every rows event of a binlog, held
// in memory, with no file framing, checksum or event decoding in the timing.
//
//   BENCH_DATA=build/bench-data build/bin/rows_reader_bench
//
// Input: the binlog files of $BENCH_DATA (bench/gen_bench_binlog.sh makes a
// 1M-row directory), else $BENCH_BINLOG (one file), else the MariaDB fixture
// under CANAL_SHARED_DIR. `ns_per_row` is the figure to compare.
//
// BM_RowsReader: RowsReader::Next into typed ColumnValues (the parser thread's
// per-row work in canal-server). BM_RowsReaderNumberText: the same plus the
// text of every DOUBLE/FLOAT (Java's form) and DECIMAL value, the two value
// formatters of parser/ that show in the server's profile.
// Timed in CPU time (rates too), so that other work on the machine moves the
// figures less.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/column_text.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/render/java_float_text.h"

namespace {

using namespace canal::binlog;
using canal::render::kJavaFloatTextMax;
using canal::render::WriteJavaDoubleText;
using canal::render::WriteJavaFloatText;

struct Corpus {
  std::deque<std::string> bytes;                      // each event's row images, owned
  std::vector<RowsEvent> events;                      // views into `bytes` and `tables`
  std::vector<std::shared_ptr<const TableMap>> tables;  // keeps every event's table alive
  uint64_t rows = 0;
  std::string error;
};

std::vector<std::string> InputFiles(std::string* error) {
  std::vector<std::string> args;
  if (const char* dir = std::getenv("BENCH_DATA"); dir != nullptr && *dir != '\0') {
    args.emplace_back(dir);
  } else if (const char* file = std::getenv("BENCH_BINLOG"); file != nullptr && *file != '\0') {
    args.emplace_back(file);
  } else {
    args.push_back(std::string(CANAL_SHARED_DIR) + "/fixtures/binlog/mariadb-10.11/mariadb-bin.000001");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(args.back(), ec)) {
      *error = "no input: set BENCH_DATA (bench/gen_bench_binlog.sh makes one) or provide " + args.back();
      return {};
    }
  }
  std::vector<std::string> files;
  canal::Status s = ExpandBinlogPaths(args, &files);
  if (!s.ok()) *error = s.ToString();
  return files;
}

// Decodes the files once and keeps every rows event, with its bytes copied out
// of the reader's buffers, so that the timed loop is RowsReader alone.
Corpus LoadCorpus() {
  Corpus c;
  const std::vector<std::string> files = InputFiles(&c.error);
  if (!c.error.empty()) return c;
  EventDecoder decoder;
  for (const std::string& path : files) {
    BinlogFileReader reader(&decoder);
    canal::Status s = reader.Open(path);
    Event event;
    while (s.ok()) {
      bool eof = false;
      s = reader.Next(&event, &eof);
      if (!s.ok() || eof) break;
      const RowsEvent* rows = event.As<RowsEvent>();
      if (rows == nullptr) continue;
      RowsEvent copy = *rows;
      std::string& owned = c.bytes.emplace_back(rows->rows);
      copy.rows = owned;
      copy.columns_before = c.bytes.emplace_back(rows->columns_before);
      copy.columns_after = c.bytes.emplace_back(rows->columns_after);
      copy.source = {};
      copy.json_rows = nullptr;  // no partial JSON in the bench table
      std::shared_ptr<const TableMap> table = decoder.ShareTable(rows->table_id);
      if (c.tables.empty() || c.tables.back() != table) c.tables.push_back(table);
      c.events.push_back(copy);
    }
    if (!s.ok()) {
      c.error = s.ToString();
      return c;
    }
  }
  return c;
}

const Corpus& SharedCorpus() {
  static const Corpus corpus = LoadCorpus();
  return corpus;
}

// Text of the numeric values whose formatters live in parser/.
void NumberText(const RowImage& image, const TableMap& table, std::string* text) {
  char buf[kJavaFloatTextMax];
  for (size_t i = 0; i < image.values.size(); ++i) {
    const ColumnValue& v = image.values[i];
    switch (v.kind) {
      case ColumnValue::Kind::kDouble: text->append(buf, WriteJavaDoubleText(v.f64, buf)); break;
      case ColumnValue::Kind::kFloat: text->append(buf, WriteJavaFloatText(v.f32, buf)); break;
      case ColumnValue::Kind::kDecimal:
        (void)AppendDecimalText(v.raw, table.columns[i].precision, table.columns[i].decimals, text);
        break;
      default: break;
    }
  }
}

void Run(benchmark::State& state, bool number_text) {
  const Corpus& c = SharedCorpus();
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  RowsReader reader;
  RowChange change;
  std::string text;
  uint64_t rows = 0;
  for (auto _ : state) {
    for (const RowsEvent& e : c.events) {
      reader.Reset(e);
      for (;;) {
        bool done = false;
        canal::Status s = reader.Next(&change, &done);
        if (!s.ok()) {
          state.SkipWithError(s.ToString().c_str());
          return;
        }
        if (done) break;
        ++rows;
        if (number_text) {
          text.clear();
          if (change.has_before) NumberText(change.before, *e.table, &text);
          if (change.has_after) NumberText(change.after, *e.table, &text);
          benchmark::DoNotOptimize(text.data());
        }
        benchmark::DoNotOptimize(change);
      }
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  state.counters["ns_per_row"] =
      benchmark::Counter(static_cast<double>(rows) / 1e9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_RowsReader(benchmark::State& state) { Run(state, false); }
void BM_RowsReaderNumberText(benchmark::State& state) { Run(state, true); }

BENCHMARK(BM_RowsReader)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowsReaderNumberText)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
