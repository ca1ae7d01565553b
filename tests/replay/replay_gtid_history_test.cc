// GTID histories served by the replay primary for MySQL failover tests: files
// written by support/mysql_binlog_writer.h (its own checks are in
// mysql_binlog_writer_test.cc) streamed to a GTID dump in MySQL 8.4's tagged set
// format, skipping exactly what the replica has; MySQL's two refusals of a GTID
// dump (the replica ahead of gtid_executed, gtid_purged not in the replica's
// set); the statements a failover manager sends, before and after the runtime
// setters; malformed tagged sets refused with an error packet, never a crash.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>

#include <gtest/gtest.h>

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/mysql/dump_connection.h"
#include "canal/parser/mysql/primary_probe.h"
#include "canal/parser/mysql/query_connection.h"
#include "replay_test_util.h"
#include "support/mysql_binlog_writer.h"
#include "support/row_render.h"

namespace canal::testing {
namespace {

constexpr char kUuidA[] = "11111111-aaaa-4aaa-8aaa-00000000000a";
constexpr char kUuidB[] = "22222222-bbbb-4bbb-8bbb-00000000000b";
constexpr uint32_t kReplicaId = 4343;

uint64_t Le(std::string_view s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

void PutLe(std::string* s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// ---- the replay primary serving a history ----

// A socket that speaks just enough of the protocol to send its own dump requests.
class RawClient : public RawMysqlClient {
 public:
  using RawMysqlClient::RawMysqlClient;
  bool Send(uint8_t seq, std::string_view payload) { return TrySend(seq, payload); }
  // Logs in (mysql_native_password, empty password), asks for checksums and
  // 50 ms heartbeats, and sends COM_BINLOG_DUMP_GTID with `set` as its data.
  bool Dump(std::string_view set) {
    std::string p, why;
    if (!LogIn(&why)) return false;
    if (!Send(0, "\x03SET @master_binlog_checksum = 'CRC32', @master_heartbeat_period = 50000000") || !Read(&p) ||
        p.empty() || p[0] != '\0') {
      return false;
    }
    std::string cmd("\x1e", 1);
    PutLe(&cmd, 0x04, 2);  // BINLOG_THROUGH_GTID
    PutLe(&cmd, kReplicaId, 4);
    PutLe(&cmd, 0, 4);  // no file name
    PutLe(&cmd, 4, 8);
    PutLe(&cmd, set.size(), 4);
    cmd.append(set);
    return Send(0, cmd);
  }
  // The stream up to the first heartbeat: the rows and GTIDs decoded; or the
  // error packet's number and message.
  void ReadUntilHeartbeat(std::vector<std::string>* rows, std::vector<std::string>* gtids, int* error,
                          std::string* message) {
    binlog::EventDecoder decoder;
    *error = 0;
    std::string p;
    while (Read(&p) && !p.empty()) {
      if (static_cast<uint8_t>(p[0]) == 0xFF) {
        *error = static_cast<int>(Le(p, 1, 2));
        *message = p.substr(9);
        return;
      }
      const std::string ev = p.substr(1);
      if (ev.size() > 4 && static_cast<uint8_t>(ev[4]) == 27) return;  // HEARTBEAT: all sent
      binlog::Event e;
      Status s = decoder.Decode(reinterpret_cast<const uint8_t*>(ev.data()), ev.size(), 0, &e);
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (const auto* g = e.As<binlog::GtidEvent>()) gtids->push_back(g->ToString());
      if (const auto* r = e.As<binlog::RowsEvent>()) {
        ASSERT_TRUE(RenderRows(*r, rows).ok());
      }
    }
    *error = -1;  // closed without an answer
  }
};

// COM_BINLOG_DUMP_GTID's tagged set, built here rather than by the product's encoder.
struct TaggedSource {
  std::string uuid, tag;
  std::vector<std::pair<uint64_t, uint64_t>> intervals;  // [start, end)
};
std::string TaggedSet(const std::vector<TaggedSource>& sources) {
  std::string s;
  PutLe(&s, (uint64_t{1} << 56) | (uint64_t{sources.size()} << 8) | 1, 8);
  for (const TaggedSource& src : sources) {
    for (size_t i = 0; i < src.uuid.size(); i += 2) {
      if (src.uuid[i] == '-') ++i;
      s.push_back(static_cast<char>(std::stoi(src.uuid.substr(i, 2), nullptr, 16)));
    }
    s.push_back(static_cast<char>(src.tag.size() << 1));
    s += src.tag;
    PutLe(&s, src.intervals.size(), 8);
    for (auto [start, end] : src.intervals) {
      PutLe(&s, start, 8);
      PutLe(&s, end, 8);
    }
  }
  return s;
}

class ReplayGtidHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    MysqlBinlogSpec spec;
    ASSERT_TRUE(HistoryBinlog(SmallHistory(kUuidA, kUuidB), 1, &spec).ok());
    ASSERT_TRUE(WriteMysqlBinlog(spec, dir_.path(), "binlog.000001", &file_).ok());
    o_.binlog_files = {file_};
    o_.account_plugin = "mysql_native_password";
    o_.password = "";
    o_.server_uuid = kUuidB;  // B took over from A: it has A's history and its own
    ASSERT_TRUE(HistorySet(SmallHistory(kUuidA, kUuidB), SmallHistory(kUuidA, kUuidB).runs.size(), &o_.gtid_executed).ok());
  }
  void Start() {
    primary_ = StartPrimary(o_);
    ASSERT_TRUE(primary_);
  }
  std::unique_ptr<mysql::DumpConnection> Replica() {
    auto c = std::make_unique<mysql::DumpConnection>(ReplicaOptions(*primary_, o_));
    EXPECT_TRUE(c->Connect().ok());
    EXPECT_TRUE(c->Execute("SET @master_binlog_checksum = 'CRC32'").ok());
    EXPECT_TRUE(c->Execute("SET @master_heartbeat_period = 50000000").ok());
    return c;
  }

  TempBinlogDir dir_;
  std::string file_;
  ReplayPrimaryOptions o_;
  std::unique_ptr<ReplayPrimary> primary_;
};

TEST_F(ReplayGtidHistory, TaggedSetDumpSkipsExactlyTheContainedTransactions) {
  Start();
  if (HasFatalFailure()) return;
  const std::string a = kUuidA, b = kUuidB;
  // A:1-4 (A:4 is in the file), A:blue:1, B:1-2: four of the file's six skipped.
  RawClient c(primary_->port());
  ASSERT_TRUE(c.Dump(TaggedSet({{b, "", {{1, 3}}}, {a, "", {{1, 5}}}, {a, "blue", {{1, 2}}}})));
  std::vector<std::string> rows, gtids;
  int error = 0;
  std::string message;
  c.ReadUntilHeartbeat(&rows, &gtids, &error, &message);
  ASSERT_EQ(error, 0) << message;
  EXPECT_EQ(gtids, (std::vector<std::string>{a + ":blue:2", a + ":5"}));
  EXPECT_EQ(rows, (std::vector<std::string>{HistoryRow(IdOf(0, "blue", 2)), HistoryRow(IdOf(0, "", 5))}));
  EXPECT_EQ(primary_->stats().transactions_skipped, 4u);

  // Our replica connection, the set as text (a tag makes it the tagged form).
  auto r = Replica();
  ASSERT_TRUE(r->DumpFromGtidSet(a + ":1-3:blue:1-2," + b + ":1", kReplicaId).ok());
  StreamDecode got;
  Status s = ReadStream(r.get(), &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got.rows, (std::vector<std::string>{HistoryRow(IdOf(1, "", 2)), HistoryRow(IdOf(0, "", 4)), HistoryRow(IdOf(0, "", 5))}));
  EXPECT_EQ(primary_->stats().transactions_skipped, 7u);
}

TEST_F(ReplayGtidHistory, ReplicaWithMoreOfTheServersGtidsIsRefused) {
  const std::string a = kUuidA, b = kUuidB;
  o_.gtid_executed = a + ":1-5:blue:1-2," + b + ":1";  // B lost its second transaction
  Start();
  if (HasFatalFailure()) return;
  auto r = Replica();
  ASSERT_TRUE(r->DumpFromGtidSet(b + ":1-2", kReplicaId).ok());
  std::string_view ev;
  Status s = r->ReadEvent(&ev);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(r->last_server_error().code, 1236) << s.ToString();
  EXPECT_EQ(r->last_server_error().sql_state, "HY000");
  EXPECT_NE(s.message().find("Slave has more GTIDs than the master has, using the master's SERVER_UUID"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(primary_->stats().gtid_refusals, 1u);
  // More of another server's transactions is no reason to refuse (MySQL checks its own uuid only).
  r = Replica();
  ASSERT_TRUE(r->DumpFromGtidSet(a + ":1-9," + b + ":1", kReplicaId).ok());
  StreamDecode got;
  s = ReadStream(r.get(), &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got.rows,
            (std::vector<std::string>{HistoryRow(IdOf(0, "blue", 1)), HistoryRow(IdOf(0, "blue", 2)), HistoryRow(IdOf(1, "", 2))}));
  // The transaction comes back (SetGtidExecuted): the replica may go on.
  ASSERT_TRUE(primary_->SetGtidExecuted(a + ":1-5:blue:1-2," + b + ":1-2").ok());
  r = Replica();
  ASSERT_TRUE(r->DumpFromGtidSet(b + ":1-2", kReplicaId).ok());
  got = StreamDecode{};
  s = ReadStream(r.get(), &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got.rows.size(), 4u);
}

TEST_F(ReplayGtidHistory, PurgedTransactionsTheReplicaLacksAreRefused) {
  const std::string a = kUuidA;
  o_.gtid_purged = a + ":1-3";  // in no file any more
  Start();
  if (HasFatalFailure()) return;
  auto r = Replica();
  ASSERT_TRUE(r->DumpFromGtidSet(a + ":1-2", kReplicaId).ok());
  std::string_view ev;
  Status s = r->ReadEvent(&ev);
  EXPECT_EQ(r->last_server_error().code, 1236) << s.ToString();
  EXPECT_NE(s.message().find("Cannot replicate because the master purged required binary logs"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("the missing transactions are '" + a + ":3'"), std::string::npos) << s.ToString();
  // With the purged ones it streams the rest; until more is purged.
  r = Replica();
  ASSERT_TRUE(r->DumpFromGtidSet(a + ":1-3", kReplicaId).ok());
  StreamDecode got;
  s = ReadStream(r.get(), &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got.rows.size(), 6u);
  EXPECT_TRUE(primary_->SetGtidPurged("not a set").code() == Status::Code::kInvalidArgument);
  ASSERT_TRUE(primary_->SetGtidPurged(a + ":1-4").ok());
  r = Replica();
  ASSERT_TRUE(r->DumpFromGtidSet(a + ":1-3", kReplicaId).ok());
  s = r->ReadEvent(&ev);
  EXPECT_EQ(r->last_server_error().code, 1236) << s.ToString();
  EXPECT_NE(s.message().find("missing transactions are '" + a + ":4'"), std::string::npos) << s.ToString();
  EXPECT_EQ(primary_->stats().gtid_refusals, 2u);
}

// ---- the statements of a failover manager ----

std::string Value(mysql::QueryConnection* q, const std::string& sql) {
  mysql::ResultSet rs;
  Status s = q->Query(sql, &rs);
  EXPECT_TRUE(s.ok()) << sql << ": " << s.ToString();
  if (!s.ok() || rs.rows.size() != 1 || rs.rows[0].empty() || !rs.rows[0][0]) return "<none>";
  return *rs.rows[0][0];
}

// The replication status row as column -> value ("" when there is no row).
std::map<std::string, std::string> StatusRow(mysql::QueryConnection* q, const std::string& sql) {
  mysql::ResultSet rs;
  Status s = q->Query(sql, &rs);
  EXPECT_TRUE(s.ok()) << sql << ": " << s.ToString();
  std::map<std::string, std::string> m;
  for (size_t i = 0; i < rs.column_names.size(); ++i) {
    m[rs.column_names[i]] = rs.rows.empty() ? "" : rs.rows[0][i].value_or("NULL");
  }
  m["#rows"] = std::to_string(rs.rows.size());
  return m;
}

TEST_F(ReplayGtidHistory, FailoverStatementsFollowTheOptionsAndSetters) {
  const std::string a = kUuidA, b = kUuidB;
  o_.read_only = true;
  o_.replicating_from = "10.1.2.3:3307";
  o_.gtid_purged = a + ":1-3";
  Start();
  if (HasFatalFailure()) return;
  mysql::QueryConnection q(ReplicaOptions(*primary_, o_));
  ASSERT_TRUE(q.Connect().ok());

  mysql::PrimaryProbe probe;
  ASSERT_TRUE(mysql::ReadPrimaryRole(&q, &probe).ok());
  EXPECT_TRUE(probe.read_only);
  EXPECT_TRUE(probe.replicating);
  EXPECT_EQ(probe.replicating_from, "10.1.2.3:3307");
  EXPECT_EQ(probe.replication_unknown, "");
  EXPECT_EQ(probe.server_id, o_.server_id);
  EXPECT_EQ(Value(&q, "SELECT @@GLOBAL.gtid_executed"), a + ":1-5:blue:1-2," + b + ":1-2");
  EXPECT_EQ(Value(&q, "SELECT @@GLOBAL.gtid_purged"), a + ":1-3");
  EXPECT_EQ(Value(&q, "SELECT @@GLOBAL.server_uuid"), b);
  EXPECT_EQ(Value(&q, "SELECT @@GLOBAL.read_only"), "1");
  mysql::ResultSet two;
  ASSERT_TRUE(q.Query("SELECT @@GLOBAL.read_only, @@GLOBAL.server_id", &two).ok());
  ASSERT_EQ(two.rows.size(), 1u);
  EXPECT_EQ(two.rows[0], (mysql::ResultRow{"1", std::to_string(o_.server_id)}));
  EXPECT_EQ(two.column_names, (std::vector<std::string>{"@@GLOBAL.read_only", "@@GLOBAL.server_id"}));
  // MySQL has no SHOW ALL SLAVES STATUS (MariaDB's): a syntax error, as from MySQL.
  mysql::ResultSet ignored;
  Status s = q.Query("SHOW ALL SLAVES STATUS", &ignored);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(q.last_server_error().code, 1064) << s.ToString();
  EXPECT_NE(s.message().find("near 'ALL SLAVES STATUS'"), std::string::npos) << s.ToString();
  auto slave = StatusRow(&q, "SHOW SLAVE STATUS");
  EXPECT_EQ(slave["Slave_IO_Running"], "Yes");
  EXPECT_EQ(slave["Slave_SQL_Running"], "Yes");
  EXPECT_EQ(slave["Master_Host"], "10.1.2.3");
  EXPECT_EQ(slave["Master_Port"], "3307");
  auto replica = StatusRow(&q, "SHOW REPLICA STATUS");
  EXPECT_EQ(replica["Replica_IO_Running"], "Yes");
  EXPECT_EQ(replica["Source_Host"], "10.1.2.3");
  EXPECT_EQ(replica["Source_Port"], "3307");

  // The promotion: writable, no longer replicating, its own transactions on top.
  primary_->SetReadOnly(false);
  primary_->SetReplicatingFrom("");
  ASSERT_TRUE(primary_->SetGtidExecuted(a + ":1-5:blue:1-2," + b + ":1-3").ok());
  EXPECT_TRUE(primary_->SetGtidExecuted("xyz:1").code() == Status::Code::kInvalidArgument);
  ASSERT_TRUE(mysql::ReadPrimaryRole(&q, &probe).ok());
  EXPECT_FALSE(probe.read_only);
  EXPECT_FALSE(probe.replicating) << probe.Describe();
  EXPECT_EQ(Value(&q, "SELECT @@GLOBAL.gtid_executed"), a + ":1-5:blue:1-2," + b + ":1-3");
  EXPECT_EQ(Value(&q, "SELECT @@read_only"), "0");
  mysql::MasterStatus ms;
  ASSERT_TRUE(q.ShowMasterStatus(&ms).ok());
  EXPECT_EQ(ms.executed_gtid_set, a + ":1-5:blue:1-2," + b + ":1-3");
  EXPECT_EQ(StatusRow(&q, "SHOW SLAVE STATUS")["#rows"], "0");
  EXPECT_EQ(StatusRow(&q, "SHOW REPLICA STATUS")["#rows"], "0");
  // And back (a demotion), seen by a fresh probe.
  primary_->SetReadOnly(true);
  primary_->SetReplicatingFrom("127.0.0.1:3306");
  mysql::PrimaryProbe again = mysql::ProbePrimary(ReplicaOptions(*primary_, o_));
  EXPECT_TRUE(again.reachable) << again.error;
  EXPECT_FALSE(again.primary());
  EXPECT_EQ(again.replicating_from, "127.0.0.1:3306");
}

TEST_F(ReplayGtidHistory, ReplicationStatusStatementsOfEachVersion) {
  o_.server_version = "8.4.3";
  o_.variables["read_only"] = "ON";  // `variables` still speaks for the option
  Start();
  if (HasFatalFailure()) return;
  mysql::QueryConnection q(ReplicaOptions(*primary_, o_));
  ASSERT_TRUE(q.Connect().ok());
  mysql::ResultSet rs;
  EXPECT_FALSE(q.Query("SHOW SLAVE STATUS", &rs).ok());  // removed in 8.4
  EXPECT_EQ(q.last_server_error().code, 1064);
  EXPECT_EQ(StatusRow(&q, "SHOW REPLICA STATUS")["#rows"], "0");
  mysql::PrimaryProbe probe;
  ASSERT_TRUE(mysql::ReadPrimaryRole(&q, &probe).ok());
  EXPECT_TRUE(probe.read_only);
  EXPECT_FALSE(probe.replicating);
  EXPECT_EQ(probe.replication_unknown, "");
  ASSERT_TRUE(q.Query("SHOW GLOBAL VARIABLES LIKE 'read_only'", &rs).ok());
  ASSERT_EQ(rs.rows.size(), 1u);
  EXPECT_EQ(rs.rows[0][1], "ON");

  o_.server_version = "8.0.21";  // before SHOW REPLICA STATUS
  primary_ = StartPrimary(o_);
  ASSERT_TRUE(primary_);
  mysql::QueryConnection old(ReplicaOptions(*primary_, o_));
  ASSERT_TRUE(old.Connect().ok());
  EXPECT_FALSE(old.Query("SHOW REPLICA STATUS", &rs).ok());
  EXPECT_EQ(old.last_server_error().code, 1064);
  EXPECT_EQ(StatusRow(&old, "SHOW SLAVE STATUS")["#rows"], "0");
}

// ---- malformed tagged sets: an error packet, never a crash ----

TEST_F(ReplayGtidHistory, MalformedTaggedSetsAreRefused) {
  Start();
  if (HasFatalFailure()) return;
  const std::string good = TaggedSet({{kUuidA, "blue", {{1, 3}}}});
  const auto with = [&good](size_t at, std::string_view bytes) {
    std::string s = good;
    s.replace(at, bytes.size(), bytes);
    return s;
  };
  const size_t tag_at = 8 + 16, count_at = tag_at + 1 + 4;
  const std::string zeros(8, '\0');
  std::string overlong_count;
  PutLe(&overlong_count, (uint64_t{1} << 56) | (uint64_t{5} << 8) | 1, 8);  // 5 sources, 1 there
  const std::string big_tag =
      good.substr(0, tag_at) + static_cast<char>(33 << 1) + std::string(33, 'x') + good.substr(count_at);
  // A 2-byte varlen length of 100 (bit 0 set, bit 1 clear: two bytes; the value above).
  const std::string two_byte_tag =
      good.substr(0, tag_at) + std::string("\x91\x01", 2) + std::string(100, 'x') + good.substr(count_at);
  // The second of two sources ends in the first byte of a 9-byte varlen.
  std::string cut_varlen = TaggedSet({{kUuidA, "blue", {{1, 3}}}, {kUuidB, "", {}}});
  cut_varlen.resize(cut_varlen.size() - 9);
  cut_varlen.push_back('\xff');
  std::string more_intervals = good;
  more_intervals.replace(count_at, 8, std::string("\x02\0\0\0\0\0\0\0", 8));  // 2 intervals, 1 there
  struct Case {
    const char* what;
    std::string set;
    const char* why;  // in the error message
  };
  const std::vector<Case> cases = {
      {"count word larger than the bytes", with(0, overlong_count), "source count 5 exceeds"},
      {"tag length 33", big_tag, "tag length 33 over 32"},
      {"2-byte tag length 100", two_byte_tag, "tag length 100 over 32"},
      {"tag length varlen cut short", cut_varlen, "source 1: tag length truncated"},
      {"tag longer than the bytes", good.substr(0, tag_at) + static_cast<char>(20 << 1) + "blue" + zeros,
       "tag truncated"},
      {"interval count beyond the bytes", more_intervals, "interval count 2 exceeds"},
      {"intervals truncated", good.substr(0, good.size() - 5), "interval count 1 exceeds"},
      {"tag with a bad character", with(tag_at + 1, "b-ue"), "invalid characters"},
      {"empty interval", with(count_at + 8 + 8, std::string("\x01\0\0\0\0\0\0\0", 8)), "[1, 1) is not a GNO"},
      {"format byte 2", with(7, "\x02"), "unknown GTID set format 2"},
      {"tagged format, low byte not 1", with(0, std::string("\x00", 1)), "unknown GTID set format 1"},
      {"bytes after the set", good + "x", "1 bytes after the GTID set"},
      {"a count word cut short", good.substr(0, 5), "has no source count"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    RawClient c(primary_->port());
    ASSERT_TRUE(c.Dump(k.set));
    std::vector<std::string> rows, gtids;
    int error = 0;
    std::string message;
    c.ReadUntilHeartbeat(&rows, &gtids, &error, &message);
    EXPECT_EQ(error, 1835) << message;
    EXPECT_NE(message.find(k.why), std::string::npos) << message;
    EXPECT_TRUE(rows.empty());
  }
  // Still serving, and the good set works.
  RawClient c(primary_->port());
  ASSERT_TRUE(c.Dump(good));
  std::vector<std::string> rows, gtids;
  int error = 0;
  std::string message;
  c.ReadUntilHeartbeat(&rows, &gtids, &error, &message);
  EXPECT_EQ(error, 0) << message;
  EXPECT_EQ(rows.size(), 4u);
}

}  // namespace
}  // namespace canal::testing
