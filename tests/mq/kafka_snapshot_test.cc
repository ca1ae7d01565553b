// Snapshots in MQ mode (docs/snapshot.md, docs/mq.md), judged by the mirror oracle: tables
// loaded before canal-server starts reach Kafka (librdkafka's mock cluster) through
// canal.instance.snapshot.mode = initial while a writer changes rows, with the rows hashed by
// primary key over 4 partitions. Key shapes: INT, composite (INT, VARCHAR), VARCHAR, a UNIQUE
// NOT NULL index only, none. One consumer per partition, each with its own librdkafka consumer
// and its own session on a second MariaDB, applies its partition's messages in offset order as
// they come, whatever the other partitions do (a consumer group with a member per partition); at
// the end every table there equals the source row by row.
//
// What this relies on, and checks on every row: a key's changes, snapshot rows included, all
// land in the partition canal.mq.partitionHash names for that key, and in one partition
// (KeyPartitions, by the table's key columns, whatever the entry's isKey flags say). A key
// UPDATE under a column hash goes to the new key's partition while the old key's earlier changes
// sit in another one (Canal does the same), so partitions applied independently could apply it
// first: the table whose keys the writer moves is routed whole by its name (a `pattern` item
// without columns), the documented way to keep such a table in order (docs/mq.md). The mirror
// takes one message at a time (PartitionConsumer's apply_mu).
//
// Protobuf messages (Canal's Packet{MESSAGES}) are decoded with the SDK's Message and applied
// with TableMirror; flat JSON messages are turned back into entries (FlatToEntry) and applied
// the same way, and their "isSnapshot" markers are counted against the rows the server says it
// sent. kill -9 twice mid-snapshot with a slow broker: the copy is still equal, and only rows of
// chunks the broker had not confirmed as a whole come again (counted).
#include <gtest/gtest.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "canal/client/message.h"
#include "canal/entry.pb.h"
#include "canal/meta/meta_file.h"
#include "canal/mq/routing.h"
#include "canal/packet.pb.h"
#include "mq/kafka_mock.h"
#include "support/canal_install.h"
#include "support/mirror_suite.h"
#include "support/server_suite.h"
#include "support/table_compare.h"
#include "support/table_mirror.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;
using canal::testing::CanalInstall;
using canal::testing::FirstError;
using canal::testing::MirrorCounts;
using canal::testing::TableMirror;
using canal::testing::TestPort;
using testing::KafkaMock;
using testing::KafkaRecord;

constexpr uint16_t kSourcePort = TestPort("mq", 40);
constexpr uint16_t kMirrorPort = TestPort("mq", 41);
constexpr uint16_t kProtobufServerPort = TestPort("mq", 42);
constexpr uint16_t kFlatServerPort = TestPort("mq", 43);
constexpr uint16_t kKillServerPort = TestPort("mq", 44);
constexpr uint16_t kLargeServerPort = TestPort("mq", 45);
constexpr const char* kSchema = "mqsnap";
constexpr int kPartitions = 4;
// Routed whole by its name: the writer moves its keys (see the file comment).
constexpr const char* kMovesTable = "t_moves";

// A table whose rows are numbered by a slot n: key columns are SQL expressions of n (the bulk
// load over seq_0_to_N and the writer name the same rows), the other columns random literals
// or, in the load, expressions of seq.
struct TableSpec {
  std::string name;
  std::string ddl;
  std::vector<std::string> key_cols;  // empty: no key
  std::function<std::vector<std::string>(const std::string& n)> key_exprs;
  std::vector<std::string> cols;
  std::vector<std::string> load_exprs;
  std::function<std::vector<std::string>(std::mt19937_64&)> row_values;
  uint64_t rows = 0;
};

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string Text(std::mt19937_64& r, int n) {
  static const char* kPieces[] = {"a", "Z", "ü", "日本", "😀", " ", "''", "%"};
  std::string s = "'";
  const int len = static_cast<int>(r() % n);
  for (int i = 0; i < len; ++i) s += kPieces[r() % 8];
  return s + "'";
}

