// The replay primary's GTID sets: COM_BINLOG_DUMP_GTID's binary form (MySQL's
// untagged one and 8.4's tagged one), the text of gtid_executed / gtid_purged,
// and the GTID_TAGGED event's uuid, tag and gno (mysql::serialization).
#include <algorithm>
#include <bit>
#include <limits>

#include "support/replay_primary/replay_internal.h"

namespace canal::testing::replay {
namespace {

constexpr uint64_t kGnoEnd = std::numeric_limits<int64_t>::max();  // one past the largest gno
constexpr size_t kTagMax = 32;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Tags: 1..32 of [A-Za-z0-9_], no digit first; MySQL keeps them lower-case.
bool NormalTag(std::string_view raw, std::string* tag) {
  tag->clear();
  if (raw.empty() || raw.size() > kTagMax) return false;
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
    tag->push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return true;
}

// The serialization library's varlen integer: the first byte's trailing one
// bits plus one give the byte count (1..9); the value sits above them and goes
// on little-endian in the next bytes (with 8 or 9 bytes, only there).
bool ReadVarlen(std::string_view d, size_t* at, uint64_t* v) {
  if (*at >= d.size()) return false;
  const uint8_t first = static_cast<uint8_t>(d[*at]);
  const size_t n = static_cast<size_t>(std::countr_one(first)) + 1;
  if (n > d.size() - *at) return false;
  const uint64_t rest = n > 1 ? GetInt(d, *at + 1, static_cast<int>(n - 1)) : 0;
  *v = n == 1 ? first >> 1 : n >= 8 ? rest : (uint64_t{first} >> n) | (rest << (8 - n));
  *at += n;
  return true;
}

std::string_view TrimSpace(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool ParseNumber(std::string_view s, uint64_t* v) {
  *v = 0;
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9' || *v > (kGnoEnd - 9) / 10) return false;
    *v = *v * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

}  // namespace

bool ParseUuid(std::string_view text, std::string* sid16) {
  std::string hex;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash_place = text.size() == 36 && (i == 8 || i == 13 || i == 18 || i == 23);
    if (dash_place != (text[i] == '-')) return false;
    if (!dash_place) hex.push_back(text[i]);
  }
  if (hex.size() != 32) return false;
  sid16->clear();
  for (size_t i = 0; i < 16; ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    sid16->push_back(static_cast<char>(hi << 4 | lo));
  }
  return true;
}

std::string UuidText(std::string_view sid16) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < sid16.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[static_cast<uint8_t>(sid16[i]) >> 4]);
    s.push_back(kHex[static_cast<uint8_t>(sid16[i]) & 0xF]);
  }
  return s;
}

