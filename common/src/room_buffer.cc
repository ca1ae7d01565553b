#include "canal/common/room_buffer.h"

#include <algorithm>
#include <charconv>

namespace canal {

void RoomBuffer::Grow(size_t n) {
  const size_t cap = std::max({size_ + n, cap_ * 2, size_t{64} << 10});
  auto data = std::make_unique_for_overwrite<char[]>(cap);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  cap_ = cap;
}

void RoomBuffer::AppendNumber(int64_t v) {
  char* p = Room(20);  // INT64_MIN is 20 characters
  Commit(std::to_chars(p, p + 20, v).ptr);
}

}  // namespace canal