std::vector<TableSpec> Tables(bool with_keyless) {
  std::vector<TableSpec> t;
  const auto same = [](const std::string& n) { return std::vector<std::string>{n}; };
  t.push_back({"t_int",
               "CREATE TABLE t_int (id INT NOT NULL PRIMARY KEY, v VARCHAR(40), n BIGINT, d DECIMAL(12,3)) "
               "DEFAULT CHARSET utf8mb4",
               {"id"}, same, {"v", "n", "d"}, {"CONCAT('v', seq)", "seq * -7919", "seq / 7"},
               [](std::mt19937_64& r) {
                 return std::vector<std::string>{Text(r, 10), std::to_string(static_cast<int64_t>(r())),
                                                 std::to_string(static_cast<int>(r() % 100000) - 50000) + ".125"};
               },
               3000});
  t.push_back({"t_comp",
               "CREATE TABLE t_comp (a INT NOT NULL, b VARCHAR(20) NOT NULL, c DATETIME(6), v TEXT, "
               "PRIMARY KEY (a, b)) DEFAULT CHARSET utf8mb4",
               {"a", "b"},
               [](const std::string& n) {
                 return std::vector<std::string>{"(" + n + ") % 100", "CONCAT('k', (" + n + ") DIV 100)"};
               },
               {"c", "v"}, {"'2024-02-29 12:00:00.000001' + INTERVAL seq SECOND", "REPEAT('x', seq % 50)"},
               [](std::mt19937_64& r) {
                 return std::vector<std::string>{"'1999-12-31 23:59:59." + std::to_string(r() % 999999) + "'",
                                                 Text(r, 40)};
               },
               2000});
  t.push_back({"t_vkey",
               "CREATE TABLE t_vkey (k VARCHAR(64) NOT NULL PRIMARY KEY, payload BLOB, note VARCHAR(20)) "
               "DEFAULT CHARSET utf8mb4",
               {"k"}, [](const std::string& n) { return std::vector<std::string>{"CONCAT('key-ü-', " + n + ")"}; },
               {"payload", "note"}, {"UNHEX(SHA2(seq, 256))", "CONCAT('n', seq)"},
               [](std::mt19937_64& r) {
                 std::string hex;
                 for (int i = 0; i < 20; ++i) hex += "0123456789ABCDEF"[r() % 16];
                 return std::vector<std::string>{"X'" + hex + "'", r() % 4 == 0 ? std::string("NULL") : Text(r, 6)};
               },
               2000});
  t.push_back({"t_uniq",
               "CREATE TABLE t_uniq (u BIGINT UNSIGNED NOT NULL, v VARCHAR(20), UNIQUE KEY uk (u)) "
               "DEFAULT CHARSET utf8mb4",
               {"u"},
               [](const std::string& n) { return std::vector<std::string>{"18446744073700000000 + (" + n + ")"}; },
               {"v"}, {"CONCAT('u', seq)"}, [](std::mt19937_64& r) { return std::vector<std::string>{Text(r, 8)}; },
               1000});
  t.push_back({kMovesTable, "CREATE TABLE t_moves (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))", {"id"}, same, {"v"},
               {"CONCAT('m', seq)"},
               [](std::mt19937_64& r) { return std::vector<std::string>{"'w" + std::to_string(r() % 1000) + "'"}; },
               1000});
  if (with_keyless) {
    t.push_back({"t_keyless", "CREATE TABLE t_keyless (a INT, b VARCHAR(20)) DEFAULT CHARSET utf8mb4", {}, nullptr,
                 {"a", "b"}, {"seq % 100", "CONCAT('b', seq)"},
                 [](std::mt19937_64& r) {
                   return std::vector<std::string>{std::to_string(r() % 100), "'w" + std::to_string(r() % 1000) + "'"};
                 },
                 600});
  }
  return t;
}

// Random transactions of 1-3 statements over the tables, aimed everywhere in each key range so
// they meet the chunks being read: inserts, updates, deletes; key updates in t_moves only.
class Writer {
 public:
  Writer(std::vector<TableSpec> tables, uint64_t seed) : tables_(std::move(tables)), rng_(seed) {
    for (const TableSpec& t : tables_) {
      live_.emplace_back();
      next_.push_back(t.rows);
      for (uint64_t n = 0; n < t.rows; ++n) live_.back().push_back(n);
    }
  }
  // Whether statements may go to the keyless table (the keyless finding, below).
  void set_keyless(bool on) { keyless_ = on; }
  std::string Transaction() {
    std::string sql = "BEGIN;";
    const int n = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < n; ++i) sql += Statement() + ";";
    return sql + "COMMIT;";
  }

 private:
  std::string Where(const TableSpec& t, uint64_t slot) {
    std::vector<std::string> parts;
    const auto exprs = t.key_exprs(std::to_string(slot));
    for (size_t k = 0; k < t.key_cols.size(); ++k) parts.push_back(t.key_cols[k] + " = " + exprs[k]);
    return Join(parts, " AND ");
  }
  std::string Statement() {
    size_t ti = rng_() % tables_.size();
    while (!keyless_ && tables_[ti].key_cols.empty()) ti = rng_() % tables_.size();
    const TableSpec& t = tables_[ti];
    std::vector<uint64_t>& live = live_[ti];
    const int op = static_cast<int>(rng_() % 10);
    if (t.key_cols.empty()) {
      if (op < 5) return "INSERT INTO " + t.name + " (a, b) VALUES (" + Join(t.row_values(rng_)) + ")";
      if (op < 8) {
        return "UPDATE " + t.name + " SET b = 'up" + std::to_string(rng_() % 1000) + "' WHERE a = " +
               std::to_string(rng_() % 100) + " LIMIT 1";
      }
      return "DELETE FROM " + t.name + " WHERE a = " + std::to_string(rng_() % 100) + " LIMIT 1";
    }
    if (op < 3 || live.empty()) {
      const uint64_t slot = next_[ti]++;
      live.push_back(slot);
      return "INSERT INTO " + t.name + " (" + Join(t.key_cols) + ", " + Join(t.cols) + ") VALUES (" +
             Join(t.key_exprs(std::to_string(slot))) + ", " + Join(t.row_values(rng_)) + ")";
    }
    const size_t at = rng_() % live.size();
    const uint64_t slot = live[at];
    if (op < 6 || (op < 8 && t.name != kMovesTable)) {
      const std::vector<std::string> values = t.row_values(rng_);
      std::vector<std::string> sets;
      for (size_t i = 0; i < t.cols.size(); ++i) sets.push_back(t.cols[i] + " = " + values[i]);
      return "UPDATE " + t.name + " SET " + Join(sets) + " WHERE " + Where(t, slot);
    }
    if (op < 8) {  // t_moves: the key moves
      const uint64_t moved = next_[ti]++;
      live[at] = moved;
      return "UPDATE " + t.name + " SET id = " + std::to_string(moved) + " WHERE " + Where(t, slot);
    }
    live[at] = live.back();
    live.pop_back();
    return "DELETE FROM " + t.name + " WHERE " + Where(t, slot);
  }

  std::vector<TableSpec> tables_;
  std::mt19937_64 rng_;
  std::vector<std::vector<uint64_t>> live_;
  std::vector<uint64_t> next_;
  bool keyless_ = true;
};

