#include "canal/parser/binlog/event_decoder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "canal/parser/binlog/byte_reader.h"
#include "canal/parser/binlog/compression.h"
#include "canal/parser/binlog/crc32.h"
#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/binlog/format_description.h"
#include "canal/parser/binlog/gtid_events.h"
#include "binlog/json_row_cache.h"
#include "binlog/query_event.h"
#include "canal/parser/binlog/table_map_decoder.h"

namespace canal::binlog {

namespace {

constexpr size_t kChecksumLength = 4;
// Events larger than this are refused before any allocation: MySQL's own limit
// (max_allowed_packet) is 1 GiB.
constexpr uint32_t kMaxEventSize = 1u << 30;

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

struct EventDecoder::PayloadState {
  std::string buffer;  // decompressed events of the current TRANSACTION_PAYLOAD
  size_t pos = 0;
  uint64_t outer_offset = 0;
  bool active = false;
};

EventDecoder::EventDecoder(DecoderOptions options)
    : options_(options), fde_(std::make_unique<FormatDescription>()), payload_(std::make_unique<PayloadState>()) {}

EventDecoder::~EventDecoder() = default;

void EventDecoder::ResetForNewSource() {
  *fde_ = FormatDescription();
  have_fde_ = false;
  ClearTables();
  payload_->active = false;
  payload_->buffer.clear();
  payload_->pos = 0;
}

const std::shared_ptr<TableMap>* EventDecoder::Lookup(uint64_t table_id) const {
  // Every rows event looks its table up twice (here and in the transaction
  // buffer), and a stream's rows events mostly name the table of the one
  // before: the last slot found is kept (slots of an unordered_map stay put
  // until they are erased; the map is only ever cleared whole).
  if (last_slot_ != nullptr && last_id_ == table_id) return last_slot_;
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return nullptr;
  last_id_ = table_id;
  last_slot_ = &it->second;
  return last_slot_;
}

void EventDecoder::ClearTables() {
  tables_.clear();
  last_slot_ = nullptr;
}

const TableMap* EventDecoder::FindTable(uint64_t table_id) const {
  const std::shared_ptr<TableMap>* slot = Lookup(table_id);
  return slot == nullptr ? nullptr : slot->get();
}

std::shared_ptr<const TableMap> EventDecoder::ShareTable(uint64_t table_id) const {
  const std::shared_ptr<TableMap>* slot = Lookup(table_id);
  return slot == nullptr ? nullptr : *slot;
}

bool EventDecoder::has_pending_inner() const { return payload_->active; }

Status EventDecoder::Fail(Status::Code code, uint64_t offset, std::string_view what) const {
  std::string m = source_.empty() ? std::string("binlog") : source_;
  m += ": offset ";
  m += std::to_string(offset);
  m += ": ";
  m += what;
  switch (code) {
    case Status::Code::kTruncated: return Status::Truncated(m);
    case Status::Code::kNotSupported: return Status::NotSupported(m);
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(m);
    default: return Status::Corruption(m);
  }
}

Status EventDecoder::PeekEventSize(const uint8_t* data, size_t available, uint64_t offset,
                                   uint32_t* size) const {
  // event_size sits at byte 9 in every header version (v1 included).
  if (available < 13) {
    return Fail(Status::Code::kTruncated, offset,
                "event header truncated: " + std::to_string(available) + " byte(s) left, need at least 13");
  }
  uint32_t s = LoadU32LE(data + 9);
  size_t min_size = have_fde_ ? header_length() : 13;
  if (s < min_size || s > kMaxEventSize) {
    return Fail(Status::Code::kCorruption, offset,
                "implausible event size " + std::to_string(s) + " in header of a " +
                    EventTypeLabel(data[4]) + " event");
  }
  *size = s;
  return Status::OK();
}

void EventDecoder::Relocate(uint64_t offset, Event* event) {
  event->offset = offset;
  if (auto* rows = std::get_if<RowsEvent>(&event->body)) rows->offset = offset;
  if (payload_->active) payload_->outer_offset = offset;
}

Status EventDecoder::Decode(const uint8_t* data, size_t size, uint64_t offset, Event* event, bool checksum_checked) {
  event->offset = offset;
  event->in_payload = false;
  event->checksum_verified = false;
  event->raw = std::string_view(reinterpret_cast<const char*>(data), size);
  event->body = OpaqueEvent{};
  payload_->active = false;

  if (size < 13) return Fail(Status::Code::kTruncated, offset, "event shorter than any header");
  const uint8_t type_code = data[4];

  // The first event of a binlog tells its version: FORMAT_DESCRIPTION (v4) or
  // START_EVENT_V3 (v1 with 13-byte headers, or v3 with 19-byte headers).
  if (!have_fde_ && type_code == static_cast<uint8_t>(EventType::kStartV3)) {
    Status s = DecodeStartV3(data, size, fde_.get());
    if (!s.ok()) return Fail(s.code(), offset, s.message()).WithSubcode(s.subcode());
    have_fde_ = true;
  }

  size_t hlen = (type_code == static_cast<uint8_t>(EventType::kFormatDescription)) ? 19 : header_length();
  if (size < hlen) {
    return Fail(Status::Code::kTruncated, offset,
                "event of " + std::to_string(size) + " bytes is shorter than its " + std::to_string(hlen) +
                    "-byte header");
  }
  EventHeader& h = event->header;
  h.timestamp = LoadU32LE(data);
  h.type_code = RemapEventType(*fde_, type_code);
  h.server_id = LoadU32LE(data + 5);
  h.event_size = LoadU32LE(data + 9);
  if (hlen >= 19) {
    h.log_pos = LoadU32LE(data + 13);
    h.flags = LoadU16LE(data + 17);
  } else {
    h.log_pos = 0;
    h.flags = 0;
  }
  if (h.event_size != size) {
    return Fail(Status::Code::kCorruption, offset,
                "header says " + std::to_string(h.event_size) + " bytes but the event has " + std::to_string(size));
  }

  size_t body_size = size - hlen;
  if (h.type() == EventType::kFormatDescription) {
    auto fde = std::make_unique<FormatDescription>();
    bool has_checksum = false;
    // The server computes the FDE checksum with LOG_EVENT_BINLOG_IN_USE_F
    // cleared, then sets the flag in place while the file is open.
    auto fde_crc = [&](uint32_t* computed, uint32_t* stored) {
      uint8_t head[19];
      std::memcpy(head, data, 19);
      head[17] &= static_cast<uint8_t>(~kLogEventBinlogInUseFlag);
      *computed = Crc32(data + 19, size - 19 - kChecksumLength, Crc32(head, 19));
      *stored = LoadU32LE(data + size - kChecksumLength);
    };
    Status s = DecodeFormatDescription(data + hlen, body_size, fde.get(), &has_checksum);
    if (!s.ok()) {
      uint32_t crc = 0, stored = 0;
      if (size >= 19 + kChecksumLength) fde_crc(&crc, &stored);
      if (size >= 19 + kChecksumLength && crc != stored && s.code() != Status::Code::kTruncated) {
        // Most likely a damaged event rather than an unknown format.
        return Fail(Status::Code::kCorruption, offset,
                    "FORMAT_DESCRIPTION damaged (" + std::string(s.message()) + "; CRC32 does not match either)");
      }
      return Fail(s.code(), offset, std::string("FORMAT_DESCRIPTION: ") + std::string(s.message()))
          .WithSubcode(s.subcode());
    }
    if (has_checksum && options_.verify_checksum) {
      uint32_t crc = 0, stored = 0;
      fde_crc(&crc, &stored);
      if (crc != stored) {
        return Fail(Status::Code::kCorruption, offset,
                    "FORMAT_DESCRIPTION checksum mismatch: stored " + Hex(stored) + ", computed " + Hex(crc))
            .WithSubcode(kErrorChecksumMismatch);
      }
      event->checksum_verified = true;
    }
    *fde_ = std::move(*fde);
    have_fde_ = true;
    ClearTables();
    event->body = static_cast<const FormatDescription*>(fde_.get());
    return Status::OK();
  }

  if (fde_->checksum == ChecksumAlg::kCrc32) {
    if (body_size < kChecksumLength) {
      return Fail(Status::Code::kTruncated, offset, "event too short to hold its CRC32 checksum");
    }
    body_size -= kChecksumLength;
    if (options_.verify_checksum) {
      const uint32_t stored = LoadU32LE(data + size - kChecksumLength);
      const uint32_t crc = checksum_checked ? stored : Crc32(data, size - kChecksumLength);
      if (crc != stored) {
        return Fail(Status::Code::kCorruption, offset,
                    EventTypeLabel(h.type_code) + " event checksum mismatch: stored " + Hex(stored) +
                        ", computed " + Hex(crc))
            .WithSubcode(kErrorChecksumMismatch);
      }
      event->checksum_verified = true;
    }
  }
  Status s = DecodeBody(data + hlen, body_size, event);
  if (!s.ok()) return s;
  if (h.type() == EventType::kTransactionPayload) {
    const auto* tp = event->As<TransactionPayloadEvent>();
    payload_->buffer.clear();
    payload_->pos = 0;
    Status ds = DecompressTransactionPayload(*tp, &payload_->buffer);
    if (!ds.ok()) return Fail(ds.code(), offset, "TRANSACTION_PAYLOAD: " + std::string(ds.message()));
    payload_->outer_offset = offset;
    payload_->active = true;
  }
  return Status::OK();
}

Status EventDecoder::NextInner(Event* event, bool* done) {
  PayloadState& ps = *payload_;
  *done = false;
  if (!ps.active || ps.pos >= ps.buffer.size()) {
    ps.active = false;
    *done = true;
    return Status::OK();
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(ps.buffer.data()) + ps.pos;
  size_t avail = ps.buffer.size() - ps.pos;
  // Built only on failure: this runs for every event of a compressed transaction.
  const size_t at = ps.pos;
  auto where = [at] { return "inside TRANSACTION_PAYLOAD at byte " + std::to_string(at) + ": "; };
  if (avail < 19) {
    ps.active = false;
    return Fail(Status::Code::kTruncated, ps.outer_offset, where() + "event header truncated");
  }
  uint32_t size = LoadU32LE(p + 9);
  if (size < 19 || size > avail) {
    ps.active = false;
    return Fail(Status::Code::kCorruption, ps.outer_offset,
                where() + "event size " + std::to_string(size) + " does not fit the " + std::to_string(avail) +
                    " byte(s) left");
  }
  event->offset = ps.outer_offset;
  event->in_payload = true;
  event->checksum_verified = false;
  event->raw = std::string_view(reinterpret_cast<const char*>(p), size);
  event->body = OpaqueEvent{};
  EventHeader& h = event->header;
  h.timestamp = LoadU32LE(p);
  h.type_code = p[4];
  h.server_id = LoadU32LE(p + 5);
  h.event_size = size;
  h.log_pos = LoadU32LE(p + 13);
  h.flags = LoadU16LE(p + 17);
  ps.pos += size;
  if (h.type() == EventType::kTransactionPayload || h.type() == EventType::kFormatDescription) {
    ps.active = false;
    return Fail(Status::Code::kCorruption, ps.outer_offset,
                where() + EventTypeLabel(h.type_code) + " event cannot appear inside a payload");
  }
  // Events inside a payload carry no checksums of their own.
  Status s = DecodeBody(p + 19, size - 19, event);
  if (!s.ok()) {
    ps.active = false;
    return s.WithContext(where());
  }
  if (ps.pos >= ps.buffer.size()) ps.active = false;
  return Status::OK();
}

Status EventDecoder::BodyError(const Event& event, const Status& s) const {
  // The label is built only on failure: most events' names would not fit
  // std::string's inline buffer, and this runs for every event.
  return Fail(s.code(), event.offset, EventTypeLabel(event.header.type_code) + " event: " + std::string(s.message()))
      .WithSubcode(s.subcode());
}

// A rows event's post-header, column count and bitmaps, checked against its
// TABLE_MAP; the row images stay bytes, read by RowsReader.
Status EventDecoder::DecodeRowsHead(const RowsEventInfo& rows_info, const uint8_t* body, size_t body_size,
                                    Event* event) {
  const EventHeader& h = event->header;
  const uint64_t offset = event->offset;
  auto wrap = [&](const Status& s) { return BodyError(*event, s); };
  RowsEvent rows;
  rows.info = rows_info;
  rows.source = source_;
  rows.offset = offset;
  const uint8_t post_len = fde_->PostHeaderLength(h.type_code, rows_info.version == 2 ? 10 : 8);
  ByteReader r(body, body_size);
  uint64_t table_id = 0;
  uint16_t flags = 0;
  // A 6-byte post-header means the 4-byte table ids of MySQL 5.1.0-5.1.15.
  size_t id_len = post_len == 6 ? 4 : 6;
  if (!r.ReadUIntLE(id_len, &table_id) || !r.ReadLE(&flags)) return wrap(Status::Truncated("post-header truncated"));
  if (rows_info.version == 2 && post_len >= 10) {
    uint16_t extra_len = 0;
    if (!r.ReadLE(&extra_len)) return wrap(Status::Truncated("extra-data length truncated"));
    if (extra_len < 2 || !r.Skip(extra_len - 2u)) {
      return wrap(Status::Corruption("extra-data length " + std::to_string(extra_len) + " does not fit the event"));
    }
  } else if (post_len > id_len + 2) {
    if (!r.Skip(post_len - id_len - 2)) return wrap(Status::Truncated("post-header truncated"));
  }
  ByteReader rest = r;
  uint64_t ncols = 0;
  if (!rest.ReadPackedInt(&ncols)) return wrap(Status::Truncated("column count truncated"));
  const TableMap* table = FindTable(table_id);
  if (table == nullptr) {
    return wrap(Status::Corruption("no TABLE_MAP seen for table id " + std::to_string(table_id)));
  }
  if (ncols != table->columns.size()) {
    return wrap(Status::Corruption("rows event has " + std::to_string(ncols) + " columns but TABLE_MAP of `" +
                                   table->db + "`.`" + table->table + "` has " +
                                   std::to_string(table->columns.size())));
  }
  const size_t bitmap_len = (ncols + 7) / 8;
  if (!rest.ReadBytes(bitmap_len, &rows.columns_before)) return wrap(Status::Truncated("column bitmap truncated"));
  // Pre-GA (v0) updates use one bitmap for both images.
  if (rows_info.kind == RowsKind::kUpdate && rows_info.version >= 1) {
    if (!rest.ReadBytes(bitmap_len, &rows.columns_after)) {
      return wrap(Status::Truncated("after-image column bitmap truncated"));
    }
  } else {
    rows.columns_after = rows.columns_before;
  }
  rows.table_id = table_id;
  rows.flags = flags;
  rows.column_count = static_cast<uint32_t>(ncols);
  rows.rows = rest.Rest();
  if (rows_info.compressed) {
    // MariaDB compresses only the row images, not the column count and bitmaps.
    size_t consumed = 0;
    Status cs = MariaUncompress(rows.rows, &inflate_buf_, &consumed);
    if (!cs.ok()) return wrap(cs);
    rows.rows = inflate_buf_;
  }
  rows.table = table;
  if (table->has_json && fde_->flavor == ServerFlavor::kMySQL &&
      (fde_->version_major > 8 || (fde_->version_major == 8 && (fde_->version_minor > 0 || fde_->version_patch >= 3)))) {
    if (!json_rows_) json_rows_ = std::make_unique<JsonRowCache>();
    rows.json_rows = json_rows_.get();
  }
  event->body = rows;
  return Status::OK();
}

// A TABLE_MAP, reusing the map decoded last time when the bytes are the same.
Status EventDecoder::DecodeTableMapEvent(const uint8_t* body, size_t body_size, Event* event) {
  const EventHeader& h = event->header;
  const std::string_view bytes(reinterpret_cast<const char*>(body), body_size);
  auto wrap = [&](const Status& s) { return BodyError(*event, s); };
    const uint8_t post_len = fde_->PostHeaderLength(h.type_code, 8);
    // Every transaction repeats its tables' TABLE_MAPs, byte for byte while
    // the schema stays: keep the map decoded last time (decoding FULL
    // metadata was ~14% of the server's CPU on single-row transactions).
    // Not when a schema provider named the columns: it may answer
    // differently now.
    ByteReader id_reader(body, body_size);
    uint64_t id = 0;
    if (id_reader.ReadUIntLE(post_len == 6 ? 4 : 6, &id)) {
      auto it = tables_.find(id);
      auto bytes_it = table_map_bytes_.find(id);
      if (it != tables_.end() && bytes_it != table_map_bytes_.end() && bytes_it->second == bytes) {
        event->body = TableMapEventRef{it->second.get()};
        return Status::OK();
      }
    }
    auto tm = std::make_shared<TableMap>();
    Status s = DecodeTableMap(bytes, post_len, fde_->flavor, tm.get());
    if (!s.ok()) return wrap(s);
    tm->integer_display_widths = PrintsIntegerDisplayWidths(*fde_);
    bool provided = false;
    // MariaDB's old-code TIMESTAMP(N) etc.: only the schema knows N, even with FULL metadata.
    const bool needs_precision = WritesMariaDbHiresTemporal(*fde_) && MarkTemporalPrecisionUnknown(tm.get());
    if (options_.schema_provider != nullptr && (!tm->names_known || needs_precision)) {
      Status ps = tm->names_known ? ApplySchemaPrecision(options_.schema_provider, tm.get())
                                  : ApplySchemaProvider(options_.schema_provider, tm.get());
      if (!ps.ok()) return wrap(ps);
      provided = true;
    }
    // The bytes live as long as their table (tables_ is cleared on a new
    // format and bounded at transaction ends).
    if (tables_.empty()) table_map_bytes_.clear();
    if (provided) {
      table_map_bytes_.erase(tm->table_id);
    } else {
      table_map_bytes_[tm->table_id].assign(bytes);
    }
    auto& slot = tables_[tm->table_id];
    slot = std::move(tm);
    event->body = TableMapEventRef{slot.get()};
    return Status::OK();
}

Status EventDecoder::DecodeBody(const uint8_t* body, size_t body_size, Event* event) {
  const EventHeader& h = event->header;
  const uint64_t offset = event->offset;
  const std::string_view bytes(reinterpret_cast<const char*>(body), body_size);
  auto wrap = [&](const Status& s) { return BodyError(*event, s); };

  const RowsEventInfo rows_info = ClassifyRowsEvent(h.type());
  if (rows_info.is_rows) return DecodeRowsHead(rows_info, body, body_size, event);

  switch (h.type()) {
    case EventType::kStartV3: {
      event->body = static_cast<const FormatDescription*>(fde_.get());
      return Status::OK();
    }
    case EventType::kQuery:
    case EventType::kMariaQueryCompressed: {
      QueryEvent q;
      const uint8_t post_len = fde_->PostHeaderLength(h.type_code, 13);
      Status s = DecodeQueryEvent(bytes, post_len, h.type() == EventType::kMariaQueryCompressed, &q, &inflate_buf_);
      if (!s.ok()) return wrap(s);
      event->body = q;
      return Status::OK();
    }
    case EventType::kRotate: {
      RotateEvent rot;
      ByteReader r(body, body_size);
      const uint8_t post_len = fde_->binlog_version == 1 ? 0 : fde_->PostHeaderLength(h.type_code, 8);
      if (post_len >= 8) {
        if (!r.ReadLE(&rot.position) || !r.Skip(post_len - 8u)) return wrap(Status::Truncated("position truncated"));
      } else {
        rot.position = 4;
      }
      rot.next_file = r.Rest();
      event->body = rot;
      return Status::OK();
    }
    case EventType::kXid: {
      XidEvent x;
      ByteReader r(body, body_size);
      if (!r.ReadLE(&x.xid)) return wrap(Status::Truncated("xid truncated"));
      event->body = x;
      // Table ids only live for a statement; bound the map on long streams.
      if (tables_.size() > 4096) ClearTables();
      return Status::OK();
    }
    case EventType::kIntvar: {
      IntvarEvent iv;
      ByteReader r(body, body_size);
      if (!r.ReadU8(&iv.kind) || !r.ReadLE(&iv.value)) return wrap(Status::Truncated("body truncated"));
      event->body = iv;
      return Status::OK();
    }
    case EventType::kRand: {
      RandEvent rd;
      ByteReader r(body, body_size);
      if (!r.ReadLE(&rd.seed1) || !r.ReadLE(&rd.seed2)) return wrap(Status::Truncated("body truncated"));
      event->body = rd;
      return Status::OK();
    }
    case EventType::kUserVar: {
      UserVarEvent uv;
      ByteReader r(body, body_size);
      uint32_t name_len = 0;
      if (!r.ReadLE(&name_len) || !r.ReadBytes(name_len, &uv.name)) return wrap(Status::Truncated("name truncated"));
      uint8_t is_null = 0;
      if (!r.ReadU8(&is_null)) return wrap(Status::Truncated("null flag truncated"));
      uv.is_null = is_null != 0;
      if (!uv.is_null) {
        uint32_t value_len = 0;
        if (!r.ReadU8(&uv.value_type) || !r.ReadLE(&uv.charset) || !r.ReadLE(&value_len) ||
            !r.ReadBytes(value_len, &uv.value)) {
          return wrap(Status::Truncated("value truncated"));
        }
        if (!r.empty()) r.ReadU8(&uv.flags);  // MySQL 5.6+: unsigned flag
      }
      event->body = uv;
      return Status::OK();
    }
    case EventType::kTableMap:
      return DecodeTableMapEvent(body, body_size, event);
    case EventType::kIncident: {
      IncidentEvent inc;
      ByteReader r(body, body_size);
      uint8_t len = 0;
      if (!r.ReadLE(&inc.incident)) return wrap(Status::Truncated("incident number truncated"));
      if (r.ReadU8(&len) && !r.ReadBytes(len, &inc.message)) return wrap(Status::Truncated("message truncated"));
      event->body = inc;
      return Status::OK();
    }
    case EventType::kHeartbeat: {
      HeartbeatEvent hb;
      hb.log_file = bytes;
      hb.log_position = h.log_pos;
      event->body = hb;
      return Status::OK();
    }
    case EventType::kHeartbeatV2: {
      HeartbeatEvent hb;
      Status s = DecodeHeartbeatV2Event(bytes, &hb);
      if (!s.ok()) return wrap(s);
      event->body = hb;
      return Status::OK();
    }
    case EventType::kRowsQuery: {
      // One length byte that overflows for long statements; the text runs to the end.
      ByteReader r(body, body_size);
      if (!r.Skip(1)) return wrap(Status::Truncated("length byte missing"));
      event->body = RowsQueryEvent{r.Rest()};
      return Status::OK();
    }
    case EventType::kMariaAnnotateRows: {
      event->body = RowsQueryEvent{bytes};
      return Status::OK();
    }
    case EventType::kGtid:
    case EventType::kAnonymousGtid: {
      GtidEvent g;
      Status s = DecodeGtidEvent(bytes, h.type() == EventType::kAnonymousGtid, &g);
      if (!s.ok()) return wrap(s);
      event->body = std::move(g);
      return Status::OK();
    }
    case EventType::kGtidTagged: {
      GtidEvent g;
      Status s = DecodeGtidTaggedEvent(bytes, &g);
      if (!s.ok()) return wrap(s);
      event->body = std::move(g);
      return Status::OK();
    }
    case EventType::kPreviousGtids: {
      PreviousGtidsEvent pg;
      Status s = DecodePreviousGtidsEvent(bytes, &pg);
      if (!s.ok()) return wrap(s);
      event->body = std::move(pg);
      return Status::OK();
    }
    case EventType::kXaPrepare: {
      XaPrepareEvent xa;
      Status s = DecodeXaPrepareEvent(bytes, &xa);
      if (!s.ok()) return wrap(s);
      event->body = xa;
      return Status::OK();
    }
    case EventType::kTransactionPayload: {
      if (event->in_payload) return wrap(Status::Corruption("nested TRANSACTION_PAYLOAD"));
      TransactionPayloadEvent tp;
      Status s = DecodeTransactionPayloadHeader(bytes, &tp);
      if (!s.ok()) return wrap(s);
      event->body = tp;
      return Status::OK();
    }
    case EventType::kMariaGtid: {
      MariaGtidEvent g;
      Status s = DecodeMariaGtidEvent(bytes, h.server_id, &g);
      if (!s.ok()) return wrap(s);
      event->body = g;
      return Status::OK();
    }
    case EventType::kMariaGtidList: {
      MariaGtidListEvent gl;
      Status s = DecodeMariaGtidListEvent(bytes, &gl);
      if (!s.ok()) return wrap(s);
      event->body = std::move(gl);
      return Status::OK();
    }
    case EventType::kMariaBinlogCheckpoint: {
      BinlogCheckpointEvent cp;
      ByteReader r(body, body_size);
      uint32_t len = 0;
      if (!r.ReadLE(&len) || !r.ReadBytes(len, &cp.file)) return wrap(Status::Truncated("file name truncated"));
      event->body = cp;
      return Status::OK();
    }
    case EventType::kMariaStartEncryption:
      return Fail(Status::Code::kNotSupported, offset,
                  "START_ENCRYPTION: this binlog is encrypted (encrypt_binlog=ON); encrypted binlog files "
                  "cannot be decoded. Read it through a replication connection, where the server decrypts, "
                  "or turn off encrypt_binlog");
    case EventType::kStop:
    case EventType::kLoad:
    case EventType::kSlave:
    case EventType::kCreateFile:
    case EventType::kAppendBlock:
    case EventType::kExecLoad:
    case EventType::kDeleteFile:
    case EventType::kNewLoad:
    case EventType::kBeginLoadQuery:
    case EventType::kExecuteLoadQuery:
    case EventType::kIgnorable:
    case EventType::kTransactionContext:
    case EventType::kViewChange:
      event->body = OpaqueEvent{bytes};
      return Status::OK();
    default:
      break;
  }
  if (h.flags & kLogEventIgnorableFlag) {
    event->body = OpaqueEvent{bytes};
    return Status::OK();
  }
  return Fail(Status::Code::kNotSupported, offset,
              "unknown event type " + std::to_string(h.type_code) +
                  " without the ignorable flag; cannot know whether skipping it would lose changes");
}

}  // namespace canal::binlog
