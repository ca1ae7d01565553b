#include "support/zalora_expected.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <utility>

#include "support/fixtures.h"
#include "support/text_scan.h"

namespace canal::testing {

namespace {

using nlohmann::json;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits concatenated JSON values (whitespace between them) into their texts.
Status SplitJsonStream(std::string_view text, std::string_view source,
                       std::vector<std::string_view>* values) {
  size_t i = 0;
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
    if (i >= text.size()) return Status::OK();
    if (text[i] != '{') {
      return Status::Corruption(std::string(source) + ": byte " + std::to_string(i) +
                                ": expected '{' starting the next JSON object");
    }
    size_t start = i;
    int depth = 0;
    bool in_string = false, escaped = false;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
        continue;
      }
      if (c == '"') in_string = true;
      else if (c == '{' || c == '[') ++depth;
      else if ((c == '}' || c == ']') && --depth == 0) break;
    }
    if (i >= text.size()) {
      return Status::Truncated(std::string(source) + ": JSON object starting at byte " +
                               std::to_string(start) + " is not closed");
    }
    ++i;
    values->push_back(text.substr(start, i - start));
  }
}

const json* Member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

bool GetString(const json& obj, const char* key, std::string* out) {
  const json* v = Member(obj, key);
  if (v == nullptr || !v->is_string()) return false;
  *out = v->get_ref<const std::string&>();
  return true;
}

bool GetUnsigned(const json& obj, const char* key, uint64_t* out) {
  const json* v = Member(obj, key);
  if (v == nullptr || !v->is_number_unsigned()) {
    if (v != nullptr && v->is_number_integer() && v->get<int64_t>() >= 0) {
      *out = static_cast<uint64_t>(v->get<int64_t>());
      return true;
    }
    return false;
  }
  *out = v->get<uint64_t>();
  return true;
}

// Position of a column: "(unknown_N)" says N; otherwise its place in the schema.
int ColumnIndex(const std::string& name, const std::string& table, const ZaloraSchema* schema) {
  constexpr std::string_view kUnknown = "(unknown_";
  if (StartsWith(name, kUnknown) && EndsWith(name, ")")) {
    std::string_view digits = std::string_view(name).substr(kUnknown.size());
    digits.remove_suffix(1);
    int n = -1;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && p == digits.data() + digits.size() && n >= 0) return n;
    return -1;
  }
  if (schema == nullptr) return -1;
  auto t = schema->find(table);
  if (t == schema->end()) return -1;
  auto c = std::find(t->second.begin(), t->second.end(), name);
  return c == t->second.end() ? -1 : static_cast<int>(c - t->second.begin());
}

Status ParseImage(const json& data, const std::string& where, const std::string& table,
                  const ZaloraSchema* schema, std::vector<ZaloraColumn>* image, std::string* notice) {
  if (!data.is_object()) return Status::Corruption(where + " is not an object");
  for (auto it = data.begin(); it != data.end(); ++it) {
    if (it.key() != "Row" && it.key() != "MappingNotice") {
      return Status::Corruption(where + " has unknown member \"" + it.key() + "\"");
    }
  }
  const json* row = Member(data, "Row");
  if (row == nullptr || !row->is_object()) return Status::Corruption(where + ".Row is missing or not an object");
  if (!GetString(data, "MappingNotice", notice)) {
    return Status::Corruption(where + ".MappingNotice is missing or not a string");
  }
  bool all_indexed = true;
  for (auto it = row->begin(); it != row->end(); ++it) {
    ZaloraColumn col;
    col.name = it.key();
    col.value = it.value();
    if (col.value.is_null()) {
      col.is_null = true;
    } else if (col.value.is_string()) {
      col.text = col.value.get_ref<const std::string&>();
    } else if (col.value.is_number()) {
      col.text = col.value.dump();
    } else {
      return Status::Corruption(where + ".Row." + col.name + " is not a string, number or null");
    }
    col.index = ColumnIndex(col.name, table, schema);
    all_indexed = all_indexed && col.index >= 0;
    image->push_back(std::move(col));
  }
  if (all_indexed) {
    std::sort(image->begin(), image->end(),
              [](const ZaloraColumn& a, const ZaloraColumn& b) { return a.index < b.index; });
    for (size_t i = 1; i < image->size(); ++i) {
      if ((*image)[i].index == (*image)[i - 1].index) {
        return Status::Corruption(where + ": two columns at position " + std::to_string((*image)[i].index));
      }
    }
  }
  return Status::OK();
}