// A keyless table written during the snapshot: rows the stream changes before that table's one
// read (its P) are in the read, so the merger keeps those changes out of the stream (a consumer
// cannot upsert a keyless row, so the stream's INSERT and the read's row would both stay).
// KeylessTableWrittenDuringTheSnapshot checks it; the other tests write the keyless table only
// once the snapshot is complete.

// The partition canal.mq.partitionHash = "mqsnap.t_moves,.*\..*:$pk$" names for a row of
// `table` whose key columns hold `key_values` (Canal's text; none for a keyless table).
int32_t ExpectedPartition(const std::string& table, const std::vector<std::string>& key_values) {
  if (table == kMovesTable) return JavaPartition(JavaStringHash(table), kPartitions);
  int32_t h = JavaStringHash(kSchema);
  for (const std::string& v : key_values) h ^= JavaStringHash(v);
  return JavaPartition(h, kPartitions);
}

// Builds the entry a flat message was made from, as far as FlatMessage tells (no positions):
// what TableMirror needs (names, values, NULLs, key flags, mysqlType, the snapshot prop).
// UPDATE's before image is `data` with `old`'s values over it; Canal leaves out of `old` a row
// with no changed column, which the writer's one-row updates never make, so `old` must pair up
// with `data`.
Status FlatToEntry(const nlohmann::ordered_json& j, std::string* out) {
  canal::entry::EventType type;
  if (!canal::entry::EventType_Parse(j.at("type").get<std::string>(), &type)) {
    return Status::Corruption("flat message type " + j.at("type").dump());
  }
  canal::entry::Entry e;
  canal::entry::Header* h = e.mutable_header();
  h->set_schemaname(j.at("database").get<std::string>());
  h->set_tablename(j.at("table").get<std::string>());
  h->set_eventtype(type);
  h->set_executetime(j.at("es").get<int64_t>());
  if (j.contains("isSnapshot") && j["isSnapshot"].get<bool>()) {
    canal::entry::Pair* p = h->add_props();
    p->set_key("snapshot");
    p->set_value("true");
  }
  e.set_entrytype(canal::entry::ROWDATA);
  canal::entry::RowChange rc;
  rc.set_eventtype(type);
  if (j.at("isDdl").get<bool>()) {
    rc.set_isddl(true);
    rc.set_sql(j.at("sql").get<std::string>());
  } else {
    const auto& data = j.at("data");
    const auto& old = j.at("old");
    const auto& pk = j.at("pkNames");
    const auto is_key = [&](const std::string& name) {
      if (pk.is_null()) return false;
      for (const auto& k : pk) {
        if (k.get<std::string>() == name) return true;
      }
      return false;
    };
    if (type == canal::entry::UPDATE && (!old.is_array() || old.size() != data.size())) {
      return Status::Corruption("flat UPDATE whose old does not pair with data: " + j.dump());
    }
    const auto fill = [&](const nlohmann::ordered_json& row, const nlohmann::ordered_json* over,
                          google::protobuf::RepeatedPtrField<canal::entry::Column>* cols) {
      int index = 0;
      for (const auto& [name, value] : row.items()) {
        const nlohmann::ordered_json& v = over != nullptr && over->contains(name) ? over->at(name) : value;
        canal::entry::Column* c = cols->Add();
        c->set_index(index++);
        c->set_name(name);
        c->set_iskey(is_key(name));
        c->set_updated(over != nullptr && over->contains(name));
        c->set_sqltype(j.at("sqlType").at(name).get<int>());
        c->set_mysqltype(j.at("mysqlType").at(name).get<std::string>());
        if (v.is_null()) {
          c->set_isnull(true);
        } else {
          c->set_value(v.get<std::string>());
        }
      }
    };
    for (size_t i = 0; i < data.size(); ++i) {
      canal::entry::RowData* rd = rc.add_rowdatas();
      if (type == canal::entry::DELETE) {
        fill(data[i], nullptr, rd->mutable_beforecolumns());
      } else if (type == canal::entry::UPDATE) {
        fill(data[i], &old[i], rd->mutable_beforecolumns());
        fill(data[i], nullptr, rd->mutable_aftercolumns());
      } else {
        fill(data[i], nullptr, rd->mutable_aftercolumns());
      }
    }
  }
  e.set_storevalue(rc.SerializeAsString());
  *out = e.SerializeAsString();
  return Status::OK();
}

std::vector<std::string> KeyValues(const canal::entry::RowData& row, bool use_before) {
  std::vector<std::string> v;
  for (const canal::entry::Column& c : use_before ? row.beforecolumns() : row.aftercolumns()) {
    if (c.iskey()) v.push_back(c.value());
  }
  return v;
}

