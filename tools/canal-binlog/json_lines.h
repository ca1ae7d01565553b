// JsonLineWriter: builds one JSON object per line into a reusable buffer and
// writes them to a FILE in large chunks. Strings are escaped per RFC 8259;
// invalid UTF-8 is replaced by U+FFFD so every line is valid JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace canal::tools {

void AppendJsonString(std::string_view s, std::string* out);

class JsonLineWriter {
 public:
  explicit JsonLineWriter(std::FILE* out) : out_(out) { buf_.reserve(1 << 20); }
  ~JsonLineWriter() { Flush(); }
  std::string& buffer() { return buf_; }
  // Called after each complete line; flushes when the buffer is large.
  void EndLine() {
    buf_.push_back('\n');
    if (buf_.size() >= (1 << 20)) Flush();
  }
  bool Flush() {
    if (buf_.empty()) return true;
    bool ok = std::fwrite(buf_.data(), 1, buf_.size(), out_) == buf_.size();
    buf_.clear();
    return ok;
  }

 private:
  std::FILE* out_;
  std::string buf_;
};

}  // namespace canal::tools