Status ParseEvent(const json& obj, const std::string& where, const ZaloraSchema* schema, ZaloraEvent* e) {
  if (!obj.is_object()) return Status::Corruption(where + " is not an object");
  const json* header = Member(obj, "Header");
  if (header == nullptr || !header->is_object()) return Status::Corruption(where + ": no Header object");
  for (auto it = header->begin(); it != header->end(); ++it) {
    static const char* const kKnown[] = {"Schema", "Table", "BinlogMessageTime", "BinlogPosition", "XId", "GTID"};
    if (std::none_of(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return it.key() == k; })) {
      return Status::Corruption(where + ": unknown Header member \"" + it.key() + "\"");
    }
  }
  if (!GetString(*header, "Schema", &e->schema) || !GetString(*header, "Table", &e->table) ||
      !GetString(*header, "BinlogMessageTime", &e->message_time) ||
      !GetUnsigned(*header, "BinlogPosition", &e->binlog_position) || !GetUnsigned(*header, "XId", &e->xid)) {
    return Status::Corruption(where + ": Header lacks Schema / Table / BinlogMessageTime / BinlogPosition / XId");
  }
  if (Member(*header, "GTID") != nullptr && !GetString(*header, "GTID", &e->gtid)) {
    return Status::Corruption(where + ": Header.GTID is not a string");
  }
  std::string type;
  if (!GetString(obj, "Type", &type)) return Status::Corruption(where + ": no Type");
  std::vector<std::string> members;  // besides Header and Type
  if (type == "Insert" || type == "Delete") {
    e->type = type == "Insert" ? ZaloraEventType::kInsert : ZaloraEventType::kDelete;
    members = {"Data"};
    const json* data = Member(obj, "Data");
    if (data == nullptr) return Status::Corruption(where + ": " + type + " without Data");
    CANAL_RETURN_IF_ERROR(ParseImage(*data, where + ".Data", e->table, schema,
                                     type == "Insert" ? &e->after : &e->before, &e->mapping_notice));
  } else if (type == "Update") {
    e->type = ZaloraEventType::kUpdate;
    members = {"OldData", "NewData"};
    const json* old_data = Member(obj, "OldData");
    const json* new_data = Member(obj, "NewData");
    if (old_data == nullptr || new_data == nullptr) {
      return Status::Corruption(where + ": Update without OldData / NewData");
    }
    std::string old_notice;
    CANAL_RETURN_IF_ERROR(ParseImage(*old_data, where + ".OldData", e->table, schema, &e->before, &old_notice));
    CANAL_RETURN_IF_ERROR(ParseImage(*new_data, where + ".NewData", e->table, schema, &e->after, &e->mapping_notice));
  } else if (type == "Query") {
    e->type = ZaloraEventType::kQuery;
    members = {"Query"};
    if (!GetString(obj, "Query", &e->query)) return Status::Corruption(where + ": Query without Query text");
  } else {
    return Status::Corruption(where + ": unknown Type \"" + type + "\"");
  }
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it.key() != "Header" && it.key() != "Type" &&
        std::find(members.begin(), members.end(), it.key()) == members.end()) {
      return Status::Corruption(where + ": unexpected member \"" + it.key() + "\" for Type " + type);
    }
  }
  return Status::OK();
}

struct KnownVariant {
  std::string_view suffix;  // after "NN" in the file name
  std::vector<std::string> tables;
};

// Table filters of the upstream test cases, by file name suffix.
const std::vector<KnownVariant>& Variants() {
  static const std::vector<KnownVariant> kVariants = {
      {"", {}},
      {"-include-table", {"buildings"}},
      {"-no-events", {"unknown_table"}},
      {"-include-tables", {"buildings", "rooms"}},
  };
  return kVariants;
}

}  // namespace

