#include "support/vv_compare.h"

#include <memory>
#include <vector>

#include "support/binlog_walk.h"
#include "support/decoded_vv.h"
#include "support/vv_format.h"

namespace canal::testing {

namespace {

struct OurRow {
  uint64_t pos;
  std::string db, table;
  binlog::RowsKind kind;
  binlog::RowChange change;  // copied; views into owned copies below
  std::vector<binlog::ColumnInfo> columns;
  // Owns raw bytes of values; heap strings so that views survive moving the row.
  std::vector<std::unique_ptr<std::string>> storage;
};

void Own(binlog::RowImage& img, std::vector<std::unique_ptr<std::string>>& storage) {
  for (auto& v : img.values) {
    if (!v.raw.empty()) {
      storage.push_back(std::make_unique<std::string>(v.raw));
      v.raw = *storage.back();
    }
  }
}

const char* KindText(binlog::RowsKind k) {
  return k == binlog::RowsKind::kWrite ? "INSERT" : k == binlog::RowsKind::kUpdate ? "UPDATE" : "DELETE";
}

}  // namespace

VvComparison CompareWithMariadbBinlogVv(const std::string& binlog_path, const std::string& vv_path) {
  VvComparison out;
  std::vector<VvRowOp> expected;
  Status s = ParseDecodedVv(vv_path, &expected);
  if (!s.ok()) {
    out.failure = "cannot parse " + vv_path + ": " + s.ToString();
    return out;
  }
  std::vector<OurRow> ours;
  WalkOptions wo;
  wo.on_row = [&](const binlog::Event& ev, const binlog::TableMap& t, const binlog::RowChange& c) {
    OurRow r{ev.offset, t.db, t.table, c.kind, c, t.columns, {}};
    // Only the images this kind of change has: the other one is stale.
    if (c.has_before) Own(r.change.before, r.storage); else r.change.before.values.clear();
    if (c.has_after) Own(r.change.after, r.storage); else r.change.after.values.clear();
    ours.push_back(std::move(r));
    return Status::OK();
  };
  WalkResult wr = WalkBinlog(binlog_path, wo);
  if (!wr.error.ok()) {
    out.failure = "decode failed: " + wr.error.ToString();
    return out;
  }
  std::string problems;
  int nproblems = 0;
  auto problem = [&](const std::string& p) {
    if (++nproblems <= 20) problems += p + "\n";
  };
  if (ours.size() != expected.size()) {
    problem("row count: ours " + std::to_string(ours.size()) + ", mariadb-binlog " + std::to_string(expected.size()));
  }
  const size_t n = std::min(ours.size(), expected.size());
  for (size_t i = 0; i < n; ++i) {
    const OurRow& o = ours[i];
    const VvRowOp& e = expected[i];
    const std::string where = "row " + std::to_string(i + 1) + " (vv line " + std::to_string(e.line) + ", event " +
                              std::to_string(o.pos) + ", " + e.db + "." + e.table + ")";
    const binlog::RowsKind ek = e.kind == VvRowKind::kInsert   ? binlog::RowsKind::kWrite
                                : e.kind == VvRowKind::kUpdate ? binlog::RowsKind::kUpdate
                                                               : binlog::RowsKind::kDelete;
    if (o.db != e.db || o.table != e.table || o.kind != ek) {
      problem(where + ": ours is " + KindText(o.kind) + " " + o.db + "." + o.table);
      continue;
    }
    if (o.pos < e.first_event_pos || o.pos > e.event_pos) {
      problem(where + ": our event offset " + std::to_string(o.pos) + " outside the statement's events " +
              std::to_string(e.first_event_pos) + ".." + std::to_string(e.event_pos));
    }
    auto compare_image = [&](const binlog::RowImage& img, const std::vector<VvColumn>& cols, const char* which) {
      size_t present = 0;
      for (const auto& v : img.values) present += v.is_present();
      if (present != cols.size()) {
        problem(where + " " + which + ": ours has " + std::to_string(present) + " columns, vv " +
                std::to_string(cols.size()));
      }
      for (const auto& c : cols) {
        if (c.index < 1 || static_cast<size_t>(c.index) > img.values.size()) {
          problem(where + " " + which + ": vv column @" + std::to_string(c.index) + " out of range");
          continue;
        }
        const auto& v = img.values[c.index - 1];
        std::string why;
        ++out.values;
        if (!v.is_present()) {
          problem(where + " " + which + " @" + std::to_string(c.index) + ": absent in ours");
        } else if (!VvValueMatches(v, o.columns[c.index - 1], c.value, &why)) {
          problem(where + " " + which + " @" + std::to_string(c.index) + " " + c.type_comment + ": " + why);
        }
      }
    };
    if (o.change.has_before) compare_image(o.change.before, e.before, "before");
    if (o.change.has_after) compare_image(o.change.after, e.after, "after");
    ++out.rows;
  }
  out.ok = nproblems == 0;
  if (!out.ok) out.failure = std::to_string(nproblems) + " mismatch(es):\n" + problems;
  return out;
}

}  // namespace canal::testing
