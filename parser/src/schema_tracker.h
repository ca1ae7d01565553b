// SchemaTracker: the parse thread's side of the schema history (canal/schema).
//
// Opens the destination's stored history (a snapshot taken from the primary at
// the first start), rebuilds it as of the dump's start position, names the
// columns of TABLE_MAPs without FULL metadata, checks those with it, and
// replays every column-changing DDL into the history, durable before the event
// goes on to the sink. Internal to parser/.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/events.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/parser/history_schema_provider.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/schema/history_log.h"
#include "canal/schema/history_store.h"

namespace canal::parser {

struct SchemaTrackerOptions {
  std::string destination;
  std::string history_file;  // the destination's stored history (a local file) ...
  std::shared_ptr<schema::HistoryStore> store;  // ... or this store (ZooKeeper) when set
  schema::SchemaHistory::Scope scope;
  int64_t compact_interval_s = 0;  // 0: never compact
  int64_t compact_expire_s = 0;
};

class SchemaTracker {
 public:
  SchemaTracker(SchemaTrackerOptions options, std::shared_ptr<spdlog::logger> log);

  // Loads the stored history (taking and storing a snapshot when there is none)
  // and rebuilds it as of `start`.
  Status Open(mysql::QueryConnection* query, const mysql::ServerInfo& info, const schema::BinlogPoint& start);

  // The decoder's schema provider: the history as of the event being decoded.
  binlog::TableSchemaProvider* provider() { return &provider_; }

  // A QUERY event at `at`: replays it when it may change columns.
  // `timestamp` is the event's (seconds).
  Status OnQuery(const binlog::QueryEvent& q, const schema::BinlogPoint& at, uint32_t timestamp);
  // A TABLE_MAP that carried its own column names (FULL metadata): the history
  // must agree for a table in scope; outside it the TABLE_MAP's names replace
  // the history's. A table the history lacks is learned from it. With
  // `decoder` (the one that decoded `t`), a map that agreed is pinned and not
  // compared again while it is the one the decoder hands out (a repeated
  // TABLE_MAP keeps its decoded map) and no DDL has been seen since.
  Status CheckNamedTable(const binlog::TableMap& t, const binlog::EventDecoder* decoder = nullptr);

  // The hint appended to every error that stops the destination.
  std::string FixHint() const;
  const schema::SchemaHistory& history() const { return history_; }

 private:
  Status Save();
  // From a FULL-metadata TABLE_MAP; `in_scope` logs it.
  Status LearnTable(const binlog::TableMap& t, bool in_scope);
  // A table in scope the history does not hold, asked for by a TABLE_MAP
  // without names: taken from the primary's information_schema when that is
  // exact, i.e. no DDL naming it lies in the binlog between the point since
  // which it is unknown and the primary's position after the read.
  Status LearnFromPrimary(std::string_view db, std::string_view table);
  // The DDL in the binlog from `from` (exclusive) to `to` that may change db.table's columns.
  Status CheckNoDdlBetween(const schema::BinlogPoint& from, const schema::BinlogPoint& to, std::string_view db,
                           std::string_view table);
  // Folds old records into the snapshot when compaction is due.
  Status MaybeCompact(const schema::BinlogPoint& start);
  std::shared_ptr<schema::HistoryStore> store_;

  SchemaTrackerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  schema::LexerOptions lexer_;
  schema::HistoryLog stored_;
  schema::SchemaHistory history_;
  HistorySchemaProvider provider_;
  // The last map that agreed with the history; held, so that its address
  // names it (a new map cannot be made at the same address while it lives).
  std::shared_ptr<const binlog::TableMap> checked_;
  // For LearnFromPrimary: the session's connection, and since when each
  // unknown table is unknown (the start position for those already unknown then).
  mysql::QueryConnection* query_ = nullptr;
  mysql::ServerInfo info_;
  schema::BinlogPoint start_;
  std::map<std::pair<std::string, std::string>, schema::BinlogPoint> unknown_since_;
};

// One base table as information_schema shows it now; *found = false when there is none.
Status ReadTableFromPrimary(mysql::QueryConnection* query, const mysql::ServerInfo& info, std::string_view db,
                            std::string_view table, schema::TableSchema* out, bool* found);

// Reads every base table from information_schema between two equal
// binlog positions (retried when a write moved the position in between).
Status TakeSchemaSnapshot(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                          const schema::SchemaHistory::Scope& scope, schema::SchemaHistory* out,
                          schema::BinlogPoint* at);

}  // namespace canal::parser
