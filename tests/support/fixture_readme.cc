#include "support/fixture_readme.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "support/fixtures.h"
#include "support/text_scan.h"

namespace canal::testing {

namespace {

constexpr std::string_view kTimes = "\xC3\x97";           // U+00D7 MULTIPLICATION SIGN
constexpr std::string_view kDashSep = " \xE2\x80\x94 ";   // " — " (U+2014 EM DASH)

struct NameCode {
  std::string_view name;
  uint8_t code;
};

// Event names used by the README (GA names, its abbreviations, MariaDB names).
// "GTID" is resolved separately because MariaDB and MySQL mean different events.
constexpr NameCode kEventNames[] = {
    {"UNKNOWN", 0},
    {"START_V3", 1},
    {"QUERY", 2},
    {"STOP", 3},
    {"ROTATE", 4},
    {"INTVAR", 5},
    {"LOAD", 6},
    {"SLAVE", 7},
    {"CREATE_FILE", 8},
    {"APPEND_BLOCK", 9},
    {"EXEC_LOAD", 10},
    {"DELETE_FILE", 11},
    {"NEW_LOAD", 12},
    {"RAND", 13},
    {"USER_VAR", 14},
    {"FDE", 15},
    {"FORMAT_DESCRIPTION", 15},
    {"XID", 16},
    {"BEGIN_LOAD_QUERY", 17},
    {"EXECUTE_LOAD_QUERY", 18},
    {"TABLE_MAP", 19},
    {"WRITE_ROWS_V0", 20},
    {"UPDATE_ROWS_V0", 21},
    {"DELETE_ROWS_V0", 22},
    {"WRITE_ROWS_V1", 23},
    {"UPDATE_ROWS_V1", 24},
    {"DELETE_ROWS_V1", 25},
    {"INCIDENT", 26},
    {"HEARTBEAT", 27},
    {"IGNORABLE", 28},
    {"ROWS_QUERY", 29},
    {"WRITE_ROWS_V2", 30},
    {"UPDATE_ROWS_V2", 31},
    {"DELETE_ROWS_V2", 32},
    {"ANON_GTID", 34},
    {"ANONYMOUS_GTID", 34},
    {"PREV_GTIDS", 35},
    {"PREVIOUS_GTIDS", 35},
    {"TRANSACTION_CONTEXT", 36},
    {"VIEW_CHANGE", 37},
    {"XA_PREPARE", 38},
    {"PARTIAL_UPDATE_ROWS", 39},
    {"TX_PAYLOAD", 40},
    {"TRANSACTION_PAYLOAD", 40},
    {"HEARTBEAT_V2", 41},
    {"GTID_TAGGED", 42},
    {"AURORA_PADDING", 100},
    {"ANNOTATE", 160},
    {"ANNOTATE_ROWS", 160},
    {"MARIA_ANNOTATE_ROWS", 160},
    {"CHECKPOINT", 161},
    {"BINLOG_CHECKPOINT", 161},
    {"MARIA_BINLOG_CHECKPOINT", 161},
    {"M_GTID", 162},
    {"MARIA_GTID", 162},
    {"GTID_LIST", 163},
    {"MARIA_GTID_LIST", 163},
    {"START_ENCRYPTION", 164},
    {"MARIA_START_ENCRYPTION", 164},
    {"QUERY_COMPRESSED", 165},
    {"MARIA_QUERY_COMPRESSED", 165},
    {"WRITE_ROWS_COMPRESSED_V1", 166},
    {"MARIA_WRITE_ROWS_COMPRESSED_V1", 166},
    {"UPDATE_ROWS_COMPRESSED_V1", 167},
    {"MARIA_UPDATE_ROWS_COMPRESSED_V1", 167},
    {"DELETE_ROWS_COMPRESSED_V1", 168},
    {"MARIA_DELETE_ROWS_COMPRESSED_V1", 168},
    {"WRITE_ROWS_COMPRESSED", 169},
    {"MARIA_WRITE_ROWS_COMPRESSED", 169},
    {"UPDATE_ROWS_COMPRESSED", 170},
    {"MARIA_UPDATE_ROWS_COMPRESSED", 170},
    {"DELETE_ROWS_COMPRESSED", 171},
    {"MARIA_DELETE_ROWS_COMPRESSED", 171},
};

// MariaDB SHOW BINLOG EVENTS Event_type names.
constexpr NameCode kShowBinlogNames[] = {
    {"Start_v3", 1},
    {"Query", 2},
    {"Stop", 3},
    {"Rotate", 4},
    {"Intvar", 5},
    {"Load", 6},
    {"Slave", 7},
    {"Create_file", 8},
    {"Append_block", 9},
    {"Exec_load", 10},
    {"Delete_file", 11},
    {"New_load", 12},
    {"RAND", 13},
    {"User var", 14},
    {"Format_desc", 15},
    {"Xid", 16},
    {"Begin_load_query", 17},
    {"Execute_load_query", 18},
    {"Table_map", 19},
    {"Write_rows_v0", 20},
    {"Update_rows_v0", 21},
    {"Delete_rows_v0", 22},
    {"Write_rows_v1", 23},
    {"Update_rows_v1", 24},
    {"Delete_rows_v1", 25},
    {"Incident", 26},
    {"Heartbeat", 27},
    {"Ignorable", 28},
    {"Rows_query", 29},
    {"Write_rows", 30},
    {"Update_rows", 31},
    {"Delete_rows", 32},
    {"Gtid_log_event", 33},
    {"Anonymous_Gtid", 34},
    {"Previous_gtids", 35},
    {"XA_prepare", 38},
    {"Annotate_rows", 160},
    {"Binlog_checkpoint", 161},
    {"Gtid", 162},
    {"Gtid_list", 163},
    {"Start_encryption", 164},
    {"Query_compressed", 165},
    {"Write_rows_compressed_v1", 166},
    {"Update_rows_compressed_v1", 167},
    {"Delete_rows_compressed_v1", 168},
    {"Write_rows_compressed", 169},
    {"Update_rows_compressed", 170},
    {"Delete_rows_compressed", 171},
};

constexpr NameCode kColumnTypeNames[] = {
    {"DECIMAL", 0},     {"TINY", 1},          {"SHORT", 2},        {"LONG", 3},
    {"FLOAT", 4},       {"DOUBLE", 5},        {"NULL", 6},         {"TIMESTAMP", 7},
    {"LONGLONG", 8},    {"INT24", 9},         {"DATE", 10},        {"TIME", 11},
    {"DATETIME", 12},   {"YEAR", 13},         {"NEWDATE", 14},     {"VARCHAR", 15},
    {"BIT", 16},        {"TIMESTAMP2", 17},   {"DATETIME2", 18},   {"TIME2", 19},
    {"TYPED_ARRAY", 20}, {"VECTOR", 242},     {"JSON", 245},       {"NEWDECIMAL", 246},
    {"ENUM", 247},      {"SET", 248},         {"TINY_BLOB", 249},  {"MEDIUM_BLOB", 250},
    {"LONG_BLOB", 251}, {"BLOB", 252},        {"VAR_STRING", 253}, {"STRING", 254},
    {"GEOMETRY", 255},
};

constexpr NameCode kOptionalMetadataNames[] = {
    {"SIGNEDNESS", 1},
    {"DEFAULT_CHARSET", 2},
    {"COLUMN_CHARSET", 3},
    {"COLUMN_NAME", 4},
    {"SET_STR_VALUE", 5},
    {"ENUM_STR_VALUE", 6},
    {"GEOMETRY_TYPE", 7},
    {"SIMPLE_PRIMARY_KEY", 8},
    {"PRIMARY_KEY_WITH_PREFIX", 9},
    {"ENUM_AND_SET_DEFAULT_CHARSET", 10},
    {"ENUM_AND_SET_COLUMN_CHARSET", 11},
    {"COLUMN_VISIBILITY", 12},
    {"VECTOR_DIMENSIONALITY", 13},
};

template <size_t N>
std::optional<uint8_t> Lookup(const NameCode (&table)[N], std::string_view name) {
  for (const NameCode& nc : table) {
    if (nc.name == name) return nc.code;
  }
  return std::nullopt;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

std::string Lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::vector<std::string_view> Split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + sep.size();
  }
}

// Backticked tokens of a cell, in order, with the text that follows each.
struct Backticked {
  std::string_view token;
  std::string_view after;
};
std::vector<Backticked> BacktickedTokens(std::string_view cell) {
  std::vector<Backticked> out;
  size_t pos = 0;
  while (true) {
    size_t open = cell.find('`', pos);
    if (open == std::string_view::npos) break;
    size_t close = cell.find('`', open + 1);
    if (close == std::string_view::npos) break;
    out.push_back({cell.substr(open + 1, close - open - 1), cell.substr(close + 1)});
    pos = close + 1;
  }
  return out;
}

class ReadmeParser {
 public:
  ReadmeParser(std::string_view source, const std::string& binlog_dir,
               std::vector<FixtureFileExpectation>* out)
      : source_(source), binlog_dir_(binlog_dir), out_(out) {}

