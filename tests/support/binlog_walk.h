// Walking a binlog file in tests: every event, every row, every value rendered,
// with counts by event type, so fixture tests can assert what a decoder saw.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "canal/common/status.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/schema_provider.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::testing {

struct WalkResult {
  std::map<uint8_t, uint64_t> outer_counts;    // by (remapped) type code
  std::map<uint8_t, uint64_t> payload_counts;  // events inside TRANSACTION_PAYLOADs
  uint64_t rows = 0;
  uint64_t values = 0;
  Status error;               // the first error, OK when the whole file decoded
  uint64_t error_offset = 0;  // reader position of the failing event
};

struct WalkOptions {
  bool verify_checksum = true;
  // Keep reading after an error whose event was framed correctly (counts it).
  bool continue_after_corrupt_event = false;
  // Names the columns of a binlog without FULL row metadata (as the sink's provider does).
  binlog::TableSchemaProvider* schema_provider = nullptr;
  // Called for every row change with its table.
  std::function<Status(const binlog::Event&, const binlog::TableMap&, const binlog::RowChange&)> on_row;
  std::function<Status(const binlog::Event&)> on_event;
};

// Decodes `path` (or, when `bytes` is non-null, those bytes named `path`).
WalkResult WalkBinlog(const std::string& path, const WalkOptions& options = {},
                      const std::string* bytes = nullptr);

}  // namespace canal::testing
