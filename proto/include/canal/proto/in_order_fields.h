// InOrderFields: the fast path of the wire readers (entry views, the SDK's
// MESSAGES body and the frame's Packet).
//
// Protobuf, Canal's Java server and ours write a message's fields in field
// number order, each with a one-byte tag. A reader that expects them in that
// order tests one byte per field against a constant (a branch that predicts
// well, column after column) instead of decoding the tag and dispatching on
// the field number and the wire type, which is where the generic loop spent
// its time. Each call takes the next field only when its tag is the one
// asked for and its varint or length reads cleanly inside the bytes; anything
// else (another order, an unknown field, a multi-byte tag, malformed bytes)
// leaves the position at that field, where the caller's generic WireReader
// loop carries on. Fields are thus still applied in stream order, so a field
// that repeats still reads as its last occurrence, and every error is
// reported by the generic loop with its usual message and offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace canal::proto {

class InOrderFields {
 public:
  explicit InOrderFields(std::string_view bytes, size_t pos = 0)
      : begin_(bytes.data()), p_(bytes.data() + pos), end_(bytes.data() + bytes.size()) {}

  // Takes a varint field with this tag.
  bool Varint(char tag, uint64_t* v) {
    if (p_ == end_ || *p_ != tag) return false;
    const char* q = p_ + 1;
    if (!ReadVarint(&q, v)) return false;
    p_ = q;
    return true;
  }

  // Takes a length-delimited field with this tag; *bytes views its body.
  bool Bytes(char tag, std::string_view* bytes) {
    if (p_ == end_ || *p_ != tag) return false;
    const char* q = p_ + 1;
    uint64_t len;
    if (!ReadVarint(&q, &len) || len > static_cast<uint64_t>(end_ - q)) return false;
    *bytes = std::string_view(q, static_cast<size_t>(len));
    p_ = q + len;
    return true;
  }

  bool done() const { return p_ == end_; }
  // Where the generic reader goes on.
  size_t pos() const { return static_cast<size_t>(p_ - begin_); }

 private:
  // Protobuf's varint (at most 10 bytes, bits past 64 dropped); false when it
  // runs past the end or beyond 10 bytes.
  bool ReadVarint(const char** q, uint64_t* out) const {
    const char* s = *q;
    if (s == end_) return false;
    auto b = static_cast<uint8_t>(*s);
    if (b < 0x80) {  // most values: one byte
      *out = b;
      *q = s + 1;
      return true;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (s == end_) return false;
      b = static_cast<uint8_t>(*s++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        *out = v;
        *q = s;
        return true;
      }
    }
    return false;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
};

}  // namespace canal::proto
