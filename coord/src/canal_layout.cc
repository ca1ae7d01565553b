#include "canal/coord/canal_layout.h"

#include <nlohmann/json.hpp>

namespace canal::coord::layout {

namespace {

std::string Join(std::initializer_list<std::string_view> parts) {
  std::string path(kRoot);
  for (std::string_view p : parts) {
    path += '/';
    path += p;
  }
  return path;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::string ServerClusterPath(std::string_view address) { return Join({"cluster", address}); }
std::string DestinationPath(std::string_view destination) { return Join({"destinations", destination}); }
std::string DestinationClusterPath(std::string_view destination, std::string_view address) {
  return Join({"destinations", destination, "cluster", address});
}
std::string ServerRunningPath(std::string_view destination) { return Join({"destinations", destination, "running"}); }
std::string ClientPath(std::string_view destination, std::string_view client_id) {
  return Join({"destinations", destination, client_id});
}
std::string ClientRunningPath(std::string_view destination, std::string_view client_id) {
  return Join({"destinations", destination, client_id, "running"});
}
std::string ClientCursorPath(std::string_view destination, std::string_view client_id) {
  return Join({"destinations", destination, client_id, "cursor"});
}
std::string ClientFilterPath(std::string_view destination, std::string_view client_id) {
  return Join({"destinations", destination, client_id, "filter"});
}
std::string SchemaHistoryPath(std::string_view destination) {
  return Join({"destinations", destination, "schema_history"});
}

std::string ServerRunningBody(std::string_view address) {
  nlohmann::ordered_json body;
  body["active"] = true;
  body["address"] = std::string(address);
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ClientRunningBody(std::string_view address, std::string_view client_id) {
  nlohmann::ordered_json body;
  body["active"] = true;
  body["address"] = std::string(address);
  if (AllDigits(client_id)) {
    body["clientId"] = std::stoi(std::string(client_id));
  } else {
    body["clientId"] = std::string(client_id);
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status ParseRunningNode(std::string_view body, RunningNode* out) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](std::string_view what) {
    return Status::InvalidArgument("running node body \"" + std::string(body.substr(0, 200)) + "\": " +
                                   std::string(what) + " (expected {\"active\":true,\"address\":\"ip:port\"})");
  };
  if (json.is_discarded() || !json.is_object()) return bad("not a JSON object");
  RunningNode node;
  if (auto it = json.find("active"); it != json.end() && it->is_boolean()) node.active = it->get<bool>();
  const auto it = json.find("address");
  if (it == json.end() || !it->is_string() || it->get_ref<const std::string&>().find(':') == std::string::npos) {
    return bad("no \"address\":\"host:port\"");
  }
  node.address = it->get<std::string>();
  *out = std::move(node);
  return Status::OK();
}

}  // namespace canal::coord::layout
