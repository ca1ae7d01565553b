// canal-cli's printer: formats entries as Canal's example client prints them
// (text) or as `canal-binlog decode`'s JSON lines, into one buffer per batch.
//
// It reads the entries in place through the SDK's zero-copy views
// (entry_view.h) and copies every piece straight into its buffer: nothing is
// allocated per row or per value. The text form writes each column through a
// pointer into room reserved once for the whole line (name, value and the
// constant pieces copied inline), not piece by piece through std::string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "canal/client/entry_view.h"
#include "canal/common/room_buffer.h"
#include "canal/common/status.h"

namespace canal::cli {

using TextBuffer = RoomBuffer;  // (canal/common/room_buffer.h)

// Formats entries, counting row changes against a limit (0: none).
class Printer {
 public:
  Printer(bool json, int64_t limit) : json_(json), limit_(limit) {}

  bool LimitReached() const { return limit_ > 0 && rows_ >= limit_; }
  int64_t rows() const { return rows_; }

  // Appends what `e` prints, stopping at the row limit. *stopped_inside says
  // that some of the entry's row changes were left unprinted. Corruption
  // naming the entry's position when its RowChange is malformed.
  Status Append(const client::EntryView& e, bool* stopped_inside);

  // Whether `e` holds something this printer would print (row changes or a statement).
  static bool HasChanges(const client::EntryView& e);

  // What was appended since the last Clear().
  std::string_view output() const { return json_ ? std::string_view(json_out_) : text_out_.view(); }
  void Clear() {
    json_out_.clear();
    text_out_.clear();
  }

 private:
  bool AppendTextRow(entry::EventType event, client::RowDataView* row);
  template <typename Next>
  bool AppendTextColumns(Next next);
  void AppendBinlogPrefix(const client::HeaderView& h);
  void AppendTransaction(const client::EntryView& e, entry::EntryType type);
  void AppendRowHeadline(const client::HeaderView& h, std::string_view event_name);
  bool AppendJsonRow(const client::HeaderView& h, entry::EventType event, std::string_view event_name,
                     client::RowDataView* row);
  void AppendStatement(const client::HeaderView& h, const client::RowChangeView& change);
  std::string_view EventName(entry::EventType type);

  const bool json_;
  const int64_t limit_;
  int64_t rows_ = 0;
  TextBuffer text_out_;
  std::string json_out_;  // the JSON line helpers (tools/row_json) append to a std::string
  std::string unknown_name_;  // an unknown event type's name, e.g. UNKNOWN(99)
};

}  // namespace canal::cli
