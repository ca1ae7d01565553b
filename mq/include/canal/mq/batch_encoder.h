// BatchEncoder: turns one batch of entries from a destination's ring into the
// broker messages Canal's MQ mode would send for it, in order: for each
// message its topic, partition and payload.
//
// Flat form (canal.mq.flatMessage = true): one FlatMessage JSON per table
// change (flat_message.h), split by partition when canal.mq.partitionHash
// spreads its rows (routing.h); a part holds the rows of its partition in
// their order.
// Protobuf form: per topic and partition one Canal Packet {version 1, type
// MESSAGES, body Messages{batchId, entries}}, what Canal's consumers
// (CanalKafkaConsumer, ...) deserialise. Unpartitioned, the batch's entries
// go as they are (transaction begin/end included unless
// canal.mq.filterTransactionEntry); with dynamic topics or partition hashing
// begin/end are left out and, hashing by columns, each row becomes an entry
// of its own (header and RowChange fields kept), as Canal does. One place
// differs from Canal: a Packet that would be larger than
// EncoderOptions::max_message_bytes goes as several, consecutive, with the
// same batchId, each under it (an entry larger than the limit alone in one).
// A snapshot entry holds up to 256 KiB of rows, so a batch of them can be
// megabytes, where Kafka takes 1 MB by default; Canal's consumers read each
// Packet on its own, so nothing changes for them.
//
// Order: messages come out in entry order, so every message of one topic and
// partition is in binlog order, and all changes of one key share a partition.
//
// Memory: payload buffers are reused from batch to batch.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/mq/flat_message.h"
#include "canal/mq/routing.h"

namespace canal::mq {

struct EncodedMessage {
  std::string topic;
  int32_t partition = 0;
  std::string payload;
  // What it carries, for errors: "db.table at file:offset" (the first change).
  std::string origin;
};

struct EncoderOptions {
  bool flat_message = true;               // canal.mq.flatMessage
  bool filter_transaction_entry = false;  // canal.mq.filterTransactionEntry (protobuf form)
  // Protobuf form: the largest Packet (payload bytes) to make; 0: no limit.
  // Kafka: kafka.max.request.size (librdkafka's message.max.bytes) less
  // kMessageOverheadBytes, for the record's own framing.
  size_t max_message_bytes = 0;
};

// What a Kafka record adds to its payload (record and batch headers, the
// topic), kept free under the producer's limit.
inline constexpr size_t kMessageOverheadBytes = 1024;

class BatchEncoder {
 public:
  // `router` must outlive the encoder.
  BatchEncoder(Router* router, EncoderOptions options) : router_(router), options_(options) {}

  // Encodes `entries` (serialised canal.entry.Entry) of batch `batch_id`;
  // `now_ms` is the flat messages' ts. Corruption naming the entry for bytes
  // that do not parse. The result stays valid until the next Encode.
  Status Encode(std::span<const std::string_view> entries, int64_t batch_id, int64_t now_ms);

  // The messages of the last Encode.
  std::span<const EncodedMessage> messages() const { return {messages_.data(), count_}; }
  // Rows (flat form: data rows; protobuf form: entries) encoded in total.
  uint64_t rows_encoded() const { return rows_encoded_; }

 private:
  EncodedMessage* Next(const std::string& topic, int32_t partition);
  Status EncodeFlat(std::span<const std::string_view> entries, int64_t batch_id, int64_t now_ms);
  Status EncodeProtobuf(std::span<const std::string_view> entries, int64_t batch_id);
  int32_t DefaultPartition() const;

  Router* const router_;
  const EncoderOptions options_;
  std::vector<EncodedMessage> messages_;  // [0, count_) in use; the rest keep their buffers
  size_t count_ = 0;
  uint64_t rows_encoded_ = 0;
  FlatMessage flat_;
  std::vector<std::vector<uint32_t>> parts_;  // rows per partition (flat form)
  // Protobuf form: entries (or rebuilt single-row entries) per (topic, partition).
  struct Group {
    std::string topic;
    int32_t partition = 0;
    std::vector<std::string_view> entries;
    std::string origin;
    bool origin_is_boundary = false;  // the origin is a BEGIN/END's (no table): a change replaces it
  };
  std::vector<Group> groups_;
  size_t group_count_ = 0;
  std::deque<std::string> rebuilt_;  // single-row entries built this batch (stable addresses)
  size_t rebuilt_count_ = 0;
};

}  // namespace canal::mq
