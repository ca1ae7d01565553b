// The JSON lines of rows events, as `canal-binlog decode` prints them:
//
//   <prefix>,"before":{"col":"text",...},"after":{...}}\n
//
// The hot path of the tool (once per column per row). Values are written
// through raw pointers into a LineBuffer that makes room once per value, so a
// row costs no std::string append per piece: the keys are escaped once per
// table, numbers and dates are written in place (render::WriteCanalFixedText),
// strings escaped in place (WriteJsonString).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/room_buffer.h"
#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/render/canal_value.h"

namespace canal::tools {

using LineBuffer = RoomBuffer;  // (canal/common/room_buffer.h)

// Short pieces (keys, DECIMAL text) are copied as one fixed-size block,
// which compiles to a couple of vector moves instead of a memcpy call.
inline constexpr size_t kBlock = 32;

// `"name":` of each column of one table, escaped once per TABLE_MAP; those
// that fit kBlock also zero-padded to it.
struct ColumnKeys {
  std::vector<std::string> keys;
  std::vector<std::array<char, kBlock>> blocks;
  std::vector<uint8_t> copies_through;  // binlog::CopiesThroughAsUtf8 of each column's charset
  void Refresh(const binlog::TableMap& t);
};

// Where a rows event's lines came from, for error messages.
struct LineSource {
  std::string_view file;
  uint64_t pos = 0;
};

// Reusable per-thread state of FormatRows.
struct RowFormatter {
  binlog::RowsReader reader;
  binlog::RowChange change;
  std::string scratch;  // values rendered before escaping (converted charsets, labels, JSON)
  std::string big;      // values too long to escape in place
};

// Appends one line per row of `event` (whose table is `table`, with `keys`):
// `prefix` (the line up to the images), then the images. Counts rows in *rows.
// An event that fails leaves no line of it in *out.
Status FormatRows(const binlog::RowsEvent& event, const binlog::TableMap& table, const ColumnKeys& keys,
                  std::string_view prefix, LineSource source, const render::ValueFormatOptions& fo,
                  RowFormatter* f, LineBuffer* out, uint64_t* rows);

}  // namespace canal::tools
