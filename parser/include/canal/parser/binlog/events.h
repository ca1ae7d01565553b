// Decoded binlog events other than rows: plain structs filled by EventDecoder.
//
// String views point into the event buffer the decoder was given (or into a
// buffer the decoder owns, for decompressed events); they are valid until the
// next call to EventDecoder::Decode. Copy what must outlive that.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/parser/binlog/event_type.h"

namespace canal::binlog {

// Common 19-byte (v4) or 13-byte (v1) event header.
struct EventHeader {
  uint32_t timestamp = 0;
  uint8_t type_code = 0;
  uint32_t server_id = 0;
  uint32_t event_size = 0;
  uint32_t log_pos = 0;  // end offset of the event; 0 in v1 and inside payloads
  uint16_t flags = 0;
  EventType type() const { return static_cast<EventType>(type_code); }
};

constexpr uint16_t kLogEventBinlogInUseFlag = 0x1;
constexpr uint16_t kLogEventIgnorableFlag = 0x80;

enum class ChecksumAlg : uint8_t { kOff = 0, kCrc32 = 1, kUndefined = 255 };

enum class ServerFlavor : uint8_t { kMySQL, kMariaDB };

// FORMAT_DESCRIPTION (or START_EVENT_V3 for v1/v3 binlogs).
struct FormatDescription {
  uint16_t binlog_version = 4;
  std::string server_version;
  uint32_t create_timestamp = 0;
  uint8_t header_length = 19;
  std::vector<uint8_t> post_header_lengths;  // index = type code - 1
  ChecksumAlg checksum = ChecksumAlg::kOff;
  ServerFlavor flavor = ServerFlavor::kMySQL;
  int version_major = 0, version_minor = 0, version_patch = 0;
  // Pre-GA MySQL 5.1/5.2 development trees numbered some events differently;
  // the decoder reports them under their GA codes.
  bool pre_ga_numbering = false;

  // Post-header length for a type, or `fallback` when the table has no entry.
  uint8_t PostHeaderLength(uint8_t type_code, uint8_t fallback) const {
    if (type_code == 0 || type_code > post_header_lengths.size()) return fallback;
    return post_header_lengths[type_code - 1];
  }
};

struct QueryEvent {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  std::string_view db;
  std::string_view query;
  // Status variables (present-flags say which were in the event).
  bool has_flags2 = false;
  uint32_t flags2 = 0;
  bool has_sql_mode = false;
  uint64_t sql_mode = 0;
  bool has_charset = false;
  uint16_t charset_client = 0, collation_connection = 0, collation_server = 0;
  std::string_view time_zone;
  std::string_view catalog;
  uint16_t auto_increment_increment = 0, auto_increment_offset = 0;
  bool has_ddl_xid = false;
  uint64_t ddl_xid = 0;
  // Set when a status variable we do not know stopped status parsing; db and query
  // are still right because the status block has its own length.
  bool unknown_status_var = false;
};

struct RotateEvent {
  uint64_t position = 0;
  std::string_view next_file;
};

struct XidEvent {
  uint64_t xid = 0;
};

// INTVAR: LAST_INSERT_ID (1) or INSERT_ID (2).
struct IntvarEvent {
  uint8_t kind = 0;
  uint64_t value = 0;
};

struct RandEvent {
  uint64_t seed1 = 0, seed2 = 0;
};

struct UserVarEvent {
  std::string_view name;
  bool is_null = true;
  uint8_t value_type = 0;  // STRING_RESULT 0, REAL_RESULT 1, INT_RESULT 2, ROW_RESULT 3, DECIMAL_RESULT 4
  uint32_t charset = 0;
  std::string_view value;  // raw bytes as logged
  uint8_t flags = 0;       // 1 = unsigned
};

// MySQL GTID / ANONYMOUS_GTID / GTID_TAGGED.
struct GtidEvent {
  bool anonymous = false;
  uint8_t flags = 0;  // 1 = may have changes that are not transactional
  std::array<uint8_t, 16> sid{};
  int64_t gno = 0;
  std::string tag;  // MySQL 8.4+ tagged GTID; empty otherwise
  bool has_logical_clock = false;
  int64_t last_committed = 0, sequence_number = 0;
  uint64_t immediate_commit_timestamp = 0;  // microseconds, 0 when absent
  uint64_t original_commit_timestamp = 0;
  uint64_t transaction_length = 0;
  // "uuid:gno" or "uuid:tag:gno"; empty for anonymous.
  std::string ToString() const;
};

struct GtidInterval {
  int64_t start = 0, end = 0;  // [start, end)
};
struct GtidSetEntry {
  std::array<uint8_t, 16> sid{};
  std::string tag;
  std::vector<GtidInterval> intervals;
};
struct PreviousGtidsEvent {
  std::vector<GtidSetEntry> entries;
  // "uuid:1-5:7,uuid2[:tag]:1-3"
  std::string ToString() const;
};

// MariaDB GTID (domain-server-seq) that starts every event group.
struct MariaGtidEvent {
  uint64_t seq_no = 0;
  uint32_t domain_id = 0;
  uint32_t server_id = 0;  // from the event header
  uint8_t flags = 0;       // FL_STANDALONE 1, FL_GROUP_COMMIT_ID 2, FL_TRANSACTIONAL 4, ... FL_PREPARED_XA 64, FL_COMPLETED_XA 128
  uint64_t commit_id = 0;
  std::string_view xa_xid;  // gtrid+bqual bytes for XA event groups
  bool standalone() const { return flags & 1; }
  // "domain-server-seq" written at `out`, which has room for kTextMax bytes; returns its end.
  // Once per transaction read (the transaction's GTID), so no temporary strings.
  static constexpr size_t kTextMax = 10 + 1 + 10 + 1 + 20;
  char* WriteText(char* out) const { return WriteText(domain_id, server_id, seq_no, out); }
  // The same text for any MariaDB GTID (a GTID list's, a GTID state's domains).
  static char* WriteText(uint32_t domain_id, uint32_t server_id, uint64_t seq_no, char* out);
  std::string ToString() const;  // "domain-server-seq"
};

struct MariaGtidListEvent {
  struct Entry {
    uint32_t domain_id = 0, server_id = 0;
    uint64_t seq_no = 0;
  };
  std::vector<Entry> gtids;
  std::string ToString() const;
};

struct BinlogCheckpointEvent {
  std::string_view file;
};

// ANNOTATE_ROWS (MariaDB) and ROWS_QUERY (MySQL): the statement behind rows.
struct RowsQueryEvent {
  std::string_view query;
};

struct XaPrepareEvent {
  bool one_phase = false;
  int32_t format_id = 0;
  std::string_view gtrid, bqual;
};

struct HeartbeatEvent {
  std::string_view log_file;
  uint64_t log_position = 0;  // v2 carries it in the body; v1 in the header's log_pos
};

struct IncidentEvent {
  uint16_t incident = 0;
  std::string_view message;
};

struct TransactionPayloadEvent {
  uint64_t payload_size = 0;
  uint64_t uncompressed_size = 0;
  uint8_t compression = 0;  // 0 zstd, 255 none
  std::string_view payload;
};

}  // namespace canal::binlog