// Which partition each row identity came in, across all consumers: a table's key columns' values
// (as TableSpec names them, whatever the entry's isKey flags say), or the table alone when it
// has no key. Every change of one key must come in one partition.
class KeyPartitions {
 public:
  explicit KeyPartitions(const std::vector<TableSpec>& tables) {
    for (const TableSpec& t : tables) keys_[t.name] = t.key_cols;
    keys_["done"] = {"id"};
  }
  // Corruption naming the row when its identity came in another partition before.
  Status Note(const std::string& table, const google::protobuf::RepeatedPtrField<canal::entry::Column>& cols,
              int32_t partition, bool snapshot) {
    std::string id = table;
    for (const std::string& k : keys_[table]) {
      for (const canal::entry::Column& c : cols) {
        if (c.name() == k) id += '\0' + c.value();
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    const auto [it, inserted] = seen_.emplace(id, partition);
    if (inserted || it->second == partition) return Status::OK();
    return Status::Corruption(std::string(snapshot ? "a snapshot row" : "a stream row") + " of " + table +
                              " came in partition " + std::to_string(partition) + ", an earlier change of its key in " +
                              std::to_string(it->second));
  }

 private:
  std::map<std::string, std::vector<std::string>> keys_;
  std::mutex mu_;
  std::map<std::string, int32_t> seen_;
};

// One member of a consumer group, alone on one partition: reads it from the beginning, decodes
// each message into entries, checks each row's partition and applies the message to the mirror
// in one transaction, until the partition's marker row (table `done`) arrives.
class PartitionConsumer {
 public:
  // `apply_mu`: held while a message is applied. The mirror is one server: sessions applying
  // side by side deadlock on InnoDB's gap locks (REPLACE, DELETE of absent keys), which a real
  // consumer would retry; one at a time keeps the oracle simple. The partitions still interleave
  // in whatever order their messages arrive.
  PartitionConsumer(const KafkaMock* mock, std::string topic, int32_t partition, bool flat, std::string mirror_socket,
                    std::mutex* apply_mu, KeyPartitions* keys, FirstError* error)
      : mock_(mock), topic_(std::move(topic)), partition_(partition), flat_(flat), mirror_(std::move(mirror_socket)),
        apply_mu_(apply_mu), keys_(keys), error_(error) {}
  ~PartitionConsumer() { Stop(); }

  Status Start() {
    CANAL_RETURN_IF_ERROR(mirror_.Connect());
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
    return Status::OK();
  }
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_; }
  uint64_t snapshot_rows() const { return snapshot_rows_; }
  // After Stop():
  const MirrorCounts& counts() const { return mirror_.counts(); }
  uint64_t messages() const { return messages_; }
  uint64_t markers() const { return markers_; }            // flat: rows of messages with "isSnapshot":true
  uint64_t marked_not_insert() const { return marked_not_insert_; }

 private:
  void Run(std::stop_token stop) {
    mock_->Consume(topic_, {partition_}, 240s, [&](const KafkaRecord* r) {
      if (stop.stop_requested() || done_ || error_->failed()) return false;
      if (r == nullptr) return true;
      Status s = Handle(*r);
      if (!s.ok()) {
        error_->Set("partition " + std::to_string(partition_) + " offset " + std::to_string(r->offset) + ": " +
                    s.ToString());
        return false;
      }
      return true;
    });
  }

  Status Handle(const KafkaRecord& r) {
    ++messages_;
    client::Message m;
    if (flat_) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.payload, nullptr, false);
      if (j.is_discarded()) return Status::Corruption("not JSON: " + r.payload.substr(0, 200));
      const bool marked = j.contains("isSnapshot");
      if (marked) {
        if (j["isSnapshot"] != true) return Status::Corruption("isSnapshot is not true: " + r.payload);
        markers_ += j["data"].size();
        if (j["type"] != "INSERT") ++marked_not_insert_;
      }
      std::string entry;
      CANAL_RETURN_IF_ERROR(FlatToEntry(j, &entry));
      m = client::Message(static_cast<int64_t>(r.offset), std::vector<std::string>{entry});
    } else {
      canal::protocol::Packet packet;
      if (!packet.ParseFromString(r.payload) || packet.type() != canal::protocol::MESSAGES) {
        return Status::Corruption("not a Packet{MESSAGES}");
      }
      CANAL_RETURN_IF_ERROR(client::Message::FromMessagesBody(packet.body(), &m));
    }
    CANAL_RETURN_IF_ERROR(m.ParseEntries());
    bool marker = false;
    for (const canal::entry::Entry& e : m.entries()) {
      if (client::EntryTypeOf(e) != canal::entry::ROWDATA) continue;
      canal::entry::RowChange rc;
      if (!rc.ParseFromString(e.storevalue())) return Status::Corruption("a RowChange does not parse");
      if (client::IsDdl(rc)) continue;
      const bool use_before = client::EventTypeOf(rc) == canal::entry::DELETE;
      const bool snapshot = std::any_of(e.header().props().begin(), e.header().props().end(),
                                        [](const canal::entry::Pair& p) { return p.key() == "snapshot"; });
      for (const canal::entry::RowData& row : rc.rowdatas()) {
        const int32_t expected = ExpectedPartition(e.header().tablename(), KeyValues(row, use_before));
        if (expected != partition_) {
          return Status::Corruption(e.header().tablename() + " row (" + Join(KeyValues(row, use_before)) +
                                    ") in partition " + std::to_string(partition_) + ", its key's partition is " +
                                    std::to_string(expected) + (snapshot ? " (a snapshot row)" : ""));
        }
        if (e.header().tablename() != kMovesTable) {  // routed whole: its keys move
          CANAL_RETURN_IF_ERROR(keys_->Note(e.header().tablename(),
                                            use_before ? row.beforecolumns() : row.aftercolumns(), partition_,
                                            snapshot));
        }
        if (snapshot) ++snapshot_rows_;
      }
      if (e.header().tablename() == "done" && client::EventTypeOf(rc) == canal::entry::INSERT) marker = true;
    }
    {
      std::lock_guard<std::mutex> lock(*apply_mu_);
      CANAL_RETURN_IF_ERROR(mirror_.Apply(m));
    }
    if (marker) done_ = true;
    return Status::OK();
  }

  const KafkaMock* const mock_;
  const std::string topic_;
  const int32_t partition_;
  const bool flat_;
  TableMirror mirror_;
  std::mutex* const apply_mu_;
  KeyPartitions* const keys_;
  FirstError* const error_;
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> snapshot_rows_{0};
  uint64_t messages_ = 0, markers_ = 0, marked_not_insert_ = 0;
  std::jthread thread_;
};

bool SnapshotComplete(const CanalInstall& install) {
  static const std::regex kComplete("snapshot initial-[0-9]+ complete");
  return std::regex_search(canal::testing::ReadAll(install.instance_log("example")), kComplete);
}

