// ASCII case-insensitive comparison, for SQL keywords, setting values and MySQL identifiers
// (whose case folding the server does in the identifier's charset; the ASCII letters are all that
// differ between the spellings a server hands back). Bytes >= 0x80 compare as they are.
#pragma once

#include <string_view>

namespace canal {

inline char AsciiToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

}  // namespace canal
