// Decoding throughput over an in-memory binlog file.
//
//   BENCH_BINLOG=build/bench-data/mariadb-bin.000001 build/bin/decode_bench
//
// Input: the file named by $BENCH_BINLOG (bench/gen_bench_binlog.sh makes a
// 1M-row one), else the MariaDB fixture under CANAL_SHARED_DIR, else each
// benchmark reports an error. Rows per second are items_per_second; file bytes
// per second are bytes_per_second.
//
// BM_DecodeTyped: framing + events + every row into typed ColumnValues (what
// `canal-binlog decode --count-only` does). BM_DecodeAndFormat: the same plus the
// Canal text of every present value (the cost a Canal entry adds).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "bench_binlog.h"
#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/render/canal_value.h"

namespace {

using namespace canal::binlog;
using namespace canal::render;

struct Input {
  std::string path;
  std::string bytes;
  std::string error;  // set when there is nothing to measure
};

Input LoadInput() {
  Input in;
  canal::bench::ReadBenchBinlog(&in.path, &in.bytes, &in.error);
  return in;
}

// Loaded once: a 1M-row binlog is a few hundred MB.
const Input& SharedInput() {
  static const Input input = LoadInput();
  return input;
}

struct Totals {
  uint64_t rows = 0;
  uint64_t bytes = 0;
};

// Canal text of every present, non-NULL value of one image, back to back.
canal::Status AppendImage(const RowImage& image, const TableMap& table, std::string* out) {
  static const ValueFormatOptions kOptions;
  for (size_t i = 0; i < image.values.size() && i < table.columns.size(); ++i) {
    const ColumnValue& v = image.values[i];
    if (!v.is_present() || v.is_null()) continue;
    CANAL_RETURN_IF_ERROR(AppendCanalValue(v, table.columns[i], kOptions, out));
  }
  return canal::Status::OK();
}

// One pass over the file. `format` adds Canal text rendering of every value.
canal::Status DecodeFile(const Input& in, EventDecoder* decoder, bool format, Totals* totals,
                         benchmark::State& state) {
  BinlogFileReader reader(decoder);
  // OpenBuffer takes the bytes by value; the copy is not part of decoding.
  state.PauseTiming();
  std::string copy = in.bytes;
  state.ResumeTiming();
  CANAL_RETURN_IF_ERROR(reader.OpenBuffer(in.path, std::move(copy)));

  RowsReader rows_reader;
  RowChange change;
  Event event;
  std::string text;
  for (;;) {
    bool eof = false;
    CANAL_RETURN_IF_ERROR(reader.Next(&event, &eof));
    if (eof) break;
    const RowsEvent* rows = event.As<RowsEvent>();
    if (rows == nullptr) continue;
    rows_reader.Reset(*rows);
    for (;;) {
      bool done = false;
      CANAL_RETURN_IF_ERROR(rows_reader.Next(&change, &done));
      if (done) break;
      ++totals->rows;
      if (!format) {
        benchmark::DoNotOptimize(change);
        continue;
      }
      text.clear();
      if (change.has_before) CANAL_RETURN_IF_ERROR(AppendImage(change.before, *rows->table, &text));
      if (change.has_after) CANAL_RETURN_IF_ERROR(AppendImage(change.after, *rows->table, &text));
      benchmark::DoNotOptimize(text.data());
    }
  }
  totals->bytes += in.bytes.size();
  return canal::Status::OK();
}

void RunDecode(benchmark::State& state, bool format) {
  const Input& in = SharedInput();
  if (!in.error.empty()) {
    state.SkipWithError(in.error.c_str());
    return;
  }
  EventDecoder decoder;
  Totals totals;
  for (auto _ : state) {
    canal::Status s = DecodeFile(in, &decoder, format, &totals, state);
    if (!s.ok()) {
      const std::string msg = s.ToString();
      state.SkipWithError(msg.c_str());
      break;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(totals.rows));
  state.SetBytesProcessed(static_cast<int64_t>(totals.bytes));
  state.SetLabel(in.path);
}

void BM_DecodeTyped(benchmark::State& state) { RunDecode(state, /*format=*/false); }
void BM_DecodeAndFormat(benchmark::State& state) { RunDecode(state, /*format=*/true); }

BENCHMARK(BM_DecodeTyped)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DecodeAndFormat)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
