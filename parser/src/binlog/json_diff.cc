// PARTIAL_UPDATE_ROWS JSON diffs (MySQL binlog_row_value_options=PARTIAL_JSON).
//
// Each diff is: operation byte (0 REPLACE, 1 INSERT, 2 REMOVE), a packed-length
// JSON path text ("$.a[1]", "$.\"k y\""), and for REPLACE/INSERT a packed-length
// binary JSON value. Diffs apply in order to the before-image document with
// MySQL's semantics: REPLACE needs an existing target; INSERT adds a missing
// member or inserts into an array (indexes past the end append); REMOVE needs
// an existing member or in-bounds element.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "canal/parser/binlog/byte_reader.h"
#include "binlog/json_dom.h"
#include "canal/parser/binlog/json_binary.h"

namespace canal::binlog {
namespace {

using json::JsonKind;
using json::JsonNode;

enum class DiffOp : uint8_t { kReplace = 0, kInsert = 1, kRemove = 2 };

struct PathLeg {
  enum class Kind : uint8_t { kMember, kIndex, kLast } kind = Kind::kMember;
  std::string_view member;  // kMember
  uint64_t index = 0;       // kIndex: the index; kLast: N of [last-N]
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

bool ReadHex4(std::string_view s, size_t* i, uint32_t* v) {
  if (s.size() - *i < 4) return false;
  uint32_t r = 0;
  for (int k = 0; k < 4; ++k) {
    const char c = s[(*i)++];
    r <<= 4;
    if (c >= '0' && c <= '9') {
      r |= uint32_t(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      r |= uint32_t(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      r |= uint32_t(c - 'A' + 10);
    } else {
      return false;
    }
  }
  *v = r;
  return true;
}

// Parses the JSON path MySQL writes for a diff: '$' followed by member legs
// (.name or ."escaped name") and array legs ([n], [last], [last-n]).
// Wildcards and ranges never occur in diffs and are rejected. Unescaped member
// names that need storage go to *arena (stable addresses).
class PathParser {
 public:
  PathParser(std::string_view text, std::deque<std::string>* arena) : s_(text), arena_(arena) {}

  Status Parse(std::vector<PathLeg>* legs) {
    legs->clear();
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] != '$') return Error("path does not start with '$'");
    ++i_;
    for (SkipSpace(); i_ < s_.size(); SkipSpace()) {
      PathLeg leg;
      if (s_[i_] == '.') {
        ++i_;
        SkipSpace();
        CANAL_RETURN_IF_ERROR(Member(&leg));
      } else if (s_[i_] == '[') {
        ++i_;
        CANAL_RETURN_IF_ERROR(Index(&leg));
      } else {
        return Error("unexpected character");
      }
      legs->push_back(leg);
    }
    return Status::OK();
  }

 private:
  Status Error(const char* what) const {
    return Status::Corruption("JSON diff path '" + std::string(s_) + "': " + what + " at " +
                              std::to_string(i_));
  }
  void SkipSpace() {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
  }

  Status Member(PathLeg* leg) {
    leg->kind = PathLeg::Kind::kMember;
    if (i_ >= s_.size()) return Error("missing member name");
    if (s_[i_] == '*') return Error("wildcards are not allowed");
    if (s_[i_] != '"') {
      const size_t start = i_;
      while (i_ < s_.size() && s_[i_] != '.' && s_[i_] != '[' && s_[i_] != '*' &&
             s_[i_] != '"' && !IsSpace(s_[i_])) {
        ++i_;
      }
      if (i_ == start) return Error("empty member name");
      leg->member = s_.substr(start, i_ - start);
      return Status::OK();
    }
    ++i_;  // opening quote
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\\') ++i_;
    if (i_ < s_.size() && s_[i_] == '"') {  // no escapes: view the path text
      leg->member = s_.substr(start, i_ - start);
      ++i_;
      return Status::OK();
    }
    std::string name(s_.substr(start, i_ - start));
    while (true) {
      if (i_ >= s_.size()) return Error("unterminated member name");
      const char c = s_[i_++];
      if (c == '"') break;
      if (c != '\\') {
        name.push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return Error("unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': case '\\': case '/': name.push_back(e); break;
        case 'b': name.push_back('\b'); break;
        case 'f': name.push_back('\f'); break;
        case 'n': name.push_back('\n'); break;
        case 'r': name.push_back('\r'); break;
        case 't': name.push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!ReadHex4(s_, &i_, &cp)) return Error("bad \\u escape");
          if (cp >= 0xd800 && cp < 0xdc00) {  // high surrogate: a low one must follow
            uint32_t low;
            if (s_.size() - i_ < 2 || s_[i_] != '\\' || s_[i_ + 1] != 'u') {
              return Error("unpaired surrogate");
            }
            i_ += 2;
            if (!ReadHex4(s_, &i_, &low) || low < 0xdc00 || low > 0xdfff) {
              return Error("unpaired surrogate");
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return Error("unpaired surrogate");
          }
          AppendUtf8(cp, &name);
          break;
        }
        default:
          return Error("bad escape");
      }
    }
    arena_->push_back(std::move(name));
    leg->member = arena_->back();
    return Status::OK();
  }

  bool Number(uint64_t* v) {
    const size_t start = i_;
    uint64_t r = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      const uint64_t digit = uint64_t(s_[i_] - '0');
      if (r > (UINT64_MAX - digit) / 10) return false;
      r = r * 10 + digit;
      ++i_;
    }
    *v = r;
    return i_ > start;
  }

