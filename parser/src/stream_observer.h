// StreamObserver: what the parse loop tells the parser while it streams
// (parser/src/event_parser.cc's RunSession). Before an event, the schema
// history follows DDL and checks TABLE_MAPs (or the information_schema cache
// is cleared on a DDL); after it, the progress is published into the
// parser's status, under the parser's mutex: after each event that leaves no
// transaction open, on heartbeats, every 64th event inside a transaction,
// before the parser blocks on the socket (Publish) and when the loop ends.
// So the status is exact whenever the parser waits, at most 64 events behind
// while a long transaction streams, and costs no lock per event.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/event_loop.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/information_schema_provider.h"
#include "canal/parser/transaction_buffer.h"
#include "canal/schema/statement.h"
#include "schema_tracker.h"

namespace canal::parser {

class StreamObserver final : public LoopObserver {
 public:
  // `tracker` or `schema` (whichever names the columns) may be null.
  StreamObserver(std::mutex* status_mu, ParserStatus* status, const TransactionBuffer* buffer,
                 SchemaTracker* tracker, mysql::InformationSchemaProvider* schema,
                 const binlog::EventDecoder* decoder)
      : status_mu_(status_mu), status_(status), buffer_(buffer), tracker_(tracker), schema_(schema),
        decoder_(decoder) {}

  Status BeforeEvent(const SourceEvent& se) override {
    const binlog::Event& ev = se.event;
    if (tracker_ != nullptr) {
      if (const auto* q = ev.As<binlog::QueryEvent>()) {
        Status s = tracker_->OnQuery(*q, schema::BinlogPoint{std::string(se.file), se.offset}, ev.header.timestamp);
        if (!s.ok()) return s;
      } else if (const auto* tm = ev.As<binlog::TableMapEventRef>(); tm != nullptr && tm->table != nullptr) {
        Status s = tracker_->CheckNamedTable(*tm->table, decoder_);
        if (!s.ok()) return s.WithContext("at " + std::string(se.file) + ":" + std::to_string(se.offset));
      }
    }
    if (schema_ != nullptr) {
      const auto* q = ev.As<binlog::QueryEvent>();
      if (q != nullptr && canal::schema::MayChangeColumns(canal::schema::ClassifyStatement(q->query))) {
        schema_->Clear();
      }
    }
    return Status::OK();
  }

  void OnProgress(std::string_view at_file, uint64_t at, const binlog::EventHeader& header) override {
    if (file_ != at_file) file_.assign(at_file);
    position_ = at;
    server_id_ = header.server_id;
    heartbeat_ = header.type() == binlog::EventType::kHeartbeat || header.type() == binlog::EventType::kHeartbeatV2;
    timestamp_ms_ = heartbeat_ ? 0 : int64_t{header.timestamp} * 1000;  // a heartbeat's time is not a change's
    if (heartbeat_ || ++unpublished_ >= 64 || !buffer_->in_transaction()) Publish();
  }

  // Publishes the progress not yet published.
  void Publish() {
    if (unpublished_ == 0 && !heartbeat_) return;
    std::lock_guard<std::mutex> lock(*status_mu_);
    ParserStatus& st = *status_;
    st.position.journal_name.assign(file_);
    st.position.position = position_;
    st.position.server_id = server_id_;
    st.position.timestamp_ms = timestamp_ms_;
    unpublished_ = 0;
    heartbeat_ = false;
    // (A heartbeat moves nothing in the buffer: these are as of the last event.)
    st.resume = buffer_->resume_point();
    st.transactions = buffer_->transactions();
    st.skipped_events = buffer_->skipped_events();
  }

 private:
  std::mutex* const status_mu_;
  ParserStatus* const status_;
  const TransactionBuffer* const buffer_;
  SchemaTracker* const tracker_;
  mysql::InformationSchemaProvider* const schema_;
  const binlog::EventDecoder* const decoder_;
  // The last progress not yet published.
  std::string file_;
  uint64_t position_ = 0;
  uint32_t server_id_ = 0;
  int64_t timestamp_ms_ = 0;
  bool heartbeat_ = false;
  uint32_t unpublished_ = 0;
};

}  // namespace canal::parser
