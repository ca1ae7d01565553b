#include <cstring>

#include "canal/parser/binlog_source.h"

namespace canal::parser {
namespace {

constexpr uint16_t kArtificialEventFlag = 0x20;  // LOG_EVENT_ARTIFICIAL_F: not at a real position
constexpr size_t kHeaderLength = 19;

bool IsHeartbeat(binlog::EventType type) {
  return type == binlog::EventType::kHeartbeat || type == binlog::EventType::kHeartbeatV2;
}

}  // namespace

DumpSource::DumpSource(RawEventStream* stream, std::string file, uint64_t position, bool crc32, uint64_t skip_to)
    : stream_(stream), file_(std::move(file)), pos_(position), crc32_(crc32), skip_to_(skip_to) {}

Status DumpSource::Next(binlog::EventDecoder* decoder, SourceEvent* out) {
  if (inner_) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(decoder->NextInner(&out->event, &done));
    if (!done) {
      out->file = file_;
      out->offset = outer_offset_;
      out->end = outer_end_;
      out->in_file = true;
      out->inner = true;
      out->wire_bytes = 0;
      return Status::OK();
    }
    inner_ = false;
  }
  for (;;) {
    CANAL_RETURN_IF_ERROR(ReadOne(decoder, out));
    if (skip_to_ == 0) break;
    // Still before the start asked for: decoded (formats, table maps) but not returned.
    if (out->in_file && out->offset >= skip_to_) {
      if (out->offset != skip_to_) {
        return Status::InvalidArgument(file_ + ": offset " + std::to_string(skip_to_) +
                                       " is not where an event starts (the event before it ends at " +
                                       std::to_string(out->offset) + ")");
      }
      skip_to_ = 0;
      break;
    }
    if (out->event.As<binlog::RotateEvent>() != nullptr && out->in_file) {
      return Status::InvalidArgument(file_ + ": start offset " + std::to_string(skip_to_) +
                                     " is past the end of the file (" + std::to_string(out->end) + " bytes; " +
                                     rotate_to_ + " follows)");
    }
  }
  if (decoder->has_pending_inner()) {
    inner_ = true;
    outer_offset_ = out->offset;
    outer_end_ = out->end;
  }
  return Status::OK();
}

Status DumpSource::ReadOne(binlog::EventDecoder* decoder, SourceEvent* out) {
  if (rotate_pending_) {
    rotate_pending_ = false;
    file_.swap(rotate_to_);
    pos_ = rotate_position_;
    decoder->set_source_name(file_);
  }
  std::string_view raw;
  for (;;) {
    Status s = stream_->ReadEvent(&raw);
    if (!s.ok()) {
      stream_failed_ = true;
      return s;
    }
    pending_bytes_ += raw.size();
    if (raw.size() < kHeaderLength) {
      return Status::Corruption(file_ + ": offset " + std::to_string(pos_) + ": event of " +
                                std::to_string(raw.size()) + " bytes, shorter than an event header");
    }
    // The server opens every dump with an artificial ROTATE naming the file,
    // before the FORMAT_DESCRIPTION the decoder needs (and whose checksum
    // setting it follows): read it by hand.
    if (static_cast<uint8_t>(raw[4]) != static_cast<uint8_t>(binlog::EventType::kRotate) || decoder->has_format()) {
      break;
    }
    const size_t tail = crc32_ ? 4 : 0;
    if (raw.size() < kHeaderLength + 8 + tail) {
      return Status::Corruption(file_ + ": offset " + std::to_string(pos_) + ": ROTATE event of " +
                                std::to_string(raw.size()) + " bytes is too short");
    }
    uint64_t next_pos;
    std::memcpy(&next_pos, raw.data() + kHeaderLength, 8);  // little-endian hosts, like the decoder
    file_.assign(raw.substr(kHeaderLength + 8, raw.size() - kHeaderLength - 8 - tail));
    pos_ = next_pos;
    decoder->set_source_name(file_);
  }

  // Decoded once, at the place the bytes read so far say; the header then
  // tells whether the event is in the file at all.
  binlog::Event& ev = out->event;
  CANAL_RETURN_IF_ERROR(decoder->Decode(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), pos_, &ev,
                                        stream_->checksum_checked()));
  const binlog::EventHeader& h = ev.header;
  out->wire_bytes = pending_bytes_;
  pending_bytes_ = 0;
  out->inner = false;
  out->in_file = false;

  if (IsHeartbeat(h.type())) {
    // Where the primary is: v2 says it in 64 bits, v1 in log_pos's 32 (taken
    // only as a step forward of less than 2 GiB, the rest is a wrap).
    const auto* hb = ev.As<binlog::HeartbeatEvent>();
    if (h.type() == binlog::EventType::kHeartbeatV2 && hb != nullptr) {
      if (hb->log_position > pos_) pos_ = hb->log_position;
    } else if (h.log_pos != 0) {
      const uint32_t ahead = h.log_pos - static_cast<uint32_t>(pos_);
      if (ahead < (1u << 31)) pos_ += ahead;
    }
  } else if (h.log_pos != 0 && (h.flags & kArtificialEventFlag) == 0) {
    // log_pos is the end of the event, modulo 2^32. Normally it is exactly
    // the bytes read so far plus this event; more means the server skipped
    // events (a GTID dump leaves out what the replica has); an event that
    // does not move the stream by its own size is not in the file (a
    // FORMAT_DESCRIPTION re-sent at a later start, MariaDB's fake events).
    const uint32_t advance = h.log_pos - static_cast<uint32_t>(pos_);
    if (advance >= h.event_size) {
      const uint64_t end = pos_ + advance;
      if (advance != h.event_size) {
        ++gaps_;
        decoder->Relocate(end - h.event_size, &ev);
      }
      out->offset = end - h.event_size;
      out->end = end;
      out->in_file = true;
      pos_ = end;
    }
  }
  if (!out->in_file) {
    out->offset = pos_;
    out->end = pos_;
  }
  out->file = file_;
  if (const auto* rot = ev.As<binlog::RotateEvent>()) {
    // A real ROTATE ends the file, an artificial one names where the stream
    // is: either way the events after it are in the file it names (switched
    // to at the next read, so this event still names its own file).
    rotate_to_.assign(rot->next_file);
    rotate_position_ = rot->position;
    rotate_pending_ = true;
  }
  return Status::OK();
}

}  // namespace canal::parser
