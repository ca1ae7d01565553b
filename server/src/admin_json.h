// Pieces the admin API's two files share (admin_api.cc, admin_api_operations.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "canal/common/log_position.h"
#include "canal/server/http_endpoint.h"

namespace canal::server {

// The rule config.cc applies to canal.destinations: a name is a folder of
// canal.conf.dir, so nothing else can ever be a destination.
bool ValidDestinationName(std::string_view name);
// A JSON reply; never throws (client text may be invalid UTF-8).
HttpAnswer AdminJsonAnswer(int status, const nlohmann::json& body);
// null for an empty position.
nlohmann::json AdminPositionJson(const LogPosition& p);

}  // namespace canal::server
