// Small text helpers shared by the mq sources.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace canal::mq {

// Java's String#equalsIgnoreCase for ASCII names (schema, table, column).
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// "db.table at file:offset", how errors name a change.
inline std::string DescribeChange(std::string_view db, std::string_view table, std::string_view file, int64_t offset) {
  std::string s(db);
  s += '.';
  s += table;
  s += " at ";
  s += file;
  s += ':';
  s += std::to_string(offset);
  return s;
}

}  // namespace canal::mq
