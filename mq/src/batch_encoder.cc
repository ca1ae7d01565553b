#include "canal/mq/batch_encoder.h"

#include "canal/proto/entry_view.h"
#include "canal/proto/field_numbers.h"
#include "canal/proto/wire.h"
#include "text.h"

namespace canal::mq {

namespace {

namespace cv = canal::proto;
namespace fields = canal::proto::fields;
namespace wire = canal::proto::wire;

// Appends every field of `msg` but those numbered `drop`, each as it is on the wire.
Status AppendFieldsExcept(std::string_view msg, uint32_t drop, std::string_view message_name, std::string* out) {
  wire::WireReader r(msg, 0);
  wire::Field f;
  size_t start = 0;  // where the field Next() returns began
  while (r.Next(&f)) {
    if (f.number != drop) out->append(msg.substr(start, r.pos() - start));
    start = r.pos();
  }
  return r.failed() ? r.Error(message_name) : Status::OK();
}

// The entry `entry` with its RowChange's rows replaced by `row` alone.
Status RebuildWithOneRow(std::string_view entry, std::string_view store_value, std::string_view row, std::string* out) {
  out->clear();
  std::string row_change;
  CANAL_RETURN_IF_ERROR(
      AppendFieldsExcept(store_value, fields::row_change::kRowDatas, "canal.entry.RowChange", &row_change));
  wire::AppendBytesField(fields::row_change::kRowDatas, row, &row_change);
  CANAL_RETURN_IF_ERROR(AppendFieldsExcept(entry, fields::entry::kStoreValue, "canal.entry.Entry", out));
  wire::AppendBytesField(fields::entry::kStoreValue, row_change, out);
  return Status::OK();
}

}  // namespace

int32_t BatchEncoder::DefaultPartition() const { return router_->config().partition.value_or(0); }

EncodedMessage* BatchEncoder::Next(const std::string& topic, int32_t partition) {
  if (count_ == messages_.size()) messages_.emplace_back();
  EncodedMessage* m = &messages_[count_++];
  m->topic = topic;
  m->partition = partition;
  m->payload.clear();
  m->origin.clear();
  return m;
}

Status BatchEncoder::Encode(std::span<const std::string_view> entries, int64_t batch_id, int64_t now_ms) {
  count_ = 0;
  return options_.flat_message ? EncodeFlat(entries, batch_id, now_ms) : EncodeProtobuf(entries, batch_id);
}

Status BatchEncoder::EncodeFlat(std::span<const std::string_view> entries, int64_t batch_id, int64_t now_ms) {
  for (size_t i = 0; i < entries.size(); ++i) {
    bool change = false;
    CANAL_RETURN_IF_ERROR(BuildFlatMessage(entries[i], batch_id, now_ms, &flat_, &change)
                              .WithContext("entry " + std::to_string(i) + " of batch " + std::to_string(batch_id)));
    if (!change) continue;
    rows_encoded_ += flat_.rows.size();
    const std::string& topic = router_->TopicFor(flat_.database, flat_.table);
    int32_t whole = DefaultPartition();
    const HashMode* mode = nullptr;
    if (router_->hashing()) {
      whole = 0;
      if (!flat_.is_ddl && !flat_.rows.empty()) {
        mode = &router_->HashModeFor(flat_.database, flat_.table);
        if (mode->kind == HashMode::Kind::kNone) {
          mode = nullptr;
        } else if (mode->kind == HashMode::Kind::kTable) {
          whole = JavaPartition(JavaStringHash(flat_.table), router_->PartitionsOf(topic));
          mode = nullptr;
        }
      }
    }
    if (mode == nullptr) {
      EncodedMessage* m = Next(topic, whole);
      AppendFlatMessageJson(flat_, nullptr, &m->payload);
      m->origin = flat_.Describe();
      continue;
    }
    // Rows spread by their key columns.
    const int32_t partitions = router_->PartitionsOf(topic);
    if (parts_.size() < static_cast<size_t>(partitions)) parts_.resize(partitions);
    for (int32_t p = 0; p < partitions; ++p) parts_[p].clear();
    const int32_t db_hash = router_->config().database_hash ? JavaStringHash(flat_.database) : 0;
    for (uint32_t r = 0; r < flat_.rows.size(); ++r) {
      const FlatRow& row = flat_.rows[r];
      int32_t h = db_hash;
      auto mix = [&](std::string_view column) {
        std::string_view value;  // absent or NULL hash as ""
        for (uint32_t v = row.data_begin; v < row.data_end; ++v) {
          if (flat_.values[v].name == column) {
            if (!flat_.values[v].is_null) value = flat_.values[v].value;
            break;
          }
        }
        h ^= JavaStringHash(value);
      };
      if (mode->kind == HashMode::Kind::kPrimaryKey) {
        for (std::string_view pk : flat_.pk_names) mix(pk);
      } else {
        for (const std::string& c : mode->columns) mix(c);
      }
      parts_[JavaPartition(h, partitions)].push_back(r);
    }
    for (int32_t p = 0; p < partitions; ++p) {
      if (parts_[p].empty()) continue;
      EncodedMessage* m = Next(topic, p);
      AppendFlatMessageJson(flat_, &parts_[p], &m->payload);
      m->origin = flat_.Describe();
    }
  }
  return Status::OK();
}

Status BatchEncoder::EncodeProtobuf(std::span<const std::string_view> entries, int64_t batch_id) {
  group_count_ = 0;
  rebuilt_count_ = 0;
  const bool routed = !router_->config().dynamic_topic.empty() || router_->hashing();
  auto group = [&](const std::string& topic, int32_t partition) -> Group* {
    for (size_t g = 0; g < group_count_; ++g) {
      if (groups_[g].partition == partition && groups_[g].topic == topic) return &groups_[g];
    }
    if (group_count_ == groups_.size()) groups_.emplace_back();
    Group* g = &groups_[group_count_++];
    g->topic = topic;
    g->partition = partition;
    g->entries.clear();
    g->origin.clear();
    g->origin_is_boundary = false;
    return g;
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    cv::EntryView entry;
    CANAL_RETURN_IF_ERROR(cv::EntryView::Parse(entries[i], &entry)
                              .WithContext("entry " + std::to_string(i) + " of batch " + std::to_string(batch_id)));
    const auto type = canal::proto::EntryTypeOf(entry);
    const bool boundary = type == canal::entry::TRANSACTIONBEGIN || type == canal::entry::TRANSACTIONEND;
    if (boundary && (routed || options_.filter_transaction_entry)) continue;
    const auto& h = entry.header();
    const std::string& topic = router_->TopicFor(h.schema_name(), h.table_name());
    const std::string origin = DescribeChange(h.schema_name(), h.table_name(), h.logfile_name(), h.logfile_offset());
    if (!router_->hashing() || type != canal::entry::ROWDATA) {
      Group* g = group(topic, router_->hashing() ? 0 : DefaultPartition());
      g->entries.push_back(entries[i]);
      // The origin names the group's first change: a transaction's BEGIN names no table.
      if (g->origin.empty() || (g->origin_is_boundary && !boundary)) {
        g->origin = origin;
        g->origin_is_boundary = boundary;
      }
      ++rows_encoded_;
      continue;
    }
    cv::RowChangeView rc;
    CANAL_RETURN_IF_ERROR(cv::RowChangeView::Parse(entry.store_value(), &rc).WithContext(origin));
    const HashMode& mode = router_->HashModeFor(h.schema_name(), h.table_name());
    const int32_t partitions = router_->PartitionsOf(topic);
    if (canal::proto::IsDdl(rc) || rc.row_count() == 0 || mode.kind == HashMode::Kind::kNone ||
        mode.kind == HashMode::Kind::kTable) {
      const int32_t p = mode.kind == HashMode::Kind::kTable && !canal::proto::IsDdl(rc) && rc.row_count() != 0
                            ? JavaPartition(JavaStringHash(h.table_name()), partitions)
                            : 0;
      Group* g = group(topic, p);
      g->entries.push_back(entries[i]);
      if (g->origin.empty()) g->origin = origin;
      ++rows_encoded_;
      continue;
    }
    const bool use_before = canal::proto::EventTypeOf(rc) == canal::entry::DELETE;
    const int32_t db_hash = router_->config().database_hash ? JavaStringHash(h.schema_name()) : 0;
    cv::RowDataView row;
    Status s;
    while (rc.NextRow(&row, &s)) {
      int32_t hash = db_hash;
      cv::ColumnView col;
      while (use_before ? row.NextBefore(&col, &s) : row.NextAfter(&col, &s)) {
        bool use = false;
        if (mode.kind == HashMode::Kind::kPrimaryKey) {
          use = col.is_key();
        } else {
          for (const std::string& c : mode.columns) use = use || AsciiEqualsIgnoreCase(c, col.name());
        }
        if (use) hash ^= JavaStringHash(col.value());
      }
      CANAL_RETURN_IF_ERROR(s.WithContext(origin));
      if (rebuilt_count_ == rebuilt_.size()) rebuilt_.emplace_back();
      std::string* one = &rebuilt_[rebuilt_count_++];
      CANAL_RETURN_IF_ERROR(RebuildWithOneRow(entries[i], entry.store_value(), row.bytes(), one).WithContext(origin));
      Group* g = group(topic, JavaPartition(hash, partitions));
      g->entries.push_back(*one);
      if (g->origin.empty()) g->origin = origin;
      ++rows_encoded_;
    }
    CANAL_RETURN_IF_ERROR(s.WithContext(origin));
  }
  // One Packet per group: {version=1, type=MESSAGES, body=Messages{batchId, messages}}; more
  // than one, in order, when it would pass the limit.
  const size_t limit = options_.max_message_bytes;
  // The Packet's fields around its body: version and type (2 bytes each), the body's tag and
  // length (at most 1 + 5).
  constexpr size_t kPacketFraming = 10;
  std::string body;
  // `first`: the Packet's first entry when it is not the group's first Packet (its origin).
  const auto emit = [&](const Group& g, std::string_view first) {
    EncodedMessage* m = Next(g.topic, g.partition);
    wire::AppendVarintField(fields::packet::kVersion, canal::proto::values::kPacketVersion, &m->payload);
    wire::AppendVarintField(fields::packet::kType, canal::proto::values::packet_type::kMessages, &m->payload);
    wire::AppendBytesField(fields::packet::kBody, body, &m->payload);
    cv::EntryView view;
    if (!first.empty() && cv::EntryView::Parse(first, &view).ok()) {
      const auto& h = view.header();
      m->origin = DescribeChange(h.schema_name(), h.table_name(), h.logfile_name(), h.logfile_offset());
    } else {
      m->origin = g.origin;
    }
  };
  for (size_t gi = 0; gi < group_count_; ++gi) {
    const Group& g = groups_[gi];
    if (g.entries.empty()) continue;
    body.clear();
    wire::AppendVarintField(fields::messages::kBatchId, wire::Int64Bits(batch_id), &body);
    const size_t header = body.size();
    std::string_view first;  // of a later Packet
    for (std::string_view e : g.entries) {
      if (limit != 0 && body.size() > header && body.size() + wire::DelimitedSize(e.size()) + kPacketFraming > limit) {
        emit(g, first);
        body.resize(header);
        first = e;
      }
      wire::AppendBytesField(fields::messages::kMessages, e, &body);
    }
    emit(g, first);
  }
  return Status::OK();
}

}  // namespace canal::mq
