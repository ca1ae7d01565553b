// Hand-built rows events for the wire writer's tests (entry_wire_test.cc,
// snapshot_entry_wire_test.cc): tables of every column type, row images as the
// binlog holds them, and the comparison of an entry with protobuf's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/sink/entry_builder.h"
#include "canal/sink/table_filter.h"

namespace canal::sink::testing_support {

// ---- comparing with the reference ---------------------------------------------

// Entries protobuf could not parse back (invalid UTF-8 in a string field), so
// only compared byte for byte.
extern size_t g_unparsable;

size_t FirstDifference(const std::string& a, const std::string& b);

// `got` (the writer's) and `want` (protobuf's) are the same entry: same bytes,
// and, where protobuf can parse them (proto3 refuses invalid UTF-8), equal
// Entry and RowChange messages.
void ExpectSameEntry(const std::string& want, const std::string& got, const std::string& what);

// A context with every header field set, at `offset`.
EntryContext Context(uint64_t offset);

// ---- hand-built rows events ----------------------------------------------------------

std::string LE(uint64_t v, size_t n);
std::string BE(uint64_t v, size_t n);
std::string Prefixed(std::string_view bytes, size_t length_bytes);
std::string Float(float f);
std::string Double(double d);
std::string DateTime2(int y, int mo, int d, int h, int mi, int s, uint32_t micros);
std::string Bytes(size_t n, unsigned seed);

// One column value of a row image as the binlog holds it.
struct Cell {
  enum Kind { kAbsent, kNull, kValue } kind = kValue;
  std::string raw;
};
Cell V(std::string raw);
Cell Null();
Cell Absent();
using Image = std::vector<Cell>;

// A rows event over `table` that owns its bytes. Every row's images must have
// the same columns present (one bitmap per event).
struct HandEvent {
  std::shared_ptr<binlog::TableMap> table;
  std::string before_bits, after_bits, bytes;
  binlog::RowsEvent ev;
};

// `rows`: (before or only image, after image of an update).
std::unique_ptr<HandEvent> MakeEvent(std::shared_ptr<binlog::TableMap> table, binlog::RowsKind kind,
                                     const std::vector<std::pair<Image, Image>>& rows);

binlog::ColumnInfo Col(std::string name, binlog::ColumnType type, uint16_t meta = 0);

// Every column type the reader decodes, with the facts that change their text.
std::shared_ptr<binlog::TableMap> EveryTypeTable();
// A full row of `EveryTypeTable`; `v` varies the values, `note` is the note.
Image FullRow(uint32_t id, int v, const std::string& note, const std::string& body, const std::string& payload);
Image AllNullRow(uint32_t id);
// Empty strings are set (isNull false) yet carry no value field.
Image EmptyStringsRow(uint32_t id);
// Inserts, updates (FULL, MINIMAL, NOBLOB-like), deletes and an empty event of EveryTypeTable.
std::vector<std::unique_ptr<HandEvent>> EveryTypeEvents();

// Canal's defaults, readable values, and the field filters `keep_spec` /
// `drop_spec` alone and together (kept alive in *keep_alive).
std::vector<EntryBuilderOptions> OptionVariants(std::vector<std::unique_ptr<FieldFilter>>* keep_alive,
                                                std::string_view keep_spec, std::string_view drop_spec);

// Values of 64 KiB and more are rendered straight into the entry (framed after,
// and moved down) and never kept as text beside it; the bytes must not change,
// nor an update's `updated` flags (compared with the before text in the entry).
std::shared_ptr<binlog::TableMap> BigValueTable();
Image BigRow(uint32_t id, Cell blob, Cell text, Cell latin);
Cell Big(const std::string& s);

}  // namespace canal::sink::testing_support
