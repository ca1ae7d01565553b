#include "support/table_compare.h"

#include <algorithm>
#include <set>
#include <utility>

#include "support/sql_session.h"

namespace canal::testing {
namespace {

struct ColumnDef {
  std::string name;
  std::string type;       // COLUMN_TYPE
  std::string collation;  // COLLATION_NAME, "" for none
};

std::string Text(std::string_view s) { return "_utf8mb4 X'" + HexDigits(s) + "'"; }

Status OpenForReading(const std::string& socket, SqlSession* session) {
  CANAL_RETURN_IF_ERROR(session->Connect(socket));
  // The same TIMESTAMP text on both sides, and the stored bytes of every
  // column, whatever its charset.
  CANAL_RETURN_IF_ERROR(session->Execute("SET SESSION time_zone = '+00:00'"));
  return session->Execute("SET SESSION character_set_results = NULL");
}

Status ReadColumns(SqlSession& s, const std::string& schema, const std::string& table, std::vector<ColumnDef>* out) {
  SqlResult r;
  CANAL_RETURN_IF_ERROR(s.Query("SELECT COLUMN_NAME, COLUMN_TYPE, COLLATION_NAME FROM information_schema.COLUMNS "
                                "WHERE TABLE_SCHEMA = " + Text(schema) + " AND TABLE_NAME = " + Text(table) +
                                    " ORDER BY ORDINAL_POSITION",
                                &r));
  out->clear();
  for (const SqlRow& row : r.rows) out->push_back({row[0].value_or(""), row[1].value_or(""), row[2].value_or("")});
  return Status::OK();
}

Status ReadPrimaryKey(SqlSession& s, const std::string& schema, const std::string& table,
                      std::vector<std::string>* out) {
  SqlResult r;
  CANAL_RETURN_IF_ERROR(s.Query("SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = " +
                                    Text(schema) + " AND TABLE_NAME = " + Text(table) +
                                    " AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX",
                                &r));
  out->clear();
  for (const SqlRow& row : r.rows) out->push_back(row[0].value_or(""));
  return Status::OK();
}

Status ReadTableNames(SqlSession& s, const std::string& schema, std::set<std::string>* out) {
  SqlResult r;
  CANAL_RETURN_IF_ERROR(s.Query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
                                    Text(schema) + " AND TABLE_TYPE = 'BASE TABLE'",
                                &r));
  for (const SqlRow& row : r.rows) out->insert(row[0].value_or(""));
  return Status::OK();
}

// A value for the report: NULL, 'printable ASCII', or X'hex' (cut).
std::string Show(const SqlCell& v) {
  if (!v) return "NULL";
  constexpr size_t kMax = 64;
  const std::string& s = *v;
  const bool printable = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7E; });
  std::string out = printable ? "'" + s.substr(0, kMax) + "'" : "X'" + HexDigits(std::string_view(s).substr(0, kMax)) + "'";
  if (s.size() > kMax) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string Describe(const ColumnDef& c) {
  return c.type + (c.collation.empty() ? "" : " " + c.collation);
}

// The differences of one table, one line each, and how many there were.
class TableDiff {
 public:
  TableDiff(std::string* report, size_t max) : report_(report), max_(max) {}
  void Add(const std::string& line) {
    if (count_++ < max_) *report_ += "    " + line + "\n";
  }
  size_t count() const { return count_; }
  void Finish() {
    if (count_ > max_) *report_ += "    ... and " + std::to_string(count_ - max_) + " more differences\n";
  }

 private:
  std::string* report_;
  size_t max_;
  size_t count_ = 0;
};

