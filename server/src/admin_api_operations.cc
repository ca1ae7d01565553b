// The admin API's operations beyond stop/start (AdminOperations does the
// work): request bodies read and checked here, replies shaped here.
#include <spdlog/spdlog.h>

#include <charconv>

#include "admin_json.h"
#include "canal/server/admin_api.h"
#include "canal/server/client_text.h"
#include "canal/server/snapshot_request.h"

namespace canal::server {

namespace {

using nlohmann::json;

// The body as a JSON object ({} when empty); Handle checked it parses.
json BodyOf(const AdminRequest& request) {
  if (request.body.empty()) return json::object();
  return json::parse(request.body, nullptr, /*allow_exceptions=*/false);
}

// A query parameter's value ("" when absent).
std::string_view QueryParam(std::string_view target, std::string_view key) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return {};
}

int StatusOf(const Status& s) {
  if (s.IsNotFound()) return 404;
  if (s.code() == Status::Code::kInvalidArgument) return 400;
  if (s.code() == Status::Code::kAborted) return 503;
  return 500;
}

json EffectJson(const CursorEffect& e) {
  json tables = json::object();
  for (const auto& [t, n] : e.tables) tables[t] = n;
  return {{"client_id", e.client_id},
          {"from", e.from ? AdminPositionJson(*e.from) : json(nullptr)},
          {"effect", e.effect},
          {"transactions", e.transactions},
          {"events", e.events},
          {"bytes", e.bytes},
          {"tables", tables},
          {"complete", e.complete},
          {"note", e.note.empty() ? json(nullptr) : json(e.note)}};
}

}  // namespace

HttpAnswer AdminApi::Operate(const AdminRequest& request, const AdminRoute& route) {
  const std::string& name = route.destination;
  if (!ValidDestinationName(name)) {
    return Refuse(request, 404, "no destination '" + ClientText(name) + "' on this server");
  }
  if (hooks_.operations == nullptr) return Refuse(request, 503, "this server does not offer " + route.operation);
  if (route.operation == "cursor") return ResetCursor(request, name);
  if (route.operation == "config") return Config(request, name);
  if (route.operation == "log") return Log(request, name);
  return Snapshot(request, name);
}

HttpAnswer AdminApi::ResetCursor(const AdminRequest& request, const std::string& name) {
  const json body = BodyOf(request);
  CursorResetRequest r;
  int kinds = 0;
  std::string bad;
  if (body.contains("journal")) {
    ++kinds;
    if (!body["journal"].is_string() || body["journal"].get<std::string>().empty()) bad = "\"journal\" must be a file name";
    else r.journal = body["journal"].get<std::string>();
    if (body.contains("offset")) {
      if (!body["offset"].is_number_unsigned()) bad = "\"offset\" must be a non-negative integer";
      else r.offset = body["offset"].get<uint64_t>();
    }
  } else if (body.contains("offset")) {
    bad = "\"offset\" needs \"journal\"";
  }
  if (body.contains("timestamp_ms")) {
    ++kinds;
    if (!body["timestamp_ms"].is_number_integer() || body["timestamp_ms"].get<int64_t>() <= 0) {
      bad = "\"timestamp_ms\" must be milliseconds since the epoch";
    } else {
      r.timestamp_ms = body["timestamp_ms"].get<int64_t>();
    }
  }
  if (body.contains("gtid")) {
    ++kinds;
    if (!body["gtid"].is_string() || body["gtid"].get<std::string>().empty()) bad = "\"gtid\" must be a GTID position";
    else r.gtid = body["gtid"].get<std::string>();
  }
  if (body.contains("client_id")) {
    if (body["client_id"].is_string()) r.client_id = body["client_id"].get<std::string>();
    else if (body["client_id"].is_number_integer()) r.client_id = std::to_string(body["client_id"].get<int64_t>());
    else bad = "\"client_id\" must be a client id";
  }
  if (body.contains("dryRun")) {
    if (!body["dryRun"].is_boolean()) bad = "\"dryRun\" must be true or false";
    else r.dry_run = body["dryRun"].get<bool>();
  }
  if (bad.empty() && kinds != 1) {
    bad = "give exactly one of {\"journal\", \"offset\"}, {\"timestamp_ms\"} or {\"gtid\"}";
  }
  if (!bad.empty()) return Refuse(request, 400, "cursor: " + bad);
  if (r.journal.size() > 512 || r.gtid.size() > 4096 || r.client_id.size() > 256) {
    return Refuse(request, 400, "cursor: a field is longer than any real one");
  }
  CursorResetReport report;
  const Status s = hooks_.operations->ResetCursor(name, r, &report);
  if (!s.ok()) {
    log_->warn("admin: cursor reset of {} by {} (token ok) refused: {}", name, request.peer, s.ToString());
    return AdminJsonAnswer(StatusOf(s), json{{"destination", name}, {"error", s.ToString()}});
  }
  json clients = json::array();
  for (const CursorEffect& e : report.clients) clients.push_back(EffectJson(e));
  json reply = {{"destination", name},          {"dry_run", r.dry_run},
                {"target", AdminPositionJson(report.target)}, {"located_by", report.located_by},
                {"clients", clients},           {"applied", report.applied}};
  if (!r.dry_run) {
    reply["result"] = report.result;
    log_->info("admin: cursor reset of {} by {} (token ok): {} to {}", name, request.peer, report.result,
               report.target.ToString());
  }
  return AdminJsonAnswer(200, reply);
}

