// The protobuf wire walker the SDK's zero-copy readers share (entry views and
// the MESSAGES body): fields as views into the bytes, every length checked.
// Internal to client-sdk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::client::wire {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field as found on the wire: a varint's value, or the bytes of a
// length-delimited field (fixed-width values are skipped: no field of the
// schema has one).
struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

// Walks the fields of one serialised message, checking every length against
// the bytes left. On malformed bytes Next() returns false and Error() says why.
class WireReader {
 public:
  WireReader(std::string_view bytes, size_t pos) : bytes_(bytes), pos_(pos) {}

  size_t pos() const { return pos_; }
  bool failed() const { return problem_ != nullptr; }

  // True with the next field; false at the end or on malformed bytes.
  bool Next(Field* f) {
    if (pos_ >= bytes_.size()) return false;
    const size_t field_start = pos_;
    uint64_t tag;
    if (!ReadVarint(&tag)) return Fail(field_start, "a tag's varint runs past the end or beyond 10 bytes");
    if (tag > UINT32_MAX) return Fail(field_start, "a tag is above 32 bits");
    f->number = static_cast<uint32_t>(tag >> 3);
    f->wire_type = static_cast<uint32_t>(tag & 7);
    if (f->number == 0) return Fail(field_start, "field number 0");
    switch (f->wire_type) {
      case kVarint:
        if (!ReadVarint(&f->varint)) return Fail(field_start, "a varint runs past the end or beyond 10 bytes");
        return true;
      case kFixed64:
        if (bytes_.size() - pos_ < 8) return Fail(field_start, "a 64-bit field runs past the end");
        pos_ += 8;
        return true;
      case kFixed32:
        if (bytes_.size() - pos_ < 4) return Fail(field_start, "a 32-bit field runs past the end");
        pos_ += 4;
        return true;
      case kLengthDelimited: {
        uint64_t len;
        if (!ReadVarint(&len)) return Fail(field_start, "a length's varint runs past the end or beyond 10 bytes");
        if (len > bytes_.size() - pos_) {
          length_ = len;
          return Fail(field_start, "a length-delimited field is longer than the bytes left");
        }
        f->bytes = bytes_.substr(pos_, static_cast<size_t>(len));
        pos_ += static_cast<size_t>(len);
        return true;
      }
      case 3:
      case 4:
        return Fail(field_start, "a group (wire type 3 or 4), which Canal's schema has none of");
      default:
        return Fail(field_start, "an invalid wire type (6 or 7)");
    }
  }

  // Corruption naming the message, the problem and where it is.
  Status Error(std::string_view message_name) const {
    std::string msg = "malformed ";
    msg += message_name;
    msg += ": ";
    msg += problem_;
    if (length_ != 0) msg += " (" + std::to_string(length_) + " declared)";
    msg += " at byte " + std::to_string(problem_at_) + " of " + std::to_string(bytes_.size());
    return Status::Corruption(msg);
  }

 private:
  // Protobuf's varint: at most 10 bytes, the bits beyond 64 dropped.
  bool ReadVarint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= bytes_.size()) return false;
      const auto b = static_cast<uint8_t>(bytes_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;  // the 10th byte's bits past 64 drop out
      if ((b & 0x80) == 0) {
        *out = v;
        return true;
      }
    }
    return false;
  }

  bool Fail(size_t at, const char* problem) {
    problem_ = problem;
    problem_at_ = at;
    pos_ = bytes_.size();
    return false;
  }

  std::string_view bytes_;
  size_t pos_;
  const char* problem_ = nullptr;
  size_t problem_at_ = 0;
  uint64_t length_ = 0;
};

}  // namespace canal::client::wire
