#include "row_lines.h"

#include <algorithm>

#include "canal/common/utf8.h"
#include "canal/parser/binlog/column_text.h"
#include "canal/tools/row_json.h"

namespace canal::tools {

namespace {

using binlog::ColumnValue;

// Strings longer than this are escaped into a std::string of their exact size
// first, so a 64 MiB value does not make the buffer room for six times that.
constexpr size_t kInPlaceStringMax = 64 << 10;

// The text of one value that is neither NULL nor fixed, escaped at p (room
// for the bound of up to kInPlaceStringMax bytes).
void PutString(std::string_view text, char* p, LineBuffer* out, std::string* big) {
  if (text.size() <= kInPlaceStringMax) {
    out->Commit(WriteJsonString(text, p));
    return;
  }
  out->Commit(p);
  big->clear();
  AppendJsonString(text, big);
  out->Append(*big);
}

// Writes `,"key":` (no comma for the first column) at p, which has room for
// 1 + max(key size, kBlock) chars.
char* PutKey(const ColumnKeys& keys, size_t i, bool first, char* p) {
  if (!first) *p++ = ',';
  const std::string& key = keys.keys[i];
  if (key.size() <= kBlock) {
    std::memcpy(p, keys.blocks[i].data(), kBlock);
  } else {
    std::memcpy(p, key.data(), key.size());
  }
  return p + key.size();
}

Status AppendImage(const binlog::RowImage& img, const binlog::TableMap& t, const ColumnKeys& keys,
                   const render::ValueFormatOptions& fo, LineSource source, RowFormatter* f, LineBuffer* out) {
  out->Append("{");
  bool first = true;
  std::string& scratch = f->scratch;
  for (size_t i = 0; i < img.values.size(); ++i) {
    const ColumnValue& v = img.values[i];
    if (!v.is_present()) continue;
    const binlog::ColumnInfo& column = t.columns[i];
    // Room for the key and a null or a fixed text (numbers, dates: plain
    // ASCII, no escaping), written straight in.
    char* p = out->Room(1 + std::max(keys.keys[i].size(), kBlock) + render::kCanalFixedTextMax + 2);
    p = PutKey(keys, i, first, p);
    first = false;
    if (v.is_null()) {
      std::memcpy(p, "null", 4);
      out->Commit(p + 4);
      continue;
    }
    *p = '"';
    if (char* end = render::WriteCanalFixedText(v, column, fo, p + 1)) {
      *end++ = '"';
      out->Commit(end);
      continue;
    }
    out->Commit(p);
    // Strings escaped in place; other values rendered into `scratch` first.
    std::string_view text;
    if (v.kind == ColumnValue::Kind::kString && keys.copies_through[i] && IsValidUtf8(v.raw)) {
      text = v.raw;  // the Canal text is the bytes themselves
    } else {
      scratch.clear();
      Status s = render::AppendCanalValue(v, column, fo, &scratch);
      if (!s.ok()) {
        return s.WithContext(std::string(source.file) + ": offset " + std::to_string(source.pos) + ": `" + t.db +
                             "`.`" + t.table + "` column " + std::to_string(i + 1) + " (" + column.name + ")");
      }
      text = scratch;
    }
    PutString(text, out->Room(JsonStringBound(std::min(text.size(), kInPlaceStringMax))), out, &f->big);
  }
  out->Append("}");
  return Status::OK();
}

}  // namespace

void ColumnKeys::Refresh(const binlog::TableMap& t) {
  keys.clear();
  blocks.clear();
  copies_through.clear();
  for (const auto& c : t.columns) {
    std::string k;
    AppendJsonString(c.name, &k);
    k.push_back(':');
    std::array<char, kBlock>& block = blocks.emplace_back();
    block.fill('\0');
    std::memcpy(block.data(), k.data(), std::min(k.size(), kBlock));
    keys.push_back(std::move(k));
    copies_through.push_back(binlog::CopiesThroughAsUtf8(c.charset));
  }
}

Status FormatRows(const binlog::RowsEvent& event, const binlog::TableMap& table, const ColumnKeys& keys,
                  std::string_view prefix, LineSource source, const render::ValueFormatOptions& fo,
                  RowFormatter* f, LineBuffer* out, uint64_t* rows) {
  f->reader.Reset(event);
  binlog::RowChange& change = f->change;
  // The reader yields no change of an event that does not decode; a value
  // that fails to render takes the event's earlier lines back out too.
  const size_t start = out->size();
  const uint64_t start_rows = *rows;
  auto undo = [&](Status s) {
    out->Commit(out->view().data() + start);
    *rows = start_rows;
    return s;
  };
  while (true) {
    bool done = false;
    if (Status s = f->reader.Next(&change, &done); !s.ok()) return undo(s);
    if (done) return Status::OK();
    ++*rows;
    out->Append(prefix);
    if (change.has_before) {
      out->Append(",\"before\":");
      Status s = AppendImage(change.before, table, keys, fo, source, f, out);
      if (!s.ok()) return undo(s);
    }
    if (change.has_after) {
      out->Append(",\"after\":");
      Status s = AppendImage(change.after, table, keys, fo, source, f, out);
      if (!s.ok()) return undo(s);
    }
    out->Append("}\n");
  }
}

}  // namespace canal::tools
