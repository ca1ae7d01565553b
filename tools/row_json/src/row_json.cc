#include "canal/tools/row_json.h"

#include <array>
#include <charconv>
#include <cstring>

namespace canal::tools {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  const size_t left = s.size() - i;
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(i + 1) > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;
    if (c == 0xF4 && b(i + 1) > 0x8F) return 0;
    return 4;
  }
  return 0;
}

// Bytes that cannot be copied as they are: controls, '"', '\\', non-ASCII.
constexpr std::array<bool, 256> MakeSpecial() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return t;
}
constexpr std::array<bool, 256> kSpecial = MakeSpecial();

void AppendInteger(int64_t v, std::string* out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

// True when any of the 8 bytes in `w` needs attention: a control byte (< 0x20),
// '"', '\\' or a byte >= 0x80. Classic SWAR zero-byte tests, so plain ASCII text
// is scanned a word at a time.
inline bool WordNeedsEscape(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  return (below_space | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\')) | (w & kHigh)) != 0;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0, run = 0;
  while (i < s.size()) {
    while (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (WordNeedsEscape(w)) break;
      i += 8;
    }
    if (i >= s.size()) break;
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if (!kSpecial[c]) {
      ++i;
      continue;
    }
    out->append(s.data() + run, i - run);
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        case '\b': out->append("\\b"); break;
        case '\f': out->append("\\f"); break;
        default:
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
      }
      ++i;
    } else {
      size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out->append("\\ufffd");
        ++i;
      } else {
        out->append(s.data() + i, n);
        i += n;
      }
    }
    run = i;
  }
  out->append(s.data() + run, i - run);
  out->push_back('"');
}

void AppendLineHead(std::string_view file, int64_t pos, std::string_view gtid, int64_t ts_seconds,
                    std::string* out) {
  out->append("{\"file\":");
  AppendJsonString(file, out);
  out->append(",\"pos\":");
  AppendInteger(pos, out);
  out->append(",\"gtid\":");
  AppendJsonString(gtid, out);
  out->append(",\"ts\":");
  AppendInteger(ts_seconds, out);
}

void AppendRowTarget(std::string_view db, std::string_view table, std::string_view type, std::string* out) {
  out->append(",\"db\":");
  AppendJsonString(db, out);
  out->append(",\"table\":");
  AppendJsonString(table, out);
  out->append(",\"type\":\"");
  out->append(type);
  out->push_back('"');
}

void AppendStatement(std::string_view db, bool ddl, std::string_view sql, std::string* out) {
  out->append(",\"db\":");
  AppendJsonString(db, out);
  out->append(ddl ? ",\"type\":\"DDL\",\"sql\":" : ",\"type\":\"QUERY\",\"sql\":");
  AppendJsonString(sql, out);
}

}  // namespace canal::tools
