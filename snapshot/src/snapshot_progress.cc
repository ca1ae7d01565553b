#include "canal/snapshot/snapshot_progress.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace canal::snapshot {

namespace {

using Json = nlohmann::json;

constexpr const char* kStateNames[] = {"pending", "reading", "done"};

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

bool Unhex(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->clear();
  out->reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
    if (ec != std::errc() || p != hex.data() + i + 2) return false;
    out->push_back(static_cast<char>(v));
  }
  return true;
}

Json KeyValueJson(const KeyValue& v) {
  Json j = Json::object();
  j["k"] = static_cast<int>(v.kind);
  j["t"] = v.field_type;
  if (v.binary) j["b"] = true;
  switch (v.kind) {
    case FieldKind::kNull:
      break;
    case FieldKind::kSigned:
      j["i"] = v.i64;
      break;
    case FieldKind::kUnsigned:
      j["u"] = v.u64;
      break;
    case FieldKind::kDouble: {
      // Shortest text that reads back to the same double (to_chars round-trips).
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, v.f64);
      j["f"] = std::string(buf, r.ptr);
      break;
    }
    case FieldKind::kTime:
      j["tm"] = {v.time.year, v.time.month,  v.time.day,         v.time.hour,
                 v.time.minute, v.time.second, v.time.microsecond, v.time.negative ? 1 : 0};
      break;
    case FieldKind::kBytes:
      j["x"] = Hex(v.bytes);
      break;
  }
  return j;
}

Status Bad(const std::string& where, std::string_view why) {
  return Status::Corruption("snapshot progress: " + where + ": " + std::string(why));
}

Status ReadKeyValue(const Json& j, const std::string& where, KeyValue* v) {
  *v = KeyValue();
  if (!j.is_object()) return Bad(where, "not an object");
  const auto kind = j.find("k");
  const auto type = j.find("t");
  if (kind == j.end() || !kind->is_number_unsigned() || kind->get<uint64_t>() > 5) return Bad(where + ".k", "not a kind");
  if (type == j.end() || !type->is_number_unsigned() || type->get<uint64_t>() > 255) {
    return Bad(where + ".t", "not a field type");
  }
  v->kind = static_cast<FieldKind>(kind->get<uint64_t>());
  v->field_type = static_cast<uint8_t>(type->get<uint64_t>());
  if (const auto b = j.find("b"); b != j.end()) {
    if (!b->is_boolean()) return Bad(where + ".b", "not a boolean");
    v->binary = b->get<bool>();
  }
  const auto member = [&](const char* name) -> const Json* {
    const auto it = j.find(name);
    return it == j.end() ? nullptr : &*it;
  };
  switch (v->kind) {
    case FieldKind::kNull:
      return Status::OK();
    case FieldKind::kSigned: {
      const Json* i = member("i");
      if (i == nullptr || !i->is_number_integer()) return Bad(where + ".i", "not an integer");
      if (i->is_number_unsigned() && i->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return Bad(where + ".i", "out of range");
      }
      v->i64 = i->get<int64_t>();
      return Status::OK();
    }
    case FieldKind::kUnsigned: {
      const Json* u = member("u");
      if (u == nullptr || !u->is_number_unsigned()) return Bad(where + ".u", "not an unsigned integer");
      v->u64 = u->get<uint64_t>();
      return Status::OK();
    }
    case FieldKind::kDouble: {
      const Json* f = member("f");
      if (f == nullptr || !f->is_string()) return Bad(where + ".f", "not a number's text");
      const std::string& text = f->get_ref<const std::string&>();
      auto r = std::from_chars(text.data(), text.data() + text.size(), v->f64);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return Bad(where + ".f", "not a number's text");
      return Status::OK();
    }
    case FieldKind::kTime: {
      const Json* tm = member("tm");
      if (tm == nullptr || !tm->is_array() || tm->size() != 8) return Bad(where + ".tm", "not 8 fields");
      uint32_t f[8];
      for (size_t i = 0; i < 8; ++i) {
        const Json& x = (*tm)[i];
        if (!x.is_number_unsigned() || x.get<uint64_t>() > UINT32_MAX) return Bad(where + ".tm", "a field out of range");
        f[i] = static_cast<uint32_t>(x.get<uint64_t>());
      }
      v->time = TimeValue{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7] != 0};
      return Status::OK();
    }
    case FieldKind::kBytes: {
      const Json* x = member("x");
      if (x == nullptr || !x->is_string() || !Unhex(x->get_ref<const std::string&>(), &v->bytes)) {
        return Bad(where + ".x", "not hex bytes");
      }
      return Status::OK();
    }
  }
  return Bad(where, "unknown kind");
}

