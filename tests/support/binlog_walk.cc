#include "support/binlog_walk.h"

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/render/canal_value.h"

namespace canal::testing {

WalkResult WalkBinlog(const std::string& path, const WalkOptions& options, const std::string* bytes) {
  WalkResult res;
  binlog::DecoderOptions dopts;
  dopts.verify_checksum = options.verify_checksum;
  dopts.schema_provider = options.schema_provider;
  binlog::EventDecoder decoder(dopts);
  binlog::BinlogFileReader reader(&decoder);
  res.error = bytes ? reader.OpenBuffer(path, *bytes) : reader.Open(path);
  if (!res.error.ok()) return res;
  binlog::Event ev;
  binlog::RowsReader rows;
  binlog::RowChange change;
  render::ValueFormatOptions fo;
  std::string text;
  while (true) {
    bool eof = false;
    const uint64_t at = reader.position();
    Status s = reader.Next(&ev, &eof);
    if (s.ok() && eof) break;
    if (s.ok()) {
      (ev.in_payload ? res.payload_counts : res.outer_counts)[ev.header.type_code]++;
      if (options.on_event) s = options.on_event(ev);
    }
    if (s.ok()) {
      if (const auto* re = ev.As<binlog::RowsEvent>()) {
        rows.Reset(*re);
        while (s.ok()) {
          bool done = false;
          s = rows.Next(&change, &done);
          if (!s.ok() || done) break;
          ++res.rows;
          for (const binlog::RowImage* img : {&change.before, &change.after}) {
            if ((img == &change.before && !change.has_before) || (img == &change.after && !change.has_after)) continue;
            for (size_t i = 0; i < img->values.size() && s.ok(); ++i) {
              const auto& v = img->values[i];
              if (!v.is_present() || v.is_null()) continue;
              text.clear();
              s = render::AppendCanalValue(v, re->table->columns[i], fo, &text);
              if (!s.ok()) {
                s = s.WithContext(path + ": offset " + std::to_string(ev.offset) + ": `" + re->table->db + "`.`" +
                                  re->table->table + "` column " + std::to_string(i + 1));
              }
              ++res.values;
            }
          }
          if (s.ok() && options.on_row) s = options.on_row(ev, *re->table, change);
        }
      }
    }
    if (!s.ok()) {
      if (res.error.ok()) {
        res.error = s;
        res.error_offset = at;
      }
      // A framed event whose body was bad: the reader has moved past it.
      if (options.continue_after_corrupt_event && reader.position() > at && !s.IsTruncated()) continue;
      break;
    }
  }
  return res;
}

}  // namespace canal::testing
