// HistoryStore: where a destination's schema history (HistoryLog) lives. The
// local file is the default; meta/ has the ZooKeeper store, so that a standby
// taking over reads the history the active server wrote.
#pragma once

#include <string>

#include "canal/common/status.h"
#include "canal/schema/history_log.h"

namespace canal::schema {

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // NotFound when nothing is stored yet (a first start).
  virtual Status Load(HistoryLog* log) = 0;
  // Replaces what is stored, atomically: a reader sees the old or the new log.
  virtual Status Save(const HistoryLog& log) = 0;
  // Where it is, for messages ("/data/example/schema_history.json").
  virtual std::string Describe() const = 0;
};

class FileHistoryStore final : public HistoryStore {
 public:
  explicit FileHistoryStore(std::string path) : path_(std::move(path)) {}
  Status Load(HistoryLog* log) override { return LoadHistoryFile(path_, log); }
  Status Save(const HistoryLog& log) override { return SaveHistoryFile(path_, log); }
  std::string Describe() const override { return path_; }

 private:
  std::string path_;
};

}  // namespace canal::schema
