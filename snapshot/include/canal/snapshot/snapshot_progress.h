// SnapshotProgress: how far a destination's snapshot has come, in the form that rides with its
// cursor (LogPosition::snapshot, written to meta.dat and ZooKeeper with the cursor).
//
// A snapshot is a list of tables, each pending, being read, or done. A table being read keeps
// `after`: the key of the last row of the last chunk that went out (empty: nothing yet), so a
// restart reads on from the chunk after it. The progress an entry carries is the progress as of
// that entry; an ack makes it durable with the cursor, so after a crash the chunks that were
// acked are not read again and those that were not are read again (a repeat, never a loss).
//
// Encoded as canal JSON text with sorted keys (the meta writer dumps it the same way):
//   {"id":"initial-1733450000000","started_ms":...,"tables":[
//     {"schema":"shop","table":"customer","state":"reading","rows":8192,"where":"",
//      "after":[{"k":1,"t":3,"i":8192}]}, ...]}
// A key value keeps its type (kind, the server's field type, binary) and its value: integers
// as JSON numbers, a double as its shortest exact text, temporal fields as an array, bytes in
// hex; it is bound again as the same typed value (chunk_reader.h), never as text.
// Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/snapshot/field_value.h"

namespace canal::snapshot {

enum class TableSnapshotState : uint8_t { kPending, kReading, kDone };

struct TableProgress {
  std::string schema, table;
  std::string where;  // the operator's filter ("" for every row)
  TableSnapshotState state = TableSnapshotState::kPending;
  std::vector<KeyValue> after;  // the last emitted chunk's last key (empty: from the start)
  uint64_t rows = 0;            // rows emitted so far
  // No key pages it (chunk_key.h): one read at its P, and until then the stream's changes to
  // it are left out (the read holds them; a consumer cannot upsert a keyless row).
  bool keyless = false;

  std::string Name() const { return schema + "." + table; }
};

struct SnapshotProgress {
  std::string id;  // names this snapshot in logs and status ("initial-<ms>", "request-<ms>")
  int64_t started_ms = 0;
  std::vector<TableProgress> tables;

  bool Complete() const;
  size_t TablesDone() const;
  std::string Encode() const;
  std::shared_ptr<const std::string> EncodeShared() const {
    return std::make_shared<const std::string>(Encode());
  }
  // Corruption naming the member when `text` is not a progress this wrote.
  static Status Decode(std::string_view text, SnapshotProgress* out);
};

}  // namespace canal::snapshot
