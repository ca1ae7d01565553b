// For the sink's tests and benchmarks only: the ROWDATA entry of a
// rows event built the slow way, by filling the generated canal.entry protobuf
// classes and serialising them. This was EntryBuilder::RowsEntry before the
// wire writer (entry_wire.h); it stays as the reference the writer's bytes are
// proved equal to. Nothing in the server calls it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/sink/entry_builder.h"

namespace canal::sink::wire {

// Reuses its protobuf objects and buffers between calls, as the old builder
// did, so that benchmarks compare like with like. Not thread-safe.
class ReferenceRowsEntryBuilder {
 public:
  explicit ReferenceRowsEntryBuilder(const EntryBuilderOptions& options);
  ~ReferenceRowsEntryBuilder();

  // Same contract as EntryBuilder::RowsEntry; `extra_props` follow rowsCount
  // in the header (a snapshot entry's marker).
  Status Write(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out, uint64_t* row_count,
               std::span<const HeaderProp> extra_props = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The TRANSACTIONBEGIN (begin) or TRANSACTIONEND entry as EntryBuilder wrote
// it with protobuf objects before wire::WriteTransactionEntry.
std::string ReferenceTransactionEntry(const EntryContext& ctx, bool begin, uint64_t thread_id,
                                      const std::string& transaction_id, std::span<const HeaderProp> props = {});

}  // namespace canal::sink::wire
