#include "support/mysql_binlog_writer.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "canal/parser/binlog/gtid_set.h"
#include "support/event_bytes.h"

namespace canal::testing {
namespace eb = event_bytes;
namespace {

using Sid = std::array<uint8_t, 16>;

constexpr int64_t kGnoMax = std::numeric_limits<int64_t>::max() - 1;  // MySQL's gnos: 1..2^63-2
constexpr uint16_t kIgnorableFlag = 0x80;                             // LOG_EVENT_IGNORABLE_F
constexpr uint8_t kGtid = 33, kAnonymousGtid = 34, kPreviousGtids = 35, kGtidTagged = 42;
constexpr size_t kMaxUuidIndex = 20;       // IdOf stays an INT
constexpr int64_t kMaxHistoryGno = 999'999;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "3e11fa47-71ca-11e1-9e33-c80aa9429562" (or its 32 hex digits alone).
Status ParseUuid(std::string_view text, Sid* sid) {
  std::string hex;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash_place = text.size() == 36 && (i == 8 || i == 13 || i == 18 || i == 23);
    if (dash_place != (text[i] == '-')) return Status::InvalidArgument("bad server UUID '" + std::string(text) + "'");
    if (!dash_place) hex.push_back(text[i]);
  }
  if (hex.size() != 32) return Status::InvalidArgument("bad server UUID '" + std::string(text) + "'");
  for (size_t i = 0; i < 16; ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return Status::InvalidArgument("bad server UUID '" + std::string(text) + "'");
    (*sid)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return Status::OK();
}

// MySQL 8.4's tag rules: 1..32 of [a-zA-Z0-9_], not starting with a digit; kept lower-case.
Status NormalTag(std::string_view tag, std::string* out) {
  out->clear();
  if (tag.size() > 32) return Status::InvalidArgument("GTID tag '" + std::string(tag) + "' is over 32 characters");
  for (size_t i = 0; i < tag.size(); ++i) {
    const char c = tag[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) {
      return Status::InvalidArgument("bad GTID tag '" + std::string(tag) + "'");
    }
    out->push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return Status::OK();
}

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// The serialization library's varlen integer: n bytes (1..9), the first with
// n-1 trailing one bits and a zero (none for 9), the value in the bits above,
// little-endian. n <= 7 holds 7n bits, 8 holds 56, 9 holds 64.
size_t VarlenSize(uint64_t v) {
  size_t n = 1;
  while (n <= 7 && (v >> (7 * n)) != 0) ++n;
  return n == 8 && (v >> 56) != 0 ? 9 : n;
}

void PutVarlen(std::string* out, uint64_t v) {
  const size_t n = VarlenSize(v);
  if (n == 9) {
    out->push_back('\xff');
    PutLe(out, v, 8);
  } else if (n == 8) {
    out->push_back('\x7f');
    PutLe(out, v, 7);
  } else {
    PutLe(out, (v << n) | ((uint64_t{1} << (n - 1)) - 1), static_cast<int>(n));
  }
}

// Signed fields: the sign in the low bit.
uint64_t Zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

void PutLenenc(std::string* out, uint64_t v) {
  if (v < 251) {
    PutLe(out, v, 1);
  } else if (v < (uint64_t{1} << 16)) {
    out->push_back('\xfc');
    PutLe(out, v, 2);
  } else if (v < (uint64_t{1} << 24)) {
    out->push_back('\xfd');
    PutLe(out, v, 3);
  } else {
    out->push_back('\xfe');
    PutLe(out, v, 8);
  }
}

int VersionNumber(std::string_view v) {
  int parts[3] = {0, 0, 0};
  size_t i = 0;
  for (int k = 0; k < 3 && i < v.size(); ++k) {
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && parts[k] < 1000) parts[k] = parts[k] * 10 + (v[i++] - '0');
    if (i < v.size() && v[i] == '.') ++i;
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

// Appends events to a file, stamping each header with the file's server id,
// the event's timestamp and end offset, then its checksum.
class FileBuilder {
 public:
  explicit FileBuilder(const MysqlBinlogSpec& spec) : spec_(spec), bytes_("\xfe" "bin") {}

  size_t WireSize(const std::string& event) const { return event.size() + (spec_.checksum ? 4 : 0); }

  void Append(std::string event, uint32_t timestamp, bool force_checksum = false) {
    eb::SetTimestamp(&event, timestamp);
    eb::SetServerId(&event, spec_.server_id);
    const bool crc = spec_.checksum || force_checksum;
    eb::SetLogPos(&event, static_cast<uint32_t>(bytes_.size() + event.size() + (crc ? 4 : 0)));
    if (crc) eb::AddChecksum(&event);
    bytes_ += event;
  }

  std::string Take() { return std::move(bytes_); }

 private:
  const MysqlBinlogSpec& spec_;
  std::string bytes_;
};

Status AppendTransaction(const MysqlBinlogSpec& spec, const MysqlTransaction& t, int64_t sequence_number,
                         FileBuilder* file) {
  std::vector<std::string> rest = {eb::Query("BEGIN")};
  if (t.ids.empty()) {
    rest.push_back(eb::Query("COMMIT"));  // MySQL's empty transaction (an injected GTID)
  } else {
    rest.push_back(eb::TableMap());
    // One WRITE_ROWS per `rows_per_event` ids (all in one when 0): a transaction of several
    // events, for tests that cut it into pieces.
    const size_t per = t.rows_per_event == 0 ? t.ids.size() : t.rows_per_event;
    for (size_t i = 0; i < t.ids.size(); i += per) {
      rest.push_back(eb::WriteRows(std::vector<uint32_t>(t.ids.begin() + i,
                                                         t.ids.begin() + std::min(t.ids.size(), i + per))));
    }
    rest.push_back(eb::Xid(static_cast<uint64_t>(100 + sequence_number)));
  }
  size_t rest_size = 0;
  for (const std::string& e : rest) rest_size += file->WireSize(e);

  GtidEventFields f;
  f.uuid = t.uuid;
  f.tag = t.tag;
  f.gno = t.gno;
  f.last_committed = sequence_number - 1;
  f.sequence_number = sequence_number;
  f.commit_timestamp_us = uint64_t{t.timestamp} * 1'000'000;
  f.server_version = static_cast<uint32_t>(VersionNumber(spec.server_version));
  const bool anonymous = t.uuid.empty();
  const bool tagged = !anonymous && !t.tag.empty();
  const uint8_t type = anonymous ? kAnonymousGtid : tagged ? kGtidTagged : kGtid;
  // The length counts the GTID event itself, whose size depends on how the length is written.
  std::string body, event;
  for (int round = 0; round < 4; ++round) {
    CANAL_RETURN_IF_ERROR(tagged ? GtidTaggedBody(f, &body) : GtidBody(f, &body));
    event = eb::Event(type, body);
    const uint64_t length = rest_size + file->WireSize(event);
    if (length == f.transaction_length) break;
    f.transaction_length = length;
  }
  file->Append(std::move(event), t.timestamp);
  for (std::string& e : rest) file->Append(std::move(e), t.timestamp);
  return Status::OK();
}

}  // namespace

Status GtidBody(const GtidEventFields& f, std::string* body) {
  Sid sid{};
  const bool anonymous = f.uuid.empty();
  if (!anonymous) {
    CANAL_RETURN_IF_ERROR(ParseUuid(f.uuid, &sid));
    if (f.gno < 1 || f.gno > kGnoMax) return Status::InvalidArgument("gno " + std::to_string(f.gno) + " out of range");
  }
  body->clear();
  body->push_back(static_cast<char>(f.flags));
  body->append(reinterpret_cast<const char*>(sid.data()), sid.size());
  PutLe(body, anonymous ? 0 : static_cast<uint64_t>(f.gno), 8);
  body->push_back(2);  // logical clock follows
  PutLe(body, static_cast<uint64_t>(f.last_committed), 8);
  PutLe(body, static_cast<uint64_t>(f.sequence_number), 8);
  PutLe(body, f.commit_timestamp_us & ((uint64_t{1} << 55) - 1), 7);  // bit 55 clear: original = immediate
  PutLenenc(body, f.transaction_length);
  PutLe(body, f.server_version & 0x7FFFFFFF, 4);  // bit 31 clear: original = immediate
  return Status::OK();
}

Status GtidTaggedBody(const GtidEventFields& f, std::string* body) {
  Sid sid{};
  CANAL_RETURN_IF_ERROR(ParseUuid(f.uuid, &sid));
  if (f.gno < 1 || f.gno > kGnoMax) return Status::InvalidArgument("gno " + std::to_string(f.gno) + " out of range");
  std::string tag;
  CANAL_RETURN_IF_ERROR(NormalTag(f.tag, &tag));
  // Each field: its id, then its value; ids in order, absent fields skipped.
  std::string fields;
  const auto field = [&fields](uint64_t id, uint64_t value) {
    PutVarlen(&fields, id);
    PutVarlen(&fields, value);
  };
  field(0, f.flags);
  PutVarlen(&fields, 1);
  for (uint8_t b : sid) PutVarlen(&fields, b);  // a fixed array: each byte its own integer
  field(2, Zigzag(f.gno));
  PutVarlen(&fields, 3);
  PutVarlen(&fields, tag.size());
  fields += tag;
  field(4, Zigzag(f.last_committed));
  field(5, Zigzag(f.sequence_number));
  field(6, f.commit_timestamp_us);
  // 7, original_commit_timestamp: equal to the immediate one, so absent.
  field(8, f.transaction_length);
  field(9, f.server_version);
  // 10, original_server_version, and 11, commit_group_ticket: absent.

  // Header: format version 1, the message's size (header included), and the
  // last non-ignorable field id (0: a reader may skip what it does not know).
  size_t size_bytes = 1;
  uint64_t size = 0;
  for (;;) {
    size = 1 + size_bytes + 1 + fields.size();
    if (VarlenSize(size) == size_bytes) break;
    size_bytes = VarlenSize(size);
  }
  body->clear();
  PutVarlen(body, 1);
  PutVarlen(body, size);
  PutVarlen(body, 0);
  *body += fields;
  return Status::OK();
}

Status PreviousGtidsBody(std::string_view gtid_set, std::string* body) {
  binlog::GtidSet set;
  CANAL_RETURN_IF_ERROR(binlog::GtidSet::Parse(gtid_set, &set).WithContext("previous_gtids"));
  if (set.flavor() == binlog::GtidSet::Flavor::kMariadb) {
    return Status::InvalidArgument("previous_gtids '" + std::string(gtid_set) + "' is a MariaDB GTID position");
  }
  // MySQL writes its sources ordered by UUID (then tag).
  std::vector<const binlog::GtidSet::Source*> sources;
  for (const auto& s : set.sources()) sources.push_back(&s);
  std::sort(sources.begin(), sources.end(), [](const auto* a, const auto* b) {
    return std::tie(a->sid, a->tag) < std::tie(b->sid, b->tag);
  });
  const bool tagged = std::any_of(sources.begin(), sources.end(), [](const auto* s) { return !s->tag.empty(); });
  body->clear();
  // The tagged form: format byte 1 at both ends of the count word, the count between.
  PutLe(body, tagged ? (uint64_t{1} << 56) | (uint64_t{sources.size()} << 8) | 1 : sources.size(), 8);
  for (const auto* s : sources) {
    body->append(reinterpret_cast<const char*>(s->sid.data()), s->sid.size());
    if (tagged) {
      PutVarlen(body, s->tag.size());
      *body += s->tag;
    }
    PutLe(body, s->intervals.size(), 8);
    for (const binlog::GtidInterval& iv : s->intervals) {
      PutLe(body, static_cast<uint64_t>(iv.start), 8);
      PutLe(body, static_cast<uint64_t>(iv.end), 8);
    }
  }
  return Status::OK();
}

Status BuildMysqlBinlog(const MysqlBinlogSpec& spec, std::string* bytes) {
  FileBuilder file(spec);
  // A checksum-aware server's FDE carries a CRC32 whatever the algorithm.
  file.Append(eb::FormatDescriptionFor(spec.server_version, spec.checksum), spec.timestamp, true);
  std::string previous;
  CANAL_RETURN_IF_ERROR(PreviousGtidsBody(spec.previous_gtids, &previous));
  file.Append(eb::Event(kPreviousGtids, previous, kIgnorableFlag), spec.timestamp);
  uint32_t last_timestamp = spec.timestamp;
  int64_t sequence_number = 0;  // the logical clock starts again in every file
  for (const MysqlTransaction& t : spec.transactions) {
    ++sequence_number;
    CANAL_RETURN_IF_ERROR(AppendTransaction(spec, t, sequence_number, &file)
                              .WithContext("transaction " + std::to_string(sequence_number)));
    last_timestamp = std::max(last_timestamp, t.timestamp);
  }
  if (!spec.next_file.empty()) file.Append(eb::Rotate(spec.next_file, 4, 0), last_timestamp);
  *bytes = file.Take();
  return Status::OK();
}

Status WriteMysqlBinlog(const MysqlBinlogSpec& spec, const std::string& dir, const std::string& name,
                        std::string* path) {
  std::string bytes;
  CANAL_RETURN_IF_ERROR(BuildMysqlBinlog(spec, &bytes));
  const std::string p = dir + "/" + name;
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status::IOError("cannot write binlog file '" + p + "'");
  *path = p;
  return Status::OK();
}

TempBinlogDir::TempBinlogDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/binlog-writer-XXXXXX";
  if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempBinlogDir::~TempBinlogDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

// ---- histories ----

uint32_t TagSlot(std::string_view tag) {
  if (tag.empty()) return 0;
  uint32_t h = 2166136261u;
  for (char c : tag) {
    h ^= static_cast<uint8_t>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    h *= 16777619u;
  }
  return 1 + h % 99;
}

uint32_t IdOf(size_t uuid_index, std::string_view tag, int64_t gno) {
  return static_cast<uint32_t>(uuid_index * 100'000'000 + TagSlot(tag) * 1'000'000 + static_cast<uint64_t>(gno));
}

namespace {

Status CheckHistory(const GtidHistory& h) {
  std::map<std::pair<size_t, uint32_t>, std::string> slots;  // (uuid, slot) -> its tag
  for (const GtidRun& r : h.runs) {
    const std::string run = "run " + std::to_string(r.uuid_index) + ":" + r.tag + ":" + std::to_string(r.first_gno) +
                            "-" + std::to_string(r.last_gno);
    if (r.uuid_index >= h.uuids.size() || r.uuid_index > kMaxUuidIndex) {
      return Status::InvalidArgument(run + ": uuid_index out of range (uuids has " + std::to_string(h.uuids.size()) +
                                     ", IdOf allows 0.." + std::to_string(kMaxUuidIndex) + ")");
    }
    Sid sid;
    CANAL_RETURN_IF_ERROR(ParseUuid(h.uuids[r.uuid_index], &sid).WithContext(run));
    if (r.first_gno < 1 || r.last_gno < r.first_gno || r.last_gno > kMaxHistoryGno) {
      return Status::InvalidArgument(run + ": gnos must be 1 <= first <= last <= " + std::to_string(kMaxHistoryGno));
    }
    std::string tag;
    CANAL_RETURN_IF_ERROR(NormalTag(r.tag, &tag).WithContext(run));
    auto [it, added] = slots.emplace(std::make_pair(r.uuid_index, TagSlot(tag)), tag);
    if (!added && it->second != tag) {
      return Status::InvalidArgument(run + ": tags '" + it->second + "' and '" + tag +
                                     "' share an IdOf slot; pick another tag");
    }
  }
  return Status::OK();
}

}  // namespace

Status HistoryTransactions(const GtidHistory& history, size_t first_run, std::vector<MysqlTransaction>* out) {
  CANAL_RETURN_IF_ERROR(CheckHistory(history));
  out->clear();
  uint64_t k = 0;  // the transaction's place in the whole history
  for (size_t i = 0; i < history.runs.size(); ++i) {
    const GtidRun& r = history.runs[i];
    for (int64_t gno = r.first_gno; gno <= r.last_gno; ++gno, ++k) {
      if (i < first_run) continue;
      MysqlTransaction t;
      t.uuid = history.uuids[r.uuid_index];
      CANAL_RETURN_IF_ERROR(NormalTag(r.tag, &t.tag));
      t.gno = gno;
      t.timestamp = static_cast<uint32_t>(history.first_timestamp + k);
      t.ids = {IdOf(r.uuid_index, t.tag, gno)};
      out->push_back(std::move(t));
    }
  }
  return Status::OK();
}

Status HistorySet(const GtidHistory& history, size_t end_run, std::string* text) {
  CANAL_RETURN_IF_ERROR(CheckHistory(history));
  binlog::GtidSet set;
  for (size_t i = 0; i < end_run && i < history.runs.size(); ++i) {
    const GtidRun& r = history.runs[i];
    Sid sid;
    std::string tag;
    CANAL_RETURN_IF_ERROR(ParseUuid(history.uuids[r.uuid_index], &sid));
    CANAL_RETURN_IF_ERROR(NormalTag(r.tag, &tag));
    CANAL_RETURN_IF_ERROR(set.AddMysqlRange(sid, tag, r.first_gno, r.last_gno));
  }
  *text = set.ToString();
  return Status::OK();
}

Status HistoryBinlog(const GtidHistory& history, size_t first_run, MysqlBinlogSpec* spec) {
  CANAL_RETURN_IF_ERROR(HistorySet(history, first_run, &spec->previous_gtids));
  return HistoryTransactions(history, first_run, &spec->transactions);
}

}  // namespace canal::testing
