#include "support/decoded_vv.h"

#include <deque>
#include <map>
#include <utility>

#include "support/fixtures.h"
#include "support/text_scan.h"

namespace canal::testing {

namespace {

// Parses "`db`.`table`" (backticks inside names are doubled) at the start of s.
bool ParseQualifiedName(std::string_view s, std::string* db, std::string* table, size_t* used) {
  auto one = [](std::string_view in, size_t* pos, std::string* out) {
    if (*pos >= in.size() || in[*pos] != '`') return false;
    out->clear();
    for (size_t i = *pos + 1; i < in.size(); ++i) {
      if (in[i] != '`') {
        out->push_back(in[i]);
      } else if (i + 1 < in.size() && in[i + 1] == '`') {
        out->push_back('`');
        ++i;
      } else {
        *pos = i + 1;
        return true;
      }
    }
    return false;
  };
  size_t pos = 0;
  if (!one(s, &pos, db) || pos >= s.size() || s[pos] != '.') return false;
  ++pos;
  if (!one(s, &pos, table)) return false;
  *used = pos;
  return true;
}

// The "/* TYPE meta=M nullable=B is_null=B */" comment that ends a value line;
// npos when the text does not end with one.
size_t TypeCommentStart(std::string_view s) {
  if (!EndsWith(s, " */")) return std::string_view::npos;
  size_t start = s.rfind("/* ");
  if (start == std::string_view::npos) return std::string_view::npos;
  std::string_view c = s.substr(start);
  if (c.find(" meta=") == std::string_view::npos || c.find(" nullable=") == std::string_view::npos ||
      c.find(" is_null=") == std::string_view::npos) {
    return std::string_view::npos;
  }
  return start;
}

class VvParser {
 public:
  VvParser(std::string_view source, std::vector<VvRowOp>* out) : source_(source), out_(out) {}
  Status Parse(std::string_view text);

 private:
  enum class Section { kNone, kWhere, kSet };

  Status Error(std::string_view what) const {
    return Status::Corruption(std::string(source_) + " line " + std::to_string(line_no_) + ": " +
                              std::string(what));
  }
  Status EventHeader(std::string_view line);
  Status RowStart(std::string_view line);
  Status Value(std::string_view text);
  Status RowCount(std::string_view line);
  Status FinishRow();

  std::string_view source_;
  std::vector<VvRowOp>* out_;
  int line_no_ = 0;

  std::deque<uint64_t> pending_at_;
  std::map<std::string, uint64_t> table_map_pos_;  // "db\0table" -> "# at"
  // The statement whose rows are being printed / collected.
  bool statement_open_ = false;   // a rows event without STMT_END_F was seen
  bool statement_ended_ = false;  // its STMT_END_F rows event was seen
  uint64_t statement_first_pos_ = 0, statement_end_pos_ = 0;
  uint64_t rows_in_statement_ = 0;