  Status Parse(std::string_view text);

 private:
  enum class TableKind { kNone, kProvenance, kMariadb, kCoverage, kOther };

  Status Error(std::string_view what) const {
    return Status::Corruption(std::string(source_) + " line " + std::to_string(line_no_) + ": " +
                              std::string(what));
  }

  Status SplitRow(std::string_view line, std::vector<std::string_view>* cells) const;
  Status StartTable(const std::vector<std::string_view>& header);
  Status ProvenanceRow(const std::vector<std::string_view>& cells);
  Status MariadbRow(const std::vector<std::string_view>& cells);
  Status ParseNotes(std::string_view notes, FixtureFileExpectation* e) const;
  Status ParseCountList(std::string_view list, bool mariadb, bool allow_explicit_code,
                        EventCounts* counts) const;
  Status ParseNameList(std::string_view list, std::string_view what, bool column_types,
                       std::vector<uint8_t>* codes) const;
  Status ClassifyFailure(std::string_view notes, FixtureFileExpectation* e) const;
  Status Add(FixtureFileExpectation e);
  Status CrossCheckNegativeTests() const;

  std::string_view source_;
  const std::string& binlog_dir_;
  std::vector<FixtureFileExpectation>* out_;
  int line_no_ = 0;
  std::string section_dir_;  // "mariadb-10.11/" under "## `mariadb-10.11/` ..."
  TableKind table_ = TableKind::kNone;
  size_t table_columns_ = 0;
  bool expect_separator_ = false;
  size_t server_col_ = 0, checksum_col_ = 0, notes_col_ = 0;
  std::string negative_tests_cell_;
  int negative_tests_line_ = 0;
  std::set<std::string> seen_;
};

Status ReadmeParser::SplitRow(std::string_view line, std::vector<std::string_view>* cells) const {
  line = Trim(line);
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') {
    return Error("table row does not start and end with '|'");
  }
  cells->clear();
  for (std::string_view cell : Split(line.substr(1, line.size() - 2), "|")) {
    cells->push_back(Trim(cell));
  }
  return Status::OK();
}

