#include "canal/mq/routing.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

#include "canal/common/trim.h"
#include "text.h"

namespace canal::mq {

namespace {

using canal::Trim;

// Canal splits every list on ',' and ';' and drops empty items.
std::vector<std::string_view> SplitItems(std::string_view text) {
  std::vector<std::string_view> items;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',' || text[i] == ';') {
      std::string_view item = Trim(text.substr(start, i - start));
      if (!item.empty()) items.push_back(item);
      start = i + 1;
    }
  }
  return items;
}

bool IsWildCard(std::string_view s) { return s.find_first_of("*?+|(){}[]\\$^") != std::string_view::npos; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void Bound(size_t limit, std::unordered_map<std::string, std::string>* a) {
  if (a->size() >= limit) a->clear();
}

}  // namespace

struct Router::Pattern {
  std::string plain;  // set for a plain name
  std::optional<std::regex> regex;
  bool has_dot_escape = false;  // the pattern contains "\." (a table pattern)

  static Status Make(std::string_view text, const char* key, Pattern* out) {
    if (!IsWildCard(text)) {
      out->plain.assign(text);
      return Status::OK();
    }
    out->has_dot_escape = text.find("\\.") != std::string_view::npos;
    try {
      out->regex.emplace(std::string(text), std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument(std::string(key) + ": the pattern '" + std::string(text) +
                                     "' is not a valid regular expression (" + e.what() + ")");
    }
    return Status::OK();
  }
  bool Matches(std::string_view name) const {
    if (!regex) return AsciiEqualsIgnoreCase(plain, name);
    return std::regex_match(name.begin(), name.end(), *regex);
  }
};

struct Router::TopicItem {
  std::string topic;  // "" for a bare pattern
  Pattern pattern;
};
struct Router::PartitionItem {
  Pattern pattern;
  HashMode mode;
};
struct Router::CountItem {
  Pattern pattern;
  int32_t partitions = 0;
};

Router::~Router() = default;

int32_t JavaStringHash(std::string_view s) {
  uint32_t h = 0;
  auto unit = [&h](uint32_t u) { h = 31 * h + u; };
  size_t i = 0;
  while (i < s.size()) {
    const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
    const uint8_t c = b(i);
    uint32_t cp = 0xFFFD;
    size_t n = 1;
    auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
    if (c < 0x80) {
      cp = c;
    } else if (c >= 0xC2 && c <= 0xDF && cont(i + 1)) {
      cp = ((c & 0x1Fu) << 6) | (b(i + 1) & 0x3Fu);
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF && cont(i + 1) && cont(i + 2)) {
      uint32_t v = ((c & 0x0Fu) << 12) | ((b(i + 1) & 0x3Fu) << 6) | (b(i + 2) & 0x3Fu);
      if (v >= 0x800 && (v < 0xD800 || v > 0xDFFF)) {
        cp = v;
        n = 3;
      }
    } else if (c >= 0xF0 && c <= 0xF4 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
      uint32_t v = ((c & 0x07u) << 18) | ((b(i + 1) & 0x3Fu) << 12) | ((b(i + 2) & 0x3Fu) << 6) | (b(i + 3) & 0x3Fu);
      if (v >= 0x10000 && v <= 0x10FFFF) {
        cp = v;
        n = 4;
      }
    }
    if (cp >= 0x10000) {
      unit(0xD800 + ((cp - 0x10000) >> 10));
      unit(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      unit(cp);
    }
    i += n;
  }
  return static_cast<int32_t>(h);
}

int32_t JavaPartition(int32_t hash, int32_t partitions) {
  // Math.abs(Integer.MIN_VALUE) is Integer.MIN_VALUE; the remainder is then
  // negative and Canal takes its absolute value again.
  const int32_t a = hash == INT32_MIN ? INT32_MIN : std::abs(hash);
  const int32_t r = a % partitions;
  return r < 0 ? -r : r;
}

Status Router::Create(const RoutingConfig& config, std::unique_ptr<Router>* out) {
  std::unique_ptr<Router> r(new Router());
  r->config_ = config;
  if (config.partitions_num < 1) {
    return Status::InvalidArgument("canal.mq.partitionsNum = " + std::to_string(config.partitions_num) +
                                   ": must be at least 1");
  }
  if (config.partition && *config.partition < 0) {
    return Status::InvalidArgument("canal.mq.partition = " + std::to_string(*config.partition) +
                                   ": must be 0 or more");
  }
  if (config.topic.empty()) {
    return Status::InvalidArgument("canal.mq.topic is not set: every destination needs a default topic");
  }
  for (std::string_view item : SplitItems(config.dynamic_topic)) {
    TopicItem t;
    size_t colon = item.find(':');
    std::string_view pattern = item;
    if (colon != std::string_view::npos) {
      t.topic.assign(Trim(item.substr(0, colon)));
      pattern = Trim(item.substr(colon + 1));
      if (t.topic.empty() || pattern.empty()) {
        return Status::InvalidArgument("canal.mq.dynamicTopic: the item '" + std::string(item) +
                                       "' needs a topic and a pattern (topic:db\\\\.table)");
      }
    }
    CANAL_RETURN_IF_ERROR(Pattern::Make(pattern, "canal.mq.dynamicTopic", &t.pattern));
    r->topic_items_.push_back(std::move(t));
  }
  for (std::string_view item : SplitItems(config.partition_hash)) {
    PartitionItem p;
    size_t colon = item.rfind(':');
    std::string_view pattern = item;
    if (colon != std::string_view::npos && colon > 0) {
      std::string_view cols = Trim(item.substr(colon + 1));
      pattern = Trim(item.substr(0, colon));
      if (AsciiEqualsIgnoreCase(cols, "$pk$")) {
        p.mode.kind = HashMode::Kind::kPrimaryKey;
      } else {
        p.mode.kind = HashMode::Kind::kColumns;
        size_t start = 0;
        for (size_t i = 0; i <= cols.size(); ++i) {
          if (i == cols.size() || cols[i] == '^') {
            std::string_view c = Trim(cols.substr(start, i - start));
            if (!c.empty()) p.mode.columns.emplace_back(c);
            start = i + 1;
          }
        }
        if (p.mode.columns.empty()) {
          return Status::InvalidArgument("canal.mq.partitionHash: the item '" + std::string(item) +
                                         "' names no column (db.table:col1^col2, or db.table:$pk$)");
        }
      }
    } else {
      p.mode.kind = HashMode::Kind::kTable;
    }
    CANAL_RETURN_IF_ERROR(Pattern::Make(pattern, "canal.mq.partitionHash", &p.pattern));
    r->partition_hash_.push_back(std::move(p));
  }
  for (std::string_view item : SplitItems(config.dynamic_topic_partition_num)) {
    CountItem c;
    size_t colon = item.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Status::InvalidArgument("canal.mq.dynamicTopicPartitionNum: the item '" + std::string(item) +
                                     "' is not topic-pattern:count");
    }
    std::string count(Trim(item.substr(colon + 1)));
    char* end = nullptr;
    long n = std::strtol(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0' || n < 1 || n > 1000000) {
      return Status::InvalidArgument("canal.mq.dynamicTopicPartitionNum: the item '" + std::string(item) +
                                     "' has no positive partition count");
    }
    c.partitions = static_cast<int32_t>(n);
    CANAL_RETURN_IF_ERROR(Pattern::Make(Trim(item.substr(0, colon)), "canal.mq.dynamicTopicPartitionNum", &c.pattern));
    r->count_items_.push_back(std::move(c));
  }
  *out = std::move(r);
  return Status::OK();
}

const std::string& Router::TopicFor(std::string_view database, std::string_view table) {
  if (topic_items_.empty() || database.empty() || table.empty()) return config_.topic;
  key_.assign(database);
  key_ += '.';
  key_ += table;
  if (auto it = topic_cache_.find(key_); it != topic_cache_.end()) return it->second;
  Bound(kCacheLimit, &topic_cache_);

  std::string topic;
  // The table pass, then the schema pass (see the file comment).
  for (int pass = 0; pass < 2 && topic.empty(); ++pass) {
    const std::string_view name = pass == 0 ? std::string_view(key_) : database;
    for (const TopicItem& item : topic_items_) {
      const Pattern& p = item.pattern;
      const bool applies = !p.regex || (pass == 0 ? p.has_dot_escape : !p.has_dot_escape);
      if (!applies || !p.Matches(name)) continue;
      topic = item.topic.empty() ? Lower(name) : item.topic;
      break;
    }
  }
  if (topic.empty()) topic = config_.topic;
  return topic_cache_.emplace(key_, std::move(topic)).first->second;
}

int32_t Router::PartitionsOf(const std::string& topic) {
  if (count_items_.empty()) return config_.partitions_num;
  if (auto it = count_cache_.find(topic); it != count_cache_.end()) return it->second;
  if (count_cache_.size() >= kCacheLimit) count_cache_.clear();
  int32_t n = config_.partitions_num;
  for (const CountItem& item : count_items_) {
    if (item.pattern.Matches(topic)) {
      n = item.partitions;
      break;
    }
  }
  count_cache_.emplace(topic, n);
  return n;
}

const HashMode& Router::HashModeFor(std::string_view database, std::string_view table) {
  if (partition_hash_.empty()) return none_;
  key_.assign(database);
  key_ += '.';
  key_ += table;
  if (auto it = hash_cache_.find(key_); it != hash_cache_.end()) return *it->second;
  if (hash_cache_.size() >= kCacheLimit) hash_cache_.clear();
  const HashMode* mode = &none_;
  for (const PartitionItem& item : partition_hash_) {
    if (item.pattern.Matches(key_)) {
      mode = &item.mode;
      break;
    }
  }
  hash_cache_.emplace(key_, mode);
  return *mode;
}

}  // namespace canal::mq
