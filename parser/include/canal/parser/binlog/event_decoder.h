// EventDecoder: turns the bytes of one binlog event into an Event.
//
// The decoder is stateful the way a binlog is: it remembers the current
// FORMAT_DESCRIPTION (header length, post-header lengths, checksum algorithm) and
// the TABLE_MAPs of the current statement, so the same decoder must see a file's
// or stream's events in order. It works on raw bytes and knows nothing of files or
// sockets: BinlogFileReader feeds it from a file, the replica connection from a
// socket. TRANSACTION_PAYLOAD events are expanded: after decoding one, call
// NextInner until it reports no more events.
//
// Not thread-safe; one decoder per stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "canal/common/status.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/schema_provider.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::binlog {

struct DecoderOptions {
  // Verify CRC32 on every event that carries one.
  bool verify_checksum = true;
  // Consulted for column names/keys when TABLE_MAP has no COLUMN_NAME metadata.
  TableSchemaProvider* schema_provider = nullptr;
};

class EventDecoder {
 public:
  explicit EventDecoder(DecoderOptions options = {});
  ~EventDecoder();
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // Name used in error messages ("mysql-bin.000003"); set when the source changes.
  void set_source_name(std::string name) { source_ = std::move(name); }
  const std::string& source_name() const { return source_; }

  // Decodes the complete event in [data, data+size) found at `offset`. The bytes
  // must stay valid while the returned Event is used. `checksum_checked`: the
  // caller found that the event's last 4 bytes are the CRC32 of the rest (on
  // another thread); with a CRC32 binlog it is not computed again.
  Status Decode(const uint8_t* data, size_t size, uint64_t offset, Event* event, bool checksum_checked = false);

  // Moves the event just decoded (and a payload's events still to come) to
  // `offset`: for a stream whose source learns the event's place only from
  // its header (a dump in which the server skipped bytes).
  void Relocate(uint64_t offset, Event* event);

  // After a TRANSACTION_PAYLOAD event: decodes the next event inside it into
  // *event, or sets *done when the payload is exhausted.
  Status NextInner(Event* event, bool* done);
  bool has_pending_inner() const;

  // Size of the event at `data` as its header says (for framing a file), or an
  // error when fewer than a header's bytes are available or the size is absurd.
  Status PeekEventSize(const uint8_t* data, size_t available, uint64_t offset, uint32_t* size) const;

  const FormatDescription& format() const { return *fde_; }
  bool has_format() const { return have_fde_; }
  const TableMap* FindTable(uint64_t table_id) const;
  // The same table map, shared: a transaction buffer keeps it alive after the
  // decoder has moved on to a newer TABLE_MAP for the same id.
  std::shared_ptr<const TableMap> ShareTable(uint64_t table_id) const;
  // Forgets the format and tables (start of a new file with its own FDE).
  void ResetForNewSource();

  // Header size for the current format (19 for v3/v4, 13 for v1).
  size_t header_length() const { return fde_->header_length ? fde_->header_length : 19; }

 private:
  Status DecodeBody(const uint8_t* body, size_t body_size, Event* event);
  Status DecodeRowsHead(const RowsEventInfo& rows_info, const uint8_t* body, size_t body_size, Event* event);
  Status DecodeTableMapEvent(const uint8_t* body, size_t body_size, Event* event);
  // `s` as the failure of `event`'s body: its offset and type named.
  Status BodyError(const Event& event, const Status& s) const;
  Status Fail(Status::Code code, uint64_t offset, std::string_view what) const;
  const std::shared_ptr<TableMap>* Lookup(uint64_t table_id) const;
  void ClearTables();  // tables_.clear() and the lookup cache with it

  DecoderOptions options_;
  std::string source_;
  std::unique_ptr<FormatDescription> fde_;
  bool have_fde_ = false;
  std::unordered_map<uint64_t, std::shared_ptr<TableMap>> tables_;
  mutable uint64_t last_id_ = 0;  // Lookup's last hit
  mutable const std::shared_ptr<TableMap>* last_slot_ = nullptr;
  // The TABLE_MAP body each of tables_ was decoded from, to reuse the map when
  // the next TABLE_MAP for the id is the same bytes.
  std::unordered_map<uint64_t, std::string> table_map_bytes_;
  struct PayloadState;
  std::unique_ptr<PayloadState> payload_;
  std::string inflate_buf_;  // decompressed MariaDB compressed events
  std::unique_ptr<JsonRowCache> json_rows_;  // documents for MINIMAL partial JSON updates
};

}  // namespace canal::binlog