// The rows the server says the snapshot sent (its "complete" line), or -1.
int64_t RowsSent(const CanalInstall& install) {
  static const std::regex kComplete("snapshot initial-[0-9]+ complete: [0-9]+ tables, ([0-9]+) rows sent");
  std::smatch m;
  const std::string log = canal::testing::ReadAll(install.instance_log("example"));
  return std::regex_search(log, m, kComplete) ? std::stoll(m[1].str()) : -1;
}

class KafkaSnapshot : public canal::testing::MirrorSuite<kSourcePort, kMirrorPort> {
 protected:
  void SetUp() override {
    MirrorSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    mock_ = std::make_unique<KafkaMock>(3);
    ASSERT_TRUE(mock_->ok()) << mock_->error();
    install_ = std::make_unique<CanalInstall>(
        "kafka-snapshot-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()),
        kSourcePort);
  }
  void TearDown() override {
    consumers_.clear();
    install_.reset();  // the server goes before the brokers
    mock_.reset();
  }

  // The tables on both servers (and `done`, the end markers' table, empty, so that no DDL is
  // in the stream); their rows on the source only, before the server starts, so only the
  // snapshot can deliver them. Returns the rows loaded.
  uint64_t Load(const std::vector<TableSpec>& tables) {
    std::string both = std::string("DROP DATABASE IF EXISTS ") + kSchema + "; CREATE DATABASE " + kSchema +
                       "; USE " + kSchema + "; CREATE TABLE done (id INT NOT NULL PRIMARY KEY);";
    for (const TableSpec& t : tables) both += t.ddl + ";";
    BothSql(both);
    std::string load = std::string("SET time_zone = '+00:00'; USE ") + kSchema + ";";
    uint64_t rows = 0;
    for (const TableSpec& t : tables) {
      rows += t.rows;
      std::vector<std::string> exprs = t.key_cols.empty() ? std::vector<std::string>{} : t.key_exprs("seq");
      for (const std::string& e : t.load_exprs) exprs.push_back(e);
      const std::string cols = t.key_cols.empty() ? Join(t.cols) : Join(t.key_cols) + ", " + Join(t.cols);
      load += "INSERT INTO " + t.name + " (" + cols + ") SELECT " + Join(exprs) +
              " FROM (SELECT CAST(seq AS SIGNED) AS seq FROM seq_0_to_" + std::to_string(t.rows - 1) + ") AS s;";
    }
    EXPECT_TRUE(Source().Sql(load)) << Source().error();
    return rows;
  }

