// The protobuf wire format by hand (library canal_wire, header-only): the
// varints, tags and length-delimited fields that the sink's entry writer, the
// server's MESSAGES frame and the client's zero-copy views read and write
// without protobuf objects. Everything here is inline: these run per column
// on the hot paths.
//
// Writing: size first (VarintSize, DelimitedSize), then write into the sized
// buffer (WriteVarint, WriteDelimited), as protobuf's own serialiser does, so
// the bytes match it. Reading: WireReader walks one message's fields as views,
// every length checked against the bytes left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::proto::wire {

inline constexpr uint32_t kVarint = 0;
inline constexpr uint32_t kFixed64 = 1;
inline constexpr uint32_t kLengthDelimited = 2;
inline constexpr uint32_t kFixed32 = 5;

// The tag of a field numbered 1 to 15, which is one byte (every field the
// hand-written paths write is; the numbers are in field_numbers.h, and
// tests/proto/wire_test.cc checks the bytes).
constexpr char Tag(uint32_t field, uint32_t wire_type) { return static_cast<char>((field << 3) | wire_type); }

// Bytes of `v` as a base-128 varint (1 to 10).
inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes `v` as a varint at p; returns the byte after it.
inline char* WriteVarint(uint64_t v, char* p) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// protobuf writes int32 and enum values sign-extended to 64 bits, so a
// negative one takes ten bytes; int64 as its two's complement.
inline uint64_t Int32Bits(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
inline uint64_t Int64Bits(int64_t v) { return static_cast<uint64_t>(v); }

// Size of a length-delimited field with a one-byte tag and a body of `n` bytes.
inline size_t DelimitedSize(size_t n) { return 1 + VarintSize(n) + n; }

// Copies `bytes` to p; returns the byte after them. Most pieces of a row (a
// column's constant fields, a value's text) are a few bytes to a few dozen:
// those are copied inline with overlapping word moves rather than a call into
// the C library per piece.
[[gnu::always_inline]] inline char* WriteBytes(std::string_view bytes, char* p) {
  const char* s = bytes.data();
  const size_t n = bytes.size();
  if (n >= 16 && n <= 32) {
    char a[16], b[16];
    std::memcpy(a, s, 16);
    std::memcpy(b, s + n - 16, 16);
    std::memcpy(p, a, 16);
    std::memcpy(p + n - 16, b, 16);
  } else if (n >= 8 && n < 16) {
    uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(p, &a, 8);
    std::memcpy(p + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(p, &a, 4);
    std::memcpy(p + n - 4, &b, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) p[i] = s[i];
  } else {
    std::memcpy(p, s, n);
  }
  return p + n;
}

// Writes a length-delimited field (one-byte tag, length, bytes) at p; returns
// the byte after it.
inline char* WriteDelimited(char tag, std::string_view bytes, char* p) {
  *p++ = tag;
  p = WriteVarint(bytes.size(), p);
  return WriteBytes(bytes, p);
}

// Appends a whole field to a std::string (for parts built once and reused).
inline void AppendVarintField(uint32_t field, uint64_t v, std::string* out) {
  char buf[11];
  buf[0] = Tag(field, kVarint);
  char* end = WriteVarint(v, buf + 1);
  out->append(buf, static_cast<size_t>(end - buf));
}

inline void AppendBytesField(uint32_t field, std::string_view bytes, std::string* out) {
  char buf[11];
  buf[0] = Tag(field, kLengthDelimited);
  char* end = WriteVarint(bytes.size(), buf + 1);
  out->append(buf, static_cast<size_t>(end - buf));
  out->append(bytes);
}

// One field as found on the wire: a varint's value, or the bytes of a
// length-delimited field (fixed-width values are skipped: no field of Canal's
// schema has one).
struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

// Walks the fields of one serialised message from `pos`. On malformed bytes
// Next() returns false and Error() says why and where.
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
    msg += problem_ != nullptr ? problem_ : "no problem recorded";
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

}  // namespace canal::proto::wire
