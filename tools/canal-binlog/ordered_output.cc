#include "ordered_output.h"

#include <algorithm>
#include <cstdio>

namespace canal::tools {

namespace {

// Inline lines are written once this many bytes have collected.
constexpr size_t kDirectFlushBytes = 256 << 10;

void FormatTask(OutputTask* t, const render::ValueFormatOptions& fo, RowFormatter* f) {
  for (const TaskPart& part : t->parts) {
    // The rows are pointed at here: a part moves while its batch fills.
    binlog::RowsEvent event = part.event;
    if (part.owns_rows) event.rows = part.owned_rows;
    t->status = FormatRows(event, part.table->table(), part.table->keys, part.prefix, part.where, fo, f, &t->out,
                           &t->rows);
    if (!t->status.ok()) return;
  }
}

}  // namespace

FormatPool::FormatPool(int threads, const render::ValueFormatOptions& fo) : fo_(fo) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

FormatPool::~FormatPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void FormatPool::Submit(std::shared_ptr<OutputTask> t) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(std::move(t));
  }
  work_cv_.notify_one();
}

void FormatPool::Wait(const OutputTask& t) {
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return t.done; });
}

void FormatPool::Work() {
  RowFormatter formatter;
  while (true) {
    std::shared_ptr<OutputTask> t;
    {
      std::unique_lock<std::mutex> lk(mu_);
      work_cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      t = std::move(queue_.front());
      queue_.pop_front();
    }
    FormatTask(t.get(), fo_, &formatter);
    {
      std::lock_guard<std::mutex> lk(mu_);
      t->done = true;
    }
    done_cv_.notify_all();
  }
}

OrderedOutput::OrderedOutput(FormatPool* pool, int threads)
    : pool_(pool), max_inflight_(static_cast<size_t>(std::max(1, threads)) * 4 + 2) {}

void OrderedOutput::WriteOut(std::string_view bytes) {
  // (An empty buffer may have no storage: no null pointer to fwrite.)
  if (bytes.empty() || write_failed_) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) write_failed_ = true;
}

void OrderedOutput::FlushDirect() {
  WriteOut(direct_.view());
  direct_.clear();
}

void OrderedOutput::Drain(bool all) {
  while (!inflight_.empty() && (all || inflight_.size() > max_inflight_)) {
    auto t = std::move(inflight_.front());
    inflight_.pop_front();
    if (pool_ != nullptr && !t->done) pool_->Wait(*t);
    if (task_error_.ok()) {
      WriteOut(t->out.view());
      if (!t->status.ok()) task_error_ = t->status;
    }
    if (spare_buffers_.size() < max_inflight_ + 4) {
      t->out.clear();
      spare_buffers_.push_back(std::move(t->out));
    }
  }
}

std::shared_ptr<OutputTask> OrderedOutput::NewTask() {
  auto task = std::make_shared<OutputTask>();
  // Output buffers are recycled: a fresh large buffer per event would cost
  // page faults on every event.
  if (!spare_buffers_.empty()) {
    task->out = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
  }
  return task;
}

OutputTask* OrderedOutput::StartBatch(std::string source) {
  if (!direct_.empty()) FlushDirect();
  batch_ = NewTask();
  batch_->parts.clear();
  batch_->source = std::move(source);
  return batch_.get();
}

void OrderedOutput::SubmitBatch() {
  if (batch_ == nullptr) return;
  pool_->Submit(batch_);
  inflight_.push_back(std::move(batch_));
  batch_ = nullptr;
}

LineBuffer* OrderedOutput::InlineTarget() {
  SubmitBatch();
  if (inflight_.empty()) return &direct_;
  auto task = NewTask();
  task->done = true;
  inflight_.push_back(task);
  return &task->out;
}

void OrderedOutput::AfterEvent() {
  if (direct_.size() >= kDirectFlushBytes) FlushDirect();
  Drain(false);
}

void OrderedOutput::Finish() {
  SubmitBatch();
  Drain(true);
  FlushDirect();
}

}  // namespace canal::tools
