// Decompression of MySQL transaction payloads and MariaDB compressed events.
// Internal to parser/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"

namespace canal::binlog {

// Largest uncompressed size either function will produce: a declared size above
// it is refused (NotSupported) before anything is allocated.
constexpr uint64_t kMaxUncompressedEventBytes = uint64_t{1} << 30;  // 1 GiB

// Inflates a TRANSACTION_PAYLOAD_EVENT payload (from
// DecodeTransactionPayloadHeader) into *out: the concatenated inner events,
// each with a 19-byte common header and no checksum.
//   compression 0 (zstd): one or more zstd frames; the output must be exactly
//     ev.uncompressed_size bytes (Corruption if the data says otherwise, or the
//     frame is corrupt or cut short). The buffer grows with the data, so a small
//     event declaring a huge size does not allocate it up front.
//   compression 255 (none): the payload is copied; a non-zero declared
//     uncompressed size must equal the payload size.
//   any other type: NotSupported.
Status DecompressTransactionPayload(const TransactionPayloadEvent& ev, std::string* out);

// Inflates one MariaDB compressed block (log_bin_compress=ON).
//
// Block layout: one header byte -- bit 7 set (compressed), bits 4-6 the
// algorithm (0 = zlib, the only one MariaDB defines), bits 0-2 the number N
// (1..4) of length bytes -- then the uncompressed length as an N-byte
// BIG-endian integer (non-zero), then a zlib stream (RFC 1950, as written by
// zlib's compress()). The block runs to the end of the event body.
//
// Where the block sits (body = bytes after the common header, checksum removed):
//   QUERY_COMPRESSED_EVENT (165): laid out like QUERY_EVENT up to and including
//     the NUL after the database name (13-byte post-header: thread_id 4,
//     exec_time 4, db_len 1, error_code 2, status_vars_len 2; status variables;
//     db name; NUL). Pass `data` = body.substr(13 + status_vars_len + db_len + 1);
//     *out is the query text (what QUERY_EVENT carries after that NUL).
//   WRITE/UPDATE/DELETE_ROWS_COMPRESSED_EVENT_V1 (166/167/168) and the V2 forms
//     (169/170/171): uncompressed are the post-header (table_id, flags, and for
//     169-171 the 2-byte extra-data length that counts itself, plus that data),
//     the packed column count, the columns-present bitmap ((count+7)/8 bytes)
//     and, for UPDATE (167/170) only, the after-image bitmap of the same size.
//     Pass `data` = the rest of the body after those; *out is the row images
//     exactly as they follow the bitmap(s) in the uncompressed event of the
//     same kind (166->23, 167->24, 168->25, 169->30, 170->31, 171->32).
//
// *consumed = header + length bytes + the zlib stream's length. Bytes of `data`
// after the stream are not examined (MariaDB ignores them too); the caller may
// treat consumed < data.size() as it sees fit. The inflated size must equal the
// declared length (Corruption otherwise, as for corrupt or cut-short streams);
// an algorithm other than zlib or a length over 1 GiB is NotSupported.
Status MariaUncompress(std::string_view data, std::string* out, size_t* consumed);

}  // namespace canal::binlog
