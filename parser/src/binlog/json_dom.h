// Internal: a small DOM for MySQL binary JSON, shared by json_binary.cc (decode,
// render) and json_diff.cc (PARTIAL_UPDATE_ROWS diff application).
//
// Strings, keys and opaque payloads are views into the buffers the DOM was
// parsed from (or into storage the caller owns); the DOM never copies them.
// Internal to parser/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::binlog::json {

// MySQL refuses documents nested deeper than this (JSON_DOCUMENT_MAX_DEPTH).
inline constexpr int kMaxDepth = 100;

// Binary JSON type bytes.
enum : uint8_t {
  kTypeSmallObject = 0x00,
  kTypeLargeObject = 0x01,
  kTypeSmallArray = 0x02,
  kTypeLargeArray = 0x03,
  kTypeLiteral = 0x04,
  kTypeInt16 = 0x05,
  kTypeUint16 = 0x06,
  kTypeInt32 = 0x07,
  kTypeUint32 = 0x08,
  kTypeInt64 = 0x09,
  kTypeUint64 = 0x0a,
  kTypeDouble = 0x0b,
  kTypeString = 0x0c,
  kTypeOpaque = 0x0f,
};

enum class JsonKind : uint8_t {
  kNull,
  kTrue,
  kFalse,
  kInt,
  kUint,
  kDouble,
  kString,
  kOpaque,
  kArray,
  kObject,
};

struct JsonNode {
  JsonKind kind = JsonKind::kNull;
  uint8_t opaque_type = 0;  // MySQL field type of a kOpaque value
  union {
    int64_t i64;
    uint64_t u64;
    double f64;
  };
  std::string_view bytes;              // kString: the text; kOpaque: the raw payload
  std::vector<JsonNode> children;      // kArray elements, kObject member values
  std::vector<std::string_view> keys;  // kObject member names, parallel to children

  JsonNode() : u64(0) {}
};

// Parses one binary JSON value (type byte, then the value) into *root. Views in
// the DOM point into `binary`. An empty input is an error here: only a whole
// column may be empty.
Status ParseJsonBinary(std::string_view binary, JsonNode* root);

// Appends the MySQL text of `node`; fails on values that cannot be rendered
// (malformed opaque payloads, non-finite doubles, nesting deeper than kMaxDepth).
Status AppendJsonNodeText(const JsonNode& node, std::string* out);

// MySQL keeps object members ordered by key length, then bytewise.
inline bool JsonKeyLess(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

}  // namespace canal::binlog::json
