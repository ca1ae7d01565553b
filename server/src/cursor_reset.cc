// AdminOperations::ResetCursor and its dry run. The count of what a move
// delivers again or skips comes from the primary's own SHOW BINLOG EVENTS,
// not from our decoder: the report an operator acts on must not share a bug
// with the stream it predicts.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "canal/meta/meta_manager.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/server/admin_operations.h"
#include "canal/server/instance_registry.h"

namespace canal::server {

namespace {

constexpr size_t kPage = 5000;  // SHOW BINLOG EVENTS rows per query

std::string SqlString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "'";
}

uint64_t ToU64(const std::optional<std::string>& field) {
  if (!field) return 0;
  uint64_t v = 0;
  for (char c : *field) {
    if (c < '0' || c > '9') break;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// A Table_map's Info: "table_id: 33 (shop.customer)".
std::string TableOf(const std::optional<std::string>& info) {
  if (!info) return {};
  const size_t open = info->rfind('(');
  const size_t close = info->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) return {};
  return info->substr(open + 1, close - open - 1);
}

struct NullSink final : parser::TransactionSink {
  Status OnTransaction(const parser::Transaction&) override { return Status::OK(); }
};

}  // namespace

Status AdminOperations::CountRange(const InstanceConfig& config, const LogPosition& from, const LogPosition& to,
                                   CursorEffect* effect) {
  mysql::QueryConnection query(config.parser.master);
  CANAL_RETURN_IF_ERROR(query.Connect().WithContext("connecting to " + config.parser.master.Address()));
  std::vector<mysql::BinaryLogFile> files;
  CANAL_RETURN_IF_ERROR(query.ShowBinaryLogs(&files));
  auto index = [&](const std::string& name) -> size_t {
    for (size_t i = 0; i < files.size(); ++i) {
      if (files[i].name == name) return i;
    }
    return files.size();
  };
  const size_t first = index(from.journal_name);
  const size_t last = index(to.journal_name);
  if (first == files.size() || last == files.size()) {
    effect->complete = false;
    effect->note = "the binlog " + (first == files.size() ? from.journal_name : to.journal_name) +
                   " is no longer on the primary (purged): the range cannot be counted";
    return Status::OK();
  }
  // Transactions that start in the range, and the tables each changes.
  std::set<std::string> open_tables;
  bool in_transaction = false;
  uint64_t gtid_starts = 0, commits = 0;
  auto close_transaction = [&] {
    for (const std::string& t : open_tables) ++effect->tables[t];
    open_tables.clear();
    in_transaction = false;
  };
  for (size_t f = first; f <= last; ++f) {
    uint64_t pos = f == first ? from.position : 4;
    for (;;) {
      mysql::ResultSet rs;
      const std::string sql = "SHOW BINLOG EVENTS IN " + SqlString(files[f].name) + " FROM " + std::to_string(pos) +
                              " LIMIT " + std::to_string(kPage);
      if (Status s = query.Query(sql, &rs); !s.ok()) {
        effect->complete = false;
        effect->note = "counting stopped at " + files[f].name + ":" + std::to_string(pos) + ": " + s.ToString();
        close_transaction();
        return Status::OK();
      }
      bool past_end = false;
      for (const mysql::ResultRow& row : rs.rows) {
        if (row.size() < 6) continue;
        const uint64_t at = ToU64(row[1]);
        const uint64_t end = ToU64(row[4]);
        if (f == last && at >= to.position) {
          past_end = true;
          break;
        }
        const std::string type = row[2].value_or("");
        ++effect->events;
        effect->bytes += end > at ? end - at : 0;
        if (type == "Gtid" || type == "Anonymous_Gtid") {
          if (in_transaction) close_transaction();
          in_transaction = true;
          ++gtid_starts;
        } else if (type == "Table_map") {
          const std::string table = TableOf(row[5]);
          if (!table.empty()) open_tables.insert(table);
        } else if (type == "Xid" || (type == "Query" && row[5].value_or("") == "COMMIT")) {
          ++commits;
          close_transaction();
        }
        pos = end;
        if (effect->events >= kMaxCountedEvents) {
          effect->complete = false;
          effect->note = "counted the first " + std::to_string(kMaxCountedEvents) + " events of the range only";
          close_transaction();
          effect->transactions = std::max(gtid_starts, commits);
          return Status::OK();
        }
      }
      if (past_end || rs.rows.size() < kPage || pos == 0) break;
    }
  }
  close_transaction();
  // Every transaction has a GTID event (MariaDB; MySQL 5.7+ an anonymous one
  // without GTIDs); older binlogs have only the commits to count.
  effect->transactions = gtid_starts != 0 ? gtid_starts : commits;
  return Status::OK();
}

Status AdminOperations::ResetCursor(std::string_view destination, const CursorResetRequest& request,
                                    CursorResetReport* report) {
  *report = CursorResetReport{};
  const std::string name(destination);
  if (!registry_->Knows(name)) return Status::NotFound("no destination '" + name + "' on this server");
  if (registry_->Arbitrated()) {
    return Status::InvalidArgument(
        "a cursor reset is refused in a ZooKeeper pair: stopping " + name +
        " here hands it to the other server, which would go on from the old cursor. Stop both servers' copies "
        "(canal-admin.sh stop on each), edit the cursor node in ZooKeeper, then start them (docs/admin.md)");
  }
  InstanceConfig config;
  CANAL_RETURN_IF_ERROR(LoadInstanceConfig(canal_, name, &config));

  std::vector<meta::ClientIdentity> clients;
  CANAL_RETURN_IF_ERROR(meta_->ListClients(name, &clients));
  if (!request.client_id.empty()) {
    std::erase_if(clients, [&](const meta::ClientIdentity& c) { return std::to_string(c.client_id) != request.client_id; });
    if (clients.empty()) {
      return Status::NotFound("client " + request.client_id + " has not subscribed to " + name +
                              ", so it has no cursor to move");
    }
  }
  if (clients.empty()) {
    return Status::InvalidArgument("no client has subscribed to " + name +
                                   ", so no cursor exists to move; set canal.instance.master.journal.name/position "
                                   "(or .timestamp / .gtid) in its instance.properties instead");
  }

  // Located with a replica id of its own: the running parser keeps its connection.
  parser::EventParserOptions options = config.parser;
  options.slave_id = parser::EventParser::DeriveSlaveId(name + "#admin", options.master.Address());
  NullSink sink;
  parser::EventParser locator(options, &sink, nullptr, log_);
  parser::StartPosition start;
  start.journal_name = request.journal;
  start.position = request.offset;
  start.timestamp_ms = request.timestamp_ms;
  start.gtid = request.gtid;
  parser::ResumePoint point;
  CANAL_RETURN_IF_ERROR(locator.Locate(start, &point, &report->located_by));
  report->target.journal_name = point.file;
  report->target.position = point.position;

  for (const meta::ClientIdentity& client : clients) {
    CursorEffect e;
    e.client_id = std::to_string(client.client_id);
    std::optional<LogPosition> cursor;
    CANAL_RETURN_IF_ERROR(meta_->GetCursor(client, &cursor));
    e.from = cursor;
    if (!cursor) {
      e.effect = "unknown";
      e.complete = false;
      e.note = "it has acked nothing yet: without the reset it starts where the destination starts";
    } else {
      LogPosition from = *cursor;
      if (from.transaction_begin != 0) {
        from.position = from.transaction_begin;
        e.note = "its cursor is inside a large transaction; that transaction is counted whole";
      }
      const bool same = from.journal_name == report->target.journal_name && from.position == report->target.position;
      if (same) {
        e.effect = "none";
      } else {
        CursorEffect forward = e, backward = e;
        // Which way, by the primary's list of files (names restart after RESET MASTER): the range
        // from the target to the cursor is empty unless the cursor lies after the target.
        CANAL_RETURN_IF_ERROR(CountRange(config, report->target, from, &backward));
        if (backward.events > 0 || !backward.complete) {
          e = std::move(backward);
          e.effect = "repeat";
        } else {
          CANAL_RETURN_IF_ERROR(CountRange(config, from, report->target, &forward));
          e = std::move(forward);
          e.effect = forward.events > 0 || !forward.complete ? "skip" : "none";
        }
      }
    }
    report->clients.push_back(std::move(e));
  }
  if (request.dry_run) return Status::OK();

  const bool held = registry_->Held(name).stopped_by_operator;
  std::string done;
  if (!held) CANAL_RETURN_IF_ERROR(registry_->Control(name, OperatorAction::kStop, &done).WithContext("stopping " + name));
  Status write = Status::OK();
  for (const meta::ClientIdentity& client : clients) {
    write = meta_->UpdateCursor(client, report->target);
    if (!write.ok()) break;
  }
  if (write.ok()) write = meta_->Flush(name);
  if (!held) {
    Status start = registry_->Control(name, OperatorAction::kStart, &done);
    if (write.ok() && !start.ok()) {
      return start.WithContext("the cursors were moved to " + report->target.ToString() + " but starting " + name +
                               " failed");
    }
  }
  CANAL_RETURN_IF_ERROR(write.WithContext("writing the cursors of " + name));
  report->applied = true;
  report->result = held ? "cursors moved; the destination stays stopped (held by an operator) until a start"
                        : "stopped, cursors moved, started again";
  log_->info("admin: cursor of {} moved to {} ({}) for {} client(s)", name, report->target.ToString(),
             report->located_by, clients.size());
  return Status::OK();
}

}  // namespace canal::server
