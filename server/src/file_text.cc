#include "file_text.h"

#include <fstream>

namespace canal::server {

std::optional<std::string> ReadFileText(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buf[64 * 1024];
  while (in) {
    in.read(buf, sizeof buf);
    const size_t got = static_cast<size_t>(in.gcount());
    if (text.size() + got > max_bytes) return std::nullopt;
    text.append(buf, got);
  }
  if (in.bad()) return std::nullopt;
  return text;
}

}  // namespace canal::server