  void Configure(uint16_t port, const std::string& topic, bool flat, const std::string& server_extra = "",
                 const std::string& instance_extra = "") {
    ASSERT_TRUE(mock_->CreateTopic(topic, kPartitions));
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        port, "canal.serverMode = kafka\nkafka.bootstrap.servers = " + mock_->bootstraps() +
                  "\ncanal.mq.flatMessage = " + (flat ? "true" : "false") +
                  "\nkafka.linger.ms = 5\nkafka.log_level = 3\n" + server_extra));
    install_->WriteInstance("example", StartHere() + "canal.instance.filter.regex = " + kSchema +
                                           "\\\\..*\n"
                                           "canal.instance.snapshot.mode = initial\n"
                                           "canal.instance.snapshot.threads = 2\n"
                                           "canal.instance.snapshot.chunk.rows = 250\n"
                                           "canal.mq.topic = " + topic + "\n"
                                           "canal.mq.partitionsNum = 4\n"
                                           "canal.mq.partitionHash = " + kSchema + "." + kMovesTable +
                                           ",.*\\\\..*:$pk$\n" + instance_extra);
  }

  void StartConsumers(const std::vector<TableSpec>& tables, const std::string& topic, bool flat) {
    keys_ = std::make_unique<KeyPartitions>(tables);
    for (int32_t p = 0; p < kPartitions; ++p) {
      consumers_.push_back(std::make_unique<PartitionConsumer>(mock_.get(), topic, p, flat, Mirror().socket(),
                                                               &apply_mu_, keys_.get(), &error_));
      Status s = consumers_.back()->Start();
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
  uint64_t SnapshotRowsApplied() const {
    uint64_t n = 0;
    for (const auto& c : consumers_) n += c->snapshot_rows();
    return n;
  }

  // `batches` batches of `per_batch` writer transactions, or (batches 0) until `until` says stop.
  void Write(Writer* w, const std::function<bool()>& until, uint64_t* transactions, int batches = 0,
             int per_batch = 20) {
    for (int b = 0; batches == 0 || b < batches; ++b) {
      if (batches == 0 && until()) return;
      if (error_.failed()) return;
      std::string sql = std::string("USE ") + kSchema + "; SET time_zone = '+00:00';";
      for (int i = 0; i < per_batch; ++i) sql += w->Transaction();
      if (!Source().Sql(sql)) return error_.Set("writer: " + Source().error());
      *transactions += per_batch;
    }
  }

  // Starts the server with a writer already running (from the position the destination starts
  // at, so its changes meet the chunks both before and while they are read); the writer goes on
  // until the snapshot's end and a little after it. `during`: its transactions before the end.
  // `keyless_during`: the keyless table too before the snapshot's end (the keyless finding).
  void RunServerUnderWrites(const std::vector<TableSpec>& tables, uint64_t seed, uint64_t* transactions,
                            uint64_t* during, bool keyless_during = false) {
    Writer writer(tables, seed);
    writer.set_keyless(keyless_during);
    std::atomic<bool> complete{false};
    std::thread writes([&] {
      Write(&writer, [&] { return complete.load(); }, transactions);
      *during = *transactions;
      writer.set_keyless(true);
      Write(&writer, nullptr, transactions, 5);
    });
    std::string out;
    const int rc = install_->Startup(&out);
    if (rc == 0) {
      canal::testing::WaitFor([&] { return SnapshotComplete(*install_) || error_.failed(); }, 120s);
    }
    complete = true;
    writes.join();
    ASSERT_EQ(rc, 0) << out << canal::testing::ReadAll(install_->server_log());
    ASSERT_TRUE(SnapshotComplete(*install_)) << canal::testing::ReadAll(install_->instance_log("example"));
    ASSERT_FALSE(error_.failed()) << error_.Get();
  }

  // The end: a marker row for each partition in one last transaction; every consumer stops at
  // its own, which its partition holds after every earlier change routed there. Then the
  // oracle: the mirror equals the source. Sums the consumers' counts into `total`.
  void Finish(const std::vector<TableSpec>& tables, MirrorCounts* total) {
    std::set<int32_t> covered;
    std::string markers;
    for (int id = 1; covered.size() < static_cast<size_t>(kPartitions); ++id) {
      if (covered.insert(ExpectedPartition("done", {std::to_string(id)})).second) {
        markers += (markers.empty() ? "" : ", ") + ("(" + std::to_string(id) + ")");
      }
    }
    ASSERT_TRUE(Source().Sql(std::string("INSERT INTO ") + kSchema + ".done VALUES " + markers)) << Source().error();
    const bool all = canal::testing::WaitFor(
        [&] {
          if (error_.failed()) return true;
          for (const auto& c : consumers_) {
            if (!c->done()) return false;
          }
          return true;
        },
        120s);
    for (const auto& c : consumers_) c->Stop();
    ASSERT_FALSE(error_.failed()) << error_.Get();
    ASSERT_TRUE(all) << "not every partition's marker came; "
                     << canal::testing::ReadAll(install_->instance_log("example"));
    std::vector<std::string> names;
    for (const TableSpec& t : tables) names.push_back(t.name);
    std::string report;
    Status s = canal::testing::CompareTables(Source(), Mirror(), kSchema, names, &report);
    for (const auto& c : consumers_) {
      const MirrorCounts& n = c->counts();
      total->entries += n.entries;
      total->inserts += n.inserts;
      total->updates += n.updates;
      total->key_updates += n.key_updates;
      total->deletes += n.deletes;
      total->snapshot_rows += n.snapshot_rows;
      total->snapshot_repeats += n.snapshot_repeats;
      total->ddls += n.ddls;
      total->ignored += n.ignored;
      total->missed_updates += n.missed_updates;
      total->missed_deletes += n.missed_deletes;
    }
    std::string per_partition;
    for (const auto& c : consumers_) {
      per_partition += (per_partition.empty() ? "" : ", ") + std::to_string(c->messages()) + " messages/" +
                       std::to_string(c->counts().snapshot_rows) + " snapshot rows";
    }
    std::printf("[ figures ] partitions: %s\n[ figures ] mirror: %s\n%s", per_partition.c_str(),
                total->ToString().c_str(), report.c_str());
    EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;
    // Every partition had a share of the snapshot.
    for (const auto& c : consumers_) EXPECT_GT(c->counts().snapshot_rows, 0u);
  }

  std::unique_ptr<KafkaMock> mock_;
  std::unique_ptr<CanalInstall> install_;
  std::mutex apply_mu_;  // see PartitionConsumer
  std::unique_ptr<KeyPartitions> keys_;
  std::vector<std::unique_ptr<PartitionConsumer>> consumers_;
  FirstError error_;
};

// Protobuf messages, default batches: the snapshot under concurrent writes, applied partition
// by partition, rebuilds equal tables; nothing comes twice.
TEST_F(KafkaSnapshot, ProtobufSnapshotUnderWritesRebuildsEqualTablesPerPartition) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<TableSpec> tables = Tables(true);
  const uint64_t loaded = Load(tables);
  ASSERT_FALSE(HasFailure());
  Configure(kProtobufServerPort, "mq_snap_pb", false);
  ASSERT_FALSE(HasFailure());
  StartConsumers(tables, "mq_snap_pb", false);
  uint64_t transactions = 0, during = 0;
  RunServerUnderWrites(tables, 20261207, &transactions, &during);
  ASSERT_FALSE(HasFatalFailure());
  MirrorCounts n;
  Finish(tables, &n);
  std::printf("[ figures ] protobuf: %.1f s, %" PRIu64 " rows loaded, %" PRIu64 " snapshot rows (%" PRIu64
              " repeated), %" PRIu64 " writer transactions (%" PRIu64 " before the snapshot's end)\n",
              canal::testing::SecondsSince(start), loaded, n.snapshot_rows, n.snapshot_repeats, transactions, during);
  EXPECT_GE(n.snapshot_rows, loaded / 2) << "most loaded rows come by the snapshot (the writer deletes some first)";
  EXPECT_EQ(static_cast<int64_t>(n.snapshot_rows), RowsSent(*install_));
  EXPECT_EQ(n.snapshot_repeats, 0u) << "no chunk twice without a crash or a failed round";
  EXPECT_GT(n.key_updates, 0u);
  EXPECT_GT(during, 0u);
  std::string out;
  EXPECT_EQ(install_->Stop(&out), 0) << out;
}

