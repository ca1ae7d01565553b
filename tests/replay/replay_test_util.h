// Shared by the replay-primary tests: the MySQL 8.x fixtures it serves, what
// decoding a fixture directly gives, and a replica session read to the end.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/mysql/dump_connection.h"
#include "support/mysql_binlog_writer.h"
#include "support/replay_primary/replay_primary.h"

namespace canal::testing {

// MySQL 8.0 / 8.2 / 9.x fixtures (CRC32, v2 rows events, TRANSACTION_PAYLOAD,
// GTID and anonymous GTID events), paths relative to fixtures/binlog.
const std::vector<std::string>& Mysql8Fixtures();
// Of those, the ones with (untagged) GTID transactions.
const std::vector<std::string>& Mysql8GtidFixtures();

// A fixture decoded from the file.
struct FileDecode {
  std::vector<std::string> events;        // outer events after the FORMAT_DESCRIPTION, raw bytes
  std::vector<uint64_t> offsets;          // where each starts
  std::vector<std::string> gtids;         // "uuid:gno" of each GTID transaction, in order
  // Rendered rows (support/row_render.h), each tagged with its transaction's
  // GTID ("" outside one).
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<uint64_t> row_offsets;  // offset of each row's (outer) event
};
Status DecodeFixtureFile(const std::string& path, FileDecode* out);
// The rows of `d` whose transaction is not among the first `skip` GTIDs.
std::vector<std::string> RowsAfterGtids(const FileDecode& d, size_t skip);

// A dump read until the first heartbeat (which the primary sends only once it
// has sent everything).
struct StreamDecode {
  std::vector<std::string> events;  // as received, checksum included
  std::vector<std::string> rows;
  bool heartbeat = false;
};
// Reads and decodes events from `conn` (after a Dump*) until a heartbeat, an
// error, or `max_events`.
Status ReadStream(mysql::DumpConnection* conn, StreamDecode* out, size_t max_events = 100'000);

// Options for our client against `primary`.
mysql::ConnectionOptions ReplicaOptions(const ReplayPrimary& primary, const ReplayPrimaryOptions& o);

// The rendered line (support/row_render.h) of the row a written history's transaction inserts.
std::string HistoryRow(uint32_t id);
// A small history of two servers: A:1-3, then A:blue:1-2, B:1-2, A:4-5.
GtidHistory SmallHistory(const std::string& uuid_a, const std::string& uuid_b);

// A bare socket speaking just enough of the client protocol for tests that send their
// own (or malformed) packets.
class RawMysqlClient {
 public:
  explicit RawMysqlClient(uint16_t port);
  ~RawMysqlClient();
  RawMysqlClient(const RawMysqlClient&) = delete;
  RawMysqlClient& operator=(const RawMysqlClient&) = delete;
  bool connected() const { return connected_; }
  // One packet. False when the server closed before taking it all (as it may, for an
  // oversized packet).
  bool TrySend(uint8_t seq, std::string_view payload);
  // One packet's payload; false when the server closed (or 10 s passed).
  bool Read(std::string* payload);
  // Reads the greeting and logs in as "repl" with an empty mysql_native_password; false
  // (and *why) when that fails.
  bool LogIn(std::string* why);
  // The error number of the next packet: -1 when the server closed, 0 when not an error.
  int ReadError();

 private:
  bool ReadN(char* dst, size_t n);
  int fd_ = -1;
  bool connected_ = false;
};

// A primary with `o`, started; a test failure (and nullptr) when it cannot start.
std::unique_ptr<ReplayPrimary> StartPrimary(ReplayPrimaryOptions o);

}  // namespace canal::testing