bool GtidSet::Decode(std::string_view d, std::string* error) {
  sources_.clear();
  const auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    sources_.clear();
    return false;
  };
  if (d.empty()) return true;
  if (d.size() < 8) return fail("GTID set of " + std::to_string(d.size()) + " bytes has no source count");
  const uint64_t word = GetInt(d, 0, 8);
  const uint64_t format = word >> 56;
  bool tagged = false;
  uint64_t count = word;
  if (format == 1 && (word & 0xFF) == 1) {
    tagged = true;
    count = (word >> 8) & ((uint64_t{1} << 48) - 1);
  } else if (format != 0) {
    return fail("unknown GTID set format " + std::to_string(format));
  }
  size_t at = 8;
  const size_t min_source = 16 + (tagged ? 1 : 0) + 8;
  if (count > (d.size() - at) / min_source) {
    return fail("source count " + std::to_string(count) + " exceeds the set's " + std::to_string(d.size()) + " bytes");
  }
  for (uint64_t i = 0; i < count; ++i) {
    if (d.size() - at < 16) return fail("source " + std::to_string(i) + ": uuid truncated");
    std::string sid(d.substr(at, 16));
    at += 16;
    std::string tag;
    if (tagged) {
      uint64_t len = 0;
      if (!ReadVarlen(d, &at, &len)) return fail("source " + std::to_string(i) + ": tag length truncated");
      if (len > kTagMax) {
        return fail("source " + std::to_string(i) + ": tag length " + std::to_string(len) + " over 32");
      }
      if (len > d.size() - at) return fail("source " + std::to_string(i) + ": tag truncated");
      if (len > 0 && !NormalTag(d.substr(at, len), &tag)) {
        return fail("source " + std::to_string(i) + ": tag has invalid characters");
      }
      at += len;
    }
    if (d.size() - at < 8) return fail("source " + std::to_string(i) + ": interval count truncated");
    const uint64_t n = GetInt(d, at, 8);
    at += 8;
    if (n > (d.size() - at) / 16) {
      return fail("source " + std::to_string(i) + ": interval count " + std::to_string(n) + " exceeds the " +
                  std::to_string(d.size() - at) + " bytes left");
    }
    Intervals& ivs = sources_[{sid, tag}];
    for (uint64_t k = 0; k < n; ++k, at += 16) {
      const uint64_t start = GetInt(d, at, 8), end = GetInt(d, at + 8, 8);
      if (start < 1 || end <= start || end > kGnoEnd) {
        return fail("interval [" + std::to_string(start) + ", " + std::to_string(end) + ") is not a GNO range");
      }
      ivs.emplace_back(start, end);
    }
  }
  if (at != d.size()) return fail(std::to_string(d.size() - at) + " bytes after the GTID set");
  Normalize();
  return true;
}

bool GtidSet::Parse(std::string_view text, GtidSet* out, std::string* error) {
  GtidSet set;
  const auto fail = [&](std::string_view element, const std::string& why) {
    if (error != nullptr) *error = "bad GTID set element '" + std::string(element) + "': " + why;
    return false;
  };
  if (TrimSpace(text).empty()) {
    *out = GtidSet();
    return true;
  }
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view element = TrimSpace(text.substr(0, comma));
    std::string_view rest = element;
    const size_t colon = rest.find(':');
    std::string sid;
    if (!ParseUuid(TrimSpace(rest.substr(0, colon)), &sid)) return fail(element, "not a server UUID");
    if (colon == std::string_view::npos) return fail(element, "no transactions");
    rest.remove_prefix(colon + 1);
    std::string tag;
    while (true) {
      const size_t next = rest.find(':');
      const std::string_view part = TrimSpace(rest.substr(0, next));
      if (part.empty()) return fail(element, "empty part");
      if (part[0] >= '0' && part[0] <= '9') {
        const size_t dash = part.find('-');
        uint64_t first = 0, last = 0;
        if (!ParseNumber(part.substr(0, dash), &first) ||
            !ParseNumber(dash == std::string_view::npos ? part : part.substr(dash + 1), &last) || first < 1 ||
            last < first || last >= kGnoEnd) {
          return fail(element, "'" + std::string(part) + "' is not a GNO interval");
        }
        set.sources_[{sid, tag}].emplace_back(first, last + 1);
      } else if (!NormalTag(part, &tag)) {
        return fail(element, "'" + std::string(part) + "' is neither an interval nor a tag");
      }
      if (next == std::string_view::npos) break;
      rest.remove_prefix(next + 1);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  set.Normalize();
  *out = std::move(set);
  return true;
}

void GtidSet::Normalize() {
  for (auto it = sources_.begin(); it != sources_.end();) {
    Intervals& ivs = it->second;
    std::sort(ivs.begin(), ivs.end());
    Intervals merged;
    for (const auto& iv : ivs) {
      if (!merged.empty() && iv.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, iv.second);
      } else {
        merged.push_back(iv);
      }
    }
    ivs = std::move(merged);
    it = ivs.empty() ? sources_.erase(it) : std::next(it);
  }
}

