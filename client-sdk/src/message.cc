#include "canal/client/message.h"

namespace canal::client {

std::vector<std::string> Message::TakeRawEntries() {
  std::vector<std::string> out = std::move(raw_);
  raw_.clear();
  parsed_.clear();
  parse_done_ = false;
  parse_status_ = Status::OK();
  return out;
}

Status Message::ParseEntries() {
  if (parse_done_) return parse_status_;
  parse_done_ = true;
  parsed_.clear();
  parsed_.reserve(raw_.size());
  for (size_t i = 0; i < raw_.size(); ++i) {
    canal::entry::Entry e;
    if (!e.ParseFromString(raw_[i])) {
      parse_status_ = Status::Corruption("batch " + std::to_string(batch_id_) + ": entry " + std::to_string(i) +
                                         " of " + std::to_string(raw_.size()) + " (" + std::to_string(raw_[i].size()) +
                                         " bytes) is not a serialised canal.entry.Entry");
      break;
    }
    parsed_.push_back(std::move(e));
  }
  return parse_status_;
}

Status Message::View(size_t i, EntryView* out) const {
  if (i >= raw_.size()) {
    return Status::InvalidArgument("batch " + std::to_string(batch_id_) + ": no entry " + std::to_string(i) +
                                   " (the batch holds " + std::to_string(raw_.size()) + ")");
  }
  Status s = EntryView::Parse(raw_[i], out);
  if (!s.ok()) {
    return s.WithContext("batch " + std::to_string(batch_id_) + ": entry " + std::to_string(i) + " of " +
                         std::to_string(raw_.size()));
  }
  return s;
}

const std::vector<canal::entry::Entry>& Message::entries() {
  ParseEntries().PermitUncheckedError();  // the caller asked for the good prefix
  return parsed_;
}

canal::entry::EntryType EntryTypeOf(const canal::entry::Entry& entry) {
  return entry.has_entrytype() ? entry.entrytype() : canal::entry::ROWDATA;
}

canal::entry::EventType EventTypeOf(const canal::entry::Header& header) {
  return header.has_eventtype() ? header.eventtype() : canal::entry::UPDATE;
}

canal::entry::EventType EventTypeOf(const canal::entry::RowChange& change) {
  return change.has_eventtype() ? change.eventtype() : canal::entry::UPDATE;
}

bool IsNull(const canal::entry::Column& column) { return column.has_isnull() && column.isnull(); }

bool IsDdl(const canal::entry::RowChange& change) { return change.has_isddl() && change.isddl(); }

std::string EventTypeName(canal::entry::EventType type) {
  if (type != canal::entry::EVENT_TYPE_PLACEHOLDER && canal::entry::EventType_IsValid(type)) {
    return canal::entry::EventType_Name(type);
  }
  return "UNKNOWN(" + std::to_string(static_cast<int>(type)) + ")";
}

std::string EntryTypeName(canal::entry::EntryType type) {
  if (type != canal::entry::ENTRY_TYPE_PLACEHOLDER && canal::entry::EntryType_IsValid(type)) {
    return canal::entry::EntryType_Name(type);
  }
  return "UNKNOWN(" + std::to_string(static_cast<int>(type)) + ")";
}

}  // namespace canal::client
