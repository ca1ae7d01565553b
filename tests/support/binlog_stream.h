// StreamBinlogBytes: feeds a whole binlog file held in memory to a
// TransactionBuffer the way a dump from `from` would arrive — the
// FORMAT_DESCRIPTION first, then every event from `from` on, with the events
// inside TRANSACTION_PAYLOADs at their payload's offsets.
#pragma once

#include <cstdint>
#include <string>

#include "canal/common/status.h"
#include "canal/parser/transaction_buffer.h"

namespace canal::testing {

// `name` is the file name the buffer records; *rows_events (optional) counts
// the rows events fed.
Status StreamBinlogBytes(const std::string& name, const std::string& bytes, uint64_t from,
                         parser::TransactionBuffer* buffer, uint64_t* rows_events = nullptr);

}  // namespace canal::testing
