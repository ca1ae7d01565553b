#include "canal/meta/meta_json.h"

#include <cstdint>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

namespace canal::meta {

namespace {

using Json = nlohmann::json;  // std::map objects: keys come out sorted, as fastjson sorts them

std::string Dump(const Json& j) {
  // replace: a client's filter may carry invalid UTF-8; never throw on it.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json PositionJson(const LogPosition& p) {
  Json j = Json::object();
  j["gtid"] = p.gtid;
  j["included"] = p.included;
  j["journalName"] = p.journal_name;
  j["position"] = p.position;
  j["serverId"] = p.server_id;
  j["timestamp"] = p.timestamp_ms;
  // Our extension, written only inside a large transaction so that a cursor
  // at a boundary stays byte for byte Canal's; Canal's reader ignores it.
  if (p.transaction_begin != 0) j["transactionBegin"] = p.transaction_begin;
  // Also ours: the stream's GTID state (LogPosition::gtid_set), for a resume on another server.
  if (p.gtid_set != nullptr) j["gtidSet"] = *p.gtid_set;
  // Also ours: a snapshot's progress (an object), only while one is under way.
  if (p.snapshot != nullptr) {
    Json progress = Json::parse(*p.snapshot, nullptr, false);
    j["snapshot"] = progress.is_object() ? std::move(progress) : Json(*p.snapshot);
  }
  return j;
}

Json IdentityJson(const LogIdentity& id) {
  Json address = Json::object();
  address["address"] = id.address;
  address["port"] = id.port;
  Json j = Json::object();
  j["slaveId"] = id.slave_id;
  j["sourceAddress"] = std::move(address);
  return j;
}

Json CursorJson(const LogPosition& p, const LogIdentity& id) {
  Json j = Json::object();
  j["identity"] = IdentityJson(id);
  j["postion"] = PositionJson(p);
  return j;
}

// Checked readers: each says which field is wrong instead of throwing.
Status Bad(std::string_view field, std::string_view why) {
  std::string m(field);
  m += ": ";
  m += why;
  return Status::Corruption(m);
}

// Null counts as absent: fastjson omits nulls, hand edits may write them.
const Json* Member(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Status ReadObject(const Json& obj, const char* key, std::string_view path, bool required, const Json** out) {
  *out = Member(obj, key);
  if (*out == nullptr) return required ? Bad(path, "missing") : Status::OK();
  if (!(*out)->is_object()) return Bad(path, "not an object");
  return Status::OK();
}

Status ReadString(const Json& obj, const char* key, std::string_view path, bool required, std::string* out) {
  const Json* v = Member(obj, key);
  if (v == nullptr) return required ? Bad(path, "missing") : Status::OK();
  if (!v->is_string()) return Bad(path, "not a string");
  *out = v->get_ref<const std::string&>();
  return Status::OK();
}

Status ReadBool(const Json& obj, const char* key, std::string_view path, bool* out) {
  const Json* v = Member(obj, key);
  if (v == nullptr) return Status::OK();
  if (!v->is_boolean()) return Bad(path, "not a boolean");
  *out = v->get<bool>();
  return Status::OK();
}

// Integers in [lo, hi]; nlohmann keeps unsigned and signed apart, so compare
// in the right domain before narrowing.
Status ReadInteger(const Json& obj, const char* key, std::string_view path, bool required, int64_t lo, uint64_t hi,
                   bool* present, int64_t* as_signed, uint64_t* as_unsigned) {
  *present = false;
  const Json* v = Member(obj, key);
  if (v == nullptr) return required ? Bad(path, "missing") : Status::OK();
  if (!v->is_number_integer()) return Bad(path, "not an integer");
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > hi) return Bad(path, "out of range");
    *as_unsigned = u;
    *as_signed = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? 0 : static_cast<int64_t>(u);
  } else {
    int64_t s = v->get<int64_t>();
    if (s < lo || (s >= 0 && static_cast<uint64_t>(s) > hi)) return Bad(path, "out of range");
    *as_signed = s;
    *as_unsigned = s < 0 ? 0 : static_cast<uint64_t>(s);
  }
  *present = true;
  return Status::OK();
}

Status ReadPosition(const Json& j, std::string_view path, LogPosition* p) {
  const std::string base(path);
  *p = LogPosition();
  CANAL_RETURN_IF_ERROR(ReadString(j, "journalName", base + ".journalName", true, &p->journal_name));
  if (p->journal_name.empty()) return Bad(base + ".journalName", "empty");
  bool present;
  int64_t s;
  uint64_t u;
  CANAL_RETURN_IF_ERROR(ReadInteger(j, "position", base + ".position", true, 0,
                                    static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &present, &s, &u));
  p->position = u;
  CANAL_RETURN_IF_ERROR(ReadInteger(j, "serverId", base + ".serverId", false, 0,
                                    std::numeric_limits<uint32_t>::max(), &present, &s, &u));
  if (present) p->server_id = static_cast<uint32_t>(u);
  CANAL_RETURN_IF_ERROR(ReadInteger(j, "timestamp", base + ".timestamp", false, std::numeric_limits<int64_t>::min(),
                                    static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &present, &s, &u));
  if (present) p->timestamp_ms = s;
  CANAL_RETURN_IF_ERROR(ReadString(j, "gtid", base + ".gtid", false, &p->gtid));
  CANAL_RETURN_IF_ERROR(ReadBool(j, "included", base + ".included", &p->included));
  CANAL_RETURN_IF_ERROR(ReadInteger(j, "transactionBegin", base + ".transactionBegin", false, 0,
                                    static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &present, &s, &u));
  if (present) p->transaction_begin = u;
  if (const Json* set = Member(j, "gtidSet"); set != nullptr) {
    if (!set->is_string()) return Bad(base + ".gtidSet", "not a string");
    p->gtid_set = std::make_shared<const std::string>(set->get<std::string>());
  }
  if (const Json* progress = Member(j, "snapshot"); progress != nullptr) {
    if (!progress->is_object()) return Bad(base + ".snapshot", "not an object");
    p->snapshot = std::make_shared<const std::string>(Dump(*progress));
  }
  return Status::OK();
}

Status ReadIdentity(const Json& j, std::string_view path, LogIdentity* id) {
  const std::string base(path);
  *id = LogIdentity();
  bool present;
  int64_t s;
  uint64_t u;
  CANAL_RETURN_IF_ERROR(ReadInteger(j, "slaveId", base + ".slaveId", false, std::numeric_limits<int64_t>::min(),
                                    static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &present, &s, &u));
  if (present) id->slave_id = s;
  const Json* address;
  CANAL_RETURN_IF_ERROR(ReadObject(j, "sourceAddress", base + ".sourceAddress", false, &address));
  if (address != nullptr) {
    CANAL_RETURN_IF_ERROR(ReadString(*address, "address", base + ".sourceAddress.address", false, &id->address));
    CANAL_RETURN_IF_ERROR(
        ReadInteger(*address, "port", base + ".sourceAddress.port", false, 0, 65535, &present, &s, &u));
    if (present) id->port = static_cast<int32_t>(u);
  }
  return Status::OK();
}

Status ReadCursor(const Json& j, std::string_view path, LogPosition* p, LogIdentity* id) {
  const std::string base(path);
  const Json* identity;
  CANAL_RETURN_IF_ERROR(ReadObject(j, "identity", base + ".identity", false, &identity));
  if (identity != nullptr) {
    CANAL_RETURN_IF_ERROR(ReadIdentity(*identity, base + ".identity", id));
  } else {
    *id = LogIdentity();
  }
  const Json* position;
  CANAL_RETURN_IF_ERROR(ReadObject(j, "postion", base + ".postion", true, &position));
  return ReadPosition(*position, base + ".postion", p);
}

Status Parse(std::string_view text, Json* out) {
  *out = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return Status::Corruption("not valid JSON");
  if (!out->is_object()) return Status::Corruption("top level is not a JSON object");
  return Status::OK();
}

}  // namespace

