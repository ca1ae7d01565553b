// The value oracle: generated tables in which every column kind
// follows every kind (support/value_oracle_tables.h), rows of edge values
// inserted on MariaDB with binlog_row_metadata FULL and MINIMAL, every row
// read through the real canal-server and the client SDK's entry views, and
// each column compared with MariaDB's own SELECT of the same row: value,
// isNull, sqlType (Canal's rules, per value), mysqlType (COLUMN_TYPE), and
// every string field valid UTF-8. The database is the oracle, not our
// decoder.
//
// A TABLE_MAP or row the server cannot decode stops its destination: the
// oracle then records the table and the server's error, and starts a fresh
// server at the primary's end, so one bad table does not hide the rest.
//
// Seeds are fixed here; scripts/value-oracle-soak.sh runs long ones
// (CANAL_VALUE_ORACLE_SEED, CANAL_VALUE_ORACLE_TABLES: tables per mode), and
// CANAL_VALUE_ORACLE_MINIMIZE=n shrinks the first n difference classes to
// their smallest table (one row, every column it can do without dropped).
// Ports: MariaDB 15110, canal-server 15111-15149 (a fresh one per start).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/entry_view.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_test_names.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/value_oracle_tables.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

constexpr uint16_t kSandboxPort = TestPort("value_oracle");
constexpr uint16_t kFirstServerPort = TestPort("value_oracle", 1);
constexpr uint16_t kLastServerPort = TestPort("value_oracle", 39);
constexpr int kRowsPerTable = 10;
constexpr int kColumnsPerTable = 20;
constexpr int kRandomTablesPerCircuit = 16;

struct ReceivedColumn {
  std::string name, value, mysql_type;
  bool is_null = false;
  int sql_type = 0;
};
using ReceivedRow = std::vector<ReceivedColumn>;

struct Difference {
  std::string field;      // value, isNull, sqlType, mysqlType, utf8, missing, stopped
  std::string kind;       // the column's kind
  std::string predecessor;
  const OracleTable* table = nullptr;
  std::string column, expected, got;
  int64_t row = 0;
};

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) parts.push_back(cur);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

// A value as a printable line for reports: bytes outside ASCII's printable range escaped.
std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    }
  }
  return out.size() > 200 ? out.substr(0, 200) + "...(" + std::to_string(s.size()) + " bytes)" : out;
}

bool NumbersMatch(const std::string& expected, const std::string& got, OracleCompare how) {
  char* end = nullptr;
  const double e = std::strtod(expected.c_str(), &end);
  if (end == expected.c_str()) return false;
  const double g = std::strtod(got.c_str(), &end);
  if (got.empty() || *end != '\0') return false;
  if (how == OracleCompare::kFloat) {
    const float ef = static_cast<float>(e), gf = std::strtof(got.c_str(), nullptr);
    return ef == gf || std::fabs(ef - gf) <= 1e-6 * std::fabs(ef);
  }
  return e == g || std::fabs(e - g) <= 1e-15 * std::fabs(e);
}

// "value", or a narrower class for a known cause: latin1 text (MariaDB's
// latin1 is cp1252: 0x80 is U+20AC) that arrived as binary does, each byte
// as ISO-8859-1 (0x80 is U+0080).
std::string ValueField(const OracleColumn& c, const std::string& expected, const std::string& got) {
  if (c.kind.find("latin1") == std::string::npos || expected.find("\u20ac") == std::string::npos) return "value";
  std::string iso = expected;
  for (size_t at; (at = iso.find("\u20ac")) != std::string::npos;) iso.replace(at, 3, "\xc2\x80");
  return iso == got ? "value (latin1 read as binary: ISO-8859-1)" : "value";
}

// One canal-server (install, port) and a subscribed client; the rows of every
// table of `schema` it delivered, by table and id.
class OracleStream {
 public:
  OracleStream(MariadbSandbox& sandbox, std::string schema, std::string tag)
      : sandbox_(sandbox), schema_(std::move(schema)), tag_(std::move(tag)) {}

