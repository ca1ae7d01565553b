#include "canal/parser/binlog/gtid_set.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <tuple>

#include "canal/parser/binlog/byte_reader.h"
#include "canal/common/trim.h"
#include "canal/parser/binlog/gtid_events.h"

namespace canal::binlog {

namespace {

// MySQL's limit: transaction numbers are positive and below 2^63 - 1.
constexpr int64_t kGnoEnd = std::numeric_limits<int64_t>::max();

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "3E11FA47-71CA-11E1-9E33-C80AA9429562", or its 32 digits alone.
bool ParseUuid(std::string_view text, std::array<uint8_t, 16>* sid) {
  const bool dashed = text.size() == 36;
  if (!dashed && text.size() != 32) return false;
  size_t n = 0;
  for (size_t i = 0; i < text.size();) {
    if (dashed && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const int hi = HexValue(text[i]), lo = i + 1 < text.size() ? HexValue(text[i + 1]) : -1;
    if (hi < 0 || lo < 0 || n >= 16) return false;
    (*sid)[n++] = static_cast<uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return n == 16;
}

bool ParseNumber(std::string_view text, uint64_t* v) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t r = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (r > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    r = r * 10 + digit;
  }
  *v = r;
  return true;
}

// MySQL 8.4's tag: a letter or '_', then up to 31 letters, digits or '_'; case-insensitive.
bool ParseTag(std::string_view text, std::string* tag) {
  if (text.empty() || text.size() > 32) return false;
  if (!std::isalpha(static_cast<unsigned char>(text[0])) && text[0] != '_') return false;
  tag->clear();
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    tag->push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return true;
}

void MergeIntervals(std::vector<GtidInterval>* v) {
  std::sort(v->begin(), v->end(), [](const GtidInterval& a, const GtidInterval& b) { return a.start < b.start; });
  std::vector<GtidInterval> merged;
  for (const GtidInterval& iv : *v) {
    if (!merged.empty() && iv.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, iv.end);
    } else {
      merged.push_back(iv);
    }
  }
  *v = std::move(merged);
}

// a - b for sorted, merged interval lists.
std::vector<GtidInterval> SubtractIntervals(const std::vector<GtidInterval>& a, const std::vector<GtidInterval>& b) {
  std::vector<GtidInterval> out;
  size_t j = 0;
  for (GtidInterval iv : a) {
    while (j < b.size() && b[j].end <= iv.start) ++j;
    for (size_t k = j; k < b.size() && b[k].start < iv.end; ++k) {
      if (b[k].start > iv.start) out.push_back({iv.start, b[k].start});
      iv.start = std::max(iv.start, b[k].end);
      if (iv.start >= iv.end) break;
    }
    if (iv.start < iv.end) out.push_back(iv);
  }
  return out;
}

bool CoversIntervals(const std::vector<GtidInterval>& a, const std::vector<GtidInterval>& b) {
  return SubtractIntervals(b, a).empty();
}

Status BadElement(std::string_view part, std::string_view why) {
  return Status::InvalidArgument("bad GTID set element '" + std::string(part) + "': " + std::string(why));
}

// Calls parse(element) for each comma-separated element of `text`, trimmed;
// an empty one (a stray comma) is an error naming it.
template <typename Parse>
Status ForEachElement(std::string_view text, Parse parse) {
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view part = Trim(text.substr(0, comma));
    if (part.empty()) return BadElement(part, "empty element (stray comma)");
    CANAL_RETURN_IF_ERROR(parse(part));
    if (comma == std::string_view::npos) return Status::OK();
    text = text.substr(comma + 1);
  }
}

Status ParseMysql(std::string_view text, GtidSet* out) {
  GtidSet set;
  CANAL_RETURN_IF_ERROR(ForEachElement(text, [&](std::string_view part) {
    auto bad = [&](std::string_view why) { return BadElement(part, why); };
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos) return bad("expected uuid:interval[:interval...]");
    std::array<uint8_t, 16> sid{};
    if (!ParseUuid(Trim(part.substr(0, colon)), &sid)) return bad("not a UUID");
    std::string tag;
    bool any_interval = false;
    std::string_view fields = part.substr(colon + 1);
    while (true) {
      const size_t next = fields.find(':');
      const std::string_view f = Trim(fields.substr(0, next));
      if (!f.empty() && !std::isdigit(static_cast<unsigned char>(f[0]))) {
        if (!ParseTag(f, &tag)) return bad("'" + std::string(f) + "' is neither an interval nor a tag");
      } else {
        const size_t dash = f.find('-');
        uint64_t start = 0, end = 0;
        if (!ParseNumber(Trim(f.substr(0, dash)), &start) ||
            !ParseNumber(dash == std::string_view::npos ? Trim(f) : Trim(f.substr(dash + 1)), &end)) {
          return bad("interval '" + std::string(f) + "' is not N or N-M");
        }
        if (start == 0 || end < start || end >= static_cast<uint64_t>(kGnoEnd)) {
          return bad("interval '" + std::string(f) + "' must satisfy 1 <= N <= M < 2^63-1");
        }
        CANAL_RETURN_IF_ERROR(set.AddMysqlRange(sid, tag, static_cast<int64_t>(start), static_cast<int64_t>(end)));
        any_interval = true;
      }
      if (next == std::string_view::npos) break;
      fields = fields.substr(next + 1);
    }
    return any_interval ? Status::OK() : bad("a tag without intervals");
  }));
  *out = std::move(set);
  return Status::OK();
}

