// What the fixture folder's README (shared/fixtures/binlog/README.md) says each
// binlog file contains, as data a fixture test can assert against.
//
// Sources, per file:
//  - the per-file provenance tables ("| file (here) | ... | events / notes |"):
//    the counts after the last " — " of the notes cell (or the whole cell when it
//    has no dash): "NAME×N, ...", then "; "-separated "inside payload: ...",
//    "col types: ...", "opt. metadata: ...", "FDE in-use flag set",
//    "originally ..." segments;
//  - the `mariadb-10.11/` table ("| file | bytes | contents |"): its contents are
//    prose, so the counts come from the file's `.show_binlog_events.tsv` instead.
//    SHOW BINLOG EVENTS ran before the server's clean shutdown, so the listing of
//    the last file lacks the STOP event written at shutdown: when the file on disk
//    is longer than the listing and the README row says "ends with STOP", one STOP
//    is added (any other shortfall is an error). "NAME×N" tokens in the row's prose
//    must agree with the listing.
//  - negative tests: a notes cell saying "negative test" (kind from "truncated",
//    "corrupt", "bad magic"); cross-checked against the Coverage table's
//    "negative tests" row when that row is present.
//
// Every name is mapped to a type code; an unknown name, a malformed row or an
// unknown notes segment is an error naming the README line. Nothing is dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::testing {

enum class FixtureFailure : uint8_t {
  kNone,
  kTruncated,  // the file ends inside an event (or its header)
  kCorrupt,    // framing intact, an event body is garbage
  kBadMagic,   // not a binlog at all
};

using EventCounts = std::map<uint8_t, uint64_t>;  // type code -> count

struct FixtureFileExpectation {
  std::string path;      // relative to fixtures/binlog/
  int readme_line = 0;   // 1-based line of the row, for messages
  std::string server;    // FDE server version as the README gives it ("" when none)
  std::string checksum;  // "CRC32", "OFF", "none(pre-5.6)", ...; "" when not given

  // Outer events by type code (a TRANSACTION_PAYLOAD counts once, as type 40).
  // For old_type_numbering files: the decoded GA types (what a decoder that
  // remaps the pre-GA numbering must report).
  EventCounts event_counts;
  // Events inside TRANSACTION_PAYLOAD events (not part of event_counts).
  EventCounts payload_event_counts;
  // ver_5_1-wl2325_*: a 5.2.2 dev tree with pre-GA event type numbering.
  // raw_type_counts holds the type bytes as they are in the file.
  bool old_type_numbering = false;
  EventCounts raw_type_counts;

  FixtureFailure expected_failure = FixtureFailure::kNone;
  uint64_t failure_offset = 0;  // file offset the README names for the failure, 0 if none
  bool gzip = false;            // the file is gzip-compressed (name ends in .gz)
  bool fde_in_use = false;      // "FDE in-use flag set"
  std::vector<uint8_t> column_types;       // ColumnType codes from "col types:"
  std::vector<uint8_t> optional_metadata;  // OptionalMetadataType codes from "opt. metadata:"

  uint64_t total_events() const;
};

// Reads and parses the README at `readme_path`; the .tsv files of the
// mariadb-10.11 table are looked up beside it.
Status LoadFixtureExpectations(const std::string& readme_path,
                               std::vector<FixtureFileExpectation>* out);

// The same on README text; `binlog_dir` is the fixtures/binlog folder (needed
// only when the text has a mariadb-10.11 style table). `source` names the text in
// messages.
Status ParseFixtureReadme(std::string_view text, const std::string& binlog_dir,
                          std::string_view source, std::vector<FixtureFileExpectation>* out);

// Type code for an event name as the README writes it (GA names, the README's
// abbreviations such as FDE / ANON_GTID / M_GTID / TX_PAYLOAD, AURORA_PADDING,
// MariaDB names). `mariadb` selects MariaDB's meaning of the ambiguous "GTID"
// (162 instead of 33). NotFound for anything else.
Status EventCodeForReadmeName(std::string_view name, bool mariadb, uint8_t* code);

// Type code for an Event_type of SHOW BINLOG EVENTS on MariaDB ("Gtid",
// "Write_rows_v1", "Query_compressed", ...). NotFound for anything else.
Status EventCodeForShowBinlogName(std::string_view name, uint8_t* code);

// Counts events of a MariaDB `SHOW BINLOG EVENTS` listing (tab-separated, header
// line first). *last_end_pos is the End_log_pos of the last row.
Status ParseShowBinlogEventsTsv(std::string_view text, std::string_view source,
                                EventCounts* counts, uint64_t* last_end_pos);

}  // namespace canal::testing