  ::testing::AssertionResult Start() {
    client_.reset();
    install_.reset();
    // A fresh port per start (an old server's sockets may linger), round the suite's range.
    const uint16_t port = next_port_;
    next_port_ = next_port_ == kLastServerPort ? kFirstServerPort : static_cast<uint16_t>(next_port_ + 1);
    install_ = std::make_unique<CanalInstall>("value-oracle-" + tag_ + "-" + std::to_string(port), kSandboxPort);
    install_->WriteServerProperties(CanalInstall::ServerProperties(port));
    install_->WriteInstance("example", StartAtPrimaryEnd(sandbox_));
    std::string out;
    if (const int rc = install_->Startup(&out); rc != 0) {
      return ::testing::AssertionFailure() << "startup.sh exit " << rc << ":\n" << out << ReadAll(install_->server_log());
    }
    ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(port);
    o.destination = "example";
    o.connect_timeout = 2s;
    o.read_timeout = 20s;
    o.low_latency_get = true;  // a get returns on the first entry, not after its timeout
    client_ = std::make_unique<Connector>(o);
    const Status s = ConnectAndSubscribe(*client_, 20s, schema_ + "\\..*");
    if (!s.ok()) return ::testing::AssertionFailure() << s.ToString();
    ++starts_;
    return ::testing::AssertionSuccess();
  }

  // Reads until `table` has `rows` rows; false when the stream stalls (no
  // new row for `stall`) first.
  bool WaitForRows(const std::string& table, size_t rows, std::chrono::milliseconds stall, std::string* error) {
    auto last_progress = Clock::now();
    while (rows_[table].size() < rows) {
      if (Clock::now() - last_progress > stall) return false;
      Message m;
      const Status s = client_->GetWithoutAck(1000, 200, TimeUnit::kMilliseconds, &m);
      if (!s.ok()) {
        *error = s.ToString();
        return false;
      }
      if (m.batch_id() == -1) {
        // Every install is fresh, so any stop in its log is this stream's: no need to wait out `stall`.
        if (ReadAll(install_->instance_log("example")).find("parser stopped") != std::string::npos) return false;
        continue;
      }
      const size_t before = received_;
      if (Status r = Collect(m); !r.ok()) {
        *error = r.ToString();
        return false;
      }
      if (received_ > before) last_progress = Clock::now();
      (void)client_->Ack(m.batch_id());
    }
    return true;
  }

  const std::map<int64_t, ReceivedRow>& Rows(const std::string& table) { return rows_[table]; }
  // The last line of the server's logs at level error (the reason a destination stopped).
  std::string LogErrors() const {
    std::string found;
    for (const auto& path : {install_->server_log(), install_->instance_log("example")}) {
      for (const std::string& line : Split(ReadAll(path), '\n')) {
        if (line.find(" error ") != std::string::npos) found = line;
      }
    }
    return found;
  }
  int starts() const { return starts_; }

 private:
  Status Collect(const Message& m) {
    for (size_t i = 0; i < m.raw_entry_count(); ++i) {
      client::EntryView e;
      CANAL_RETURN_IF_ERROR(m.View(i, &e));
      if (client::EntryTypeOf(e) != entry::ROWDATA || e.header().schema_name() != schema_) continue;
      client::RowChangeView rc;
      CANAL_RETURN_IF_ERROR(client::RowChangeView::Parse(e.store_value(), &rc));
      if (client::IsDdl(rc) || client::EventTypeOf(rc) != entry::INSERT) continue;
      const std::string table(e.header().table_name());
      client::RowDataView row;
      Status s;
      while (rc.NextRow(&row, &s)) {
        ReceivedRow columns;
        client::ColumnView c;
        while (row.NextAfter(&c, &s)) {
          columns.push_back({std::string(c.name()), std::string(c.value()), std::string(c.mysql_type()),
                             client::IsNull(c), c.sql_type()});
        }
        CANAL_RETURN_IF_ERROR(s);
        int64_t id = -1;
        for (const auto& col : columns) {
          if (col.name == "id") id = std::strtoll(col.value.c_str(), nullptr, 10);
        }
        rows_[table][id] = std::move(columns);
        ++received_;
      }
      CANAL_RETURN_IF_ERROR(s);
    }
    return Status::OK();
  }

  MariadbSandbox& sandbox_;
  const std::string schema_, tag_;
  std::unique_ptr<CanalInstall> install_;
  std::unique_ptr<Connector> client_;
  std::map<std::string, std::map<int64_t, ReceivedRow>> rows_;
  size_t received_ = 0;
  int starts_ = 0;
  static inline uint16_t next_port_ = kFirstServerPort;
};