// The keyless case: the same with the keyless table written before and during its read; the copy
// still equals the source (its changes before the read's P come by the read alone).
TEST_F(KafkaSnapshot, KeylessTableWrittenDuringTheSnapshot) {
  const std::vector<TableSpec> tables = Tables(true);
  Load(tables);
  ASSERT_FALSE(HasFailure());
  Configure(kProtobufServerPort, "mq_snap_keyless", false);
  ASSERT_FALSE(HasFailure());
  StartConsumers(tables, "mq_snap_keyless", false);
  uint64_t transactions = 0, during = 0;
  RunServerUnderWrites(tables, 20261207, &transactions, &during, true);
  ASSERT_FALSE(HasFatalFailure());
  MirrorCounts n;
  Finish(tables, &n);
  std::string out;
  EXPECT_EQ(install_->Stop(&out), 0) << out;
}

// Flat JSON: the same, rebuilt from the JSON alone; every row of a snapshot chunk is in a
// message marked "isSnapshot":true (and only those), as many as the server says it sent.
TEST_F(KafkaSnapshot, FlatMessagesMarkEverySnapshotRowAndRebuildEqualTables) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<TableSpec> tables = Tables(true);
  const uint64_t loaded = Load(tables);
  ASSERT_FALSE(HasFailure());
  Configure(kFlatServerPort, "mq_snap_flat", true);
  ASSERT_FALSE(HasFailure());
  StartConsumers(tables, "mq_snap_flat", true);
  uint64_t transactions = 0, during = 0;
  RunServerUnderWrites(tables, 99, &transactions, &during);
  ASSERT_FALSE(HasFatalFailure());
  MirrorCounts n;
  Finish(tables, &n);
  uint64_t markers = 0, marked_not_insert = 0;
  for (const auto& c : consumers_) {
    markers += c->markers();
    marked_not_insert += c->marked_not_insert();
  }
  const int64_t sent = RowsSent(*install_);
  std::printf("[ figures ] flat: %.1f s, %" PRIu64 " rows loaded, %" PRIu64 " rows marked isSnapshot, %" PRId64
              " snapshot rows sent (server), %" PRIu64 " repeated, %" PRIu64 " writer transactions\n",
              canal::testing::SecondsSince(start), loaded, markers, sent, n.snapshot_repeats, transactions);
  EXPECT_EQ(static_cast<int64_t>(markers), sent);
  EXPECT_EQ(markers, n.snapshot_rows);
  EXPECT_EQ(marked_not_insert, 0u);
  EXPECT_GE(markers, loaded / 2);
  EXPECT_GT(n.inserts + n.updates + n.deletes, 0u) << "stream messages (unmarked) were applied too";
  EXPECT_EQ(n.snapshot_repeats, 0u);
  EXPECT_GT(during, 0u);
  std::string out;
  EXPECT_EQ(install_->Stop(&out), 0) << out;
}

// kill -9 twice mid-snapshot while the broker answers slowly (batches in flight at each kill),
// the batches are small (a chunk or so each) and the ring too (so the readers wait for the
// broker): each kill comes while the cursor the broker's confirmations wrote (meta.dat) still
// carries the snapshot's progress; after each restart the snapshot resumes there; the copy is
// equal and only rows of chunks not confirmed as a whole come again. No keyless table: a crash
// during its one read sends it whole again, which a per-message consumer cannot tell from new
// rows (docs/snapshot.md).
TEST_F(KafkaSnapshot, KillNineTwiceMidSnapshotRepeatsOnlyUnconfirmedChunks) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<TableSpec> tables = Tables(false);
  const uint64_t loaded = Load(tables);
  ASSERT_FALSE(HasFailure());
  constexpr int kChunkRows = 200, kBatchEntries = 4;
  mock_->SlowProduceRequests(40, 1000);
  Configure(kKillServerPort, "mq_snap_kill", false,
            "canal.mq.canalBatchSize = " + std::to_string(kBatchEntries) + "\n",
            "canal.instance.memory.buffer.size = 64\ncanal.instance.snapshot.threads = 1\n"
            "canal.instance.snapshot.chunk.rows = " + std::to_string(kChunkRows) + "\n");
  ASSERT_FALSE(HasFailure());
  StartConsumers(tables, "mq_snap_kill", false);
  Writer writer(tables, 7);
  uint64_t transactions = 0;
  std::string out;
  ASSERT_EQ(install_->Startup(&out), 0) << out << canal::testing::ReadAll(install_->server_log());
  // Paced: a few transactions each time more snapshot rows reached the mirror, so that the slow
  // broker keeps up with the stream and the snapshot moves on.
  const auto paced = [&](const std::function<bool()>& until) {
    while (!until() && !error_.failed()) {
      const uint64_t before = SnapshotRowsApplied();
      Write(&writer, nullptr, &transactions, 1, 3);
      canal::testing::WaitFor([&] { return SnapshotRowsApplied() > before || until() || error_.failed(); }, 30s);
    }
  };
  // Whether the newest cursor in meta.dat (its newest slot, meta_file.h) carries snapshot progress.
  const auto durable_cursor = [&] {
    canal::meta::MetaFileContents meta;
    Status s = canal::meta::ReadMetaFile(install_->meta_file("example").string(), &meta);
    return s.ok() ? meta.json : s.ToString();
  };
  const auto cursor_in_snapshot = [&] { return durable_cursor().find("\"snapshot\"") != std::string::npos; };
  int kills = 0;
  for (int kill = 1; kill <= 2; ++kill) {
    const uint64_t seen = SnapshotRowsApplied();
    paced([&] { return SnapshotRowsApplied() >= seen + loaded / 4 || SnapshotComplete(*install_); });
    ASSERT_FALSE(error_.failed()) << error_.Get();
    ASSERT_TRUE(cursor_in_snapshot()) << "the snapshot's last chunk was confirmed before kill " << kill
                                      << "; use more rows\n"
                                      << durable_cursor();
    ASSERT_TRUE(install_->Kill9());
    ++kills;
    ASSERT_TRUE(canal::testing::WaitFor([&] { return !install_->Running(); }, 20s));
    Write(&writer, nullptr, &transactions, 2);  // writes while it is down
    ASSERT_EQ(install_->Startup(&out), 0) << out << canal::testing::ReadAll(install_->server_log());
  }
  paced([&] { return SnapshotComplete(*install_); });
  // One more transaction: a chunk with no rows (the read after a table's last full chunk) puts no
  // entry, so the progress after it (for the last one: none, the snapshot complete) becomes
  // durable with the next entry the stream puts.
  Write(&writer, nullptr, &transactions, 1, 1);
  ASSERT_FALSE(error_.failed()) << error_.Get();
  ASSERT_TRUE(canal::testing::WaitFor([&] { return !cursor_in_snapshot(); }, 60s))
      << "the broker confirmed the whole snapshot, so the cursor no longer carries its progress\n"
      << durable_cursor();
  MirrorCounts n;
  Finish(tables, &n);
  const std::string log = canal::testing::ReadAll(install_->instance_log("example"));
  size_t resumed = 0;
  for (size_t at = log.find(" resumes at the cursor "); at != std::string::npos;
       at = log.find(" resumes at the cursor ", at + 1)) {
    ++resumed;
  }
  std::printf("[ figures ] kill -9 x%d mid-snapshot: %.1f s, %" PRIu64 " rows loaded, %" PRIu64
              " snapshot rows applied, %" PRIu64 " repeated (rows of unconfirmed chunks), %zu resumes, %" PRIu64
              " writer transactions\n",
              kills, canal::testing::SecondsSince(start), loaded, n.snapshot_rows, n.snapshot_repeats, resumed,
              transactions);
  EXPECT_EQ(resumed, 2u) << "each restart resumes the snapshot from the cursor's progress";
  // Each crash repeats at most the chunks of the batch in flight and of the ones whose cursor
  // was not yet written: a handful of chunks, far from the whole snapshot.
  EXPECT_LE(n.snapshot_repeats, 2u * 6 * kChunkRows) << n.ToString();
  EXPECT_EQ(install_->Stop(&out), 0) << out;
}

