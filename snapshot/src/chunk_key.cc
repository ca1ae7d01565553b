#include "canal/snapshot/chunk_key.h"

#include <algorithm>

#include "canal/common/ascii_case.h"
#include "canal/snapshot/chunk_query.h"  // QuoteIdentifier

namespace canal::snapshot {
namespace {

std::string TableName(const TableShape& shape) {
  return QuoteIdentifier(shape.schema) + "." + QuoteIdentifier(shape.table);
}

// MySQL column and index names compare case-insensitively.
bool SameName(std::string_view a, std::string_view b) { return AsciiEqualsIgnoreCase(a, b); }

// Positions of the index's columns in the table; InvalidArgument for a name the table lacks.
Status ResolveColumns(const TableShape& shape, const TableIndex& index, std::vector<size_t>* out) {
  out->clear();
  if (index.columns.empty()) {
    return Status::InvalidArgument("index " + index.name + " of " + TableName(shape) + " has no columns");
  }
  for (const std::string& name : index.columns) {
    auto it = std::find_if(shape.columns.begin(), shape.columns.end(),
                           [&](const TableColumn& c) { return SameName(c.name, name); });
    if (it == shape.columns.end()) {
      return Status::InvalidArgument("index " + index.name + " of " + TableName(shape) + " names column " + name +
                                     ", which the table does not have");
    }
    out->push_back(static_cast<size_t>(it - shape.columns.begin()));
  }
  return Status::OK();
}

}  // namespace

bool IsPageableKeyType(std::string_view t) {
  // ENUM and SET sort by their index (ORDER BY) but compare with a string by their text (the row
  // comparison), so a chunk boundary on one could skip or repeat rows; BIT compares with a bound
  // string as a number. Neither can carry a chunk key.
  for (std::string_view n : {"enum", "set", "bit"}) {
    if (SameName(t, n)) return false;
  }
  return true;
}

bool IsIntegerType(std::string_view t) {
  for (std::string_view n : {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year"}) {
    if (SameName(t, n)) return true;
  }
  return false;
}

Status ChooseChunkKey(const TableShape& shape, ChunkKey* key) {
  *key = ChunkKey{};
  if (shape.columns.empty()) return Status::InvalidArgument(TableName(shape) + " has no columns");

  struct Candidate {
    const TableIndex* index;
    bool primary;
    std::vector<size_t> columns;
    size_t integers;
  };
  std::vector<Candidate> candidates;
  for (const TableIndex& index : shape.indexes) {
    std::vector<size_t> cols;
    CANAL_RETURN_IF_ERROR(ResolveColumns(shape, index, &cols));
    const bool pageable =
        std::all_of(cols.begin(), cols.end(), [&](size_t c) { return IsPageableKeyType(shape.columns[c].data_type); });
    if (!pageable) continue;
    const bool primary = SameName(index.name, "PRIMARY");
    if (!primary) {
      if (!index.unique) continue;
      const bool all_not_null =
          std::all_of(cols.begin(), cols.end(), [&](size_t c) { return !shape.columns[c].nullable; });
      if (!all_not_null) continue;
    }
    const size_t integers = static_cast<size_t>(
        std::count_if(cols.begin(), cols.end(), [&](size_t c) { return IsIntegerType(shape.columns[c].data_type); }));
    candidates.push_back({&index, primary, std::move(cols), integers});
  }
  if (candidates.empty()) return Status::OK();  // kNone
  auto best = std::min_element(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.index->prefix != b.index->prefix) return !a.index->prefix;
    if (a.primary != b.primary) return a.primary;
    if (a.columns.size() != b.columns.size()) return a.columns.size() < b.columns.size();
    if (a.integers != b.integers) return a.integers > b.integers;
    return a.index->name < b.index->name;
  });
  key->kind = best->primary ? ChunkKey::Kind::kPrimary : ChunkKey::Kind::kUniqueNotNull;
  key->index = best->index->name;
  key->columns = std::move(best->columns);
  return Status::OK();
}

std::string DescribeChunkKey(const TableShape& shape, const ChunkKey& key) {
  if (key.kind == ChunkKey::Kind::kNone) return "none (one consistent read)";
  std::string s = key.kind == ChunkKey::Kind::kPrimary ? "PRIMARY (" : "UNIQUE " + key.index + " (";
  for (size_t i = 0; i < key.columns.size(); ++i) {
    if (i) s += ", ";
    s += key.columns[i] < shape.columns.size() ? shape.columns[key.columns[i]].name : "?";
  }
  return s + ")";
}

}  // namespace canal::snapshot