Status ParseZaloraSchemaSql(std::string_view sql, std::string_view source, ZaloraSchema* out) {
  std::string current;
  bool in_table = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= sql.size()) {
    size_t nl = sql.find('\n', pos);
    std::string_view line = Trim(sql.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? sql.size() + 1 : nl + 1;
    ++line_no;
    auto error = [&](const std::string& what) {
      return Status::Corruption(std::string(source) + " line " + std::to_string(line_no) + ": " + what);
    };
    if (!in_table) {
      if (!StartsWith(line, "CREATE TABLE `")) continue;
      size_t close = line.find('`', 14);
      if (close == std::string_view::npos || line.substr(close + 1) != " (") return error("bad CREATE TABLE line");
      current = std::string(line.substr(14, close - 14));
      if (out->count(current) != 0) return error("table " + current + " created twice");
      (*out)[current];
      in_table = true;
      continue;
    }
    if (StartsWith(line, ")")) {
      if ((*out)[current].empty()) return error("table " + current + " has no columns");
      in_table = false;
      continue;
    }
    if (StartsWith(line, "`")) {
      size_t close = line.find('`', 1);
      if (close == std::string_view::npos) return error("bad column line");
      (*out)[current].emplace_back(line.substr(1, close - 1));
    } else if (!(StartsWith(line, "PRIMARY KEY") || StartsWith(line, "KEY ") || StartsWith(line, "UNIQUE KEY") ||
                 StartsWith(line, "CONSTRAINT ") || StartsWith(line, "FULLTEXT KEY") || line.empty())) {
      return error("unexpected line in CREATE TABLE " + current);
    }
  }
  if (in_table) return Status::Corruption(std::string(source) + ": CREATE TABLE " + current + " not closed");
  return Status::OK();
}

Status ParseZaloraJsonStream(std::string_view text, std::string_view source, const ZaloraSchema* schema,
                             std::vector<ZaloraEvent>* out) {
  out->clear();
  std::vector<std::string_view> values;
  CANAL_RETURN_IF_ERROR(SplitJsonStream(text, source, &values));
  for (size_t i = 0; i < values.size(); ++i) {
    std::string where = std::string(source) + " object " + std::to_string(i + 1);
    json obj = json::parse(values[i].begin(), values[i].end(), nullptr, /*allow_exceptions=*/false);
    if (obj.is_discarded()) return Status::Corruption(where + ": not valid JSON");
    ZaloraEvent e;
    CANAL_RETURN_IF_ERROR(ParseEvent(obj, where, schema, &e));
    out->push_back(std::move(e));
  }
  return Status::OK();
}

Status LoadZaloraExpectations(const std::string& binlog_dir, std::vector<ZaloraExpectedFile>* out) {
  out->clear();
  namespace fs = std::filesystem;
  const std::string root = binlog_dir + "/zalora-binlog-parser";
  std::string sql;
  CANAL_RETURN_IF_ERROR(ReadFileToString(root + "/fixtures/test_db.sql", &sql));
  ZaloraSchema schema;
  CANAL_RETURN_IF_ERROR(ParseZaloraSchemaSql(sql, root + "/fixtures/test_db.sql", &schema));

  for (const char* sub : {"fixtures", "gtid-fixtures"}) {
    std::error_code ec;
    std::vector<std::string> names;
    for (fs::directory_iterator it(root + "/" + sub, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (EndsWith(name, ".json")) names.push_back(name);
    }
    if (ec) return Status::IOError("cannot list " + root + "/" + sub + ": " + ec.message());
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      ZaloraExpectedFile f;
      f.json_path = std::string("zalora-binlog-parser/") + sub + "/" + name;
      std::string_view stem = std::string_view(name).substr(0, name.size() - 5);
      if (stem.size() < 2 || !std::isdigit(static_cast<unsigned char>(stem[0])) ||
          !std::isdigit(static_cast<unsigned char>(stem[1]))) {
        return Status::Corruption(f.json_path + ": name does not start with the binlog's NN");
      }
      std::string_view suffix = stem.substr(2);
      auto variant = std::find_if(Variants().begin(), Variants().end(),
                                  [&](const KnownVariant& v) { return v.suffix == suffix; });
      if (variant == Variants().end()) {
        return Status::Corruption(f.json_path + ": unknown variant \"" + std::string(suffix) +
                                  "\" (which filter produced it?)");
      }
      f.include_tables = variant->tables;
      f.binlog_path = std::string("zalora-binlog-parser/") + sub + "/mysql-bin." + std::string(stem.substr(0, 2));
      if (!fs::exists(binlog_dir + "/" + f.binlog_path, ec)) {
        return Status::NotFound(f.json_path + ": its binlog " + f.binlog_path + " is missing");
      }
      std::string text;
      CANAL_RETURN_IF_ERROR(ReadFileToString(binlog_dir + "/" + f.json_path, &text));
      CANAL_RETURN_IF_ERROR(ParseZaloraJsonStream(text, f.json_path, &schema, &f.events));
      out->push_back(std::move(f));
    }
  }
  return Status::OK();
}

}  // namespace canal::testing