Status ParseMariadb(std::string_view text, GtidSet* out) {
  GtidSet set;
  std::vector<uint32_t> seen;
  CANAL_RETURN_IF_ERROR(ForEachElement(text, [&](std::string_view part) {
    auto bad = [&](std::string_view why) { return BadElement(part, why); };
    const size_t d1 = part.find('-');
    const size_t d2 = d1 == std::string_view::npos ? d1 : part.find('-', d1 + 1);
    uint64_t domain = 0, server = 0, seq = 0;
    if (d2 == std::string_view::npos || !ParseNumber(part.substr(0, d1), &domain) ||
        !ParseNumber(part.substr(d1 + 1, d2 - d1 - 1), &server) || !ParseNumber(part.substr(d2 + 1), &seq)) {
      return bad("expected domain-server-sequence (MariaDB) or uuid:interval (MySQL)");
    }
    if (domain > UINT32_MAX || server > UINT32_MAX) return bad("domain and server ids are 32-bit");
    if (std::find(seen.begin(), seen.end(), static_cast<uint32_t>(domain)) != seen.end()) {
      return bad("a second GTID of domain " + std::to_string(domain) + " (a position holds one per domain)");
    }
    seen.push_back(static_cast<uint32_t>(domain));
    return set.AddMariadb(static_cast<uint32_t>(domain), static_cast<uint32_t>(server), seq);
  }));
  *out = std::move(set);
  return Status::OK();
}

}  // namespace

Status GtidSet::Parse(std::string_view text, GtidSet* out) {
  text = Trim(text);
  if (text.empty()) {
    *out = GtidSet();
    return Status::OK();
  }
  return text.find(':') != std::string_view::npos ? ParseMysql(text, out) : ParseMariadb(text, out);
}

