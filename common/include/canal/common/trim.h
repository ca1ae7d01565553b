// Trim: a string without the white space around it, for configuration values
// and lists (filters, GTID sets) that people write with blanks.
#pragma once

#include <cctype>
#include <string_view>

namespace canal {

// `s` without leading and trailing white space (std::isspace: blank, tab, CR, LF, VT, FF).
inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace canal
