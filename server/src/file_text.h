// A small file's whole text, bounded: the configuration files the server
// reads while it runs (instance.properties, the admin token).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace canal::server {

// The text of `path`; nullopt when it cannot be opened or read, or holds
// more than `max_bytes` (so a huge or endless file is never read whole).
std::optional<std::string> ReadFileText(const std::string& path, size_t max_bytes);

}  // namespace canal::server