  Status Index(PathLeg* leg) {
    SkipSpace();
    if (s_.substr(i_, 4) == "last") {
      i_ += 4;
      leg->kind = PathLeg::Kind::kLast;
      leg->index = 0;
      SkipSpace();
      if (i_ < s_.size() && s_[i_] == '-') {
        ++i_;
        SkipSpace();
        if (!Number(&leg->index)) return Error("bad number after 'last-'");
      }
    } else {
      if (i_ < s_.size() && s_[i_] == '*') return Error("wildcards are not allowed");
      leg->kind = PathLeg::Kind::kIndex;
      if (!Number(&leg->index)) return Error("bad array index");
    }
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] != ']') return Error("expected ']' (ranges are not allowed)");
    ++i_;
    return Status::OK();
  }

  std::string_view s_;
  std::deque<std::string>* arena_;
  size_t i_ = 0;
};

// Position an array leg designates in an array of `size` elements, and whether
// it names an existing element (MySQL clamps out-of-range positions for INSERT).
struct ArrayPosition {
  size_t position;
  bool in_bounds;
};
ArrayPosition Resolve(const PathLeg& leg, size_t size) {
  if (leg.kind == PathLeg::Kind::kLast) {
    if (leg.index < size) return {size - 1 - static_cast<size_t>(leg.index), true};
    return {0, false};
  }
  if (leg.index < size) return {static_cast<size_t>(leg.index), true};
  return {size, false};
}

// Index of `key` in an object, or -1.
ptrdiff_t FindMember(const JsonNode& object, std::string_view key) {
  for (size_t i = 0; i < object.keys.size(); ++i) {
    if (object.keys[i] == key) return static_cast<ptrdiff_t>(i);
  }
  return -1;
}

// Follows `count` legs from `node` without auto-wrapping; nullptr when absent.
JsonNode* Seek(JsonNode* node, const std::vector<PathLeg>& legs, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const PathLeg& leg = legs[i];
    if (node->kind == JsonKind::kArray && leg.kind != PathLeg::Kind::kMember) {
      const ArrayPosition at = Resolve(leg, node->children.size());
      if (!at.in_bounds) return nullptr;
      node = &node->children[at.position];
    } else if (node->kind == JsonKind::kObject && leg.kind == PathLeg::Kind::kMember) {
      const ptrdiff_t at = FindMember(*node, leg.member);
      if (at < 0 || static_cast<size_t>(at) >= node->children.size()) return nullptr;
      node = &node->children[static_cast<size_t>(at)];
    } else {
      return nullptr;
    }
  }
  return node;
}

const char* OpName(DiffOp op) {
  switch (op) {
    case DiffOp::kReplace: return "REPLACE";
    case DiffOp::kInsert: return "INSERT";
    case DiffOp::kRemove: return "REMOVE";
  }
  return "?";
}

