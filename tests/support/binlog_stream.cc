#include "support/binlog_stream.h"

#include "canal/parser/binlog/event_decoder.h"

namespace canal::testing {

Status StreamBinlogBytes(const std::string& name, const std::string& bytes, uint64_t from,
                         parser::TransactionBuffer* buffer, uint64_t* rows_events) {
  binlog::EventDecoder decoder;
  decoder.set_source_name(name);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  auto feed_at = [&](uint64_t pos, bool deliver, uint64_t* next) -> Status {
    uint32_t size = 0;
    CANAL_RETURN_IF_ERROR(decoder.PeekEventSize(data + pos, bytes.size() - pos, pos, &size));
    if (size > bytes.size() - pos) return Status::Truncated(name + ": event past the end");
    binlog::Event ev;
    CANAL_RETURN_IF_ERROR(decoder.Decode(data + pos, size, pos, &ev));
    *next = pos + size;
    if (!deliver) return Status::OK();
    if (rows_events != nullptr && ev.As<binlog::RowsEvent>() != nullptr) ++*rows_events;
    CANAL_RETURN_IF_ERROR(buffer->Add(ev, decoder, name, pos, pos + size));
    while (decoder.has_pending_inner()) {
      bool done = false;
      binlog::Event inner;
      CANAL_RETURN_IF_ERROR(decoder.NextInner(&inner, &done));
      if (done) break;
      if (rows_events != nullptr && inner.As<binlog::RowsEvent>() != nullptr) ++*rows_events;
      CANAL_RETURN_IF_ERROR(buffer->Add(inner, decoder, name, pos, pos + size));
    }
    return Status::OK();
  };
  uint64_t pos = 4, next = 0;
  if (from > 4) {
    CANAL_RETURN_IF_ERROR(feed_at(4, false, &next));  // the server sends the FDE first
    pos = from;
  }
  while (pos < bytes.size()) {
    CANAL_RETURN_IF_ERROR(feed_at(pos, true, &next));
    pos = next;
  }
  return Status::OK();
}

}  // namespace canal::testing