class ValueOracle : public ServerSuite<kSandboxPort> {
 protected:
  // Runs the oracle with binlog_row_metadata = `metadata`; fails listing every difference class.
  void Run(const std::string& metadata, uint64_t default_seed);

  // Creates `t`, inserts `rows` rows, reads them through `stream` and compares
  // them with MariaDB's SELECT; appends what differs to *out. A destination
  // that stops is a difference too, and `stream` starts afresh past it.
  void CheckTable(OracleStream& stream, const OracleTable& t, int rows, std::vector<Difference>* out);
  void Compare(const OracleTable& t, int rows, const std::string& select_output,
               const std::map<int64_t, ReceivedRow>& received, std::vector<Difference>* out);
  // The difference `d` again on the smallest table (one row, columns dropped
  // one at a time) that still shows it; nullopt when it does not recur.
  std::optional<Difference> Minimize(OracleStream& stream, const Difference& d);
  void Report(const std::string& metadata, OracleStream& stream);

  std::vector<Difference> differences_;
  std::deque<OracleTable> tables_;  // every table a Difference points at
  std::set<std::pair<std::string, std::string>> pairs_;
  uint64_t values_compared_ = 0, rows_compared_ = 0, tables_compared_ = 0;
  int minimized_ = 0;
};

void ValueOracle::Run(const std::string& metadata, uint64_t default_seed) {
  const uint64_t seed = EnvNumber("CANAL_VALUE_ORACLE_SEED", default_seed);
  const std::string schema = "vo_" + metadata;
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = " + metadata + "; DROP DATABASE IF EXISTS " + schema +
                  "; CREATE DATABASE " + schema));
  ValueOracleTables generator(seed);
  const uint64_t wanted = EnvNumber("CANAL_VALUE_ORACLE_TABLES", 0);
  for (int circuit = 1; tables_.empty() || tables_.size() < wanted; ++circuit) {
    const std::string prefix = "t" + std::to_string(circuit) + "_";
    for (auto& t : generator.CoveringTables(schema, prefix, kColumnsPerTable)) tables_.push_back(std::move(t));
    for (int i = 1; i <= kRandomTablesPerCircuit; ++i) {
      tables_.push_back(generator.RandomTable(schema, "r" + std::to_string(circuit) + "_" + std::to_string(i),
                                              1 + static_cast<int>((seed + static_cast<uint64_t>(i) * 7) % 40)));
    }
  }
  if (wanted > 0 && tables_.size() > wanted) tables_.resize(wanted);
  const size_t generated = tables_.size();

  const auto start = Clock::now();
  OracleStream stream(*sandbox_, schema, metadata);
  ASSERT_TRUE(stream.Start());
  for (size_t i = 0; i < generated; ++i) {
    CheckTable(stream, tables_[i], kRowsPerTable, &differences_);
    if (HasFatalFailure()) return;
  }
  const double seconds = SecondsSince(start);
  const size_t kinds = ValueOracleTables::Kinds().size();
  std::printf("[ oracle ] %s metadata, seed %llu: %llu tables, %llu rows, %llu values compared with MariaDB's SELECT "
              "in %.1f s (%d server starts); (predecessor, kind) pairs covered: %zu of %zu; %zu differences\n",
              metadata.c_str(), static_cast<unsigned long long>(seed), static_cast<unsigned long long>(tables_compared_),
              static_cast<unsigned long long>(rows_compared_), static_cast<unsigned long long>(values_compared_),
              seconds, stream.starts(), pairs_.size(), kinds * kinds, differences_.size());
  Report(metadata, stream);
}

