// Our decoded column values next to `mariadb-binlog -vv` text, so fixture tests
// can compare values (not formatting) with mariadb-10.11/*.decoded-vv.txt.
//
// What -vv prints (MariaDB 10.11), observed in those files:
//  - integers: the value read as SIGNED at the column's width, plus " (<unsigned>)"
//    when that is negative, whatever the column's signedness: "-1 (255)".
//  - YEAR: 1900 + the stored byte, so the zero year prints as 1900.
//  - FLOAT: printf "%-20g" (6 significant digits, padded); DOUBLE: "%.20g".
//  - DECIMAL: plain text with exactly `scale` fraction digits.
//  - DATE 'YYYY:MM:DD' (colons), TIME '[-]HH:MM:SS[.f]', DATETIME
//    'YYYY-MM-DD HH:MM:SS[.f]', TIMESTAMP as unix seconds [.f]; fraction digits =
//    the column's fsp.
//  - strings, BLOB/TEXT, BINARY, GEOMETRY (SRID + WKB), MariaDB JSON (LONGTEXT):
//    quoted; bytes below 0x20 as \xNN (lower-case hex), everything else raw
//    (quotes and backslashes are not escaped, so the text is ambiguous).
//  - ENUM: the 1-based index; SET: b'<bits>', the bitmap's bytes in storage
//    (little-endian) order, each byte most significant bit first; BIT(n): b'<n bits>'.
//  - NULL: NULL.
#pragma once

#include <string>
#include <string_view>

#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::testing {

// Renders one of our values the way -vv prints it, as ParseDecodedVv records it
// (FLOAT without its padding). "" for an absent value. Where the rendering needs
// facts the value lacks (BIT width, SET size) they come from `col`. Lossy where
// -vv is (FLOAT); use VvValueMatches to compare.
std::string FormatLikeMariadbBinlog(const canal::binlog::ColumnValue& v,
                                    const canal::binlog::ColumnInfo& col);

// True when `vv_text` (a VvColumn::value) shows the same value as `v`. Both sides
// are normalised where -vv is odd or lossy: signed/unsigned integer readings,
// the 1900 zero year, FLOAT compared at -vv's 6 digits, DOUBLE numerically,
// DECIMAL without insignificant zeros, temporal values field by field, strings
// by escaping ours the -vv way, SET/BIT as numbers. On false, *why (if given)
// says what differed.
bool VvValueMatches(const canal::binlog::ColumnValue& v, const canal::binlog::ColumnInfo& col,
                    std::string_view vv_text, std::string* why);

// Bytes as -vv prints them inside quotes: < 0x20 as \xNN, the rest unchanged.
std::string EscapeLikeMariadbBinlog(std::string_view bytes);

}  // namespace canal::testing
