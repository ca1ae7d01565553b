#include "cli_printer.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "canal/client/message.h"
#include "canal/proto/wire.h"
#include "canal/tools/row_json.h"

namespace canal::cli {
namespace {

using client::ColumnView;
using client::EntryView;
using client::HeaderView;
using client::RowChangeView;
using client::RowDataView;
using proto::wire::WriteBytes;

Status Unparsable(const HeaderView& h) {
  return Status::Corruption("entry at " + std::string(h.logfile_name()) + ":" + std::to_string(h.logfile_offset()) +
                            " holds no parsable RowChange");
}

// Copies a string literal (its size known here, so the copy is inlined).
template <size_t N>
char* Put(const char (&literal)[N], char* p) {
  std::memcpy(p, literal, N - 1);
  return p + N - 1;
}

}  // namespace

// Canal's name of an event type, without a protobuf lookup for row changes.
std::string_view Printer::EventName(entry::EventType type) {
  switch (type) {
    case entry::INSERT: return "INSERT";
    case entry::UPDATE: return "UPDATE";
    case entry::DELETE: return "DELETE";
    default: break;
  }
  if (type != entry::EVENT_TYPE_PLACEHOLDER && entry::EventType_IsValid(type)) return entry::EventType_Name(type);
  unknown_name_ = client::EventTypeName(type);
  return unknown_name_;
}

Status Printer::Append(const EntryView& e, bool* stopped_inside) {
  *stopped_inside = false;
  const HeaderView& h = e.header();
  const auto type = client::EntryTypeOf(e);
  if (type == entry::TRANSACTIONBEGIN || type == entry::TRANSACTIONEND) {
    if (!json_) AppendTransaction(e, type);
    return Status::OK();
  }
  if (type != entry::ROWDATA) return Status::OK();
  RowChangeView change;
  if (!RowChangeView::Parse(e.store_value(), &change).ok()) return Unparsable(h);
  const auto event = client::EventTypeOf(change);
  const bool is_row =
      !client::IsDdl(change) && (event == entry::INSERT || event == entry::UPDATE || event == entry::DELETE);
  if (!is_row) {
    if (!change.sql().empty()) AppendStatement(h, change);
    return Status::OK();
  }
  const std::string_view name = EventName(event);
  if (!json_) AppendRowHeadline(h, name);
  RowDataView row;
  Status s;
  while (true) {
    if (LimitReached()) {
      // Rows left in this entry stay unprinted.
      RowChangeView rest = change;
      *stopped_inside = rest.NextRow(&row, &s);
      return Status::OK();
    }
    if (!change.NextRow(&row, &s)) break;
    const bool ok = json_ ? AppendJsonRow(h, event, name, &row) : AppendTextRow(event, &row);
    if (!ok) return Unparsable(h);
    ++rows_;
  }
  return s.ok() ? Status::OK() : Unparsable(h);
}

bool Printer::HasChanges(const EntryView& e) {
  if (client::EntryTypeOf(e) != entry::ROWDATA) return false;
  RowChangeView change;
  return RowChangeView::Parse(e.store_value(), &change).ok() && (change.row_count() > 0 || !change.sql().empty());
}

void Printer::AppendBinlogPrefix(const HeaderView& h) {
  text_out_.Append("================> binlog[");
  text_out_.Append(h.logfile_name());
  text_out_.Append(':');
  text_out_.AppendNumber(h.logfile_offset());
  text_out_.Append(']');
}

void Printer::AppendTransaction(const EntryView& e, entry::EntryType type) {
  const HeaderView& h = e.header();
  AppendBinlogPrefix(h);
  text_out_.Append(" , executeTime : ");
  text_out_.AppendNumber(h.execute_time());
  text_out_.Append(" , gtid : (");
  text_out_.Append(h.gtid());
  text_out_.Append(")\n");
  if (type == entry::TRANSACTIONBEGIN) {
    client::TransactionBeginView begin;
    if (client::TransactionBeginView::Parse(e.store_value(), &begin).ok()) {
      text_out_.Append(" BEGIN ----> Thread id: ");
      text_out_.AppendNumber(begin.thread_id());
      text_out_.Append('\n');
    }
  } else {
    client::TransactionEndView end;
    if (client::TransactionEndView::Parse(e.store_value(), &end).ok()) {
      text_out_.Append(" END ----> transaction id: ");
      text_out_.Append(end.transaction_id());
      text_out_.Append('\n');
    }
  }
}

void Printer::AppendRowHeadline(const HeaderView& h, std::string_view event_name) {
  AppendBinlogPrefix(h);
  text_out_.Append(" , name[");
  text_out_.Append(h.schema_name());
  text_out_.Append(',');
  text_out_.Append(h.table_name());
  text_out_.Append("] , eventType : ");
  text_out_.Append(event_name);
  text_out_.Append('\n');
}

// One image's columns as text, a line each, written into room reserved for
// the whole line; false on malformed bytes.
template <typename Next>
bool Printer::AppendTextColumns(Next next) {
  ColumnView c;
  Status s;
  while (next(&c, &s)) {
    const std::string_view name = c.name();
    const std::string_view value = client::IsNull(c) ? std::string_view("NULL") : c.value();
    constexpr size_t kFixed = sizeof(" : ") - 1 + sizeof("    update=false\n") - 1;
    char* p = text_out_.Room(name.size() + value.size() + kFixed);
    p = WriteBytes(name, p);
    p = Put(" : ", p);
    p = WriteBytes(value, p);
    p = c.updated() ? Put("    update=true\n", p) : Put("    update=false\n", p);
    text_out_.Commit(p);
  }
  return s.ok();
}

bool Printer::AppendTextRow(entry::EventType event, RowDataView* row) {
  auto before = [row](ColumnView* c, Status* s) { return row->NextBefore(c, s); };
  auto after = [row](ColumnView* c, Status* s) { return row->NextAfter(c, s); };
  if (event == entry::DELETE) return AppendTextColumns(before);
  if (event == entry::INSERT) return AppendTextColumns(after);
  text_out_.Append("-------> before\n");
  if (!AppendTextColumns(before)) return false;
  text_out_.Append("-------> after\n");
  return AppendTextColumns(after);
}

namespace {

// {"file":..,"pos":..,"gtid":..,"ts":.. — as canal-binlog's lines begin.
void AppendJsonPosition(const HeaderView& h, std::string* out) {
  // executeTime is milliseconds; canal-binlog prints the event's seconds.
  tools::AppendLineHead(h.logfile_name(), h.logfile_offset(), h.gtid(), h.execute_time() / 1000, out);
}

template <typename Next>
bool AppendJsonImage(Next next, std::string* out) {
  out->push_back('{');
  bool first = true;
  ColumnView c;
  Status s;
  while (next(&c, &s)) {
    if (!first) out->push_back(',');
    first = false;
    tools::AppendJsonString(c.name(), out);
    out->push_back(':');
    if (client::IsNull(c)) {
      out->append("null");
    } else {
      tools::AppendJsonString(c.value(), out);
    }
  }
  out->push_back('}');
  return s.ok();
}

}  // namespace

bool Printer::AppendJsonRow(const HeaderView& h, entry::EventType event, std::string_view event_name,
                            RowDataView* row) {
  std::string* out = &json_out_;
  AppendJsonPosition(h, out);
  tools::AppendRowTarget(h.schema_name(), h.table_name(), event_name, out);
  if (event == entry::UPDATE || event == entry::DELETE) {
    out->append(",\"before\":");
    if (!AppendJsonImage([row](ColumnView* c, Status* s) { return row->NextBefore(c, s); }, out)) return false;
  }
  if (event == entry::UPDATE || event == entry::INSERT) {
    out->append(",\"after\":");
    if (!AppendJsonImage([row](ColumnView* c, Status* s) { return row->NextAfter(c, s); }, out)) return false;
  }
  out->append("}\n");
  return true;
}

void Printer::AppendStatement(const HeaderView& h, const RowChangeView& change) {
  const bool ddl = client::IsDdl(change);
  if (!json_) {
    AppendRowHeadline(h, EventName(client::EventTypeOf(change)));
    text_out_.Append(" sql ----> ");
    text_out_.Append(change.sql());
    text_out_.Append('\n');
    return;
  }
  AppendJsonPosition(h, &json_out_);
  tools::AppendStatement(h.schema_name(), ddl, change.sql(), &json_out_);
  json_out_.append("}\n");
}

}  // namespace canal::cli
