// Where Canal's MQ mode sends a change: which topic (canal.mq.topic,
// canal.mq.dynamicTopic), how many partitions that topic has
// (canal.mq.partitionsNum, canal.mq.dynamicTopicPartitionNum) and which
// partition a row goes to (canal.mq.partition, canal.mq.partitionHash,
// canal.mq.database.hash). The rules are Canal's (MQMessageUtils), so a
// consumer sees the same layout it saw from Canal:
//
// Patterns. A list item is split on ',' or ';'. An item holding none of
// * ? + | ( ) { } [ ] \ $ ^ is a plain name compared case-insensitively;
// any other is a Perl-style regular expression matched case-insensitively
// against the whole name.
//
// dynamicTopic: items `topic:pattern` or `pattern`. For an entry of db.table
// the items are tried in order against "db.table" (plain names, and patterns
// containing "\." ), then, if none matched, against "db" (plain names, and
// patterns without "\."). The first match wins: `topic:pattern` sends to
// `topic`, a bare pattern to the matched name lowercased ("db.table" or
// "db"). No match, or an entry without db or table: canal.mq.topic.
//
// dynamicTopicPartitionNum: items `topic-pattern:N`; the first matching
// item gives the topic's partition count, else canal.mq.partitionsNum.
//
// partitionHash: items `db.table-pattern:col1^col2`, `pattern:$pk$` or
// `pattern` (no column list). The first item matching "db.table" decides:
//   - none matches: partition 0 for the whole message;
//   - no column list: the whole message to |javaHash(table)| % partitions;
//   - columns / $pk$ (the entry's key columns): each row to
//     |h| % partitions, h = javaHash(db) (when canal.mq.database.hash, the
//     default) XOR javaHash(value) of each listed column (NULL hashes "").
// A DDL, and a change without rows, goes to partition 0. Without
// partitionHash everything goes to canal.mq.partition (default 0).
// javaHash is Java's String.hashCode over the UTF-16 of the UTF-8 text,
// so partitions agree with Canal's for every value.
//
// Thread-safety: const methods are not thread-safe (they cache matches);
// use one Router per publishing thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "canal/common/status.h"

namespace canal::mq {

// java.lang.String#hashCode of the text `utf8` decodes to (invalid bytes
// count as U+FFFD, as Java's decoder replaces them).
int32_t JavaStringHash(std::string_view utf8);

// |hash| % partitions as Canal computes it (Math.abs twice, so
// Integer.MIN_VALUE lands in a fixed partition too).
int32_t JavaPartition(int32_t hash, int32_t partitions);

struct RoutingConfig {
  std::string topic;                        // canal.mq.topic
  std::string dynamic_topic;                // canal.mq.dynamicTopic
  std::optional<int32_t> partition;         // canal.mq.partition
  int32_t partitions_num = 1;               // canal.mq.partitionsNum
  std::string partition_hash;               // canal.mq.partitionHash
  std::string dynamic_topic_partition_num;  // canal.mq.dynamicTopicPartitionNum
  bool database_hash = true;                // canal.mq.database.hash
};

// How rows of one table are spread over partitions.
struct HashMode {
  enum class Kind : uint8_t { kNone, kTable, kPrimaryKey, kColumns };
  Kind kind = Kind::kNone;
  std::vector<std::string> columns;  // kColumns
};

class Router {
 public:
  // InvalidArgument naming the key and the item for a pattern that does not
  // compile or a partition count that is not a positive number.
  static Status Create(const RoutingConfig& config, std::unique_ptr<Router>* out);
  ~Router();

  const RoutingConfig& config() const { return config_; }
  bool hashing() const { return !partition_hash_.empty(); }

  // The topic of a change of db.table (see the file comment).
  const std::string& TopicFor(std::string_view database, std::string_view table);
  // The partition count of `topic`.
  int32_t PartitionsOf(const std::string& topic);
  // The hash rule for db.table (kind kNone when no item matches).
  const HashMode& HashModeFor(std::string_view database, std::string_view table);

 private:
  struct Pattern;
  struct TopicItem;
  struct PartitionItem;
  struct CountItem;
  Router() = default;

  RoutingConfig config_;
  std::vector<TopicItem> topic_items_;
  std::vector<PartitionItem> partition_hash_;
  std::vector<CountItem> count_items_;
  // Memoised answers: the table names a destination sees are few. Bounded
  // anyway: cleared when they grow past kCacheLimit.
  static constexpr size_t kCacheLimit = 65536;
  std::unordered_map<std::string, std::string> topic_cache_;
  std::unordered_map<std::string, const HashMode*> hash_cache_;
  std::unordered_map<std::string, int32_t> count_cache_;
  std::string key_;  // scratch for cache look-ups
  HashMode none_;
};

}  // namespace canal::mq
