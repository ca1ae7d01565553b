#include "canal/server/client_text.h"

namespace canal::server {

std::string ClientText(std::string_view text, size_t max, bool escape_quotes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string_view shown = text.substr(0, max);
  std::string out;
  out.reserve(shown.size() + 16);
  for (const char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\\': out += "\\\\"; continue;
      default: break;
    }
    if (c == '"' && escape_quotes) {
      out += "\\\"";
      continue;
    }
    // Bytes past ASCII too: a log line never carries invalid UTF-8 or
    // terminal escapes from a client.
    if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  if (text.size() > max) out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace canal::server