Status ReadmeParser::StartTable(const std::vector<std::string_view>& header) {
  table_columns_ = header.size();
  expect_separator_ = true;
  if (!header.empty() && header[0] == "file (here)") {
    bool have_server = false, have_checksum = false, have_notes = false;
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == "server") server_col_ = i, have_server = true;
      if (header[i] == "checksum") checksum_col_ = i, have_checksum = true;
      if (header[i] == "events / notes") notes_col_ = i, have_notes = true;
    }
    if (!have_server || !have_checksum || !have_notes) {
      return Error("per-file table header lacks server / checksum / events / notes columns");
    }
    table_ = TableKind::kProvenance;
  } else if (header.size() == 3 && header[0] == "file" && header[1] == "bytes" &&
             header[2] == "contents") {
    if (section_dir_.empty()) return Error("file/bytes/contents table outside a `dir/` section");
    table_ = TableKind::kMariadb;
  } else if (header.size() == 2 && header[0] == "feature" && header[1] == "files") {
    table_ = TableKind::kCoverage;
  } else {
    table_ = TableKind::kOther;
  }
  return Status::OK();
}

Status ReadmeParser::Parse(std::string_view text) {
  std::vector<std::string_view> cells;
  std::vector<std::string_view> lines = Split(text, "\n");
  bool in_code = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    line_no_ = static_cast<int>(i + 1);
    std::string_view line = Trim(lines[i]);
    if (StartsWith(line, "```")) {
      in_code = !in_code;
      continue;
    }
    if (in_code) continue;
    if (line.empty() || line.front() != '|') {
      table_ = TableKind::kNone;
      if (StartsWith(line, "#")) {
        // A "## `dir/` ..." heading names the folder its file/bytes/contents table is about.
        section_dir_.clear();
        std::vector<Backticked> toks = BacktickedTokens(line);
        if (!toks.empty() && EndsWith(toks[0].token, "/") && StartsWith(line, "## ")) {
          section_dir_ = std::string(toks[0].token);
        }
      }
      continue;
    }
    CANAL_RETURN_IF_ERROR(SplitRow(line, &cells));
    if (table_ == TableKind::kNone) {
      CANAL_RETURN_IF_ERROR(StartTable(cells));
      continue;
    }
    if (expect_separator_) {
      expect_separator_ = false;
      bool separator = std::all_of(cells.begin(), cells.end(), [](std::string_view c) {
        return !c.empty() && c.find_first_not_of("-:") == std::string_view::npos;
      });
      if (!separator) return Error("table header is not followed by a |---| line");
      continue;
    }
    if (table_ == TableKind::kOther) continue;
    if (cells.size() != table_columns_) {
      return Error("row has " + std::to_string(cells.size()) + " cells, header has " +
                   std::to_string(table_columns_));
    }
    switch (table_) {
      case TableKind::kProvenance:
        CANAL_RETURN_IF_ERROR(ProvenanceRow(cells));
        break;
      case TableKind::kMariadb:
        CANAL_RETURN_IF_ERROR(MariadbRow(cells));
        break;
      case TableKind::kCoverage:
        if (StartsWith(cells[0], "negative tests")) {
          negative_tests_cell_ = std::string(cells[1]);
          negative_tests_line_ = line_no_;
        }
        break;
      case TableKind::kOther:
      case TableKind::kNone:
        break;
    }
  }
  return CrossCheckNegativeTests();
}

