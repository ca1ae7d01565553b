// ChunkWindow: merges one chunk of a snapshot with the stream, so that a consumer applying both
// in delivery order ends with the table's rows exactly.
//
// A chunk is read inside a consistent snapshot whose binlog position P is the primary's own
// (MariaDB: binlog_snapshot_file / binlog_snapshot_position after START TRANSACTION WITH
// CONSISTENT SNAPSHOT): the chunk holds each of its rows as every transaction that ends at or
// before P left it, and no effect of any transaction after P. P is a transaction boundary, so no
// transaction is half in the chunk. The stream delivers transactions in binlog order. Then:
//   - while the stream has not delivered up to P, the chunk waits (Passed() is false): emitted
//     at P, it sits exactly where its rows' state belongs;
//   - once the stream has delivered past P (it had already, or it ran on while the chunk was
//     read), every key the stream changed at or after P was delivered in a version newer than
//     the chunk's: those rows are dropped from the chunk (Drops()), and the rest, unchanged since
//     P, are still current, so emitting them now is exact.
// A key that moves (UPDATE of the key) is a change to both its old and its new value; a delete
// and re-insert inside the window is two changes to one key; either way the stream's version
// wins.
//
// The window opens before the chunk's read starts, on the stream's thread, at the position the
// stream has delivered (never past P, as the stream cannot be ahead of the primary), and records
// each change the stream delivers to the chunk's table from then on: the key (KeyEncoder over the
// key columns' values, written the same way for stream and snapshot rows) and the position of
// its event. Memory is bounded by `max_keys` keys and `max_bytes` bytes of keys; past either the
// window is overflowed() and the chunk must be read again (the caller counts it).
//
// Positions are compared in stream order (StreamBefore): binlog files of one base name by their
// number (mysql-bin.999999 before mysql-bin.1000000), then offsets.
// Not thread-safe: the stream's thread owns a window.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "canal/common/log_position.h"

namespace canal::snapshot {

// Whether `a` comes before `b` in one server's binlog (file by number within a base name, then
// offset); `included` and the GTID take no part.
bool StreamBefore(const LogPosition& a, const LogPosition& b);
bool StreamBefore(std::string_view file_a, uint64_t position_a, std::string_view file_b, uint64_t position_b);

// The bytes that stand for one row's key: each key column's value in key order, NULL distinct
// from every string (a NOT NULL key never has one, but a bad table must not merge two rows).
// Callers append each column as the same text for a stream row and a snapshot row (Canal's value
// string), so the same key gives the same bytes.
class KeyEncoder {
 public:
  void Clear() { key_.clear(); }
  void AppendNull() { key_ += '\0'; }
  void Append(std::string_view value);
  // Append's bytes for a value the caller writes straight into the returned string (appending
  // only) between BeginValue and EndValue: no copy of the value's text.
  std::string* BeginValue();
  void EndValue();
  std::string_view key() const { return key_; }

 private:
  std::string key_;
  size_t value_at_ = 0;  // where BeginValue's value starts
};

class ChunkWindow {
 public:
  ChunkWindow(LogPosition opened_at, size_t max_keys, size_t max_bytes);

  // A change the stream delivered to the chunk's table: a row event at `at` (its start)
  // inserting, deleting or updating the row with `key` (for an UPDATE, once for the old key and
  // once for the new). Changes come in stream order.
  void NoteChange(std::string_view key, const LogPosition& at);

  // The chunk's read came back, consistent at `snapshot` (P). Forgets the changes before it.
  void SetSnapshotPoint(const LogPosition& snapshot);
  bool has_snapshot_point() const { return has_snapshot_; }
  const LogPosition& snapshot_point() const { return snapshot_; }

  // With the snapshot point set: whether the stream, having delivered every transaction before
  // `delivered` (the end of the last one), has passed P, so that the chunk may go out.
  bool Passed(const LogPosition& delivered) const;

  // Whether a chunk row with `key` must be left out: the stream changed it at or after P.
  // Meaningful once the snapshot point is set and the window is not overflowed.
  bool Drops(std::string_view key) const;

  // More changes than the bounds allow: the chunk must be read again.
  bool overflowed() const { return overflowed_; }
  size_t changed_keys() const { return changed_.size(); }
  const LogPosition& opened_at() const { return opened_at_; }

 private:
  LogPosition opened_at_;
  size_t max_keys_, max_bytes_;
  size_t bytes_ = 0;
  bool overflowed_ = false;
  bool has_snapshot_ = false;
  LogPosition snapshot_;
  // Looked up by string_view (no copy per chunk row).
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Each key's last change (stream order makes the last one the latest).
  std::unordered_map<std::string, LogPosition, KeyHash, std::equal_to<>> changed_;
};

}  // namespace canal::snapshot