// Compares one table; its lines go to *report. Whether it differs in *differs.
Status CompareTable(SqlSession& src, SqlSession& dst, const std::string& schema, const std::string& table,
                    std::string* report, size_t max_differences, bool* differs) {
  std::vector<ColumnDef> src_cols, dst_cols;
  CANAL_RETURN_IF_ERROR(ReadColumns(src, schema, table, &src_cols));
  CANAL_RETURN_IF_ERROR(ReadColumns(dst, schema, table, &dst_cols));
  const std::string name = QualifiedName(schema, table);
  std::string body;
  TableDiff diff(&body, max_differences);

  // Columns: by name; the rows are compared over the ones both have.
  std::vector<std::string> common;
  for (const ColumnDef& c : src_cols) {
    const auto d = std::find_if(dst_cols.begin(), dst_cols.end(), [&](const ColumnDef& x) { return x.name == c.name; });
    if (d == dst_cols.end()) {
      if (!dst_cols.empty()) diff.Add("column " + QuoteIdentifier(c.name) + " (" + Describe(c) + ") missing in the mirror");
      continue;
    }
    common.push_back(c.name);
    if (c.type != d->type || c.collation != d->collation) {
      diff.Add("column " + QuoteIdentifier(c.name) + ": source " + Describe(c) + ", mirror " + Describe(*d));
    }
  }
  for (const ColumnDef& d : dst_cols) {
    const bool in_source =
        std::any_of(src_cols.begin(), src_cols.end(), [&](const ColumnDef& x) { return x.name == d.name; });
    if (!in_source && !src_cols.empty()) {
      diff.Add("column " + QuoteIdentifier(d.name) + " (" + Describe(d) + ") only in the mirror");
    }
  }
  if (diff.count() == 0 && !src_cols.empty() && !dst_cols.empty()) {
    std::vector<std::string> src_order, dst_order;
    for (const ColumnDef& c : src_cols) src_order.push_back(c.name);
    for (const ColumnDef& c : dst_cols) dst_order.push_back(c.name);
    if (src_order != dst_order) diff.Add("the columns are in another order in the mirror");
  }
  if (src_cols.empty() || dst_cols.empty()) {
    diff.Add(src_cols.empty() && dst_cols.empty() ? "the table is on neither server"
             : src_cols.empty()                   ? "the table is only in the mirror"
                                                  : "the table is missing in the mirror");
    *report += "  " + name + ":\n" + body;
    *differs = true;
    return Status::OK();
  }

  // The key: the source's primary key, where the mirror has its columns.
  std::vector<std::string> pk;
  CANAL_RETURN_IF_ERROR(ReadPrimaryKey(src, schema, table, &pk));
  std::vector<size_t> key;  // indexes into `common`
  for (const std::string& k : pk) {
    const auto at = std::find(common.begin(), common.end(), k);
    if (at == common.end()) {
      key.clear();
      break;
    }
    key.push_back(static_cast<size_t>(at - common.begin()));
  }
  const bool keyed = !key.empty();
  if (!keyed) {
    for (size_t i = 0; i < common.size(); ++i) key.push_back(i);
  }

  std::string select = "SELECT ", order;
  for (size_t i = 0; i < common.size(); ++i) {
    // FLOAT's text has 6 digits (0.1 and 0.10000000894 both print "0.1");
    // as a DOUBLE it shows every bit.
    const auto c = std::find_if(src_cols.begin(), src_cols.end(), [&](const ColumnDef& x) { return x.name == common[i]; });
    const bool is_float = c->type.compare(0, 5, "float") == 0;
    const std::string name_sql = QuoteIdentifier(common[i]);
    select += (i ? ", " : "") + (is_float ? "CAST(" + name_sql + " AS DOUBLE)" : name_sql);
  }
  for (size_t k : key) order += (order.empty() ? "" : ", ") + QuoteIdentifier(common[k]);
  select += " FROM " + name + " ORDER BY " + order;
  SqlResult src_rows, dst_rows;
  CANAL_RETURN_IF_ERROR(src.Query(select, &src_rows));
  CANAL_RETURN_IF_ERROR(dst.Query(select, &dst_rows));

  // Sorted here by (key, row), bytewise, so that pairing does not depend on
  // either server's collation.
  auto key_of = [&](const SqlRow& r) {
    SqlRow k;
    for (size_t i : key) k.push_back(r[i]);
    return k;
  };
  auto by_key = [&](const SqlRow& a, const SqlRow& b) {
    const SqlRow ka = key_of(a), kb = key_of(b);
    return ka != kb ? ka < kb : a < b;
  };
  std::sort(src_rows.rows.begin(), src_rows.rows.end(), by_key);
  std::sort(dst_rows.rows.begin(), dst_rows.rows.end(), by_key);
  auto show_key = [&](const SqlRow& r) {
    std::string s = keyed ? "key (" : "row (";
    for (size_t n = 0; n < key.size(); ++n) s += (n ? ", " : "") + common[key[n]] + "=" + Show(r[key[n]]);
    return s + ")";
  };
  auto show_row = [&](const SqlRow& r) {
    if (!keyed) return std::string();
    std::string s = ": ";
    for (size_t n = 0; n < r.size(); ++n) s += (n ? ", " : "") + common[n] + "=" + Show(r[n]);
    return s;
  };

  const auto& S = src_rows.rows;
  const auto& M = dst_rows.rows;
  size_t i = 0, j = 0;
  while (i < S.size() || j < M.size()) {
    const bool take_source = j == M.size() || (i < S.size() && key_of(S[i]) < key_of(M[j]));
    const bool take_mirror = !take_source && (i == S.size() || key_of(M[j]) < key_of(S[i]));
    if (take_source) {
      diff.Add("missing in the mirror: " + show_key(S[i]) + show_row(S[i]));
      ++i;
    } else if (take_mirror) {
      diff.Add("only in the mirror: " + show_key(M[j]) + show_row(M[j]));
      ++j;
    } else {
      for (size_t c = 0; c < common.size(); ++c) {
        if (S[i][c] != M[j][c]) {
          diff.Add(show_key(S[i]) + " column " + common[c] + ": source " + Show(S[i][c]) + ", mirror " +
                   Show(M[j][c]));
        }
      }
      ++i;
      ++j;
    }
  }
  diff.Finish();
  *differs = diff.count() != 0;
  *report += "  " + name + ": source " + std::to_string(S.size()) + " rows, mirror " + std::to_string(M.size()) +
             " rows" + (keyed ? "" : " (no primary key: compared as a multiset)") + ": " +
             (diff.count() == 0 ? "equal" : std::to_string(diff.count()) + " differences") + "\n" + body;
  return Status::OK();
}

}  // namespace