Status ReadmeParser::Add(FixtureFileExpectation e) {
  if (!seen_.insert(e.path).second) return Error("file listed twice: " + e.path);
  e.readme_line = line_no_;
  e.gzip = EndsWith(e.path, ".gz");
  out_->push_back(std::move(e));
  return Status::OK();
}

Status ReadmeParser::ProvenanceRow(const std::vector<std::string_view>& cells) {
  std::vector<Backticked> file = BacktickedTokens(cells[0]);
  if (file.size() != 1 || !Trim(file[0].after).empty() || cells[0].front() != '`') {
    return Error("file cell is not one `path`: " + std::string(cells[0]));
  }
  std::string_view server = cells[server_col_];
  std::string_view notes = cells[notes_col_];
  bool negative = Contains(Lower(notes), "negative test");
  if (server.empty() && !negative) {
    // Not a binlog (expected output, SQL, text dumps): no counts to hold it to.
    if (Contains(notes, kTimes)) return Error("event counts for a file with no server column");
    return Status::OK();
  }
  FixtureFileExpectation e;
  e.path = std::string(file[0].token);
  e.server = std::string(server);
  e.checksum = std::string(cells[checksum_col_]);
  CANAL_RETURN_IF_ERROR(ClassifyFailure(notes, &e));
  CANAL_RETURN_IF_ERROR(ParseNotes(notes, &e));
  return Add(std::move(e));
}

Status ReadmeParser::ClassifyFailure(std::string_view notes, FixtureFileExpectation* e) const {
  std::string lower = Lower(notes);
  if (!Contains(lower, "negative test")) return Status::OK();
  if (Contains(lower, "bad magic") || Contains(lower, "bad-magic")) {
    e->expected_failure = FixtureFailure::kBadMagic;
  } else if (Contains(lower, "truncated")) {
    e->expected_failure = FixtureFailure::kTruncated;
  } else if (Contains(lower, "corrupt")) {
    e->expected_failure = FixtureFailure::kCorrupt;
  } else {
    return Error("negative test of unknown kind (not truncated / corrupt / bad magic)");
  }
  size_t at = notes.find("at offset ");
  if (at != std::string_view::npos) {
    std::string_view rest = notes.substr(at + 10);
    size_t digits = rest.find_first_not_of("0123456789");
    if (!ParseUInt(rest.substr(0, digits), &e->failure_offset)) {
      return Error("\"at offset\" is not followed by a number");
    }
  }
  return Status::OK();
}