bool GtidSet::Contains(std::string_view sid16, std::string_view tag, uint64_t gno) const {
  const auto it = sources_.find({std::string(sid16), std::string(tag)});
  if (it == sources_.end()) return false;
  const Intervals& ivs = it->second;
  // The last interval starting at or before gno.
  auto after = std::upper_bound(ivs.begin(), ivs.end(), std::make_pair(gno, kGnoEnd + 1));
  return after != ivs.begin() && gno < std::prev(after)->second;
}

GtidSet GtidSet::Minus(const GtidSet& other) const {
  GtidSet out;
  for (const auto& [key, ivs] : sources_) {
    const auto theirs = other.sources_.find(key);
    if (theirs == other.sources_.end()) {
      out.sources_[key] = ivs;
      continue;
    }
    Intervals left;
    size_t j = 0;
    const Intervals& sub = theirs->second;
    for (auto [start, end] : ivs) {
      while (j < sub.size() && sub[j].second <= start) ++j;
      for (size_t k = j; k < sub.size() && sub[k].first < end; ++k) {
        if (sub[k].first > start) left.emplace_back(start, sub[k].first);
        start = std::max(start, sub[k].second);
      }
      if (start < end) left.emplace_back(start, end);
    }
    if (!left.empty()) out.sources_[key] = std::move(left);
  }
  return out;
}

GtidSet GtidSet::Only(std::string_view sid16, std::string_view tag) const {
  GtidSet out;
  const auto it = sources_.find({std::string(sid16), std::string(tag)});
  if (it != sources_.end()) out.sources_.insert(*it);
  return out;
}

std::string GtidSet::ToString() const {
  std::string s;
  std::string_view sid;
  for (const auto& [key, ivs] : sources_) {
    if (key.first != sid) {
      if (!s.empty()) s += ',';
      s += UuidText(key.first);
      sid = key.first;
    }
    if (!key.second.empty()) s += ':' + key.second;
    for (const auto& [start, end] : ivs) {
      s += ':' + std::to_string(start);
      if (end - 1 > start) s += '-' + std::to_string(end - 1);
    }
  }
  return s;
}

bool ReadTaggedGtid(std::string_view body, std::string* sid16, std::string* tag, uint64_t* gno) {
  // Header: format version (1), the message's size (header included), the
  // last non-ignorable field id. Then fields as (id, value) in id order, absent
  // ones skipped: 0 flags, 1 sid (16 integers), 2 gno (sign in the low bit),
  // 3 tag (length, characters), more that are not needed here.
  size_t at = 0;
  uint64_t version = 0, size = 0, last_needed = 0;
  if (!ReadVarlen(body, &at, &version) || version != 1) return false;
  if (!ReadVarlen(body, &at, &size) || size > body.size() || size < at) return false;
  if (!ReadVarlen(body, &at, &last_needed)) return false;
  const std::string_view msg = body.substr(0, size);
  bool have_sid = false, have_gno = false;
  tag->clear();
  for (uint64_t field = 0; field <= 3 && at < msg.size(); ++field) {
    size_t peek = at;
    uint64_t id = 0, v = 0;
    if (!ReadVarlen(msg, &peek, &id)) return false;
    if (id != field) continue;
    at = peek;
    if (field == 0) {
      if (!ReadVarlen(msg, &at, &v)) return false;
    } else if (field == 1) {
      sid16->clear();
      for (int i = 0; i < 16; ++i) {
        if (!ReadVarlen(msg, &at, &v) || v > 0xFF) return false;
        sid16->push_back(static_cast<char>(v));
      }
      have_sid = true;
    } else if (field == 2) {
      if (!ReadVarlen(msg, &at, &v)) return false;
      const int64_t g = static_cast<int64_t>((v >> 1) ^ (uint64_t{0} - (v & 1)));
      if (g < 1) return false;
      *gno = static_cast<uint64_t>(g);
      have_gno = true;
    } else {
      if (!ReadVarlen(msg, &at, &v) || v > kTagMax || v > msg.size() - at) return false;
      if (v > 0 && !NormalTag(msg.substr(at, v), tag)) return false;
      at += v;
    }
  }
  return have_sid && have_gno;
}

}  // namespace canal::testing::replay
