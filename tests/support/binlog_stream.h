// Runs the parser's real hot loop (parser::EventLoop) over binlog bytes or
// files (parser::FileSource) into a TransactionBuffer, the way a dump from
// `from` would arrive: the FORMAT_DESCRIPTION first, then every event from
// `from` on, the events inside TRANSACTION_PAYLOADs at their payload's offsets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog_source.h"
#include "canal/parser/event_loop.h"
#include "canal/parser/transaction_buffer.h"

namespace canal::testing {

// Runs the loop over `source` to its end (OK) or first error. `sink` gets the
// idle points (may be null when nothing needs them); `counters` (optional)
// what the loop counted.
Status RunEventLoop(parser::BinlogSource* source, parser::TransactionBuffer* buffer,
                    parser::TransactionSink* sink = nullptr, parser::LoopCounters* counters = nullptr);

// One file held in memory; `name` is the file name the buffer records.
Status StreamBinlogBytes(const std::string& name, const std::string& bytes, uint64_t from,
                         parser::TransactionBuffer* buffer, uint64_t* rows_events = nullptr);

}  // namespace canal::testing