Status ReadmeParser::ParseNotes(std::string_view notes, FixtureFileExpectation* e) const {
  size_t dash = notes.rfind(kDashSep);
  std::string_view counts = dash == std::string_view::npos ? notes : notes.substr(dash + kDashSep.size());
  if (!Contains(counts, kTimes) && !StartsWith(counts, "no complete event")) {
    // Only a file that is not a binlog at all may come without counts.
    if (e->expected_failure == FixtureFailure::kBadMagic) return Status::OK();
    return Error("no event counts (NAME" + std::string(kTimes) + "N) in the notes");
  }
  std::vector<std::string_view> segments = Split(counts, "; ");
  std::string_view first = Trim(segments[0]);
  if (StartsWith(first, "no complete event")) {
    // Nothing to count (e.g. a file cut inside the first event header).
  } else {
    constexpr std::string_view kDecoded = "decoded: ";
    constexpr std::string_view kRaw = " (raw type codes under GA names: ";
    if (StartsWith(first, kDecoded)) {
      e->old_type_numbering = true;
      first.remove_prefix(kDecoded.size());
      size_t raw = first.find(kRaw);
      if (raw == std::string_view::npos || first.back() != ')') {
        return Error("decoded counts without a \"(raw type codes under GA names: ...)\" list");
      }
      std::string_view raw_list = first.substr(raw + kRaw.size());
      raw_list.remove_suffix(1);
      first = first.substr(0, raw);
      CANAL_RETURN_IF_ERROR(ParseCountList(raw_list, false, true, &e->raw_type_counts));
    }
    CANAL_RETURN_IF_ERROR(ParseCountList(first, false, true, &e->event_counts));
  }
  for (size_t i = 1; i < segments.size(); ++i) {
    std::string_view seg = Trim(segments[i]);
    if (StartsWith(seg, "inside payload: ")) {
      CANAL_RETURN_IF_ERROR(ParseCountList(seg.substr(16), false, false, &e->payload_event_counts));
    } else if (StartsWith(seg, "col types: ")) {
      CANAL_RETURN_IF_ERROR(ParseNameList(seg.substr(11), "column type", true, &e->column_types));
    } else if (StartsWith(seg, "opt. metadata: ")) {
      CANAL_RETURN_IF_ERROR(
          ParseNameList(seg.substr(15), "optional metadata", false, &e->optional_metadata));
    } else if (seg == "FDE in-use flag set") {
      e->fde_in_use = true;
    } else if (StartsWith(seg, "originally ")) {
      // Provenance only.
    } else {
      return Error("unknown notes segment: \"" + std::string(seg) + "\"");
    }
  }
  return Status::OK();
}

Status ReadmeParser::ParseCountList(std::string_view list, bool mariadb, bool allow_explicit_code,
                                    EventCounts* counts) const {
  for (std::string_view item : Split(Trim(list), ", ")) {
    item = Trim(item);
    size_t times = item.find(kTimes);
    if (times == std::string_view::npos) {
      return Error("count \"" + std::string(item) + "\" is not NAME" + std::string(kTimes) + "N");
    }
    std::string_view name = item.substr(0, times);
    uint64_t n = 0;
    if (!ParseUInt(item.substr(times + kTimes.size()), &n)) {
      return Error("count \"" + std::string(item) + "\" has no number after the " + std::string(kTimes));
    }
    std::optional<uint64_t> explicit_code;
    size_t paren = name.find('(');
    if (paren != std::string_view::npos) {
      uint64_t c = 0;
      if (!allow_explicit_code || name.back() != ')' ||
          !ParseUInt(name.substr(paren + 1, name.size() - paren - 2), &c) || c > 255) {
        return Error("bad NAME(code) in \"" + std::string(item) + "\"");
      }
      explicit_code = c;
      name = name.substr(0, paren);
    }
    uint8_t code = 0;
    Status s = EventCodeForReadmeName(name, mariadb, &code);
    if (!s.ok()) return Error("unknown event name \"" + std::string(name) + "\"");
    if (explicit_code && *explicit_code != code) {
      return Error("\"" + std::string(item) + "\": " + std::string(name) + " is type " +
                   std::to_string(code));
    }
    if (!counts->emplace(code, n).second) {
      return Error("event type " + std::string(name) + " counted twice");
    }
  }
  return Status::OK();
}

Status ReadmeParser::ParseNameList(std::string_view list, std::string_view what, bool column_types,
                                   std::vector<uint8_t>* codes) const {
  for (std::string_view name : Split(Trim(list), ", ")) {
    name = Trim(name);
    std::optional<uint8_t> code =
        column_types ? Lookup(kColumnTypeNames, name) : Lookup(kOptionalMetadataNames, name);
    if (!code) return Error("unknown " + std::string(what) + " \"" + std::string(name) + "\"");
    codes->push_back(*code);
  }
  return Status::OK();
}