std::string EncodeMetaFile(const DestinationMeta& meta) {
  Json clients = Json::array();
  for (const ClientMeta& c : meta.clients) {
    Json identity = Json::object();
    identity["clientId"] = c.client.client_id;
    identity["destination"] = c.client.destination;
    identity["filter"] = c.client.filter;
    Json data = Json::object();
    data["clientIdentity"] = std::move(identity);
    if (c.cursor) data["cursor"] = CursorJson(*c.cursor, c.cursor_identity);
    clients.push_back(std::move(data));
  }
  Json j = Json::object();
  j["clientDatas"] = std::move(clients);
  j["destination"] = meta.destination;
  return Dump(j);
}

Status DecodeMetaFile(std::string_view text, DestinationMeta* meta) {
  Json j;
  CANAL_RETURN_IF_ERROR(Parse(text, &j));
  *meta = DestinationMeta();
  CANAL_RETURN_IF_ERROR(ReadString(j, "destination", "destination", true, &meta->destination));
  const Json* clients = Member(j, "clientDatas");
  if (clients == nullptr) return Status::OK();  // Canal leaves a null list out
  if (!clients->is_array()) return Bad("clientDatas", "not an array");
  std::set<int16_t> seen;
  for (size_t i = 0; i < clients->size(); ++i) {
    const std::string path = "clientDatas[" + std::to_string(i) + "]";
    const Json& data = (*clients)[i];
    if (!data.is_object()) return Bad(path, "not an object");
    const Json* identity;
    CANAL_RETURN_IF_ERROR(ReadObject(data, "clientIdentity", path + ".clientIdentity", true, &identity));
    ClientMeta c;
    bool present;
    int64_t s;
    uint64_t u;
    CANAL_RETURN_IF_ERROR(ReadInteger(*identity, "clientId", path + ".clientIdentity.clientId", true,
                                      std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max(),
                                      &present, &s, &u));
    c.client.client_id = static_cast<int16_t>(s);
    CANAL_RETURN_IF_ERROR(ReadString(*identity, "destination", path + ".clientIdentity.destination", true,
                                     &c.client.destination));
    if (c.client.destination != meta->destination) {
      return Bad(path + ".clientIdentity.destination",
                 "\"" + c.client.destination + "\" differs from the file's \"" + meta->destination + "\"");
    }
    CANAL_RETURN_IF_ERROR(ReadString(*identity, "filter", path + ".clientIdentity.filter", false, &c.client.filter));
    if (!seen.insert(c.client.client_id).second) {
      return Bad(path + ".clientIdentity.clientId", "client " + std::to_string(c.client.client_id) + " repeated");
    }
    const Json* cursor;
    CANAL_RETURN_IF_ERROR(ReadObject(data, "cursor", path + ".cursor", false, &cursor));
    if (cursor != nullptr) {
      LogPosition p;
      CANAL_RETURN_IF_ERROR(ReadCursor(*cursor, path + ".cursor", &p, &c.cursor_identity));
      c.cursor = std::move(p);
    }
    meta->clients.push_back(std::move(c));
  }
  return Status::OK();
}

std::string EncodeCursor(const LogPosition& position, const LogIdentity& identity) {
  Json j = CursorJson(position, identity);
  j["@type"] = std::string(kLogPositionClass);  // '@' sorts before letters: it comes out first, as fastjson puts it
  return Dump(j);
}

Status DecodeCursor(std::string_view text, LogPosition* position, LogIdentity* identity) {
  Json j;
  CANAL_RETURN_IF_ERROR(Parse(text, &j));
  return ReadCursor(j, "cursor", position, identity);
}

}  // namespace canal::meta