// Protobuf without partitions puts a whole batch in one Packet, and a snapshot entry holds up to
// 256 KiB of rows (where a rows event holds some 8 KiB): with default chunks (8192 rows) and
// ring batches of entries (canal.instance.memory.batch.mode = ITEMSIZE; MEMSIZE's default
// 50 x 1 KiB keeps a batch near one entry) a batch of snapshot entries is megabytes, more than
// Kafka takes in one message (1 MB by default): publishing stopped at the first batch
// ("a message of 5999533 bytes ... is larger than Kafka accepts"). Such a batch now goes as
// several Packets in order, each under kafka.max.request.size.
TEST_F(KafkaSnapshot, ProtobufBatchOfLargeSnapshotEntriesGoesInPacketsKafkaTakes) {
  std::vector<TableSpec> tables = Tables(false);
  tables.resize(1);  // t_int
  // Some 3 MB of entries, one ring batch (ITEMSIZE: 50 entries): well over Kafka's 1 MB, and
  // under the 5 MiB a partition of librdkafka's mock cluster keeps (it drops older messages).
  tables[0].rows = 20000;
  const uint64_t loaded = Load(tables);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(mock_->CreateTopic("mq_snap_large", 1));
  install_->WriteServerProperties(CanalInstall::ServerProperties(
      kLargeServerPort, "canal.serverMode = kafka\nkafka.bootstrap.servers = " + mock_->bootstraps() +
                            "\ncanal.mq.flatMessage = false\nkafka.linger.ms = 5\nkafka.log_level = 3\n"
                            "canal.instance.memory.batch.mode = ITEMSIZE\n"));
  install_->WriteInstance("example", StartHere() + "canal.instance.filter.regex = " + kSchema +
                                         "\\\\..*\ncanal.instance.snapshot.mode = initial\n"
                                         "canal.mq.topic = mq_snap_large\n");
  std::string out;
  ASSERT_EQ(install_->Startup(&out), 0) << out << canal::testing::ReadAll(install_->server_log());
  TableMirror mirror(Mirror().socket());
  ASSERT_TRUE(mirror.Connect().ok());
  size_t largest = 0, messages = 0;
  Status applied;
  mock_->Consume("mq_snap_large", {0}, 60s, [&](const KafkaRecord* r) {
    if (r == nullptr) {
      return canal::testing::ReadAll(install_->instance_log("example")).find("MQ publishing stopped") ==
             std::string::npos;
    }
    ++messages;
    largest = std::max(largest, r->payload.size());
    canal::protocol::Packet packet;
    client::Message m;
    if (!packet.ParseFromString(r->payload)) {
      applied = Status::Corruption("not a Packet");
    } else {
      applied = client::Message::FromMessagesBody(packet.body(), &m);
    }
    if (applied.ok()) applied = mirror.Apply(m);
    return applied.ok() && mirror.counts().snapshot_rows < loaded;
  });
  std::printf("[ figures ] large entries: %zu messages, the largest %zu bytes, %" PRIu64 " snapshot rows\n", messages,
              largest, mirror.counts().snapshot_rows);
  EXPECT_TRUE(applied.ok()) << applied.ToString();
  EXPECT_EQ(mirror.counts().snapshot_rows, loaded) << canal::testing::ReadAll(install_->instance_log("example"));
  EXPECT_LE(largest, 1000000u);
  std::string report;
  Status s = canal::testing::CompareTables(Source(), Mirror(), kSchema, {"t_int"}, &report);
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;
  EXPECT_EQ(install_->Stop(&out), 0) << out;
}

}  // namespace
}  // namespace canal::mq
