#include "support/binlog_stream.h"

#include <atomic>

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/event_loop.h"

namespace canal::testing {
namespace {

struct NoIdle final : parser::TransactionSink {
  Status OnTransaction(const parser::Transaction&) override { return Status::OK(); }
};

}  // namespace

Status RunEventLoop(parser::BinlogSource* source, parser::TransactionBuffer* buffer, parser::TransactionSink* sink,
                    parser::LoopCounters* counters) {
  NoIdle no_idle;
  parser::LoopCounters own;
  parser::EventLoop loop(buffer, sink != nullptr ? sink : &no_idle, counters != nullptr ? counters : &own);
  binlog::EventDecoder decoder;
  const std::atomic<bool> stop{false};
  Status error;
  const parser::LoopEnd end = loop.Run(source, &decoder, stop, &error);
  // The end of the last file is where a file source stops.
  if (end == parser::LoopEnd::kSource && error.IsNotFound()) return Status::OK();
  return error;
}

Status StreamBinlogBytes(const std::string& name, const std::string& bytes, uint64_t from,
                         parser::TransactionBuffer* buffer, uint64_t* rows_events) {
  auto source = parser::FileSource::FromBuffer(name, bytes, from);
  parser::LoopCounters counters;
  Status s = RunEventLoop(source.get(), buffer, nullptr, &counters);
  if (rows_events != nullptr) *rows_events = counters.rows_events.load();
  return s;
}

}  // namespace canal::testing
