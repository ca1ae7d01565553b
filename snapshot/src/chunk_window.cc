#include "canal/snapshot/chunk_window.h"

#include <tuple>

namespace canal::snapshot {
namespace {

// "mysql-bin.000123" -> base "mysql-bin", number "000123"; a name without a numeric extension
// is all base.
void SplitName(std::string_view name, std::string_view* base, std::string_view* number) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size() ||
      name.find_first_not_of("0123456789", dot + 1) != std::string_view::npos) {
    *base = name;
    *number = {};
    return;
  }
  *base = name.substr(0, dot);
  *number = name.substr(dot + 1);
  // Leading zeros carry no value: 000123 and 0123 are one file number.
  size_t nz = number->find_first_not_of('0');
  *number = nz == std::string_view::npos ? number->substr(number->size() - 1) : number->substr(nz);
}

// The bytes a remembered key costs besides its text (node, position, bucket).
constexpr size_t kPerKeyOverhead = 96;

}  // namespace

bool StreamBefore(std::string_view file_a, uint64_t position_a, std::string_view file_b, uint64_t position_b) {
  // One file: the positions decide (the stream asks this once per transaction).
  if (file_a == file_b) return position_a < position_b;
  std::string_view base_a, num_a, base_b, num_b;
  SplitName(file_a, &base_a, &num_a);
  SplitName(file_b, &base_b, &num_b);
  if (base_a == base_b && !num_a.empty() && !num_b.empty()) {
    if (num_a.size() != num_b.size()) return num_a.size() < num_b.size();
    if (num_a != num_b) return num_a < num_b;
    return position_a < position_b;
  }
  return std::tie(file_a, position_a) < std::tie(file_b, position_b);
}

bool StreamBefore(const LogPosition& a, const LogPosition& b) {
  return StreamBefore(a.journal_name, a.position, b.journal_name, b.position);
}

void KeyEncoder::Append(std::string_view value) {
  // A tag and a length prefix: ("ab","c") and ("a","bc") differ, and no value equals NULL.
  BeginValue()->append(value);
  EndValue();
}

std::string* KeyEncoder::BeginValue() {
  key_ += '\1';
  key_.append(4, '\0');
  value_at_ = key_.size();
  return &key_;
}

void KeyEncoder::EndValue() {
  const auto n = static_cast<uint32_t>(key_.size() - value_at_);
  for (size_t i = 0; i < 4; ++i) key_[value_at_ - 4 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

ChunkWindow::ChunkWindow(LogPosition opened_at, size_t max_keys, size_t max_bytes)
    : opened_at_(std::move(opened_at)), max_keys_(max_keys), max_bytes_(max_bytes) {}

void ChunkWindow::NoteChange(std::string_view key, const LogPosition& at) {
  if (overflowed_) return;
  // Before the snapshot point it cannot matter; once the point is known such changes are not kept.
  if (has_snapshot_ && StreamBefore(at, snapshot_)) return;
  auto it = changed_.find(key);
  if (it != changed_.end()) {
    it->second = at;
    return;
  }
  if (changed_.size() >= max_keys_ || bytes_ + key.size() + kPerKeyOverhead > max_bytes_) {
    overflowed_ = true;
    changed_.clear();
    bytes_ = 0;
    return;
  }
  bytes_ += key.size() + kPerKeyOverhead;
  changed_.emplace(std::string(key), at);
}

void ChunkWindow::SetSnapshotPoint(const LogPosition& snapshot) {
  snapshot_ = snapshot;
  has_snapshot_ = true;
  for (auto it = changed_.begin(); it != changed_.end();) {
    if (StreamBefore(it->second, snapshot_)) {
      bytes_ -= it->first.size() + kPerKeyOverhead;
      it = changed_.erase(it);
    } else {
      ++it;
    }
  }
}

bool ChunkWindow::Passed(const LogPosition& delivered) const {
  return has_snapshot_ && !StreamBefore(delivered, snapshot_);
}

bool ChunkWindow::Drops(std::string_view key) const {
  // With the point set, every remembered change is at or after it.
  return changed_.find(key) != changed_.end();
}

}  // namespace canal::snapshot
