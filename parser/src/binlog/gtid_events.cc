#include "canal/parser/binlog/gtid_events.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "canal/parser/binlog/byte_reader.h"
#include "canal/parser/binlog/gtid_set.h"

namespace canal::binlog {
namespace {

constexpr int64_t kGnoEnd = std::numeric_limits<int64_t>::max();  // one past the largest gno
constexpr size_t kTagMaxLength = 32;                              // MySQL tag_max_length
constexpr size_t kXidPartMax = 64;                                // MAXGTRIDSIZE / MAXBQUALSIZE

Status Truncated(std::string_view event, std::string_view field) {
  std::string m(event);
  m += ": ";
  m += field;
  m += " truncated";
  return Status::Truncated(m);
}

Status Corrupt(std::string_view event, std::string_view what) {
  std::string m(event);
  m += ": ";
  m += what;
  return Status::Corruption(m);
}

// Length-encoded integer whose bad prefixes (0xFB NULL, 0xFF) are corruption
// rather than truncation, so that the two can be told apart.
Status ReadPacked(ByteReader& r, std::string_view event, std::string_view field, uint64_t* v) {
  if (r.empty()) return Truncated(event, field);
  const uint8_t prefix = *r.current();
  if (prefix == 0xFB || prefix == 0xFF) {
    return Corrupt(event, std::string(field) + " has invalid length-encoded prefix " +
                              std::to_string(prefix));
  }
  if (!r.ReadPackedInt(v)) return Truncated(event, field);
  return Status::OK();
}

bool ReadSid(ByteReader& r, std::array<uint8_t, 16>* sid) {
  const uint8_t* p;
  if (!r.ReadBytes(sid->size(), &p)) return false;
  std::copy(p, p + sid->size(), sid->begin());
  return true;
}

// MySQL serialization-library varlen unsigned integer: the number of trailing
// one bits in the first byte plus one is the total byte count (1..9); the value
// follows those bits and continues little-endian in the next bytes.
bool ReadVarlen(ByteReader& r, uint64_t* v) {
  if (r.empty()) return false;
  const uint8_t first = *r.current();
  const size_t n = static_cast<size_t>(std::countr_one(first)) + 1;
  if (n > r.remaining()) return false;
  r.Skip(1);
  if (n == 1) {
    *v = first >> 1;
    return true;
  }
  uint64_t rest = 0;
  r.ReadUIntLE(n - 1, &rest);
  // With 8 or 9 bytes the first byte holds no value bits.
  if (n >= 8) {
    *v = rest;
  } else {
    *v = (uint64_t{first} >> n) | (rest << (8 - n));
  }
  return true;
}

// Signed varlen: the least significant bit is the sign, the rest the magnitude
// (negative x is stored as -(x+1)).
int64_t UnzigzagVarlen(uint64_t u) {
  return static_cast<int64_t>((u >> 1) ^ (uint64_t{0} - (u & 1)));
}

// MySQL tag rules: 1..32 characters, a letter or '_' first, then letters,
// digits or '_'; stored lower-case. An empty tag means "untagged".
bool NormalizeTag(std::string_view raw, std::string* out) {
  out->clear();
  if (raw.size() > kTagMaxLength) return false;
  for (size_t i = 0; i < raw.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(raw[i]);
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
    out->push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  return true;
}

// Tag as written by the serialization library's bounded string: varlen length,
// then the bytes.
Status ReadTag(ByteReader& r, std::string_view event, std::string* tag) {
  uint64_t len;
  if (!ReadVarlen(r, &len)) return Truncated(event, "tag length");
  if (len > kTagMaxLength) {
    return Corrupt(event, "tag length " + std::to_string(len) + " exceeds 32");
  }
  std::string_view raw;
  if (!r.ReadBytes(static_cast<size_t>(len), &raw)) return Truncated(event, "tag");
  if (!NormalizeTag(raw, tag)) return Corrupt(event, "tag has invalid characters");
  return Status::OK();
}

void AppendHex(std::string* s, uint8_t b) {
  static constexpr char kHex[] = "0123456789abcdef";
  s->push_back(kHex[b >> 4]);
  s->push_back(kHex[b & 0xF]);
}

// ---- GTID_TAGGED_LOG_EVENT ----

constexpr std::string_view kTaggedEvent = "GTID_TAGGED event";
constexpr uint64_t kSerializationFormatVersion = 1;
// Field ids of Gtid_event::define_fields() in MySQL 8.4 / 9.x.
enum TaggedField : uint64_t {
  kFlags = 0,
  kSid,
  kGno,
  kTag,
  kLastCommitted,
  kSequenceNumber,
  kImmediateCommitTs,
  kOriginalCommitTs,
  kTransactionLength,
  kImmediateServerVersion,
  kOriginalServerVersion,
  kCommitGroupTicket,
  kTaggedFieldCount,
};
constexpr std::string_view kTaggedFieldNames[kTaggedFieldCount] = {
    "flags",
    "sid",
    "gno",
    "tag",
    "last_committed",
    "sequence_number",
    "immediate_commit_timestamp",
    "original_commit_timestamp",
    "transaction_length",
    "immediate_server_version",
    "original_server_version",
    "commit_group_ticket",
};

Status ReadTaggedUnsigned(ByteReader& r, uint64_t field, uint64_t max, uint64_t* v) {
  if (!ReadVarlen(r, v)) return Truncated(kTaggedEvent, kTaggedFieldNames[field]);
  if (*v > max) {
    return Corrupt(kTaggedEvent, std::string(kTaggedFieldNames[field]) + " value " +
                                     std::to_string(*v) + " out of range");
  }
  return Status::OK();
}

Status ReadTaggedSigned(ByteReader& r, uint64_t field, int64_t* v) {
  uint64_t u;
  if (!ReadVarlen(r, &u)) return Truncated(kTaggedEvent, kTaggedFieldNames[field]);
  *v = UnzigzagVarlen(u);
  return Status::OK();
}

Status ReadTaggedField(ByteReader& r, uint64_t field, GtidEvent* g, bool* has_original_ts) {
  constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
  uint64_t u = 0;
  switch (field) {
    case kFlags:
      CANAL_RETURN_IF_ERROR(ReadTaggedUnsigned(r, field, 0xFF, &u));
      g->flags = static_cast<uint8_t>(u);
      return Status::OK();
    case kSid:
      // A fixed array of 16 uint8, each its own varlen integer.
      for (uint8_t& b : g->sid) {
        CANAL_RETURN_IF_ERROR(ReadTaggedUnsigned(r, field, 0xFF, &u));
        b = static_cast<uint8_t>(u);
      }
      return Status::OK();
    case kGno:
      CANAL_RETURN_IF_ERROR(ReadTaggedSigned(r, field, &g->gno));
      return Status::OK();
    case kTag:
      return ReadTag(r, kTaggedEvent, &g->tag);
    case kLastCommitted:
      CANAL_RETURN_IF_ERROR(ReadTaggedSigned(r, field, &g->last_committed));
      g->has_logical_clock = true;
      return Status::OK();
    case kSequenceNumber:
      CANAL_RETURN_IF_ERROR(ReadTaggedSigned(r, field, &g->sequence_number));
      g->has_logical_clock = true;
      return Status::OK();
    case kImmediateCommitTs:
      return ReadTaggedUnsigned(r, field, kU64Max, &g->immediate_commit_timestamp);
    case kOriginalCommitTs:
      *has_original_ts = true;
      return ReadTaggedUnsigned(r, field, kU64Max, &g->original_commit_timestamp);
    case kTransactionLength:
      return ReadTaggedUnsigned(r, field, kU64Max, &g->transaction_length);
    case kImmediateServerVersion:
    case kOriginalServerVersion:
      // Not kept, but read to stay in step with the stream.
      return ReadTaggedUnsigned(r, field, std::numeric_limits<uint32_t>::max(), &u);
    case kCommitGroupTicket:
      return ReadTaggedUnsigned(r, field, kU64Max, &u);
    default:
      return Status::OK();
  }
}

}  // namespace

std::string FormatUuid(const std::array<uint8_t, 16>& sid) {
  std::string s;
  s.reserve(36);
  for (size_t i = 0; i < sid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    AppendHex(&s, sid[i]);
  }
  return s;
}

// ---- ToString of the structs in events.h ----

std::string GtidEvent::ToString() const {
  if (anonymous) return std::string();
  std::string s = FormatUuid(sid);
  if (!tag.empty()) {
    s += ':';
    s += tag;
  }
  s += ':';
  s += std::to_string(gno);
  return s;
}

std::string PreviousGtidsEvent::ToString() const { return GtidSet::FromPreviousGtids(*this).ToString(); }

char* MariaGtidEvent::WriteText(uint32_t domain_id, uint32_t server_id, uint64_t seq_no, char* out) {
  // Each number within its own most digits (10, 10, 20), so every write stays inside.
  out = std::to_chars(out, out + 10, domain_id).ptr;
  *out++ = '-';
  out = std::to_chars(out, out + 10, server_id).ptr;
  *out++ = '-';
  return std::to_chars(out, out + 20, seq_no).ptr;
}

std::string MariaGtidEvent::ToString() const {
  char text[kTextMax];
  return std::string(text, WriteText(text));
}

std::string MariaGtidListEvent::ToString() const {
  std::string s;
  for (size_t i = 0; i < gtids.size(); ++i) {
    if (i > 0) s += ',';
    char text[MariaGtidEvent::kTextMax];
    s.append(text, MariaGtidEvent::WriteText(gtids[i].domain_id, gtids[i].server_id, gtids[i].seq_no, text));
  }
  return s;
}

// ---- decoders ----

Status DecodeGtidEvent(std::string_view body, bool anonymous, GtidEvent* out) {
  const std::string_view ev = anonymous ? "ANONYMOUS_GTID event" : "GTID event";
  GtidEvent g;
  g.anonymous = anonymous;
  ByteReader r(body);
  if (!r.ReadU8(&g.flags)) return Truncated(ev, "flags");
  if (!ReadSid(r, &g.sid)) return Truncated(ev, "sid");
  uint64_t gno;
  if (!r.ReadUIntLE(8, &gno)) return Truncated(ev, "gno");
  g.gno = static_cast<int64_t>(gno);
  if (!anonymous && (g.gno < 1 || g.gno >= kGnoEnd)) {
    return Corrupt(ev, "gno " + std::to_string(g.gno) + " out of range");
  }

  // 5.6 stops here (25-byte post-header).
  uint8_t lt_type;
  if (!r.ReadU8(&lt_type) || lt_type != 2) {
    // Type codes other than 2 come from 5.7.4-and-older previews whose
    // following fields had another layout; MySQL ignores them too.
    *out = std::move(g);
    return Status::OK();
  }
  uint64_t v;
  if (!r.ReadUIntLE(8, &v)) return Truncated(ev, "last_committed");
  g.last_committed = static_cast<int64_t>(v);
  if (!r.ReadUIntLE(8, &v)) return Truncated(ev, "sequence_number");
  g.sequence_number = static_cast<int64_t>(v);
  g.has_logical_clock = true;

  // Optional fields (8.0.1+): each is present when the body has room for it.
  constexpr size_t kTimestampBytes = 7;
  constexpr uint64_t kOriginalFollows = uint64_t{1} << 55;
  if (r.remaining() >= kTimestampBytes) {
    r.ReadUIntLE(kTimestampBytes, &v);
    if (v & kOriginalFollows) {
      g.immediate_commit_timestamp = v & ~kOriginalFollows;
      if (!r.ReadUIntLE(kTimestampBytes, &g.original_commit_timestamp)) {
        return Truncated(ev, "original_commit_timestamp");
      }
    } else {
      g.immediate_commit_timestamp = v;
      g.original_commit_timestamp = v;
    }
    if (!r.empty()) {
      CANAL_RETURN_IF_ERROR(ReadPacked(r, ev, "transaction_length", &g.transaction_length));
    }
    constexpr uint32_t kOriginalVersionFollows = uint32_t{1} << 31;
    uint32_t immediate_version;
    if (r.remaining() >= 4) {
      r.ReadLE(&immediate_version);
      if ((immediate_version & kOriginalVersionFollows) && !r.Skip(4)) {
        return Truncated(ev, "original_server_version");
      }
      r.Skip(8);  // commit_group_ticket (8.0.21+) when present; not kept
    }
  }
  *out = std::move(g);
  return Status::OK();
}

Status DecodeGtidTaggedEvent(std::string_view body, GtidEvent* out) {
  ByteReader head(body);
  uint64_t version;
  if (!ReadVarlen(head, &version)) return Truncated(kTaggedEvent, "serialization version");
  if (version != kSerializationFormatVersion) {
    return Status::NotSupported(std::string(kTaggedEvent) + ": serialization format version " +
                                std::to_string(version));
  }
  uint64_t size;
  if (!ReadVarlen(head, &size)) return Truncated(kTaggedEvent, "message size");
  uint64_t last_non_ignorable;
  if (!ReadVarlen(head, &last_non_ignorable)) {
    return Truncated(kTaggedEvent, "last non-ignorable field id");
  }
  if (size > body.size()) {
    return Status::Truncated(std::string(kTaggedEvent) + ": message size " + std::to_string(size) +
                             " exceeds body of " + std::to_string(body.size()) + " bytes");
  }
  if (size < head.offset()) {
    return Corrupt(kTaggedEvent, "message size " + std::to_string(size) + " smaller than its header");
  }
  // The id is one past the last field the writer requires us to understand.
  if (last_non_ignorable > kTaggedFieldCount) {
    return Status::NotSupported(std::string(kTaggedEvent) + ": unknown non-ignorable field " +
                                std::to_string(last_non_ignorable - 1));
  }

  // Fields are read within the message; bytes after it are ignored, as MySQL does.
  ByteReader r(body.substr(0, static_cast<size_t>(size)));
  r.Skip(head.offset());
  GtidEvent g;
  bool seen[kTaggedFieldCount] = {};
  bool has_original_ts = false;
  for (uint64_t field = 0; field < kTaggedFieldCount && !r.empty(); ++field) {
    // A field is present when the next id is its own; ids are written in order
    // and absent ones are simply skipped by the writer.
    ByteReader peek = r;
    uint64_t id;
    if (!ReadVarlen(peek, &id)) return Truncated(kTaggedEvent, "field id");
    if (id != field) continue;
    r = peek;
    CANAL_RETURN_IF_ERROR(ReadTaggedField(r, field, &g, &has_original_ts));
    seen[field] = true;
  }
  // Whatever remains in the message are fields of newer servers: ignorable.

  if (!seen[kSid]) return Corrupt(kTaggedEvent, "sid missing");
  if (!seen[kGno]) return Corrupt(kTaggedEvent, "gno missing");
  if (g.gno < 1 || g.gno >= kGnoEnd) {
    return Corrupt(kTaggedEvent, "gno " + std::to_string(g.gno) + " out of range");
  }
  // The writer omits the original timestamp when it equals the immediate one.
  if (!has_original_ts) g.original_commit_timestamp = g.immediate_commit_timestamp;
  *out = std::move(g);
  return Status::OK();
}

Status DecodePreviousGtidsEvent(std::string_view body, PreviousGtidsEvent* out) {
  constexpr std::string_view ev = "PREVIOUS_GTIDS event";
  ByteReader r(body);
  uint64_t word;
  if (!r.ReadUIntLE(8, &word)) return Truncated(ev, "sid count");
  const uint8_t format = static_cast<uint8_t>(word >> 56);
  bool tagged;
  uint64_t n_sids;
  if (format == 0) {
    tagged = false;
    n_sids = word;
  } else if (format == 1 && (word & 0xFF) == 1) {
    // Tagged: format byte at both ends, the count in the six bytes between.
    tagged = true;
    n_sids = (word >> 8) & ((uint64_t{1} << 48) - 1);
  } else {
    return Corrupt(ev, "unknown GTID set format in sid count word " + std::to_string(word));
  }
  // sid 16 + interval count 8 (+ tag length 1): reject counts the body cannot hold
  // before reserving anything.
  const size_t min_entry = 16 + 8 + (tagged ? 1 : 0);
  if (n_sids > r.remaining() / min_entry) {
    return Corrupt(ev, "sid count " + std::to_string(n_sids) + " exceeds body of " +
                           std::to_string(body.size()) + " bytes");
  }

  PreviousGtidsEvent p;
  p.entries.reserve(static_cast<size_t>(n_sids));
  for (uint64_t i = 0; i < n_sids; ++i) {
    GtidSetEntry e;
    if (!ReadSid(r, &e.sid)) return Truncated(ev, "sid");
    if (tagged) CANAL_RETURN_IF_ERROR(ReadTag(r, ev, &e.tag));
    uint64_t n_intervals;
    if (!r.ReadUIntLE(8, &n_intervals)) return Truncated(ev, "interval count");
    if (n_intervals > r.remaining() / 16) {
      return Corrupt(ev, "interval count " + std::to_string(n_intervals) + " exceeds body of " +
                             std::to_string(body.size()) + " bytes");
    }
    e.intervals.reserve(static_cast<size_t>(n_intervals));
    for (uint64_t j = 0; j < n_intervals; ++j) {
      uint64_t start, end;
      if (!r.ReadUIntLE(8, &start)) return Truncated(ev, "interval start");
      if (!r.ReadUIntLE(8, &end)) return Truncated(ev, "interval end");
      GtidInterval iv{static_cast<int64_t>(start), static_cast<int64_t>(end)};
      if (iv.start < 1 || iv.end <= iv.start) {
        return Corrupt(ev, "interval [" + std::to_string(iv.start) + ", " + std::to_string(iv.end) +
                               ") is not a valid gno range");
      }
      e.intervals.push_back(iv);
    }
    p.entries.push_back(std::move(e));
  }
  if (!r.empty()) {
    return Corrupt(ev, std::to_string(r.remaining()) + " bytes after the GTID set");
  }
  *out = std::move(p);
  return Status::OK();
}

Status DecodeMariaGtidEvent(std::string_view body, uint32_t server_id, MariaGtidEvent* out) {
  constexpr std::string_view ev = "MariaDB GTID event";
  constexpr uint8_t kGroupCommitId = 2;
  constexpr uint8_t kPreparedXa = 64;
  constexpr uint8_t kCompletedXa = 128;
  MariaGtidEvent g;
  g.server_id = server_id;
  ByteReader r(body);
  if (!r.ReadUIntLE(8, &g.seq_no)) return Truncated(ev, "seq_no");
  if (!r.ReadLE(&g.domain_id)) return Truncated(ev, "domain_id");
  if (!r.ReadU8(&g.flags)) return Truncated(ev, "flags2");
  if ((g.flags & kGroupCommitId) && !r.ReadUIntLE(8, &g.commit_id)) {
    return Truncated(ev, "commit_id");
  }
  if (g.flags & (kPreparedXa | kCompletedXa)) {
    uint32_t format_id;
    uint8_t gtrid_len, bqual_len;
    if (!r.ReadLE(&format_id)) return Truncated(ev, "XA format_id");
    if (!r.ReadU8(&gtrid_len)) return Truncated(ev, "XA gtrid length");
    if (!r.ReadU8(&bqual_len)) return Truncated(ev, "XA bqual length");
    if (gtrid_len > kXidPartMax || bqual_len > kXidPartMax) {
      return Corrupt(ev, "XA gtrid/bqual lengths " + std::to_string(gtrid_len) + "/" +
                             std::to_string(bqual_len) + " exceed 64");
    }
    if (!r.ReadBytes(size_t{gtrid_len} + bqual_len, &g.xa_xid)) return Truncated(ev, "XA xid data");
  }
  // The rest (post-header padding, flags_extra and its fields) is not needed.
  *out = std::move(g);
  return Status::OK();
}

Status DecodeMariaGtidListEvent(std::string_view body, MariaGtidListEvent* out) {
  constexpr std::string_view ev = "MariaDB GTID_LIST event";
  ByteReader r(body);
  uint32_t word;
  if (!r.ReadLE(&word)) return Truncated(ev, "count");
  const uint32_t count = word & ((uint32_t{1} << 28) - 1);
  constexpr size_t kEntryBytes = 16;
  if (count > r.remaining() / kEntryBytes) {
    return Corrupt(ev, "count " + std::to_string(count) + " exceeds body of " +
                           std::to_string(body.size()) + " bytes");
  }
  MariaGtidListEvent l;
  l.gtids.resize(count);
  for (MariaGtidListEvent::Entry& e : l.gtids) {
    // Cannot fail: the count was checked against the remaining bytes.
    r.ReadLE(&e.domain_id);
    r.ReadLE(&e.server_id);
    r.ReadUIntLE(8, &e.seq_no);
  }
  *out = std::move(l);
  return Status::OK();
}

Status DecodeXaPrepareEvent(std::string_view body, XaPrepareEvent* out) {
  constexpr std::string_view ev = "XA_PREPARE event";
  XaPrepareEvent x;
  ByteReader r(body);
  uint8_t one_phase;
  uint32_t format_id, gtrid_len, bqual_len;
  if (!r.ReadU8(&one_phase)) return Truncated(ev, "one_phase");
  if (!r.ReadLE(&format_id)) return Truncated(ev, "format_id");
  if (!r.ReadLE(&gtrid_len)) return Truncated(ev, "gtrid length");
  if (!r.ReadLE(&bqual_len)) return Truncated(ev, "bqual length");
  if (gtrid_len > kXidPartMax || bqual_len > kXidPartMax) {
    return Corrupt(ev, "gtrid/bqual lengths " + std::to_string(gtrid_len) + "/" +
                           std::to_string(bqual_len) + " exceed 64");
  }
  if (!r.ReadBytes(gtrid_len, &x.gtrid)) return Truncated(ev, "gtrid");
  if (!r.ReadBytes(bqual_len, &x.bqual)) return Truncated(ev, "bqual");
  x.one_phase = one_phase != 0;
  x.format_id = static_cast<int32_t>(format_id);
  *out = x;
  return Status::OK();
}

Status DecodeHeartbeatV2Event(std::string_view body, HeartbeatEvent* out) {
  constexpr std::string_view ev = "HEARTBEAT_V2 event";
  HeartbeatEvent h;
  ByteReader r(body);
  while (!r.empty()) {
    uint64_t type, length;
    CANAL_RETURN_IF_ERROR(ReadPacked(r, ev, "field type", &type));
    if (type == 0) break;  // end mark
    CANAL_RETURN_IF_ERROR(ReadPacked(r, ev, "field length", &length));
    std::string_view value;
    if (length > r.remaining() || !r.ReadBytes(static_cast<size_t>(length), &value)) {
      return Truncated(ev, "field " + std::to_string(type) + " value");
    }
    if (type == 1) {
      h.log_file = value;
    } else if (type == 2) {
      ByteReader vr(value);
      CANAL_RETURN_IF_ERROR(ReadPacked(vr, ev, "log position", &h.log_position));
      if (!vr.empty()) return Corrupt(ev, "log position field longer than its value");
    }
    // Other types: fields of newer servers, skipped by their length.
  }
  *out = h;
  return Status::OK();
}

Status DecodeTransactionPayloadHeader(std::string_view body, TransactionPayloadEvent* out) {
  constexpr std::string_view ev = "TRANSACTION_PAYLOAD event";
  TransactionPayloadEvent t;
  t.compression = 255;  // MySQL's default when the field is absent: none
  bool has_payload_size = false;
  ByteReader r(body);
  for (;;) {
    if (r.empty()) return Truncated(ev, "header (no end mark)");
    uint64_t type, length;
    CANAL_RETURN_IF_ERROR(ReadPacked(r, ev, "field type", &type));
    if (type == 0) break;  // end mark; the payload follows
    CANAL_RETURN_IF_ERROR(ReadPacked(r, ev, "field length", &length));
    std::string_view value;
    if (length > r.remaining() || !r.ReadBytes(static_cast<size_t>(length), &value)) {
      return Truncated(ev, "field " + std::to_string(type) + " value");
    }
    if (type < 1 || type > 3) continue;  // newer field: skipped by its length
    static constexpr std::string_view kNames[] = {"", "payload size", "compression type",
                                                  "uncompressed size"};
    ByteReader vr(value);
    uint64_t v;
    CANAL_RETURN_IF_ERROR(ReadPacked(vr, ev, kNames[type], &v));
    if (!vr.empty()) {
      return Corrupt(ev, std::string(kNames[type]) + " field longer than its value");
    }
    if (type == 1) {
      t.payload_size = v;
      has_payload_size = true;
    } else if (type == 2) {
      if (v > 0xFF) return Corrupt(ev, "compression type " + std::to_string(v) + " out of range");
      t.compression = static_cast<uint8_t>(v);
    } else {
      t.uncompressed_size = v;
    }
  }
  t.payload = r.Rest();
  if (!has_payload_size) {
    t.payload_size = t.payload.size();
  } else if (t.payload_size > t.payload.size()) {
    return Status::Truncated(std::string(ev) + ": payload of " + std::to_string(t.payload_size) +
                             " bytes truncated to " + std::to_string(t.payload.size()));
  } else if (t.payload_size < t.payload.size()) {
    return Corrupt(ev, std::to_string(t.payload.size() - t.payload_size) +
                           " bytes after the declared payload of " +
                           std::to_string(t.payload_size) + " bytes");
  }
  *out = t;
  return Status::OK();
}

}  // namespace canal::binlog
