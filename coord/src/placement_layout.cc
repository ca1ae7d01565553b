#include "canal/coord/placement_layout.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace canal::coord::layout {

namespace {

using Json = nlohmann::json;

std::string Join(std::string_view a, std::string_view b = {}) {
  std::string path(kPlacementRoot);
  path += '/';
  path += a;
  if (!b.empty()) {
    path += '/';
    path += b;
  }
  return path;
}

// At most 200 bytes of the body, control bytes shown as '?', so that a
// binary or huge body neither floods nor garbles a log line.
std::string Quote(std::string_view body) {
  std::string out(body.substr(0, 200));
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  if (body.size() > 200) out += "...";
  return out;
}

Status Bad(std::string_view path, std::string_view body, std::string_view what, std::string_view expected) {
  return Status::InvalidArgument("placement node " + std::string(path) + " \"" + Quote(body) + "\": " +
                                 std::string(what) + " (expected " + std::string(expected) + ")");
}

// Our bodies nest two levels; refusing deep nesting up front keeps any
// parser recursion (and its stack) bounded whatever the bytes.
bool NestsTooDeep(std::string_view body) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 16) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// Parses a JSON object, or says why not.
bool ParseObject(std::string_view body, Json* out, std::string* why) {
  if (NestsTooDeep(body)) {
    *why = "nested too deeply";
    return false;
  }
  *out = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) {
    *why = "not valid JSON";
    return false;
  }
  if (!out->is_object()) {
    *why = "not a JSON object";
    return false;
  }
  return true;
}

// A JSON integer in [0, max]: floats (1.0, 1e30) and negatives are refused.
bool UnsignedIn(const Json& j, uint64_t max, uint64_t* out) {
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    if (v > max) return false;
    *out = v;
    return true;
  }
  if (j.is_number_integer()) {
    const auto v = j.get<int64_t>();
    if (v < 0 || static_cast<uint64_t>(v) > max) return false;
    *out = static_cast<uint64_t>(v);
    return true;
  }
  return false;
}

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string PlacementServersPath() { return Join("servers"); }
std::string PlacementServerPath(std::string_view address) { return Join("servers", address); }
std::string PlacementLeaderPath() { return Join("leader"); }
std::string PlacementAssignmentPath() { return Join("assignment"); }
std::string PlacementDrainsPath() { return Join("drain"); }
std::string PlacementDrainPath(std::string_view address) { return Join("drain", address); }
std::string PlacementPinsPath() { return Join("pins"); }
std::string PlacementPinPath(std::string_view destination) { return Join("pins", destination); }
std::string PlacementWeightsPath() { return Join("weights"); }
std::string PlacementWeightPath(std::string_view destination) { return Join("weights", destination); }