Status GtidSet::DecodeFromDump(std::string_view bytes, GtidSet* out) {
  ByteReader r(bytes);
  uint64_t n = 0;
  if (!r.ReadLE(&n)) return Status::Truncated("GTID set: source count truncated");
  // MySQL 8.4's tagged form has the format byte 1 at both ends of the count word.
  const bool tagged = (n >> 56) == 1 && (n & 0xFF) == 1;
  if (tagged) n = (n >> 8) & ((uint64_t{1} << 48) - 1);
  if (n > r.remaining() / (16 + 8 + (tagged ? 1 : 0))) {
    return Status::Corruption("GTID set: " + std::to_string(n) + " sources cannot fit");
  }
  GtidSet set;
  for (uint64_t i = 0; i < n; ++i) {
    Source src;
    std::string_view sid;
    uint64_t count = 0;
    if (!r.ReadBytes(16, &sid)) return Status::Truncated("GTID set: source truncated");
    std::copy(sid.begin(), sid.end(), src.sid.begin());
    if (tagged) {
      // The tag's length is a varlen; a tag has at most 32 characters, so one byte (len << 1).
      std::string_view len_byte, raw;
      if (!r.ReadBytes(1, &len_byte)) return Status::Truncated("GTID set: tag length truncated");
      const uint8_t len = static_cast<uint8_t>(len_byte[0]);
      if ((len & 1) != 0 || (len >> 1) > 32) {
        return Status::Corruption("GTID set: tag length byte " + std::to_string(len) + " is not a length of 0..32");
      }
      if (!r.ReadBytes(len >> 1, &raw)) return Status::Truncated("GTID set: tag truncated");
      if (!raw.empty() && !ParseTag(raw, &src.tag)) return Status::Corruption("GTID set: tag has invalid characters");
    }
    if (!r.ReadLE(&count)) return Status::Truncated("GTID set: source truncated");
    if (count > r.remaining() / 16) return Status::Corruption("GTID set: interval count cannot fit");
    for (uint64_t k = 0; k < count; ++k) {
      int64_t start = 0, end = 0;
      if (!r.ReadLE(&start) || !r.ReadLE(&end)) return Status::Truncated("GTID set: interval truncated");
      if (start < 1 || end <= start || end > kGnoEnd) {
        return Status::Corruption("GTID set: interval [" + std::to_string(start) + ", " + std::to_string(end) +
                                  ") is not 1 <= start < end <= 2^63-1");
      }
      src.intervals.push_back({start, end});
    }
    set.flavor_ = Flavor::kMysql;
    set.sources_.push_back(std::move(src));
  }
  if (!r.empty()) return Status::Corruption("GTID set: " + std::to_string(r.remaining()) + " byte(s) left over");
  set.Normalize();
  *out = std::move(set);
  return Status::OK();
}

GtidSet GtidSet::FromPreviousGtids(const PreviousGtidsEvent& event) {
  GtidSet set;
  for (const GtidSetEntry& e : event.entries) {
    set.flavor_ = Flavor::kMysql;
    set.sources_.push_back({e.sid, e.tag, e.intervals});
  }
  set.Normalize();
  return set;
}

void GtidSet::Normalize() {
  // Sources keep the order their uuids were first seen in (MySQL prints a
  // set as it was given, and a dump accepts any order); one uuid's sources sit
  // together, untagged first, then by tag.
  std::vector<std::array<uint8_t, 16>> order;
  for (const Source& s : sources_) {
    if (std::find(order.begin(), order.end(), s.sid) == order.end()) order.push_back(s.sid);
  }
  auto rank = [&order](const Source& s) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), s.sid) - order.begin());
  };
  std::stable_sort(sources_.begin(), sources_.end(), [&](const Source& a, const Source& b) {
    const size_t ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a.tag < b.tag;
  });
  std::vector<Source> merged;
  for (Source& s : sources_) {
    if (!merged.empty() && merged.back().sid == s.sid && merged.back().tag == s.tag) {
      merged.back().intervals.insert(merged.back().intervals.end(), s.intervals.begin(), s.intervals.end());
    } else {
      merged.push_back(std::move(s));
    }
  }
  for (Source& s : merged) MergeIntervals(&s.intervals);
  std::erase_if(merged, [](const Source& s) { return s.intervals.empty(); });
  sources_ = std::move(merged);
  std::sort(domains_.begin(), domains_.end(),
            [](const DomainGtid& a, const DomainGtid& b) { return a.domain_id < b.domain_id; });
  if (sources_.empty() && domains_.empty()) flavor_ = Flavor::kEmpty;
}

namespace {

// Decimal digits appended in place (the MySQL form's intervals; MariaDB's domains go through
// MariaGtidEvent::WriteText): AppendTo runs once per transaction delivered, so no temporaries.
void AppendNumber(std::string* s, uint64_t v) {
  char buf[20];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s->append(buf, r.ptr);
}

}  // namespace

std::string GtidSet::ToString() const {
  std::string s;
  AppendTo(&s);
  return s;
}

