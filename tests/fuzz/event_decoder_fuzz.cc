// libFuzzer target: arbitrary bytes as a binlog file, read to the end.
//
// Drives the whole file path a `canal-binlog decode` run takes: BinlogFileReader
// framing, EventDecoder (including TRANSACTION_PAYLOAD expansion), RowsReader over
// every rows event, and Canal text formatting of every value. Any error Status is
// a fine outcome; a crash, a sanitizer report, a hang or unbounded memory is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/render/canal_sql_type.h"
#include "canal/render/canal_value.h"

namespace {

using namespace canal::binlog;
using namespace canal::render;

constexpr char kMagic[] = "\xfe" "bin";
constexpr size_t kMagicSize = 4;

// Every present, non-NULL value through both formatting modes, so each value
// kind meets the formatter with the column it claims to belong to.
void FormatImage(const RowImage& image, const TableMap& table, std::string* out) {
  ValueFormatOptions canal_mode;
  ValueFormatOptions readable_mode;
  readable_mode.readable = true;
  readable_mode.timestamp_utc_offset_seconds = 8 * 3600;
  const size_t n = image.values.size() < table.columns.size() ? image.values.size()
                                                              : table.columns.size();
  for (size_t i = 0; i < n; ++i) {
    const ColumnValue& v = image.values[i];
    if (!v.is_present() || v.is_null()) continue;
    out->clear();
    AppendCanalValue(v, table.columns[i], canal_mode, out).PermitUncheckedError();
    out->clear();
    AppendCanalValue(v, table.columns[i], readable_mode, out).PermitUncheckedError();
  }
}

void ReadRows(const RowsEvent& rows, RowsReader* reader, RowChange* change, std::string* out) {
  if (rows.table == nullptr) return;  // the header promises non-null; do not trust it here
  for (const ColumnInfo& col : rows.table->columns) {
    (void)CanalSqlType(col);
    (void)CanalNullSqlType(col);
    (void)CanalMysqlType(col);
  }
  reader->Reset(rows);
  bool done = false;
  while (!done) {
    if (!reader->Next(change, &done).ok()) return;
    if (done) break;
    if (change->has_before) FormatImage(change->before, *rows.table, out);
    if (change->has_after) FormatImage(change->after, *rows.table, out);
  }
}

// The string forms of GTID-ish events have their own parsing of lengths.
void TouchEvent(const Event& event) {
  if (const auto* g = event.As<GtidEvent>()) (void)g->ToString();
  if (const auto* p = event.As<PreviousGtidsEvent>()) (void)p->ToString();
  if (const auto* m = event.As<MariaGtidEvent>()) (void)m->ToString();
  if (const auto* l = event.As<MariaGtidListEvent>()) (void)l->ToString();
  (void)EventTypeLabel(event.header.type_code);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  // Most mutated inputs lose the magic and would stop at the first check, so
  // usually put it back; inputs whose length is a multiple of 8 keep their own
  // first bytes, which keeps the bad-magic path exercised too.
  const bool has_magic = size >= kMagicSize && bytes.compare(0, kMagicSize, kMagic, kMagicSize) == 0;
  if (!has_magic && size % 8 != 0) bytes.insert(0, kMagic, kMagicSize);

  // A mutation almost never keeps a CRC32 right, so verify checksums only
  // sometimes; otherwise the decoder behind the checksum would go unexplored.
  DecoderOptions options;
  options.verify_checksum = size % 5 == 0;
  EventDecoder decoder(options);
  BinlogFileReader reader(&decoder);
  if (!reader.OpenBuffer("fuzz-input", std::move(bytes)).ok()) return 0;

  RowsReader rows_reader;
  RowChange change;
  std::string out;
  Event event;
  for (;;) {
    bool eof = false;
    if (!reader.Next(&event, &eof).ok() || eof) break;
    TouchEvent(event);
    if (const auto* rows = event.As<RowsEvent>()) ReadRows(*rows, &rows_reader, &change, &out);
  }
  return 0;
}