bool ValidNodeName(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

bool ValidAddress(std::string_view address) {
  if (!ValidNodeName(address)) return false;
  // host (a name, IPv4, or [IPv6] with an optional %zone), ':', port digits.
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
  for (char c : address.substr(0, colon)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_' || c == ':' || c == '[' || c == ']' || c == '%';
    if (!ok) return false;
  }
  return true;
}

std::string ServerNodeBody(const ServerNode& node) {
  nlohmann::ordered_json j;
  j["address"] = node.address;
  j["cap"] = node.cap;
  j["destinations"] = nlohmann::ordered_json::array();
  for (const std::string& d : node.destinations) j["destinations"].push_back(d);
  j["draining"] = node.draining;
  j["load"] = nlohmann::ordered_json::object();
  for (const auto& [d, rate] : node.load) {
    // JSON has no NaN or infinity: such a rate is left out, not written as null.
    if (std::isfinite(rate) && rate >= 0.0) j["load"][d] = rate;
  }
  if (!node.hints.empty()) {
    j["hints"] = nlohmann::ordered_json::object();
    for (const auto& [d, h] : node.hints) {
      nlohmann::ordered_json one;
      one["weight"] = std::isfinite(h.weight) && h.weight > 0 ? h.weight : 1.0;
      one["preferred"] = h.preferred;
      one["excluded"] = h.excluded;
      j["hints"][d] = std::move(one);
    }
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Status ParseServerNode(std::string_view path, std::string_view body, ServerNode* out) {
  constexpr std::string_view kShape =
      R"({"address":"ip:port","cap":N,"destinations":["dest",...],"draining":false,"load":{"dest":bytesPerSecond}})";
  Json j;
  std::string why;
  if (!ParseObject(body, &j, &why)) return Bad(path, body, why, kShape);
  ServerNode node;
  auto it = j.find("address");
  if (it == j.end() || !it->is_string() || !ValidAddress(it->get_ref<const std::string&>())) {
    return Bad(path, body, "no \"address\":\"ip:port\"", kShape);
  }
  node.address = it->get<std::string>();
  if (it = j.find("cap"); it != j.end()) {
    uint64_t cap = 0;
    if (!UnsignedIn(*it, std::numeric_limits<uint32_t>::max(), &cap)) {
      return Bad(path, body, "\"cap\" is not an integer from 0 to 4294967295", kShape);
    }
    node.cap = static_cast<uint32_t>(cap);
  }
  if (it = j.find("destinations"); it != j.end()) {
    if (!it->is_array()) return Bad(path, body, "\"destinations\" is not an array", kShape);
    for (const Json& d : *it) {
      if (!d.is_string() || !ValidNodeName(d.get_ref<const std::string&>())) {
        return Bad(path, body, "\"destinations\" holds something that is not a destination name", kShape);
      }
      node.destinations.insert(d.get<std::string>());
    }
  }
  if (it = j.find("draining"); it != j.end()) {
    if (!it->is_boolean()) return Bad(path, body, "\"draining\" is not true or false", kShape);
    node.draining = it->get<bool>();
  }
  if (it = j.find("load"); it != j.end()) {
    if (!it->is_object()) return Bad(path, body, "\"load\" is not an object", kShape);
    for (const auto& [d, rate] : it->items()) {
      if (!ValidNodeName(d) || !rate.is_number() || !std::isfinite(rate.get<double>()) || rate.get<double>() < 0) {
        return Bad(path, body, "\"load\" holds something that is not a destination's bytes per second", kShape);
      }
      node.load[d] = rate.get<double>();
    }
  }
  if (it = j.find("hints"); it != j.end()) {
    if (!it->is_object()) return Bad(path, body, "\"hints\" is not an object", kShape);
    for (const auto& [d, h] : it->items()) {
      if (!ValidNodeName(d) || !h.is_object()) {
        return Bad(path, body, "\"hints\" holds something that is not a destination's hints", kShape);
      }
      DestinationHints hints;
      if (auto w = h.find("weight"); w != h.end()) {
        if (!w->is_number() || !std::isfinite(w->get<double>()) || w->get<double>() <= 0 || w->get<double>() > 1e6) {
          return Bad(path, body, "a hint's \"weight\" is not a number above 0 and at most 1e6", kShape);
        }
        hints.weight = w->get<double>();
      }
      for (const char* key : {"preferred", "excluded"}) {
        auto list = h.find(key);
        if (list == h.end()) continue;
        if (!list->is_array()) return Bad(path, body, std::string("a hint's \"") + key + "\" is not an array", kShape);
        for (const Json& a : *list) {
          if (!a.is_string() || !ValidAddress(a.get_ref<const std::string&>())) {
            return Bad(path, body, std::string("a hint's \"") + key + "\" holds something that is not ip:port",
                       kShape);
          }
          (std::string_view(key) == "preferred" ? hints.preferred : hints.excluded).push_back(a.get<std::string>());
        }
      }
      node.hints[d] = std::move(hints);
    }
  }
  *out = std::move(node);
  return Status::OK();
}

std::string LeaderBody(std::string_view address) {
  nlohmann::ordered_json j;
  j["address"] = std::string(address);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Status ParseLeader(std::string_view path, std::string_view body, std::string* address) {
  constexpr std::string_view kShape = R"({"address":"ip:port"})";
  Json j;
  std::string why;
  if (!ParseObject(body, &j, &why)) return Bad(path, body, why, kShape);
  auto it = j.find("address");
  if (it == j.end() || !it->is_string() || !ValidAddress(it->get_ref<const std::string&>())) {
    return Bad(path, body, "no \"address\":\"ip:port\"", kShape);
  }
  *address = it->get<std::string>();
  return Status::OK();
}

std::string AssignmentBody(const Assignment& a) {
  nlohmann::ordered_json j;
  j["generation"] = a.generation;
  j["leader"] = a.leader;
  j["assignment"] = nlohmann::ordered_json::object();
  for (const auto& [d, server] : a.assignment) j["assignment"][d] = server;
  j["unassigned"] = nlohmann::ordered_json::object();
  for (const auto& [d, reason] : a.unassigned) j["unassigned"][d] = reason;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Status ParseAssignment(std::string_view path, std::string_view body, Assignment* out) {
  constexpr std::string_view kShape =
      R"({"generation":N,"leader":"ip:port","assignment":{"dest":"ip:port",...},"unassigned":{"dest":"reason",...}})";
  Json j;
  std::string why;
  if (!ParseObject(body, &j, &why)) return Bad(path, body, why, kShape);
  Assignment a;
  auto it = j.find("generation");
  if (it == j.end() || !UnsignedIn(*it, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &a.generation)) {
    return Bad(path, body, "no \"generation\" integer from 0 to 2^63-1", kShape);
  }
  if (it = j.find("leader"); it != j.end()) {
    if (!it->is_string()) return Bad(path, body, "\"leader\" is not a string", kShape);
    a.leader = it->get<std::string>();
  }
  it = j.find("assignment");
  if (it == j.end() || !it->is_object()) return Bad(path, body, "no \"assignment\" object", kShape);
  for (const auto& [d, server] : it->items()) {
    if (!ValidNodeName(d) || !server.is_string() || !ValidAddress(server.get_ref<const std::string&>())) {
      return Bad(path, body, "\"assignment\" holds something that is not \"dest\":\"ip:port\"", kShape);
    }
    a.assignment[d] = server.get<std::string>();
  }
  if (it = j.find("unassigned"); it != j.end()) {
    if (!it->is_object()) return Bad(path, body, "\"unassigned\" is not an object", kShape);
    for (const auto& [d, reason] : it->items()) {
      if (!ValidNodeName(d) || !reason.is_string()) {
        return Bad(path, body, "\"unassigned\" holds something that is not \"dest\":\"reason\"", kShape);
      }
      a.unassigned[d] = reason.get<std::string>();
    }
  }
  *out = std::move(a);
  return Status::OK();
}

Status ParsePin(std::string_view path, std::string_view body, std::string* address) {
  const std::string_view a = Trim(body);
  if (!ValidAddress(a)) return Bad(path, body, "not a server address", "ip:port");
  *address = std::string(a);
  return Status::OK();
}

Status ParseWeight(std::string_view path, std::string_view body, double* weight) {
  const std::string_view s = Trim(body);
  double w = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), w);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return Bad(path, body, "not a number", "a number > 0, at most 1000000");
  }
  if (!std::isfinite(w) || !(w > 0.0) || w > 1e6) {
    return Bad(path, body, "out of range", "a number > 0, at most 1000000");
  }
  *weight = w;
  return Status::OK();
}

}  // namespace canal::coord::layout