Status ReadmeParser::MariadbRow(const std::vector<std::string_view>& cells) {
  std::vector<Backticked> names = BacktickedTokens(cells[0]);
  auto is_binlog_name = [](std::string_view n) {
    size_t dot = n.rfind('.');
    uint64_t seq = 0;
    return dot != std::string_view::npos && dot > 0 && n.find('*') == std::string_view::npos &&
           n.find('/') == std::string_view::npos && ParseUInt(n.substr(dot + 1), &seq);
  };
  if (names.size() == 1 && is_binlog_name(names[0].token)) {
    FixtureFileExpectation e;
    e.path = section_dir_ + std::string(names[0].token);
    if (binlog_dir_.empty()) return Error("need the fixtures folder to read " + e.path + "'s .tsv");
    std::string tsv_path = binlog_dir_ + "/" + e.path + ".show_binlog_events.tsv";
    std::string tsv;
    Status s = ReadFileToString(tsv_path, &tsv);
    if (!s.ok()) return Error(s.ToString());
    uint64_t last_end = 0;
    s = ParseShowBinlogEventsTsv(tsv, tsv_path, &e.event_counts, &last_end);
    if (!s.ok()) return Error(s.ToString());

    // The listing was taken before shutdown: only a STOP may follow it, and only
    // where the README says the file ends with one.
    std::string_view contents = cells[2];
    bool ends_with_stop = Contains(contents, "ends with STOP");
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(binlog_dir_ + "/" + e.path, ec);
    if (ec) return Error("cannot stat " + e.path);
    if (size < last_end) return Error(e.path + " is shorter than its SHOW BINLOG EVENTS listing");
    bool listed_stop = e.event_counts.count(3) != 0;
    if (size > last_end) {
      if (!ends_with_stop || listed_stop) {
        return Error(e.path + ": " + std::to_string(size - last_end) +
                     " bytes after the last listed event, and the README does not say it ends "
                     "with an unlisted STOP");
      }
      e.event_counts[3] = 1;
    } else if (ends_with_stop && !listed_stop) {
      return Error(e.path + ": README says it ends with STOP, but neither the listing nor the file "
                   "has one after the last listed event");
    }
    // Counts the prose gives must agree with the listing.
    size_t pos = 0;
    while ((pos = contents.find(kTimes, pos)) != std::string_view::npos) {
      size_t start = pos;
      while (start > 0 && (std::isupper(static_cast<unsigned char>(contents[start - 1])) ||
                           std::isdigit(static_cast<unsigned char>(contents[start - 1])) ||
                           contents[start - 1] == '_')) {
        --start;
      }
      std::string_view name = contents.substr(start, pos - start);
      std::string_view rest = contents.substr(pos + kTimes.size());
      size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
      uint64_t n = 0;
      uint8_t code = 0;
      if (!ParseUInt(rest.substr(0, digits), &n)) return Error("no number after NAME" + std::string(kTimes));
      if (!EventCodeForReadmeName(name, true, &code).ok()) {
        return Error("unknown event name \"" + std::string(name) + "\"");
      }
      auto it = e.event_counts.find(code);
      uint64_t have = it == e.event_counts.end() ? 0 : it->second;
      if (have != n) {
        return Error(e.path + ": README says " + std::string(name) + std::string(kTimes) +
                     std::to_string(n) + ", SHOW BINLOG EVENTS lists " + std::to_string(have));
      }
      pos += kTimes.size();
    }
    return Add(std::move(e));
  }
  bool all_other = !names.empty() && std::all_of(names.begin(), names.end(), [](const Backticked& b) {
    std::string_view n = b.token;
    return Contains(n, "*") || EndsWith(n, ".txt") || EndsWith(n, ".tsv") || EndsWith(n, ".gz");
  });
  if (all_other) return Status::OK();
  return Error("cannot tell which file this row is about: " + std::string(cells[0]));
}

