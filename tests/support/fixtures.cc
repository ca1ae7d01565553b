#include "support/fixtures.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace canal::testing {

namespace {

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_directory(path, ec);
}

}  // namespace

std::string SharedDir() {
  std::string dir;
  const char* env = std::getenv("CANAL_SHARED_DIR");
  if (env != nullptr && env[0] != '\0') {
    dir = env;
  } else {
#ifdef CANAL_SHARED_DIR
    dir = CANAL_SHARED_DIR;
#endif
  }
  return IsDirectory(dir) ? dir : std::string();
}

std::string FixturePath(std::string_view rel) {
  std::string shared = SharedDir();
  if (shared.empty()) return {};
  std::string path = shared;
  path += "/fixtures/binlog/";
  path += rel;
  return path;
}

bool FixturesAvailable() {
  std::string shared = SharedDir();
  return !shared.empty() && IsDirectory(shared + "/fixtures/binlog");
}

Status ReadFileToString(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::IOError("cannot read " + path);
  *out = std::move(data);
  return Status::OK();
}

std::vector<std::string> EventBodiesOfType(const std::string& file, uint8_t type) {
  std::vector<std::string> bodies;
  size_t pos = 4;  // magic
  while (pos + 19 <= file.size()) {
    const auto* h = reinterpret_cast<const uint8_t*>(file.data() + pos);
    const uint32_t size = h[9] | h[10] << 8 | h[11] << 16 | uint32_t(h[12]) << 24;
    if (size < 23 || pos + size > file.size()) break;
    if (h[4] == type) bodies.push_back(file.substr(pos + 19, size - 19 - 4));
    pos += size;
  }
  return bodies;
}

}  // namespace canal::testing
