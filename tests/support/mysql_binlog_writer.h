// Whole MySQL 8 binlog files made in memory, for tests that need a GTID history
// no fixture has: two servers with different server UUIDs sharing transactions
// (a primary and the replica promoted in its place), MySQL 8.4 tagged GTIDs,
// purged prefixes. The replay primary (replay_primary/) serves them like any
// recorded file.
//
// A file is: the magic; a FORMAT_DESCRIPTION (`server_version`, 8.0.36 by
// default; CRC32 or none); PREVIOUS_GTIDS with the given set (MySQL 8.4's tagged
// form when a source has a tag, else the untagged one); the transactions; and
// optionally a ROTATE naming the next file. Every header has its log_pos (the
// event's end in the file) and, with checksums, a correct CRC32.
//
// A transaction is GTID (33) or, tagged, GTID_TAGGED (42, mysql::serialization
// as 8.4 writes it), or ANONYMOUS_GTID (34) for gtid_mode OFF; then QUERY
// "BEGIN", TABLE_MAP of shop.t (id INT, its name in the optional metadata;
// event_bytes::TableMap), one WRITE_ROWS v2 with a row per id, XID. With no ids
// it is the empty transaction MySQL writes for an injected GTID: BEGIN, then a
// QUERY "COMMIT". The GTID event carries the logical clock (sequence numbers
// from 1 in each file, each transaction after the previous one), the commit
// timestamp (the transaction's timestamp in microseconds), the transaction's
// length in bytes and the server version.
//
// Histories (GtidHistory): runs of GTIDs over a list of server UUIDs. Every
// transaction of a history inserts one row, whose id is IdOf(uuid_index, tag,
// gno) — the same on every server and in every file, so a test knows which
// GTID delivered which row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::testing {

struct MysqlTransaction {
  // Server UUID text ("3e11fa47-71ca-11e1-9e33-c80aa9429562"); "" = anonymous
  // (gtid_mode OFF: an ANONYMOUS_GTID event, tag and gno ignored).
  std::string uuid;
  std::string tag;  // "" = untagged; else MySQL 8.4's [a-z_][a-z0-9_]{0,31} (stored lower-case)
  int64_t gno = 1;
  uint32_t timestamp = 1'700'000'000;  // every event's header; the commit timestamp
  std::vector<uint32_t> ids;           // rows of shop.t, one WRITE_ROWS event
  size_t rows_per_event = 0;           // >0: a WRITE_ROWS event per that many ids
};

struct MysqlBinlogSpec {
  std::string server_version = "8.0.36";
  uint32_t server_id = 1;
  bool checksum = true;                // CRC32 on every event
  uint32_t timestamp = 1'700'000'000;  // FORMAT_DESCRIPTION, PREVIOUS_GTIDS, ROTATE
  std::string previous_gtids;          // GTID set text: what the server had before this file
  std::vector<MysqlTransaction> transactions;
  std::string next_file;  // a ROTATE to it at the end; "" = none (the server's current file)
};

// The file's bytes. InvalidArgument for a bad UUID, tag, gno (1..2^63-2) or
// previous_gtids text.
Status BuildMysqlBinlog(const MysqlBinlogSpec& spec, std::string* bytes);
// Builds the file and writes it as dir/name; *path is that path.
Status WriteMysqlBinlog(const MysqlBinlogSpec& spec, const std::string& dir, const std::string& name,
                        std::string* path);

// A fresh directory under $TMPDIR for written files, removed with what it holds
// at destruction; path() is "" when it could not be made.
class TempBinlogDir {
 public:
  TempBinlogDir();
  ~TempBinlogDir();
  TempBinlogDir(const TempBinlogDir&) = delete;
  TempBinlogDir& operator=(const TempBinlogDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---- GTID histories ----

// Transactions uuids[uuid_index][:tag]:first_gno..last_gno (inclusive).
struct GtidRun {
  size_t uuid_index = 0;
  std::string tag;  // "" = untagged
  int64_t first_gno = 1;
  int64_t last_gno = 1;
};

// A history every server of a test shares: the k-th transaction of `runs`
// (counted over all runs from 0) has timestamp first_timestamp + k, wherever
// it is written.
struct GtidHistory {
  std::vector<std::string> uuids;
  std::vector<GtidRun> runs;
  uint32_t first_timestamp = 1'700'000'000;
};

// The id of the row transaction uuids[uuid_index]:tag:gno inserts:
//   uuid_index * 100'000'000 + TagSlot(tag) * 1'000'000 + gno,
// for uuid_index < 21 and gno < 1'000'000 (an INT). TagSlot("") = 0; a tag's
// slot is 1 + its FNV-1a 32-bit hash % 99, so two tags of a history may share
// one: HistoryTransactions refuses such a history rather than repeat ids.
uint32_t IdOf(size_t uuid_index, std::string_view tag, int64_t gno);
uint32_t TagSlot(std::string_view tag);

// The transactions of runs[first_run..] (each with its one id), in order.
Status HistoryTransactions(const GtidHistory& history, size_t first_run, std::vector<MysqlTransaction>* out);
// The GTID set text (MySQL's canonical form) of runs[0..end_run).
Status HistorySet(const GtidHistory& history, size_t end_run, std::string* text);
// A file holding runs[first_run..] after PREVIOUS_GTIDS = runs[0..first_run):
// the file a server that has the whole history and purged the earlier runs
// writes. Other fields of *spec are left as they are.
Status HistoryBinlog(const GtidHistory& history, size_t first_run, MysqlBinlogSpec* spec);

// ---- one event's body, for tests comparing with recorded bytes ----

struct GtidEventFields {
  std::string uuid;
  std::string tag;
  int64_t gno = 1;
  uint8_t flags = 0;
  int64_t last_committed = 0;
  int64_t sequence_number = 1;
  uint64_t commit_timestamp_us = 0;  // immediate = original
  uint64_t transaction_length = 0;   // bytes of the whole transaction, this event included
  uint32_t server_version = 80036;   // immediate = original
};
// GTID_TAGGED's body (no header, no checksum): mysql::serialization format 1,
// the fields of 8.4's Gtid_event in id order, the ones equal to their
// immediate counterparts left out as MySQL leaves them out.
Status GtidTaggedBody(const GtidEventFields& fields, std::string* body);
// GTID / ANONYMOUS_GTID (uuid "") body of 8.0.
Status GtidBody(const GtidEventFields& fields, std::string* body);
// PREVIOUS_GTIDS' body for a GTID set text.
Status PreviousGtidsBody(std::string_view gtid_set, std::string* body);

}  // namespace canal::testing
