// Decoders for GTID, XA, heartbeat and transaction-payload event bodies.
//
// Every function takes `body`: the event bytes after the common header, with
// the trailing checksum (if any) already removed, i.e. post-header + payload.
// On success the whole of *out is replaced; on error *out is left untouched.
// String views in *out point into `body`.
//
// Errors are Truncated (the body ends inside a field) or Corruption (a value is
// impossible: a count that cannot fit the body, a length over its limit, ...),
// or NotSupported (a well-formed encoding from a newer server that we cannot
// read). Messages name the event and the field ("GTID event: sid truncated");
// the caller adds the file name and offset. Internal to parser/.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"

namespace canal::binlog {

// MySQL GTID_LOG_EVENT (33) or ANONYMOUS_GTID_LOG_EVENT (34, `anonymous`).
// Reads flags, sid, gno, then whatever optional fields the body length says are
// present, as MySQL does: the logical clock (only when the type code is 2;
// other codes from 5.7.4-and-older servers end decoding), the 7-byte commit
// timestamps (bit 55 of the first says the original one follows), the packed
// transaction length, the server versions and the commit-group ticket. An
// optional trailing field that is only partly present is ignored like MySQL
// does, except where a flag bit promised it (then Truncated). For a GTID the
// gno must be in [1, 2^63-1); an anonymous event's gno is not checked.
Status DecodeGtidEvent(std::string_view body, bool anonymous, GtidEvent* out);

// MySQL 8.4+ GTID_TAGGED_LOG_EVENT (42). The body is one message of MySQL's
// serialization library (libs/mysql/serialization): a varlen format version
// (1), the varlen message size (counted from the message start), the varlen
// id of the last non-ignorable field, then (varlen field id, data) pairs with
// ids 0..11 in order: flags, sid (16 varlen bytes), gno (signed), tag
// (varlen length + text, at most 32), last_committed, sequence_number
// (signed), immediate/original commit timestamp, transaction length,
// immediate/original server version, commit-group ticket. Absent fields keep
// their defaults (a missing original timestamp equals the immediate one);
// fields from newer servers are skipped through the message size, unless the
// message marks one as non-ignorable (NotSupported). The sid and gno must be
// present. The tag is validated and lower-cased as MySQL does.
Status DecodeGtidTaggedEvent(std::string_view body, GtidEvent* out);

// PREVIOUS_GTIDS_LOG_EVENT (35), untagged (8-byte sid count) and tagged (MySQL
// 8.3+: count word = format 1 in the first and last byte, count in the 6
// bytes between; each sid is followed by a varlen-length tag) encodings.
// Counts are checked against the body before anything is allocated; intervals
// must satisfy 1 <= start < end; the encoding must fill the body exactly.
Status DecodePreviousGtidsEvent(std::string_view body, PreviousGtidsEvent* out);

// MariaDB GTID_EVENT (162). `server_id` comes from the common header. Reads
// seq_no, domain_id, flags2, commit_id when FL_GROUP_COMMIT_ID (2) is set, and
// the XID (format_id, gtrid/bqual lengths <= 64 each, data; out->xa_xid =
// gtrid+bqual) when FL_PREPARED_XA (64) or FL_COMPLETED_XA (128) is set.
// Anything after that (zero padding of the 19-byte post-header, flags_extra and
// its fields in 10.5+) is ignored.
Status DecodeMariaGtidEvent(std::string_view body, uint32_t server_id, MariaGtidEvent* out);

// MariaDB GTID_LIST_EVENT (163): 4-byte word (count in the low 28 bits, flags
// above, ignored) then count x (domain_id 4, server_id 4, seq_no 8).
Status DecodeMariaGtidListEvent(std::string_view body, MariaGtidListEvent* out);

// XA_PREPARE_LOG_EVENT (38), same layout in MySQL and MariaDB: one_phase 1,
// format_id 4, gtrid_length 4, bqual_length 4 (each <= 64), gtrid, bqual.
Status DecodeXaPrepareEvent(std::string_view body, XaPrepareEvent* out);

// HEARTBEAT_LOG_EVENT_V2 (41): packed-int (type, length, value) fields:
// 1 log file name (bytes), 2 log position (packed int), 0 end mark. Unknown
// fields are skipped by their length; a missing end mark is accepted.
Status DecodeHeartbeatV2Event(std::string_view body, HeartbeatEvent* out);

// TRANSACTION_PAYLOAD_EVENT (40). The body starts directly with packed-int
// (type, length, value) fields, whatever the FDE's post-header length for
// type 40 says (MySQL 8.0 advertises 40 but writes none): 1 payload size,
// 2 compression type (0 zstd, 255 none; absent = none), 3 uncompressed size,
// 0 end mark (required). Unknown fields are skipped by their length. The rest
// of the body is the payload and must be exactly the declared payload size
// (absent = the rest). out->payload is a view into `body`.
Status DecodeTransactionPayloadHeader(std::string_view body, TransactionPayloadEvent* out);

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex.
std::string FormatUuid(const std::array<uint8_t, 16>& sid);

}  // namespace canal::binlog