Status ReadmeParser::CrossCheckNegativeTests() const {
  if (negative_tests_cell_.empty()) return Status::OK();
  std::set<std::string> named;
  for (const Backticked& b : BacktickedTokens(negative_tests_cell_)) {
    if (StartsWith(b.after, " is NOT")) continue;  // "`x` is NOT corrupt"
    const FixtureFileExpectation* match = nullptr;
    std::string slash_name = "/";
    slash_name += b.token;
    for (const FixtureFileExpectation& e : *out_) {
      if (e.path == b.token || EndsWith(e.path, slash_name)) {
        if (match != nullptr) {
          return Status::Corruption(std::string(source_) + " line " + std::to_string(negative_tests_line_) +
                                    ": negative test `" + std::string(b.token) + "` is ambiguous");
        }
        match = &e;
      }
    }
    if (match == nullptr || match->expected_failure == FixtureFailure::kNone) {
      return Status::Corruption(std::string(source_) + " line " + std::to_string(negative_tests_line_) +
                                ": negative test `" + std::string(b.token) +
                                "` has no per-file row marked as a negative test");
    }
    named.insert(match->path);
  }
  for (const FixtureFileExpectation& e : *out_) {
    if (e.expected_failure != FixtureFailure::kNone && named.count(e.path) == 0) {
      return Status::Corruption(std::string(source_) + " line " + std::to_string(e.readme_line) + ": " +
                                e.path + " is marked as a negative test but the Coverage table's "
                                "negative tests row does not list it");
    }
  }
  return Status::OK();
}

}  // namespace

uint64_t FixtureFileExpectation::total_events() const {
  uint64_t total = 0;
  for (const auto& [code, n] : event_counts) total += n;
  return total;
}

Status EventCodeForReadmeName(std::string_view name, bool mariadb, uint8_t* code) {
  if (name == "GTID") {
    *code = mariadb ? 162 : 33;
    return Status::OK();
  }
  std::optional<uint8_t> c = Lookup(kEventNames, name);
  if (!c) return Status::NotFound("unknown event name \"" + std::string(name) + "\"");
  *code = *c;
  return Status::OK();
}

Status EventCodeForShowBinlogName(std::string_view name, uint8_t* code) {
  std::optional<uint8_t> c = Lookup(kShowBinlogNames, name);
  if (!c) return Status::NotFound("unknown SHOW BINLOG EVENTS type \"" + std::string(name) + "\"");
  *code = *c;
  return Status::OK();
}

Status ParseShowBinlogEventsTsv(std::string_view text, std::string_view source,
                                EventCounts* counts, uint64_t* last_end_pos) {
  std::vector<std::string_view> lines = Split(text, "\n");
  auto error = [&](size_t i, const std::string& what) {
    return Status::Corruption(std::string(source) + " line " + std::to_string(i + 1) + ": " + what);
  };
  if (lines.empty() || !StartsWith(lines[0], "Log_name\tPos\tEvent_type\tServer_id\tEnd_log_pos")) {
    return error(0, "not a SHOW BINLOG EVENTS listing (header missing)");
  }
  *last_end_pos = 0;
  size_t rows = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      if (i + 1 == lines.size()) break;  // final newline
      return error(i, "empty line");
    }
    std::vector<std::string_view> f = Split(line, "\t");
    if (f.size() < 5) return error(i, "fewer than 5 tab-separated fields");
    uint64_t pos = 0, end = 0;
    if (!ParseUInt(f[1], &pos) || !ParseUInt(f[4], &end) || end <= pos) {
      return error(i, "bad Pos / End_log_pos");
    }
    uint8_t code = 0;
    Status s = EventCodeForShowBinlogName(f[2], &code);
    if (!s.ok()) return error(i, std::string(s.message()));
    ++(*counts)[code];
    *last_end_pos = end;
    ++rows;
  }
  if (rows == 0) return error(0, "no events listed");
  return Status::OK();
}

Status ParseFixtureReadme(std::string_view text, const std::string& binlog_dir,
                          std::string_view source, std::vector<FixtureFileExpectation>* out) {
  out->clear();
  ReadmeParser parser(source, binlog_dir, out);
  return parser.Parse(text);
}

Status LoadFixtureExpectations(const std::string& readme_path,
                               std::vector<FixtureFileExpectation>* out) {
  std::string text;
  CANAL_RETURN_IF_ERROR(ReadFileToString(readme_path, &text));
  std::string dir = std::filesystem::path(readme_path).parent_path().string();
  if (dir.empty()) dir = ".";
  return ParseFixtureReadme(text, dir, readme_path, out);
}

}  // namespace canal::testing
