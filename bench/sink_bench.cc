// Building Canal ROWDATA entries from decoded rows events: the server's hottest
// code after decoding.
//
//   BENCH_BINLOG=build/bench-data/mariadb-bin.000001 build/bin/sink_bench
//
// Input: the file named by $BENCH_BINLOG (bench/gen_bench_binlog.sh makes a
// 1M-row one), else the MariaDB fixture under CANAL_SHARED_DIR, else each
// benchmark reports an error. The file is decoded once, up front; its rows
// events (with their table maps) are kept, and every iteration turns all of
// them into entries (after checking once that both paths write identical
// bytes for every event). Rows per second are items_per_second; entry bytes written
// per second are bytes_per_second.
//
// BM_RowsEntryProtobuf: the old path, filling canal.entry protobuf objects and
// serialising them (kept in tests/support/entry_wire_reference.h).
// BM_RowsEntryWire: EntryBuilder::RowsEntry, which writes the wire format directly.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>

#include "bench_binlog.h"
#include "support/entry_wire_reference.h"
#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/sink/entry_builder.h"

namespace {

using namespace canal;

// One rows event, owning copies of its bytes and its table map.
struct Item {
  sink::EntryContext ctx;
  binlog::RowsEvent rows;
  std::shared_ptr<const binlog::TableMap> table;
  std::string before_bits, after_bits, row_bytes;
};

struct Input {
  std::string path;
  std::deque<Item> items;  // a deque: items never move, so their views stay valid
  uint64_t rows = 0;
  std::string error;  // set when there is nothing to measure
};

Status Decode(const std::string& path, std::string bytes, Input* in) {
  binlog::EventDecoder decoder;
  binlog::BinlogFileReader reader(&decoder);
  CANAL_RETURN_IF_ERROR(reader.OpenBuffer(path, std::move(bytes)));
  const std::string journal = std::filesystem::path(path).filename().string();
  binlog::Event event;
  for (;;) {
    bool eof = false;
    CANAL_RETURN_IF_ERROR(reader.Next(&event, &eof));
    if (eof) break;
    const auto* rows = event.As<binlog::RowsEvent>();
    if (rows == nullptr) continue;
    Item& it = in->items.emplace_back();
    it.ctx.position.journal_name = journal;
    it.ctx.position.position = event.offset;
    it.ctx.position.server_id = event.header.server_id;
    it.ctx.position.timestamp_ms = int64_t{event.header.timestamp} * 1000;
    it.ctx.event_length = event.header.event_size;
    it.table = decoder.ShareTable(rows->table_id);
    if (it.table == nullptr) return Status::Corruption(path + ": rows event with no table map");
    it.before_bits = rows->columns_before;
    it.after_bits = rows->columns_after;
    it.row_bytes = rows->rows;
    it.rows = *rows;
    it.rows.columns_before = it.before_bits;
    it.rows.columns_after = it.after_bits;
    it.rows.rows = it.row_bytes;
    it.rows.table = it.table.get();
    it.rows.json_rows = nullptr;  // the decoder's partial-JSON state is for streaming, not replays
    it.rows.source = {};
  }
  // Count the rows once, and check that both paths write the same bytes: a
  // faster path that wrote something else would be no result at all.
  sink::EntryBuilder builder;
  sink::wire::ReferenceRowsEntryBuilder reference{sink::EntryBuilderOptions{}};
  std::string out, want;
  for (const Item& it : in->items) {
    uint64_t n = 0, want_n = 0;
    CANAL_RETURN_IF_ERROR(builder.RowsEntry(it.ctx, it.rows, &out, &n));
    CANAL_RETURN_IF_ERROR(reference.Write(it.ctx, it.rows, &want, &want_n));
    if (out != want || n != want_n) {
      return Status::Corruption(path + ": the entries of the rows event at " +
                                std::to_string(it.ctx.position.position) +
                                " differ between the wire writer and protobuf");
    }
    in->rows += n;
  }
  return Status::OK();
}

Input LoadInput() {
  Input in;
  std::string bytes;
  if (!bench::ReadBenchBinlog(&in.path, &bytes, &in.error)) return in;
  Status s = Decode(in.path, std::move(bytes), &in);
  if (!s.ok()) in.error = "decoding " + in.path + ": " + s.ToString();
  return in;
}

// Loaded once: a 1M-row binlog is a few hundred MB.
const Input& SharedInput() {
  static const Input input = LoadInput();
  return input;
}

template <typename Build>
void Run(benchmark::State& state, Build build) {
  const Input& in = SharedInput();
  if (!in.error.empty()) {
    state.SkipWithError(in.error.c_str());
    return;
  }
  uint64_t rows = 0, bytes = 0;
  std::string out;
  for (auto _ : state) {
    for (const Item& it : in.items) {
      uint64_t n = 0;
      Status s = build(it, &out, &n);
      if (!s.ok()) {
        const std::string msg = s.ToString();
        state.SkipWithError(msg.c_str());
        return;
      }
      rows += n;
      bytes += out.size();
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["events"] = static_cast<double>(in.items.size());
  state.counters["rows"] = static_cast<double>(in.rows);
  state.SetLabel(in.path);
}

void BM_RowsEntryProtobuf(benchmark::State& state) {
  sink::wire::ReferenceRowsEntryBuilder builder{sink::EntryBuilderOptions{}};
  Run(state, [&](const Item& it, std::string* out, uint64_t* n) { return builder.Write(it.ctx, it.rows, out, n); });
}

void BM_RowsEntryWire(benchmark::State& state) {
  sink::EntryBuilder builder;
  Run(state, [&](const Item& it, std::string* out, uint64_t* n) { return builder.RowsEntry(it.ctx, it.rows, out, n); });
}

BENCHMARK(BM_RowsEntryProtobuf)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RowsEntryWire)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
