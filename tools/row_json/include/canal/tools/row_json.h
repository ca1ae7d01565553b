// The JSON lines of row changes and statements that `canal-binlog decode` and
// `canal-cli --json` print (library canal_row_json, linked by both), so the two
// tools' lines have one shape:
//
//   {"file":F,"pos":P,"gtid":G,"ts":T,"db":D,"table":N,"type":"INSERT","before":{..},"after":{..}}
//   {"file":F,"pos":P,"gtid":G,"ts":T,"db":D,"type":"DDL"|"QUERY","sql":S}
//
// Each tool appends the column images itself (canal-binlog from decoded
// values, canal-cli from the entries' strings), with AppendJsonString
// (canal/common/json_string.h, which MQ mode's flat messages use too).
// Everything appends to a caller's buffer: no allocation beyond its growth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "canal/common/json_string.h"

namespace canal::tools {

// The JSON string escaping (canal/common/json_string.h), under this
// namespace for the tools' callers.
using canal::AppendJsonString;
using canal::JsonStringBound;
using canal::WriteJsonString;

// Opens a line: {"file":F,"pos":P,"gtid":G,"ts":T (ts in seconds).
void AppendLineHead(std::string_view file, int64_t pos, std::string_view gtid, int64_t ts_seconds,
                    std::string* out);

// A row change's target after the head: ,"db":D,"table":N,"type":"<type>"
// (`type` is a plain name such as INSERT: written unescaped).
void AppendRowTarget(std::string_view db, std::string_view table, std::string_view type, std::string* out);

// A statement after the head: ,"db":D,"type":"DDL" or "QUERY","sql":S (the
// line stays open for extra members).
void AppendStatement(std::string_view db, bool ddl, std::string_view sql, std::string* out);

// JsonLineWriter: builds one JSON object per line into a reusable buffer and
// writes them to a FILE in large chunks.
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