Status CompareTables(const std::string& source_socket, const std::string& mirror_socket, const std::string& schema,
                     const std::vector<std::string>& tables, std::string* report, size_t max_differences) {
  report->clear();
  SqlSession src, dst;
  CANAL_RETURN_IF_ERROR(OpenForReading(source_socket, &src));
  CANAL_RETURN_IF_ERROR(OpenForReading(mirror_socket, &dst));
  std::vector<std::string> names = tables;
  if (names.empty()) {
    std::set<std::string> all;
    CANAL_RETURN_IF_ERROR(ReadTableNames(src, schema, &all));
    CANAL_RETURN_IF_ERROR(ReadTableNames(dst, schema, &all));
    names.assign(all.begin(), all.end());
  }
  *report = "source " + source_socket + ", mirror " + mirror_socket + ", schema " + schema + ":\n";
  std::string differing;
  for (const std::string& t : names) {
    bool differs = false;
    CANAL_RETURN_IF_ERROR(CompareTable(src, dst, schema, t, report, max_differences, &differs));
    if (differs) differing += (differing.empty() ? "" : ", ") + t;
  }
  if (differing.empty()) return Status::OK();
  return Status::Corruption("tables of " + schema + " differ between the source and the mirror: " + differing);
}

Status CompareTables(const MariadbSandbox& source, const MariadbSandbox& mirror, const std::string& schema,
                     const std::vector<std::string>& tables, std::string* report, size_t max_differences) {
  return CompareTables(source.socket(), mirror.socket(), schema, tables, report, max_differences);
}

}  // namespace canal::testing
