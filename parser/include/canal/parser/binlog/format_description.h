// Decoding FORMAT_DESCRIPTION and START_EVENT_V3, and the event-type renumbering
// of a few pre-GA MySQL 5.1/5.2 development trees. Internal to parser/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"

namespace canal::binlog {

// `body` is the event after its 19-byte header, checksum included.
// *has_checksum tells whether the event carries the checksum-algorithm byte
// and a trailing CRC32 (MySQL >= 5.6.1, MariaDB >= 5.3).
Status DecodeFormatDescription(const uint8_t* body, size_t size, FormatDescription* fde, bool* has_checksum);

// START_EVENT_V3 of a v1 (13-byte headers) or v3 binlog: whole event bytes.
Status DecodeStartV3(const uint8_t* event, size_t size, FormatDescription* fde);

// True when the server's SHOW CREATE TABLE prints integer display widths
// ("int(11)", "tinyint(3) unsigned", "year(4)"): MariaDB, and MySQL before 8.0.19
// (which dropped them, keeping only tinyint(1)).
bool PrintsIntegerDisplayWidths(const FormatDescription& fde);

// True when TIMESTAMP/DATETIME/TIME under the old type codes (7/12/11) may be
// MariaDB's TIMESTAMP(N)/DATETIME(N)/TIME(N), N > 0, whose value length the
// binlog does not say (MariaDB >= 5.3; see kUnknownTemporalPrecision).
bool WritesMariaDbHiresTemporal(const FormatDescription& fde);

// Maps a raw type code to its GA meaning (identity except for the pre-GA trees).
uint8_t RemapEventType(const FormatDescription& fde, uint8_t raw);

}  // namespace canal::binlog
