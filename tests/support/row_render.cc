#include "support/row_render.h"

#include <gtest/gtest.h>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/render/canal_value.h"

namespace canal::testing {

Status RenderRows(const binlog::RowsEvent& rows, std::vector<std::string>* out) {
  binlog::RowsReader reader;
  reader.Reset(rows);
  binlog::RowChange change;
  render::ValueFormatOptions fmt;
  for (;;) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader.Next(&change, &done));
    if (done) return Status::OK();
    std::string line = rows.table->db + "." + rows.table->table;
    line += change.kind == binlog::RowsKind::kWrite    ? " INSERT"
            : change.kind == binlog::RowsKind::kUpdate ? " UPDATE"
                                                       : " DELETE";
    auto image = [&](const binlog::RowImage& img, const char* tag) {
      line += tag;
      for (size_t i = 0; i < img.values.size(); ++i) {
        const auto& v = img.values[i];
        if (!v.is_present()) continue;
        line += " " + rows.table->columns[i].name + "=";
        if (v.is_null()) {
          line += "NULL";
        } else {
          Status s = render::AppendCanalValue(v, rows.table->columns[i], fmt, &line);
          if (!s.ok()) line += "<" + s.ToString() + ">";
        }
      }
    };
    if (change.has_before) image(change.before, " before:");
    if (change.has_after) image(change.after, " after:");
    out->push_back(std::move(line));
  }
}

std::vector<std::string> DecodeFiles(const std::string& binlog_dir, const std::string& first_file, uint64_t from) {
  std::vector<std::string> files, rows;
  Status s = binlog::ExpandBinlogPaths({binlog_dir}, &files);
  EXPECT_TRUE(s.ok()) << s.ToString();
  binlog::EventDecoder decoder;
  binlog::BinlogFileReader reader(&decoder);
  for (const auto& f : files) {
    const std::string base = f.substr(f.rfind('/') + 1);
    if (base < first_file) continue;
    s = reader.Open(f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    for (;;) {
      binlog::Event ev;
      bool eof = false;
      s = reader.Next(&ev, &eof);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok() || eof) break;
      if (base == first_file && ev.offset < from) continue;
      if (const auto* r = ev.As<binlog::RowsEvent>()) {
        s = RenderRows(*r, &rows);
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    }
  }
  return rows;
}

}  // namespace canal::testing
