// A minimal MySQL binary JSON encoder for building test inputs by hand.
// Values include their type byte; containers lay out key and value entries
// the way the server does (small or large offsets, inlined scalars).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace canal::testing::jb {


inline std::string Le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}
inline std::string VarLen(uint64_t n) {
  std::string s;
  do {
    uint8_t b = n & 0x7f;
    n >>= 7;
    if (n) b |= 0x80;
    s.push_back(static_cast<char>(b));
  } while (n);
  return s;
}
inline std::string Null() { return std::string("\x04\x00", 2); }
inline std::string True() { return std::string("\x04\x01", 2); }
inline std::string False() { return std::string("\x04\x02", 2); }
inline std::string Int16(int16_t v) { return "\x05" + Le(static_cast<uint16_t>(v), 2); }
inline std::string Uint16(uint16_t v) { return "\x06" + Le(v, 2); }
inline std::string Int32(int32_t v) { return "\x07" + Le(static_cast<uint32_t>(v), 4); }
inline std::string Uint32(uint32_t v) { return "\x08" + Le(v, 4); }
inline std::string Int64(int64_t v) { return "\x09" + Le(static_cast<uint64_t>(v), 8); }
inline std::string Uint64(uint64_t v) { return "\x0a" + Le(v, 8); }
inline std::string Double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return "\x0b" + Le(bits, 8);
}
inline std::string Str(std::string_view s) { return "\x0c" + VarLen(s.size()) + std::string(s); }
inline std::string Opaque(uint8_t field_type, std::string_view data) {
  return "\x0f" + std::string(1, static_cast<char>(field_type)) + VarLen(data.size()) +
         std::string(data);
}

inline std::string Container(bool object, bool large, const std::vector<std::string>& keys,
                      const std::vector<std::string>& values) {
  const size_t w = large ? 4 : 2;
  const size_t n = values.size();
  const size_t header = 2 * w + n * (object ? w + 2 : 0) + n * (1 + w);
  std::string key_entries, value_entries, data;
  size_t offset = header;
  for (const std::string& k : keys) {
    key_entries += Le(offset, static_cast<int>(w)) + Le(k.size(), 2);
    data += k;
    offset += k.size();
  }
  for (const std::string& v : values) {
    const auto type = static_cast<uint8_t>(v[0]);
    const bool inlined = type == 4 || type == 5 || type == 6 || (large && (type == 7 || type == 8));
    value_entries.push_back(static_cast<char>(type));
    if (inlined) {
      std::string slot = v.substr(1);
      slot.resize(w, '\0');
      value_entries += slot;
    } else {
      value_entries += Le(offset, static_cast<int>(w));
      data += v.substr(1);
      offset += v.size() - 1;
    }
  }
  const char type = static_cast<char>((object ? 0 : 2) + (large ? 1 : 0));
  return std::string(1, type) + Le(n, static_cast<int>(w)) + Le(header + data.size(), static_cast<int>(w)) +
         key_entries + value_entries + data;
}
inline std::string Array(const std::vector<std::string>& values, bool large = false) {
  return Container(false, large, {}, values);
}
inline std::string Object(const std::vector<std::pair<std::string, std::string>>& members,
                   bool large = false) {
  std::vector<std::string> keys, values;
  for (const auto& [k, v] : members) {
    keys.push_back(k);
    values.push_back(v);
  }
  return Container(true, large, keys, values);
}

}  // namespace canal::testing::jb