void GtidSet::AppendTo(std::string* out) const {
  std::string& s = *out;
  const size_t start = s.size();
  if (flavor_ == Flavor::kMariadb) {
    s.reserve(start + domains_.size() * 24);
    for (const DomainGtid& d : domains_) {
      if (s.size() != start) s += ',';
      char text[MariaGtidEvent::kTextMax];
      s.append(text, MariaGtidEvent::WriteText(d.domain_id, d.server_id, d.seq_no, text));
    }
    return;
  }
  // MySQL's form: one uuid once, its untagged intervals first, each tag after.
  for (size_t i = 0; i < sources_.size(); ++i) {
    const Source& src = sources_[i];
    if (i == 0 || sources_[i - 1].sid != src.sid) {
      if (i > 0) s += ',';
      s += FormatUuid(src.sid);
    }
    if (!src.tag.empty()) {
      s += ':';
      s += src.tag;
    }
    for (const GtidInterval& iv : src.intervals) {
      s += ':';
      AppendNumber(&s, static_cast<uint64_t>(iv.start));
      if (iv.end - 1 != iv.start) {
        s += '-';
        AppendNumber(&s, static_cast<uint64_t>(iv.end - 1));
      }
    }
  }
}

Status GtidSet::EncodeForDump(std::string* out) const {
  if (flavor_ == Flavor::kMariadb) {
    return Status::InvalidArgument("a MariaDB GTID position has no COM_BINLOG_DUMP_GTID form");
  }
  const bool tagged = std::any_of(sources_.begin(), sources_.end(), [](const Source& s) { return !s.tag.empty(); });
  auto put = [out](uint64_t v) {
    for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
  };
  out->clear();
  // MySQL 8.4's tagged form (only when a tag needs it, so older servers get the form they
  // know): the format byte 1 at both ends of the count word, the count in the bytes between.
  put(tagged ? (uint64_t{1} << 56) | (uint64_t{sources_.size()} << 8) | 1 : sources_.size());
  for (const Source& src : sources_) {
    out->append(reinterpret_cast<const char*>(src.sid.data()), src.sid.size());
    if (tagged) {
      // The tag's length as a one-byte varlen (tags have at most 32 characters), then the tag.
      out->push_back(static_cast<char>(src.tag.size() << 1));
      out->append(src.tag);
    }
    put(src.intervals.size());
    for (const GtidInterval& iv : src.intervals) {
      put(static_cast<uint64_t>(iv.start));
      put(static_cast<uint64_t>(iv.end));
    }
  }
  return Status::OK();
}

uint64_t GtidSet::TransactionCount() const {
  uint64_t n = 0;
  for (const Source& src : sources_) {
    for (const GtidInterval& iv : src.intervals) n += static_cast<uint64_t>(iv.end - iv.start);
  }
  return n;
}

GtidSet::Source* GtidSet::FindSource(const std::array<uint8_t, 16>& sid, std::string_view tag) {
  for (Source& s : sources_) {
    if (s.sid == sid && s.tag == tag) return &s;
  }
  return nullptr;
}

const GtidSet::Source* GtidSet::FindSource(const std::array<uint8_t, 16>& sid, std::string_view tag) const {
  for (const Source& s : sources_) {
    if (s.sid == sid && s.tag == tag) return &s;
  }
  return nullptr;
}

Status GtidSet::AddMysql(const std::array<uint8_t, 16>& sid, std::string_view tag, int64_t gno) {
  if (flavor_ == Flavor::kMariadb) return Status::InvalidArgument("a MySQL GTID added to a MariaDB GTID position");
  if (gno < 1 || gno >= kGnoEnd) return Status::InvalidArgument("transaction number " + std::to_string(gno) +
                                                               " outside [1, 2^63-1)");
  flavor_ = Flavor::kMysql;
  Source* src = FindSource(sid, tag);
  if (src == nullptr) {
    sources_.push_back({sid, std::string(tag), {}});
    src = &sources_.back();
    src->intervals.push_back({gno, gno + 1});
    Normalize();
    return Status::OK();
  }
  // The common case, the next transaction of the source: extend the last interval.
  if (!src->intervals.empty() && src->intervals.back().end == gno) {
    ++src->intervals.back().end;
    return Status::OK();
  }
  src->intervals.push_back({gno, gno + 1});
  MergeIntervals(&src->intervals);
  return Status::OK();
}

