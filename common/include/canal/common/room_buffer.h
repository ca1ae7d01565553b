// A growable byte buffer written through a pointer, for output formatted in
// place (canal-cli's printer, canal-binlog's JSON lines): Room(n) makes n
// bytes writable at the end, Commit(end) keeps what was written up to `end`.
// Unlike std::string it never zero-fills, and clear() keeps the capacity, so a
// writer reused per batch allocates only while its largest batch grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace canal {

class RoomBuffer {
 public:
  char* Room(size_t n) {
    if (cap_ - size_ < n) Grow(n);
    return data_.get() + size_;
  }
  void Commit(const char* end) { size_ = static_cast<size_t>(end - data_.get()); }
  void Append(std::string_view s) {
    if (s.empty()) return;  // (an empty buffer may have no storage yet)
    std::memcpy(Room(s.size()), s.data(), s.size());
    size_ += s.size();
  }
  void Append(char c) { *Room(1) = c, ++size_; }
  void AppendNumber(int64_t v);

  std::string_view view() const { return {data_.get(), size_}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }

 private:
  // Doubles (at least 64 KiB), copying only the bytes in use.
  void Grow(size_t n);

  std::unique_ptr<char[]> data_;
  size_t size_ = 0, cap_ = 0;
};

}  // namespace canal
