#include "wire.h"

namespace canal::mq::wire {

namespace {

bool ReadVarint(std::string_view msg, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= msg.size()) return false;
    const uint8_t b = static_cast<uint8_t>(msg[(*pos)++]);
    *v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

Status NextField(std::string_view msg, size_t* pos, Field* out) {
  const size_t start = *pos;
  uint64_t tag = 0;
  if (!ReadVarint(msg, pos, &tag) || tag > UINT32_MAX || (tag >> 3) == 0) {
    return Status::Corruption("protobuf: bad field tag at byte " + std::to_string(start));
  }
  out->number = static_cast<uint32_t>(tag >> 3);
  out->wire_type = static_cast<uint32_t>(tag & 7);
  uint64_t n = 0;
  switch (out->wire_type) {
    case 0:
      if (!ReadVarint(msg, pos, &n)) return Status::Corruption("protobuf: truncated varint at byte " + std::to_string(start));
      out->value = {};
      break;
    case 1:
    case 5: {
      const size_t len = out->wire_type == 1 ? 8 : 4;
      if (msg.size() - *pos < len) return Status::Corruption("protobuf: truncated fixed field at byte " + std::to_string(start));
      *pos += len;
      out->value = {};
      break;
    }
    case 2:
      if (!ReadVarint(msg, pos, &n) || n > msg.size() - *pos) {
        return Status::Corruption("protobuf: length-delimited field past the end at byte " + std::to_string(start));
      }
      out->value = msg.substr(*pos, n);
      *pos += n;
      break;
    default:
      return Status::Corruption("protobuf: unsupported wire type " + std::to_string(out->wire_type) + " at byte " +
                                std::to_string(start));
  }
  out->whole = msg.substr(start, *pos - start);
  return Status::OK();
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendBytesField(uint32_t number, std::string_view value, std::string* out) {
  AppendVarint((uint64_t{number} << 3) | 2, out);
  AppendVarint(value.size(), out);
  out->append(value);
}

}  // namespace canal::mq::wire
