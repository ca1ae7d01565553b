// TableMirror: a Canal consumer that rebuilds the source's tables on a second
// MariaDB (a sandbox of its own) from the entries canal-server delivered, as
// the C++ client SDK hands them over; CompareTables (table_compare.h) then
// checks the rebuilt tables against the source row by row. Together they are
// the acceptance oracle "a consumer's rebuilt tables equal the source's".
//
//   TableMirror mirror(mirror_sandbox->socket());
//   ASSERT_TRUE(mirror.Connect().ok());
//   ... Message m; c.GetWithoutAck(..., &m);
//   Status s = mirror.Apply(m);          // one transaction per batch
//   ... c.Ack(m.batch_id());
//   std::printf("%s\n", mirror.counts().ToString().c_str());
//
// What it does with each entry:
//   - rows INSERT, and every row of an entry whose header props hold
//     snapshot=true (snapshot rows come as INSERTs, maybe more than once):
//     REPLACE INTO, an upsert;
//   - rows UPDATE: when a key column (Column.isKey) changed, DELETE the old
//     key's row, then REPLACE the new one; else UPDATE ... WHERE key;
//   - rows DELETE: DELETE ... WHERE key;
//   - a table without key columns: UPDATE/DELETE ... WHERE every before
//     column matches (<=>, text compared byte for byte) LIMIT 1;
//   - DDL (RowChange.isDdl): its sql, with the entry's schema as the
//     default database; other statements, transaction markers, heartbeats:
//     ignored (counted).
// Values go back from Canal's text (default value format, not "readable")
// by Column.mysqlType: binary kinds (BINARY, VARBINARY, *BLOB, GEOMETRY)
// are the bytes of the ISO-8859-1 text, sent as hex; BIT, ENUM (index),
// SET (bitmask), YEAR, integers and DECIMAL as numbers; FLOAT through
// CAST(... AS FLOAT); everything else as UTF-8 text. The session runs with
// time_zone +00:00 (canal-server renders TIMESTAMP in UTC by default), a
// strict sql_mode that allows zero dates, and no foreign key checks.
//
// Only a FULL row image is supported (every column in each image). Not
// handled: generated columns (they cannot be written), ENUM's index 0 (the
// '' a non-strict source may hold; strict refuses it), a canal-server with a
// TIMESTAMP offset other than UTC, and snapshot repeats on a table without
// any key (REPLACE cannot tell them from new rows: they add rows).
// Library canal_test_mirror: link it from a test target that links
// canal_client (canal_integration_tests does).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>

#include "canal/client/message.h"
#include "canal/common/status.h"
#include "canal/entry.pb.h"
#include "support/sql_session.h"

namespace canal::testing {

struct MirrorCounts {
  uint64_t entries = 0;          // entries seen (every type)
  uint64_t inserts = 0;          // INSERT rows (not snapshot rows)
  uint64_t updates = 0;          // UPDATE rows, key changes included
  uint64_t key_updates = 0;      // of those, rows whose key changed (a DELETE and a REPLACE)
  uint64_t deletes = 0;          // DELETE rows
  uint64_t snapshot_rows = 0;    // rows of snapshot=true entries
  uint64_t snapshot_repeats = 0; // snapshot rows whose (table, key) an earlier snapshot row had delivered
  uint64_t ddls = 0;             // DDL statements executed
  uint64_t ignored = 0;          // entries without rows or DDL: markers, heartbeats, other statements
  // UPDATEs by key and DELETEs that found no row on the mirror: zero for a
  // stream that starts with the tables (a snapshot may leave some).
  uint64_t missed_updates = 0;
  uint64_t missed_deletes = 0;

  // "inserts=5 updates=3 (key changes 1) deletes=2 snapshot rows=0 (repeats 0) ddl=4 ignored=12 missed
  // updates=0 deletes=0".
  std::string ToString() const;
};

class TableMirror {
 public:
  // The mirror server: root over this Unix socket (MariadbSandbox::socket()).
  explicit TableMirror(std::string socket);

  // Opens the session and sets it up (time zone, sql_mode, no binlog of its own).
  Status Connect();

  // Every entry of the batch, in order, in one transaction (a DDL commits
  // it, as on the source; the rest continue in a new one). On an error the
  // open transaction is rolled back and the Status names the entry
  // (file:offset, schema.table) and the SQL error.
  Status Apply(client::Message& batch);
  // One entry, autocommitted.
  Status Apply(const canal::entry::Entry& entry);

  const MirrorCounts& counts() const { return counts_; }

 private:
  Status ApplyEntry(const canal::entry::Entry& entry);
  Status Run(const std::string& sql, uint64_t* affected = nullptr);

  std::string socket_;
  SqlSession session_;
  MirrorCounts counts_;
  bool in_batch_ = false;
  // table + key of every snapshot row so far, for snapshot_repeats.
  std::unordered_set<std::string> snapshot_keys_;
};

// Whether an entry is a snapshot's (its header's "snapshot" = "true" property).
bool IsSnapshot(const entry::Header& h);

}  // namespace canal::testing
