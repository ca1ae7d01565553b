// Small string_view scanners shared by the readers of text formats in this
// folder (mariadb-binlog -vv output, the fixtures' README, expected files).
#pragma once

#include <cstdint>
#include <string_view>

namespace canal::testing {

inline bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
inline bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// Decimal digits only, at most 19 of them (so no overflow); false otherwise.
inline bool ParseUInt(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    r = r * 10 + static_cast<uint64_t>(c - '0');
  }
  *v = r;
  return true;
}

}  // namespace canal::testing
