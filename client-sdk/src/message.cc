#include "canal/client/message.h"

#include "canal/proto/field_numbers.h"
#include "canal/proto/in_order_fields.h"
#include "canal/proto/wire.h"

namespace canal::client {

namespace wire = proto::wire;
namespace messages_field = proto::fields::messages;

Message::Message(int64_t batch_id, const std::vector<std::string>& raw_entries) : batch_id_(batch_id) {
  size_t total = 0;
  for (const std::string& e : raw_entries) total += e.size();
  storage_.reserve(total);
  raw_.reserve(raw_entries.size());
  for (const std::string& e : raw_entries) {
    raw_.push_back(Span{storage_.size(), e.size()});
    storage_ += e;
  }
}

Status Message::FromMessagesBody(std::string body, Message* out) {
  const size_t size = body.size();
  return FromMessagesBody(std::move(body), 0, size, out);
}

Status Message::FromMessagesBody(std::string buffer, size_t offset, size_t size, Message* out) {
  out->Clear();
  if (offset > buffer.size() || size > buffer.size() - offset) {
    out->storage_ = std::string();
    return Status::InvalidArgument("Messages body at " + std::to_string(offset) + "+" + std::to_string(size) +
                                   " lies outside its buffer of " + std::to_string(buffer.size()) + " bytes");
  }
  out->storage_ = std::move(buffer);
  const char* const base = out->storage_.data();
  const std::string_view bytes(base + offset, size);
  int64_t batch_id = -1;
  // The fast path (in_order_fields.h): the id, then the entries one after another.
  proto::InOrderFields in(bytes);
  uint64_t id;
  std::string_view entry;
  if (in.Varint(wire::Tag(messages_field::kBatchId, wire::kVarint), &id)) batch_id = static_cast<int64_t>(id);
  while (in.Bytes(wire::Tag(messages_field::kMessages, wire::kLengthDelimited), &entry)) {
    out->raw_.push_back(Span{static_cast<size_t>(entry.data() - base), entry.size()});
  }
  wire::WireReader r(bytes, in.pos());
  wire::Field f;
  while (r.Next(&f)) {
    if (f.number == messages_field::kBatchId && f.wire_type == wire::kVarint) {
      batch_id = static_cast<int64_t>(f.varint);  // int64: two's complement on the wire
    } else if (f.number == messages_field::kMessages && f.wire_type == wire::kLengthDelimited) {
      out->raw_.push_back(Span{static_cast<size_t>(f.bytes.data() - base), f.bytes.size()});
    } else if (f.number == messages_field::kServerWarning && f.wire_type == wire::kLengthDelimited) {
      out->server_warning_.assign(f.bytes);
    }
  }
  if (r.failed()) {
    Status s = r.Error("Messages body");
    out->Clear();
    out->storage_ = std::string();
    return s;
  }
  // An empty batch must never be acked, whatever id it carries.
  out->batch_id_ = out->raw_.empty() ? -1 : batch_id;
  return Status::OK();
}

std::string Message::TakeBuffer() {
  std::string buffer = std::move(storage_);
  storage_ = std::string();
  Clear();
  return buffer;
}

void Message::Clear() {
  batch_id_ = -1;
  server_warning_.clear();
  raw_.clear();  // keeps its capacity: the next batch's spans need no regrowth
  parsed_.clear();
  parse_done_ = false;
  parse_status_ = Status::OK();
}

std::vector<std::string_view> Message::raw_entries() const {
  std::vector<std::string_view> out;
  out.reserve(raw_.size());
  for (size_t i = 0; i < raw_.size(); ++i) out.push_back(raw_entry(i));
  return out;
}

std::vector<std::string> Message::TakeRawEntries() {
  std::vector<std::string> out;
  out.reserve(raw_.size());
  for (size_t i = 0; i < raw_.size(); ++i) out.emplace_back(raw_entry(i));
  raw_.clear();
  storage_.clear();
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
    const std::string_view bytes = raw_entry(i);
    if (!e.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      parse_status_ = Status::Corruption("batch " + std::to_string(batch_id_) + ": entry " + std::to_string(i) +
                                         " of " + std::to_string(raw_.size()) + " (" + std::to_string(bytes.size()) +
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
  Status s = EntryView::Parse(raw_entry(i), out);
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