  bool in_row_ = false;
  VvRowOp row_;
  Section section_ = Section::kNone;
};

Status VvParser::Parse(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no_;

    if (StartsWith(line, "###   @")) {
      // A value with a raw line break continues on the next lines.
      std::string joined;
      std::string_view value = line;
      int first_line = line_no_;
      while (TypeCommentStart(value) == std::string_view::npos) {
        if (pos >= text.size()) {
          line_no_ = first_line;
          return Error("value line has no /* type meta= nullable= is_null= */ comment");
        }
        nl = text.find('\n', pos);
        std::string_view next =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++line_no_;
        if (joined.empty()) joined = std::string(line);
        joined += '\n';
        joined += next;
        value = joined;
      }
      int last_line = line_no_;
      line_no_ = first_line;
      CANAL_RETURN_IF_ERROR(Value(value.substr(7)));
      line_no_ = last_line;
      continue;
    }
    if (StartsWith(line, "### ")) {
      std::string_view rest = line.substr(4);
      if (rest == "SET") {
        if (!in_row_ || row_.kind == VvRowKind::kDelete || section_ == Section::kSet) {
          return Error("unexpected ### SET");
        }
        section_ = Section::kSet;
      } else if (rest == "WHERE") {
        if (!in_row_ || row_.kind == VvRowKind::kInsert || section_ != Section::kNone) {
          return Error("unexpected ### WHERE");
        }
        section_ = Section::kWhere;
      } else {
        CANAL_RETURN_IF_ERROR(RowStart(rest));
      }
      continue;
    }
    // Anything else ends the row being collected.
    CANAL_RETURN_IF_ERROR(FinishRow());
    if (StartsWith(line, "# at ")) {
      uint64_t at = 0;
      if (!ParseUInt(line.substr(5), &at)) return Error("bad \"# at\" line");
      pending_at_.push_back(at);
    } else if (StartsWith(line, "# Number of rows: ")) {
      CANAL_RETURN_IF_ERROR(RowCount(line));
    } else if (line.size() > 1 && line[0] == '#' && line[1] >= '0' && line[1] <= '9' &&
               line.find(" server id ") != std::string_view::npos &&
               line.find(" end_log_pos ") != std::string_view::npos) {
      CANAL_RETURN_IF_ERROR(EventHeader(line));
    }
  }
  CANAL_RETURN_IF_ERROR(FinishRow());
  if (statement_ended_ && rows_in_statement_ > 0) {
    return Error("file ends without \"# Number of rows\" for the last statement");
  }
  return Status::OK();
}

Status VvParser::EventHeader(std::string_view line) {
  if (pending_at_.empty()) return Error("event header without a preceding \"# at\" line");
  uint64_t at = pending_at_.front();
  pending_at_.pop_front();
  size_t tab = line.find('\t');
  if (tab == std::string_view::npos) return Error("event header has no tab before the event name");
  std::string_view body = line.substr(tab + 1);
  size_t colon = body.find(':');
  std::string_view name = body.substr(0, colon);

  if (name == "Table_map") {
    std::string_view rest = body.substr(colon + 1);
    if (!StartsWith(rest, " ")) return Error("bad Table_map header");
    std::string db, table;
    size_t used = 0;
    if (!ParseQualifiedName(rest.substr(1), &db, &table, &used)) return Error("bad Table_map name");
    table_map_pos_[db + '\0' + table] = at;
    return Status::OK();
  }
  bool rows_event = colon != std::string_view::npos && EndsWith(name, "_rows") && name != "Annotate_rows";
  if (!rows_event) return Status::OK();

  if (statement_ended_) {
    // Rows of the previous statement were printed (and counted) already.
    statement_ended_ = false;
    statement_open_ = false;
  }
  if (!statement_open_) {
    statement_open_ = true;
    statement_first_pos_ = at;
    rows_in_statement_ = 0;
  }
  if (body.find("flags: STMT_END_F") != std::string_view::npos) {
    statement_ended_ = true;
    statement_end_pos_ = at;
  }
  return Status::OK();
}

Status VvParser::RowStart(std::string_view rest) {
  CANAL_RETURN_IF_ERROR(FinishRow());
  VvRowOp op;
  std::string_view name;
  if (StartsWith(rest, "INSERT INTO ")) {
    op.kind = VvRowKind::kInsert;
    name = rest.substr(12);
  } else if (StartsWith(rest, "UPDATE ")) {
    op.kind = VvRowKind::kUpdate;
    name = rest.substr(7);
  } else if (StartsWith(rest, "DELETE FROM ")) {
    op.kind = VvRowKind::kDelete;
    name = rest.substr(12);
  } else {
    return Error("unknown ### line: " + std::string(rest.substr(0, 60)));
  }
  size_t used = 0;
  if (!ParseQualifiedName(name, &op.db, &op.table, &used) || used != name.size()) {
    return Error("bad `db`.`table` in ### line");
  }
  if (!statement_ended_) return Error("row printed before its statement's STMT_END_F rows event");
  op.event_pos = statement_end_pos_;
  op.first_event_pos = statement_first_pos_;
  auto it = table_map_pos_.find(op.db + '\0' + op.table);
  op.table_map_pos = it == table_map_pos_.end() ? 0 : it->second;
  op.line = line_no_;
  row_ = std::move(op);
  in_row_ = true;
  section_ = Section::kNone;
  return Status::OK();
}

Status VvParser::Value(std::string_view text) {
  if (!in_row_ || section_ == Section::kNone) return Error("value line outside a WHERE / SET image");
  size_t eq = text.find('=');
  uint64_t index = 0;
  if (eq == std::string_view::npos || !ParseUInt(text.substr(0, eq), &index) || index == 0 ||
      index > 100000) {
    return Error("bad @N= in value line");
  }
  std::string_view rest = text.substr(eq + 1);
  size_t comment = TypeCommentStart(rest);
  VvColumn col;
  col.index = static_cast<int>(index);
  std::string_view value = rest.substr(0, comment);
  // FLOAT is printed left-justified in a 20-wide field; the separator space goes too.
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  col.value = std::string(value);
  col.type_comment = std::string(rest.substr(comment));
  if (col.type_comment.find(" is_null=1 */") != std::string::npos) {
    col.is_null = true;
  } else if (col.type_comment.find(" is_null=0 */") == std::string::npos) {
    return Error("type comment has no is_null=0/1");
  }
  if (col.is_null != (col.value == "NULL")) return Error("is_null disagrees with the printed value");
  std::vector<VvColumn>& image = section_ == Section::kWhere ? row_.before : row_.after;
  if (!image.empty() && image.back().index >= col.index) return Error("column numbers not ascending");
  image.push_back(std::move(col));
  return Status::OK();
}

Status VvParser::FinishRow() {
  if (!in_row_) return Status::OK();
  in_row_ = false;
  bool ok = false;
  switch (row_.kind) {
    case VvRowKind::kInsert: ok = !row_.after.empty() && row_.before.empty(); break;
    case VvRowKind::kUpdate: ok = !row_.after.empty() && !row_.before.empty(); break;
    case VvRowKind::kDelete: ok = row_.after.empty() && !row_.before.empty(); break;
  }
  if (!ok) {
    line_no_ = row_.line;
    return Error("row has the wrong images for its kind (or no values)");
  }
  ++rows_in_statement_;
  out_->push_back(std::move(row_));
  row_ = VvRowOp();
  return Status::OK();
}

Status VvParser::RowCount(std::string_view line) {
  uint64_t n = 0;
  if (!ParseUInt(line.substr(18), &n)) return Error("bad \"# Number of rows\" line");
  if (!statement_ended_) return Error("\"# Number of rows\" without a finished statement");
  if (n != rows_in_statement_) {
    return Error("\"# Number of rows: " + std::to_string(n) + "\" but " +
                 std::to_string(rows_in_statement_) + " rows were printed");
  }
  statement_ended_ = false;
  statement_open_ = false;
  rows_in_statement_ = 0;
  return Status::OK();
}

}  // namespace

Status ParseDecodedVvText(std::string_view text, std::string_view source, std::vector<VvRowOp>* out) {
  out->clear();
  VvParser parser(source, out);
  return parser.Parse(text);
}

Status ParseDecodedVv(const std::string& path, std::vector<VvRowOp>* out) {
  std::string text;
  CANAL_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseDecodedVvText(text, path, out);
}

}  // namespace canal::testing
