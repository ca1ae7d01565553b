// Row changes as `mariadb-binlog -vv --base64-output=decode-rows` prints them
// (shared/fixtures/binlog/mariadb-10.11/*.decoded-vv.txt), as data a fixture test
// can compare with our decoder's rows.
//
// How -vv lays rows out, and what is recorded:
//  - Every event is introduced by "# at <pos>" and a header line
//    "#<date> <time> server id N  end_log_pos M ... \t<Name>: ...". Several
//    "# at" lines can come before their headers (ANNOTATE_ROWS + TABLE_MAP, or a
//    statement split over several rows events); they pair with the headers in order.
//  - A statement's rows are printed only after its last rows event (the one with
//    STMT_END_F), for all its rows events together, followed by
//    "# Number of rows: N". The text does not say which row came from which of the
//    statement's rows events, so each row records the statement's first and last
//    (STMT_END_F) rows-event positions, and the TABLE_MAP position for its table.
//  - Values are "###   @<1-based index>=<value> /* <type> meta=M nullable=B is_null=B */";
//    FLOAT values are padded with spaces, which are dropped here. Strings are
//    quoted as printed (bytes < 0x20 as \xNN, quotes and backslashes unescaped,
//    other bytes raw); a value with a raw newline would continue on the next line,
//    which is joined back with '\n'.
// The text is bytes, not necessarily UTF-8. Parsing is strict: anything that is not
// understood where a row is expected, and a row count that disagrees with
// "# Number of rows", is an error naming the line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::testing {

struct VvColumn {
  int index = 0;             // 1-based column number (@N)
  std::string value;         // exactly as printed: 123, -1 (255), 'text', b'0101', NULL, ...
  std::string type_comment;  // "/* INT meta=0 nullable=0 is_null=0 */"
  bool is_null = false;      // from the comment's is_null=1
};

enum class VvRowKind : uint8_t { kInsert, kUpdate, kDelete };

struct VvRowOp {
  uint64_t event_pos = 0;        // "# at" of the statement's STMT_END_F rows event
  uint64_t first_event_pos = 0;  // "# at" of the statement's first rows event
  uint64_t table_map_pos = 0;    // "# at" of the last TABLE_MAP for db.table before it; 0 if none
  int line = 0;                  // 1-based line of the "### INSERT/UPDATE/DELETE" line
  std::string db, table;
  VvRowKind kind = VvRowKind::kInsert;
  std::vector<VvColumn> before;  // WHERE image (UPDATE, DELETE); ascending index
  std::vector<VvColumn> after;   // SET image (INSERT, UPDATE); ascending index
};

// Parses the file at `path`; *out receives every row change in file order.
Status ParseDecodedVv(const std::string& path, std::vector<VvRowOp>* out);

// The same on text; `source` names it in messages.
Status ParseDecodedVvText(std::string_view text, std::string_view source, std::vector<VvRowOp>* out);

}  // namespace canal::testing