void ValueOracle::CheckTable(OracleStream& stream, const OracleTable& t, int rows, std::vector<Difference>* out) {
  std::string select;
  const std::string sql = "SET time_zone = '+00:00'; " + t.CreateSql() + "; " + t.InsertSql(rows) + "; " +
                          t.ColumnTypesSql() + "; " + t.SelectSql() + ";";
  if (!sandbox_->Sql(sql, &select)) {
    ADD_FAILURE() << "MariaDB refused a generated table (a generator bug): " << sandbox_->error() << "\n" << sql;
    return;
  }
  std::string error;
  // A stop shows in the server's log at once; the timeout only catches a stream that hangs.
  if (!stream.WaitForRows(t.name, static_cast<size_t>(rows), 30s, &error)) {
    Difference d;
    d.field = "stopped";
    d.kind = "(table)";
    d.table = &t;
    d.expected = std::to_string(rows) + " rows";
    d.got = std::to_string(stream.Rows(t.name).size()) + " rows; " + (error.empty() ? "" : error + "; ") +
            "server log: " + stream.LogErrors();
    out->push_back(d);
    ASSERT_TRUE(stream.Start());  // past the table that stopped the destination
    return;
  }
  Compare(t, rows, select, stream.Rows(t.name), out);
}

void ValueOracle::Compare(const OracleTable& t, int rows, const std::string& select_output,
                          const std::map<int64_t, ReceivedRow>& received, std::vector<Difference>* out) {
  std::vector<std::string> column_types;
  std::vector<std::vector<std::string>> expected_rows;
  for (const std::string& line : Split(select_output, '\n')) {
    std::vector<std::string> f = Split(line, '\t');
    if (f.size() == 3 && f[0] == "COL") column_types.push_back(Unhex(f[2]));
    if (f.size() == t.columns.size() + 2 && f[0] == "ROW") expected_rows.push_back(std::move(f));
  }
  if (column_types.size() != t.columns.size() || expected_rows.size() != static_cast<size_t>(rows)) {
    ADD_FAILURE() << t.name << ": MariaDB's SELECT gave " << column_types.size() << " column types and "
                  << expected_rows.size() << " rows:\n" << select_output;
    return;
  }
  auto add = [&](const OracleColumn& c, size_t i, int64_t id, std::string field, std::string expected, std::string got) {
    Difference d;
    d.field = std::move(field);
    d.kind = c.kind;
    d.predecessor = i > 0 ? t.columns[i - 1].kind : "(first)";
    d.table = &t;
    d.column = c.name;
    d.row = id;
    d.expected = std::move(expected);
    d.got = std::move(got);
    out->push_back(std::move(d));
  };
  for (const auto& expected : expected_rows) {
    const int64_t id = std::strtoll(expected[1].c_str(), nullptr, 10);
    const auto it = received.find(id);
    if (it == received.end()) {
      add(t.columns[0], 0, id, "missing", "row id " + expected[1], "no such row");
      continue;
    }
    const ReceivedRow& got_row = it->second;
    ++rows_compared_;
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const OracleColumn& c = t.columns[i];
      if (i >= got_row.size() || got_row[i].name != c.name) {
        add(c, i, id, "missing", "column " + c.name + " at " + std::to_string(i),
            i < got_row.size() ? "column " + Printable(got_row[i].name) : "none");
        continue;
      }
      const ReceivedColumn& got = got_row[i];
      ++values_compared_;
      const std::string& hex = expected[i + 2];
      const bool is_null = hex == "NULL";
      const std::string text = is_null ? "" : Unhex(hex);
      for (const std::string* s : {&got.name, &got.value, &got.mysql_type}) {
        if (!IsValidUtf8(*s)) add(c, i, id, "utf8", "valid UTF-8", Printable(*s));
      }
      if (got.is_null != is_null) {
        add(c, i, id, "isNull", is_null ? "true" : "false", got.is_null ? "true" : "false");
      } else if (!is_null) {
        bool same = false;
        std::string want = text;
        switch (c.compare) {
          case OracleCompare::kText: same = got.value == text; break;
          case OracleCompare::kLatin1Bytes: want = Latin1ToUtf8(text); same = got.value == want; break;
          case OracleCompare::kFloat:
          case OracleCompare::kDouble: same = NumbersMatch(text, got.value, c.compare); break;
        }
        if (!same) add(c, i, id, ValueField(c, want, got.value), Printable(want), Printable(got.value));
      } else if (!got.value.empty()) {
        add(c, i, id, "value", "\"\" (NULL)", Printable(got.value));
      }
      const int sql_type = CanalSqlTypeOf(c, is_null, text);
      if (got.sql_type != sql_type) {
        add(c, i, id, "sqlType", std::to_string(sql_type) + (is_null ? " (NULL)" : " for " + Printable(text)),
            std::to_string(got.sql_type));
      }
      if (got.mysql_type != column_types[i]) add(c, i, id, "mysqlType", column_types[i], Printable(got.mysql_type));
    }
  }
  ++tables_compared_;
  for (size_t i = 1; i < t.columns.size(); ++i) pairs_.insert({t.columns[i - 1].kind, t.columns[i].kind});
}

