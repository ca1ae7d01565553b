#include "canal/server/snapshot_request.h"

#include <nlohmann/json.hpp>

namespace canal::server {

Status ParseSnapshotRequest(std::string_view text, SnapshotRequest* request) {
  *request = SnapshotRequest{};
  if (text.size() > kMaxSnapshotRequestBytes) {
    return Status::InvalidArgument("the request is larger than " + std::to_string(kMaxSnapshotRequestBytes) +
                                   " bytes");
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("the request is not a JSON object");
  const auto t = j.find("tables");
  if (t == j.end() || !t->is_array() || t->empty() || t->size() > kMaxSnapshotRequestTables) {
    return Status::InvalidArgument("the request's \"tables\" must list 1 to " +
                                   std::to_string(kMaxSnapshotRequestTables) + " schema.table names");
  }
  for (const auto& name : *t) {
    if (!name.is_string()) return Status::InvalidArgument("a table name is not a string");
    request->tables.push_back(name.get<std::string>());
  }
  if (const auto w = j.find("where"); w != j.end()) {
    if (!w->is_string()) return Status::InvalidArgument("\"where\" is not a string");
    request->where = w->get<std::string>();
  }
  return Status::OK();
}

}  // namespace canal::server
