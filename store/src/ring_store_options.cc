#include "canal/store/ring_store_options.h"

#include <charconv>
#include <string>

#include "canal/common/ascii_case.h"

namespace canal::store {
namespace {

constexpr std::string_view kSizeKey = "canal.instance.memory.buffer.size";
constexpr std::string_view kMemunitKey = "canal.instance.memory.buffer.memunit";
constexpr std::string_view kModeKey = "canal.instance.memory.batch.mode";
constexpr std::string_view kDdlIsolationKey = "canal.instance.get.ddl.isolation";

// Enough for any real deployment, small enough that a typo (an extra digit
// or two) cannot ask for gigabytes of slots.
constexpr uint32_t kMaxBufferSize = uint32_t{1} << 24;

Status BadValue(std::string_view key, std::string_view value, std::string_view why) {
  std::string msg(key);
  msg += " = '";
  msg += value;
  msg += "': ";
  msg += why;
  return Status::InvalidArgument(msg);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

Status ParseUint32(std::string_view key, std::string_view value, uint32_t* out) {
  std::string_view v = Trim(value);
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
    return BadValue(key, value, "not a non-negative 32-bit integer");
  }
  *out = n;
  return Status::OK();
}

}  // namespace

std::string_view BatchModeName(BatchMode mode) {
  return mode == BatchMode::kMemSize ? "MEMSIZE" : "ITEMSIZE";
}

Status RingStoreOptions::Validate() const {
  const std::string size = std::to_string(buffer_size);
  if (buffer_size == 0 || (buffer_size & (buffer_size - 1)) != 0) {
    return BadValue(kSizeKey, size, "must be a power of two");
  }
  if (buffer_size > kMaxBufferSize) {
    return BadValue(kSizeKey, size, "must be at most " + std::to_string(kMaxBufferSize));
  }
  if (buffer_memunit == 0) {
    return BadValue(kMemunitKey, std::to_string(buffer_memunit), "must be at least 1");
  }
  return Status::OK();
}

Status RingStoreOptions::SetFromProperty(std::string_view key, std::string_view value) {
  const std::string_view v = Trim(value);
  if (key == kSizeKey) {
    uint32_t n = 0;
    CANAL_RETURN_IF_ERROR(ParseUint32(key, value, &n));
    RingStoreOptions probe = *this;
    probe.buffer_size = n;
    CANAL_RETURN_IF_ERROR(probe.Validate());
    buffer_size = n;
    return Status::OK();
  }
  if (key == kMemunitKey) {
    uint32_t n = 0;
    CANAL_RETURN_IF_ERROR(ParseUint32(key, value, &n));
    RingStoreOptions probe = *this;
    probe.buffer_memunit = n;
    CANAL_RETURN_IF_ERROR(probe.Validate());
    buffer_memunit = n;
    return Status::OK();
  }
  if (key == kModeKey) {
    if (AsciiEqualsIgnoreCase(v, "MEMSIZE")) {
      batch_mode = BatchMode::kMemSize;
    } else if (AsciiEqualsIgnoreCase(v, "ITEMSIZE")) {
      batch_mode = BatchMode::kItemSize;
    } else {
      return BadValue(key, value, "must be MEMSIZE or ITEMSIZE");
    }
    return Status::OK();
  }
  if (key == kDdlIsolationKey) {
    if (AsciiEqualsIgnoreCase(v, "true")) {
      ddl_isolation = true;
    } else if (AsciiEqualsIgnoreCase(v, "false")) {
      ddl_isolation = false;
    } else {
      return BadValue(key, value, "must be true or false");
    }
    return Status::OK();
  }
  return Status::NotFound(std::string(key) + ": not a store setting");
}

}  // namespace canal::store