HttpAnswer AdminApi::Config(const AdminRequest& request, const std::string& name) {
  if (request.method != "POST") {
    std::string path, text;
    const Status s = hooks_.operations->ReadConfig(name, &path, &text);
    if (!s.ok()) return AdminJsonAnswer(StatusOf(s), json{{"destination", name}, {"error", s.ToString()}});
    return AdminJsonAnswer(200, json{{"destination", name}, {"path", path}, {"text", text}});
  }
  const json body = BodyOf(request);
  if (!body.contains("text") || !body["text"].is_string()) {
    return Refuse(request, 400, "config: send {\"text\": \"<the whole instance.properties>\"}");
  }
  bool dry_run = false;
  if (body.contains("dryRun")) {
    if (!body["dryRun"].is_boolean()) return Refuse(request, 400, "config: \"dryRun\" must be true or false");
    dry_run = body["dryRun"].get<bool>();
  }
  std::string result;
  const Status s = hooks_.operations->WriteConfig(name, body["text"].get<std::string>(), dry_run, &result);
  if (!s.ok()) {
    log_->warn("admin: config of {} by {} (token ok) refused: {}", name, request.peer, s.ToString());
    return AdminJsonAnswer(StatusOf(s), json{{"destination", name}, {"applied", false}, {"error", s.ToString()}});
  }
  if (!dry_run) log_->info("admin: config of {} by {} (token ok): {}", name, request.peer, result);
  json reply = {{"destination", name}, {"dry_run", dry_run}, {"result", result}};
  reply["applied"] = !dry_run && result.starts_with("written and applied");
  return AdminJsonAnswer(200, reply);
}

HttpAnswer AdminApi::Log(const AdminRequest& request, const std::string& name) {
  size_t lines = 100;
  const std::string_view n = QueryParam(request.target, "lines");
  if (!n.empty()) {
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), lines);
    if (ec != std::errc() || end != n.data() + n.size() || lines == 0) {
      return Refuse(request, 400, "log: lines must be a positive number");
    }
  }
  std::string text;
  bool truncated = false;
  const Status s = hooks_.operations->TailLog(name, lines, &text, &truncated);
  if (!s.ok()) return AdminJsonAnswer(StatusOf(s), json{{"destination", name}, {"error", s.ToString()}});
  return AdminJsonAnswer(200, json{{"destination", name}, {"text", text}, {"truncated", truncated}});
}

HttpAnswer AdminApi::Snapshot(const AdminRequest& request, const std::string& name) {
  // The same checks as a request file (bin/canal-admin.sh snapshot).
  SnapshotRequest parsed;
  if (Status s = ParseSnapshotRequest(request.body, &parsed); !s.ok()) return Refuse(request, 400, "snapshot: " + s.ToString());
  std::string id;
  const Status s = hooks_.operations->Snapshot(name, parsed.tables, parsed.where, &id);
  if (!s.ok()) {
    log_->warn("admin: snapshot of {} by {} (token ok) refused: {}", name, request.peer, s.ToString());
    return AdminJsonAnswer(StatusOf(s), json{{"destination", name}, {"error", s.ToString()}});
  }
  log_->info("admin: snapshot {} of {} by {} (token ok): {} table(s)", id, name, request.peer, parsed.tables.size());
  return AdminJsonAnswer(200, json{{"destination", name}, {"snapshot", id}});
}

// GET /api/cluster: ZooKeeper's view of the cluster; POST /api/cluster/drain {"server", "drain"}
// and /api/cluster/move {"destination", "server"} (server "" takes the pin away).
HttpAnswer AdminApi::Cluster(const AdminRequest& request, const AdminRoute& route) {
  if (!hooks_.cluster_view) {
    return Refuse(request, 404,
                  "not a balanced cluster: this server places no destinations (set canal.cluster.placement = balanced "
                  "and canal.zkServers, docs/cluster.md)");
  }
  if (route.operation.empty()) {
    std::string text;
    const Status s = hooks_.cluster_view(&text);
    if (!s.ok()) return AdminJsonAnswer(503, json{{"error", "reading the cluster from ZooKeeper: " + s.ToString()}});
    HttpAnswer a;
    a.status = 200;
    a.content_type = "application/json";
    a.body = std::move(text);
    return a;
  }
  const json body = BodyOf(request);
  const auto text_field = [&](const char* key, std::string* out) {
    const auto it = body.find(key);
    if (it == body.end() || !it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  std::string server;
  if (!text_field("server", &server)) {
    return Refuse(request, 400, "cluster " + route.operation + ": the body needs \"server\": \"ip:port\"" +
                                    (route.operation == "move" ? " (\"\" to take a destination's pin away)" : ""));
  }
  Status s;
  std::string what;
  if (route.operation == "drain") {
    const auto it = body.find("drain");
    const bool drain = it == body.end() || (it->is_boolean() && it->get<bool>());
    if (it != body.end() && !it->is_boolean()) return Refuse(request, 400, "cluster drain: \"drain\" must be true or false");
    s = hooks_.cluster_drain(server, drain);
    what = (drain ? "drain of " : "end of the drain of ") + server;
  } else {
    std::string destination;
    if (!text_field("destination", &destination) || !ValidDestinationName(destination)) {
      return Refuse(request, 400, "cluster move: the body needs \"destination\": a destination's name");
    }
    s = hooks_.cluster_move(destination, server);
    what = server.empty() ? "pin of " + destination + " taken away" : "move of " + destination + " to " + server;
  }
  if (!s.ok()) {
    log_->warn("admin: cluster {} by {} (token ok) refused: {}", what, request.peer, s.ToString());
    return AdminJsonAnswer(StatusOf(s), json{{"error", s.ToString()}});
  }
  log_->info("admin: cluster {} by {} (token ok)", what, request.peer);
  return AdminJsonAnswer(200, json{{"ok", true}, {"result", what + ": written to ZooKeeper; the leader applies it"}});
}

}  // namespace canal::server
