#include "binlog/json_row_cache.h"

#include "canal/parser/binlog/json_binary.h"

namespace canal::binlog {

namespace {

void AppendKeyPart(const ColumnValue& v, std::string* key) {
  // Kind-tagged and length-prefixed so that different values never collide;
  // only the bytes that carry the value are used (no union or struct padding).
  auto put = [key](const void* p, size_t n) { key->append(static_cast<const char*>(p), n); };
  key->push_back(static_cast<char>(v.kind));
  switch (v.kind) {
    case ColumnValue::Kind::kSigned:
    case ColumnValue::Kind::kUnsigned:
    case ColumnValue::Kind::kDouble:
      put(&v.u64, sizeof v.u64);
      break;
    case ColumnValue::Kind::kFloat:
      put(&v.f32, sizeof v.f32);
      break;
    case ColumnValue::Kind::kTimestamp:
      put(&v.u64, sizeof v.u64);
      put(&v.timestamp_micros, sizeof v.timestamp_micros);
      break;
    case ColumnValue::Kind::kDate:
    case ColumnValue::Kind::kTime:
    case ColumnValue::Kind::kDateTime: {
      const TemporalValue& t = v.temporal;
      const uint32_t f[] = {t.negative, t.year, t.month, t.day, t.hour, t.minute, t.second, t.micros};
      put(f, sizeof f);
      break;
    }
    default: {
      const uint32_t n = static_cast<uint32_t>(v.raw.size());
      put(&n, sizeof n);
      key->append(v.raw);
    }
  }
}

std::string ValueBytes(const ColumnValue& v) {
  std::string s;
  AppendKeyPart(v, &s);
  return s;
}

}  // namespace

JsonRowCache::Table& JsonRowCache::TableFor(const TableMap& t) {
  std::string name = t.db;
  name.push_back('\0');
  name += t.table;
  return tables_[name];
}

bool JsonRowCache::KeyOf(const Table& tab, const RowImage& image, std::string* key) {
  key->clear();
  for (size_t c : tab.key_columns) {
    if (c >= image.values.size() || !image.values[c].is_present()) return false;
    AppendKeyPart(image.values[c], key);
  }
  return true;
}

bool JsonRowCache::KeyOfRow(const Table& tab, const Row& row, std::string* key) {
  key->clear();
  for (size_t c : tab.key_columns) {
    if (c >= row.values.size() || !row.known[c]) return false;
    key->append(row.values[c]);
  }
  return true;
}

void JsonRowCache::Reindex(Table& tab, const RowImage& key_image) {
  std::vector<size_t> cols;
  for (size_t i = 0; i < key_image.values.size(); ++i) {
    if (key_image.values[i].is_present()) cols.push_back(i);
  }
  if (cols == tab.key_columns && !tab.index.empty()) return;
  tab.key_columns = std::move(cols);
  tab.index.clear();
  std::string key;
  // Newest first: keep the first (newest) row for each key.
  for (auto it = tab.rows.begin(); it != tab.rows.end(); ++it) {
    if (KeyOfRow(tab, *it, &key)) tab.index.emplace(key, it);
  }
}

std::list<JsonRowCache::Row>::iterator JsonRowCache::Find(Table& tab, const RowImage& key_image) {
  Reindex(tab, key_image);
  std::string key;
  if (!KeyOf(tab, key_image, &key)) return tab.rows.end();
  auto it = tab.index.find(key);
  return it == tab.index.end() ? tab.rows.end() : it->second;
}

void JsonRowCache::Remember(const TableMap& t, const RowImage& image, const RowImage* key_image,
                            const std::vector<uint8_t>* rebuilt) {
  Table& tab = TableFor(t);
  const size_t n = image.values.size();
  auto it = tab.rows.end();
  if (key_image != nullptr && !tab.key_columns.empty()) it = Find(tab, *key_image);
  if (it == tab.rows.end()) {
    tab.rows.emplace_front();
    it = tab.rows.begin();
    it->values.resize(n);
    it->known.assign(n, 0);
    it->docs.resize(n);
    if (tab.rows.size() > kMaxRowsPerTable) {
      std::string key;
      if (KeyOfRow(tab, tab.rows.back(), &key)) {
        auto ix = tab.index.find(key);
        if (ix != tab.index.end() && ix->second == std::prev(tab.rows.end())) tab.index.erase(ix);
      }
      tab.rows.pop_back();
    }
  } else if (it != tab.rows.begin()) {
    tab.rows.splice(tab.rows.begin(), tab.rows, it);
  }
  Row& row = *it;
  if (row.values.size() != n) {
    row.values.assign(n, {});
    row.known.assign(n, 0);
    row.docs.assign(n, {});
  }
  for (size_t i = 0; i < n; ++i) {
    const ColumnValue& v = image.values[i];
    if (!v.is_present()) continue;
    row.values[i] = ValueBytes(v);
    row.known[i] = 1;
    if (t.columns[i].type == ColumnType::kJson) {
      Doc& d = row.docs[i];
      if (v.is_null()) {
        d = Doc{};
      } else if (!v.json_is_text) {
        d.known = true;
        d.base.assign(v.raw);
        d.diffs.clear();
      } else if (rebuilt == nullptr || i >= rebuilt->size() || !(*rebuilt)[i]) {
        // A document rebuilt from a full before image: its binary form is not
        // kept, so a later MINIMAL partial update of this row reports an error
        // rather than applying diffs to a stale base.
        d = Doc{};
      }
      // A value rebuilt by Rebuild() already recorded its diff in the chain.
    }
  }
  std::string key;
  if (!tab.key_columns.empty() && KeyOfRow(tab, row, &key)) tab.index[key] = it;
}

void JsonRowCache::Forget(const TableMap& t, const RowImage& key_image) {
  Table& tab = TableFor(t);
  if (tab.key_columns.empty()) return;
  auto it = Find(tab, key_image);
  if (it == tab.rows.end()) return;
  std::string key;
  if (KeyOfRow(tab, *it, &key)) tab.index.erase(key);
  tab.rows.erase(it);
}

Status JsonRowCache::Rebuild(const TableMap& t, const RowImage& key_image, size_t col, std::string_view diffs,
                             std::string* out) {
  Table& tab = TableFor(t);
  auto it = Find(tab, key_image);
  auto fail = [&](std::string_view why) {
    return Status::NotSupported(
        "partial JSON update (binlog_row_value_options=PARTIAL_JSON) with a before image that lacks the "
        "document (binlog_row_image=MINIMAL), and " + std::string(why) +
        "; the full document cannot be rebuilt. Use binlog_row_image=FULL or an empty "
        "binlog_row_value_options on the primary");
  };
  if (it == tab.rows.end()) return fail("this row was not seen earlier in the stream");
  Doc& d = it->docs[col];
  if (!d.known) return fail("the row's last full document was not seen in the stream");
  if (d.diffs.size() >= kMaxDiffChain) return fail("too many partial updates since its last full image");
  d.diffs.emplace_back(diffs);
  std::vector<std::string_view> chain(d.diffs.begin(), d.diffs.end());
  Status s = ApplyJsonDiffChain(d.base, chain, out);
  if (!s.ok()) d.diffs.pop_back();
  return s;
}

}  // namespace canal::binlog
