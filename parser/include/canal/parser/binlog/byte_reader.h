// ByteReader: bounds-checked little-endian cursor over a byte range.
//
// Every read checks the remaining length first and returns false (leaving the
// cursor where it was) instead of reading past the end, so that malformed input
// can never make the decoder touch memory outside the event. Callers turn a false
// into a Status that names the file, offset and field. Also read by snapshot/ for the
// binary protocol's result rows (the same packed lengths and little-endian fields).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace canal::binlog {

class ByteReader {
 public:
  ByteReader() = default;
  ByteReader(const uint8_t* data, size_t size) : begin_(data), p_(data), end_(data + size) {}
  explicit ByteReader(std::string_view s)
      : ByteReader(reinterpret_cast<const uint8_t*>(s.data()), s.size()) {}

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  const uint8_t* current() const { return p_; }
  bool empty() const { return p_ == end_; }

  bool Skip(size_t n) {
    if (n > remaining()) return false;
    p_ += n;
    return true;
  }
  bool ReadU8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = *p_++;
    return true;
  }
  // Little-endian unsigned integer of `n` bytes (1..8).
  bool ReadUIntLE(size_t n, uint64_t* v) {
    if (n > remaining() || n > 8) return false;
    uint64_t r = 0;
    for (size_t i = 0; i < n; ++i) r |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += n;
    *v = r;
    return true;
  }
  // Big-endian unsigned integer of `n` bytes (1..8).
  bool ReadUIntBE(size_t n, uint64_t* v) {
    if (n > remaining() || n > 8) return false;
    uint64_t r = 0;
    for (size_t i = 0; i < n; ++i) r = (r << 8) | p_[i];
    p_ += n;
    *v = r;
    return true;
  }
  template <typename T>
  bool ReadLE(T* v) {
    uint64_t r;
    if (!ReadUIntLE(sizeof(T), &r)) return false;
    *v = static_cast<T>(r);
    return true;
  }
  // MySQL length-encoded integer (1, 3, 4 or 9 bytes). 0xFB (NULL) and 0xFF are
  // rejected: they never appear where binlog events use packed lengths.
  bool ReadPackedInt(uint64_t* v) {
    if (remaining() < 1) return false;
    const uint8_t c = *p_;
    size_t n;
    if (c < 0xFB) {
      *v = c;
      ++p_;
      return true;
    } else if (c == 0xFC) {
      n = 2;
    } else if (c == 0xFD) {
      n = 3;
    } else if (c == 0xFE) {
      n = 8;
    } else {
      return false;
    }
    if (remaining() < 1 + n) return false;
    ++p_;
    return ReadUIntLE(n, v);
  }
  bool ReadBytes(size_t n, std::string_view* out) {
    if (n > remaining()) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  bool ReadBytes(size_t n, const uint8_t** out) {
    if (n > remaining()) return false;
    *out = p_;
    p_ += n;
    return true;
  }
  std::string_view Rest() {
    std::string_view s(reinterpret_cast<const char*>(p_), remaining());
    p_ = end_;
    return s;
  }

 private:
  const uint8_t* begin_ = nullptr;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
};

inline uint32_t LoadU32LE(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint16_t LoadU16LE(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }

}  // namespace canal::binlog
