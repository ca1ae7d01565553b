// The in-order output of `canal-binlog decode`: rows events formatted on
// worker threads (FormatPool) or inline, written to stdout in event order
// (OrderedOutput). Only the decode command uses it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/render/canal_value.h"
#include "row_lines.h"

namespace canal::tools {

// A table as one rows event saw it, with its JSON keys, shared with the
// formatting threads. The decoder keeps one TableMap object while a table's
// TABLE_MAPs repeat byte for byte and replaces it (never changes it) when they
// differ; holding it here keeps it alive while a worker still formats rows,
// and a snapshot is built once per distinct map, not once per transaction.
struct TableSnapshot {
  std::shared_ptr<const binlog::TableMap> map;
  ColumnKeys keys;
  const binlog::TableMap& table() const { return *map; }
};

// One rows event of a task.
struct TaskPart {
  binlog::RowsEvent event;
  std::shared_ptr<const TableSnapshot> table;
  std::string owned_rows;  // copy of the row bytes when they live in decoder scratch
  bool owns_rows = false;
  std::string prefix;  // the line up to the images
  LineSource where;    // for error messages
};

// The JSON lines of consecutive rows events handed to a formatting thread
// together: one hand-off (queue lock, wake-up, in-order wait) per batch, not
// per event.
struct OutputTask {
  // Inputs.
  std::vector<TaskPart> parts;
  std::string source;  // the decoder's name of the file, for the reader's messages
  size_t row_bytes = 0;
  // Outputs.
  LineBuffer out;
  Status status;
  uint64_t rows = 0;
  bool done = false;
};

// Formats rows events on worker threads; results are written in event order.
class FormatPool {
 public:
  FormatPool(int threads, const render::ValueFormatOptions& fo);
  ~FormatPool();
  void Submit(std::shared_ptr<OutputTask> t);
  void Wait(const OutputTask& t);

 private:
  void Work();

  const render::ValueFormatOptions fo_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::shared_ptr<OutputTask>> queue_;
  bool stop_ = false;
};

// Lines in event order: tasks handed to the pool and lines formatted inline
// after them; inline lines while nothing is in flight go straight into one
// buffer, written in large chunks (no task, allocation or write per event).
// Invariant: the direct buffer is empty whenever a task is in flight.
class OrderedOutput {
 public:
  // `pool` may be null (everything inline).
  OrderedOutput(FormatPool* pool, int threads);

  // The batch being filled (null: none), started by StartBatch.
  OutputTask* batch() { return batch_.get(); }
  OutputTask* StartBatch(std::string source);
  // Hands the batch to the pool (none: nothing).
  void SubmitBatch();
  // Where inline lines go: the direct buffer, or after the tasks in flight.
  LineBuffer* InlineTarget();
  // After each event: writes what is finished, keeping a bounded number in flight.
  void AfterEvent();
  // Writes everything, waiting for the pool.
  void Finish();

  bool write_failed() const { return write_failed_; }
  // The first error of a task (its lines before the error were written).
  const Status& task_error() const { return task_error_; }

 private:
  void WriteOut(std::string_view bytes);
  void FlushDirect();
  void Drain(bool all);
  std::shared_ptr<OutputTask> NewTask();

  FormatPool* const pool_;
  const size_t max_inflight_;
  std::deque<std::shared_ptr<OutputTask>> inflight_;
  std::vector<LineBuffer> spare_buffers_;  // output buffers of written tasks, for reuse
  LineBuffer direct_;
  std::shared_ptr<OutputTask> batch_;
  bool write_failed_ = false;
  Status task_error_;
};

}  // namespace canal::tools