Status Apply(DiffOp op, const std::vector<PathLeg>& legs, JsonNode* root, JsonNode* value) {
  if (legs.empty()) {
    // MySQL never logs a whole-document diff; replacing the root is still well
    // defined, inserting or removing it is not.
    if (op != DiffOp::kReplace) return Status::Corruption("path '$' cannot be inserted or removed");
    *root = std::move(*value);
    return Status::OK();
  }
  if (op == DiffOp::kReplace) {
    JsonNode* target = Seek(root, legs, legs.size());
    if (target == nullptr) return Status::Corruption("path not found in the document");
    *target = std::move(*value);
    return Status::OK();
  }
  JsonNode* parent = Seek(root, legs, legs.size() - 1);
  if (parent == nullptr) return Status::Corruption("parent path not found in the document");
  const PathLeg& last = legs.back();
  const bool member = last.kind == PathLeg::Kind::kMember;
  if (parent->kind == JsonKind::kObject && member) {
    const ptrdiff_t at = FindMember(*parent, last.member);
    if (parent->keys.size() != parent->children.size()) {
      return Status::Corruption("object has mismatched keys and values");
    }
    if (op == DiffOp::kInsert) {
      if (at >= 0) return Status::Corruption("member to insert already exists");
      // Keep MySQL's member order (by key length, then bytes).
      size_t pos = 0;
      while (pos < parent->keys.size() && json::JsonKeyLess(parent->keys[pos], last.member)) ++pos;
      parent->keys.insert(parent->keys.begin() + static_cast<ptrdiff_t>(pos), last.member);
      parent->children.insert(parent->children.begin() + static_cast<ptrdiff_t>(pos),
                              std::move(*value));
      return Status::OK();
    }
    if (at < 0) return Status::Corruption("member to remove does not exist");
    parent->keys.erase(parent->keys.begin() + at);
    parent->children.erase(parent->children.begin() + at);
    return Status::OK();
  }
  if (parent->kind == JsonKind::kArray && !member) {
    const ArrayPosition at = Resolve(last, parent->children.size());
    if (op == DiffOp::kInsert) {
      parent->children.insert(parent->children.begin() + static_cast<ptrdiff_t>(at.position),
                              std::move(*value));
      return Status::OK();
    }
    if (!at.in_bounds) return Status::Corruption("array element to remove does not exist");
    parent->children.erase(parent->children.begin() + static_cast<ptrdiff_t>(at.position));
    return Status::OK();
  }
  return Status::Corruption("path leg does not match the value it addresses");
}

}  // namespace

namespace {

// Applies one column's diff list to *root. Keys parsed from paths live in *arena.
Status ApplyDiffList(std::string_view diffs, JsonNode* root, std::deque<std::string>* arena) {
  std::vector<PathLeg> legs;
  JsonNode value;
  ByteReader reader(diffs);
  for (size_t n = 0; !reader.empty(); ++n) {
    const std::string where =
        "JSON diff " + std::to_string(n) + " at byte " + std::to_string(reader.offset());
    auto fail = [&](std::string_view what) {
      return Status::Corruption(where + ": " + std::string(what));
    };
    uint8_t op_byte;
    uint64_t path_length;
    std::string_view path;
    if (!reader.ReadU8(&op_byte)) return fail("truncated operation");
    if (op_byte > static_cast<uint8_t>(DiffOp::kRemove)) {
      return fail("unknown operation " + std::to_string(op_byte));
    }
    const auto op = static_cast<DiffOp>(op_byte);
    if (!reader.ReadPackedInt(&path_length) || !reader.ReadBytes(path_length, &path)) {
      return fail("truncated path");
    }
    Status s = PathParser(path, arena).Parse(&legs);
    if (!s.ok()) return s.WithContext(where);
    if (op != DiffOp::kRemove) {
      uint64_t value_length;
      std::string_view value_binary;
      if (!reader.ReadPackedInt(&value_length) || !reader.ReadBytes(value_length, &value_binary)) {
        return fail("truncated value");
      }
      s = json::ParseJsonBinary(value_binary, &value);
      if (!s.ok()) return s.WithContext(where + " value");
    }
    s = Apply(op, legs, root, &value);
    if (!s.ok()) return s.WithContext(where + " " + OpName(op) + " " + std::string(path));
  }
  return Status::OK();
}

}  // namespace

Status ApplyJsonDiffChain(std::string_view before_binary, const std::vector<std::string_view>& diff_lists,
                          std::string* after_text) {
  after_text->clear();
  JsonNode root;  // an empty before image is the JSON null
  if (!before_binary.empty()) {
    Status s = json::ParseJsonBinary(before_binary, &root);
    if (!s.ok()) return s.WithContext("JSON diff before image");
  }
  std::deque<std::string> arena;  // unescaped member names used as keys
  for (size_t i = 0; i < diff_lists.size(); ++i) {
    Status s = ApplyDiffList(diff_lists[i], &root, &arena);
    if (!s.ok()) return diff_lists.size() > 1 ? s.WithContext("diff list " + std::to_string(i + 1)) : s;
  }
  Status s = json::AppendJsonNodeText(root, after_text);
  if (!s.ok()) after_text->clear();
  return s;
}

Status ApplyJsonDiffs(std::string_view before_binary, std::string_view diffs,
                      std::string* after_text) {
  return ApplyJsonDiffChain(before_binary, {diffs}, after_text);
}

}  // namespace canal::binlog