std::optional<Difference> ValueOracle::Minimize(OracleStream& stream, const Difference& d) {
  // One row: the row that differed (for a table that stopped, its first).
  OracleTable t = *d.table;
  const int64_t row = d.row > 0 ? d.row : 1;
  for (OracleColumn& c : t.columns) {
    if (c.name != "id") c.values = {c.values[static_cast<size_t>(row - 1) % c.values.size()]};
  }
  auto recurs = [&](const OracleTable& candidate) -> std::optional<Difference> {
    tables_.push_back(candidate);
    tables_.back().name = "m" + std::to_string(++minimized_);
    std::vector<Difference> found;
    CheckTable(stream, tables_.back(), 1, &found);
    for (const Difference& f : found) {
      if (f.field == d.field && f.column == d.column) return f;
    }
    return std::nullopt;
  };
  std::optional<Difference> smallest = recurs(t);
  // Drop every other column in turn, the last first.
  for (size_t i = t.columns.size(); smallest && i-- > 0 && !HasFatalFailure();) {
    if (t.columns[i].name == "id" || t.columns[i].name == d.column) continue;
    OracleTable candidate = *smallest->table;
    const auto at = std::find_if(candidate.columns.begin(), candidate.columns.end(),
                                 [&](const OracleColumn& c) { return c.name == t.columns[i].name; });
    if (at == candidate.columns.end()) continue;
    candidate.columns.erase(at);
    if (std::optional<Difference> smaller = recurs(candidate)) smallest = std::move(smaller);
  }
  return smallest;
}

// Differences grouped by (field, kind); each class with its count, the
// predecessors it was seen after, and its first example.
void ValueOracle::Report(const std::string& metadata, OracleStream& stream) {
  struct Class {
    size_t count = 0;
    std::set<std::string> predecessors;
    const Difference* first = nullptr;
  };
  std::map<std::pair<std::string, std::string>, Class> classes;
  for (const Difference& d : differences_) {
    Class& c = classes[{d.field, d.kind}];
    if (c.first == nullptr) c.first = &d;
    ++c.count;
    c.predecessors.insert(d.predecessor);
  }
  // CANAL_VALUE_ORACLE_MINIMIZE=n: the first n classes also get their smallest reproducing table.
  uint64_t minimize = EnvNumber("CANAL_VALUE_ORACLE_MINIMIZE", 0);
  std::string text;
  for (const auto& [key, c] : classes) {
    const Difference& d = *c.first;
    text += "\n== " + metadata + " " + key.first + " of " + key.second + ": " + std::to_string(c.count) + " (after";
    size_t shown = 0;
    for (const auto& p : c.predecessors) {
      if (++shown > 12) {
        text += " ...";
        break;
      }
      text += " " + p;
    }
    text += ")\n   e.g. " + d.table->name + "." + d.column + " row " + std::to_string(d.row) + ": expected " +
            d.expected + ", got " + d.got + "\n   " + d.table->CreateSql() + ";\n   " +
            Printable(d.table->InsertSql(kRowsPerTable)).substr(0, 800) + "\n";
    if (minimize > 0) {
      --minimize;
      if (const std::optional<Difference> m = Minimize(stream, d)) {
        text += "   smallest: " + m->table->name + "." + m->column + ": expected " + m->expected + ", got " + m->got +
                "\n   " + m->table->CreateSql() + ";\n   " + Printable(m->table->InsertSql(1)) + ";\n";
      } else {
        text += "   (does not recur on its own row)\n";
      }
    }
  }
  if (!text.empty()) std::printf("%s\n", text.c_str());
  EXPECT_TRUE(differences_.empty()) << differences_.size() << " differences in " << classes.size()
                                    << " classes (listed above)";
}

TEST_F(ValueOracle, FullMetadataRowsEqualMariadbsSelect) { Run("FULL", 31); }

TEST_F(ValueOracle, MinimalMetadataRowsEqualMariadbsSelect) { Run("MINIMAL", 32); }

}  // namespace
}  // namespace canal::testing
