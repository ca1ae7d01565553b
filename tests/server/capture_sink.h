// A spdlog sink that keeps every log line, for the server tests that check
// what was logged.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>
#include <vector>

namespace canal::server::testing {

// Keeps every log line, for the tests that check what was logged.
class CaptureSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> Lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  // The lines logged at `level` or above.
  std::vector<std::string> LinesAtLeast(spdlog::level::level_enum level) {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (levels_[i] >= level) out.push_back(lines_[i]);
    }
    return out;
  }
  bool Contains(spdlog::level::level_enum level, const std::string& a, const std::string& b = "") {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (levels_[i] == level && lines_[i].find(a) != std::string::npos && lines_[i].find(b) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines_.emplace_back(msg.payload.data(), msg.payload.size());
    levels_.push_back(msg.level);
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
  std::vector<spdlog::level::level_enum> levels_;
};

}  // namespace canal::server::testing