Status GtidSet::AddMysqlRange(const std::array<uint8_t, 16>& sid, std::string_view tag, int64_t first,
                              int64_t last) {
  if (first == last) return AddMysql(sid, tag, first);
  if (flavor_ == Flavor::kMariadb) return Status::InvalidArgument("MySQL GTIDs added to a MariaDB GTID position");
  if (first < 1 || last < first || last >= kGnoEnd) {
    return Status::InvalidArgument("transactions " + std::to_string(first) + "-" + std::to_string(last) +
                                   " outside [1, 2^63-1)");
  }
  flavor_ = Flavor::kMysql;
  sources_.push_back({sid, std::string(tag), {{first, last + 1}}});
  Normalize();
  return Status::OK();
}

Status GtidSet::AddMariadb(uint32_t domain_id, uint32_t server_id, uint64_t seq_no) {
  if (flavor_ == Flavor::kMysql) return Status::InvalidArgument("a MariaDB GTID added to a MySQL GTID set");
  flavor_ = Flavor::kMariadb;
  for (DomainGtid& d : domains_) {
    if (d.domain_id == domain_id) {
      if (seq_no >= d.seq_no) d = {domain_id, server_id, seq_no};
      return Status::OK();
    }
  }
  domains_.push_back({domain_id, server_id, seq_no});
  Normalize();
  return Status::OK();
}

Status GtidSet::Add(const GtidSet& other) {
  if (other.empty()) return Status::OK();
  if (!empty() && flavor_ != other.flavor_) {
    return Status::InvalidArgument("GTID sets of MySQL and MariaDB cannot be added: " + ToString() + " and " +
                                   other.ToString());
  }
  flavor_ = other.flavor_;
  if (flavor_ == Flavor::kMariadb) {
    for (const DomainGtid& d : other.domains_) CANAL_RETURN_IF_ERROR(AddMariadb(d.domain_id, d.server_id, d.seq_no));
    return Status::OK();
  }
  sources_.insert(sources_.end(), other.sources_.begin(), other.sources_.end());
  Normalize();
  return Status::OK();
}

bool GtidSet::Contains(const GtidSet& other) const {
  if (other.empty()) return true;
  if (flavor_ != other.flavor_) return false;
  if (flavor_ == Flavor::kMariadb) {
    for (const DomainGtid& d : other.domains_) {
      auto it = std::find_if(domains_.begin(), domains_.end(),
                             [&](const DomainGtid& x) { return x.domain_id == d.domain_id; });
      if (it == domains_.end() || it->seq_no < d.seq_no) return false;
    }
    return true;
  }
  for (const Source& s : other.sources_) {
    const Source* mine = FindSource(s.sid, s.tag);
    if (mine == nullptr || !CoversIntervals(mine->intervals, s.intervals)) return false;
  }
  return true;
}

Status GtidSet::Subtract(const GtidSet& other, GtidSet* out) const {
  GtidSet result;
  if (other.empty() || empty()) {
    *out = *this;
    return Status::OK();
  }
  if (flavor_ != other.flavor_) {
    return Status::InvalidArgument("GTID sets of MySQL and MariaDB cannot be compared: " + ToString() + " and " +
                                   other.ToString());
  }
  if (flavor_ == Flavor::kMariadb) {
    for (const DomainGtid& d : domains_) {
      auto it = std::find_if(other.domains_.begin(), other.domains_.end(),
                             [&](const DomainGtid& x) { return x.domain_id == d.domain_id; });
      if (it == other.domains_.end() || it->seq_no < d.seq_no) {
        CANAL_RETURN_IF_ERROR(result.AddMariadb(d.domain_id, d.server_id, d.seq_no));
      }
    }
  } else {
    for (const Source& s : sources_) {
      const Source* theirs = other.FindSource(s.sid, s.tag);
      std::vector<GtidInterval> left = theirs == nullptr ? s.intervals : SubtractIntervals(s.intervals, theirs->intervals);
      if (left.empty()) continue;
      result.flavor_ = Flavor::kMysql;
      result.sources_.push_back({s.sid, s.tag, std::move(left)});
    }
  }
  *out = std::move(result);
  return Status::OK();
}

bool GtidSet::operator==(const GtidSet& other) const {
  // The same transactions, whatever order the sources were given in.
  return flavor_ == other.flavor_ && Contains(other) && other.Contains(*this);
}

}  // namespace canal::binlog