Status ReadString(const Json& j, const char* name, const std::string& where, bool required, std::string* out) {
  const auto it = j.find(name);
  if (it == j.end()) return required ? Bad(where + "." + name, "missing") : Status::OK();
  if (!it->is_string()) return Bad(where + "." + name, "not a string");
  *out = it->get<std::string>();
  return Status::OK();
}

}  // namespace

bool SnapshotProgress::Complete() const { return TablesDone() == tables.size(); }

size_t SnapshotProgress::TablesDone() const {
  size_t n = 0;
  for (const TableProgress& t : tables) n += t.state == TableSnapshotState::kDone;
  return n;
}

std::string SnapshotProgress::Encode() const {
  Json j = Json::object();
  j["id"] = id;
  j["started_ms"] = started_ms;
  Json list = Json::array();
  for (const TableProgress& t : tables) {
    Json tj = Json::object();
    tj["schema"] = t.schema;
    tj["table"] = t.table;
    tj["state"] = kStateNames[static_cast<int>(t.state)];
    tj["rows"] = t.rows;
    if (!t.where.empty()) tj["where"] = t.where;
    if (t.keyless) tj["keyless"] = true;
    if (!t.after.empty()) {
      Json after = Json::array();
      for (const KeyValue& v : t.after) after.push_back(KeyValueJson(v));
      tj["after"] = std::move(after);
    }
    list.push_back(std::move(tj));
  }
  j["tables"] = std::move(list);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Status SnapshotProgress::Decode(std::string_view text, SnapshotProgress* out) {
  *out = SnapshotProgress();
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Bad("(top)", "not a JSON object");
  CANAL_RETURN_IF_ERROR(ReadString(j, "id", "", true, &out->id));
  if (const auto s = j.find("started_ms"); s != j.end()) {
    if (!s->is_number_integer()) return Bad(".started_ms", "not an integer");
    out->started_ms = s->get<int64_t>();
  }
  const auto tables = j.find("tables");
  if (tables == j.end() || !tables->is_array()) return Bad(".tables", "not an array");
  for (size_t i = 0; i < tables->size(); ++i) {
    const Json& tj = (*tables)[i];
    const std::string where = ".tables[" + std::to_string(i) + "]";
    if (!tj.is_object()) return Bad(where, "not an object");
    TableProgress t;
    CANAL_RETURN_IF_ERROR(ReadString(tj, "schema", where, true, &t.schema));
    CANAL_RETURN_IF_ERROR(ReadString(tj, "table", where, true, &t.table));
    CANAL_RETURN_IF_ERROR(ReadString(tj, "where", where, false, &t.where));
    std::string state;
    CANAL_RETURN_IF_ERROR(ReadString(tj, "state", where, true, &state));
    bool known = false;
    for (int s = 0; s < 3; ++s) {
      if (state == kStateNames[s]) {
        t.state = static_cast<TableSnapshotState>(s);
        known = true;
      }
    }
    if (!known) return Bad(where + ".state", "not pending, reading or done");
    if (const auto k = tj.find("keyless"); k != tj.end()) {
      if (!k->is_boolean()) return Bad(where + ".keyless", "not a boolean");
      t.keyless = k->get<bool>();
    }
    if (const auto rows = tj.find("rows"); rows != tj.end()) {
      if (!rows->is_number_unsigned()) return Bad(where + ".rows", "not a count");
      t.rows = rows->get<uint64_t>();
    }
    if (const auto after = tj.find("after"); after != tj.end()) {
      if (!after->is_array()) return Bad(where + ".after", "not an array");
      t.after.resize(after->size());
      for (size_t k = 0; k < after->size(); ++k) {
        CANAL_RETURN_IF_ERROR(ReadKeyValue((*after)[k], where + ".after[" + std::to_string(k) + "]", &t.after[k]));
      }
    }
    out->tables.push_back(std::move(t));
  }
  return Status::OK();
}

}  // namespace canal::snapshot
