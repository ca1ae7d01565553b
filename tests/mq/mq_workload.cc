#include "mq/mq_workload.h"

#include "canal/entry.pb.h"
#include "canal/packet.pb.h"
#include "support/load_table.h"

namespace canal::mq::testing {

std::string WorkloadSetupSql() {
  return "CREATE DATABASE IF NOT EXISTS mqdb; DROP TABLE IF EXISTS mqdb.users, mqdb.orders; "
         "CREATE TABLE mqdb.users (id INT PRIMARY KEY, name VARCHAR(32), score DECIMAL(10,2)); "
         "CREATE TABLE mqdb.orders (oid INT PRIMARY KEY, uid INT, amount INT);";
}

std::string WorkloadSql() {
  std::string values;
  for (int i = 1; i <= 12; ++i) {
    values += (i == 1 ? "" : ",") + ("(" + std::to_string(i) + ",'u" + std::to_string(i) + "'," + std::to_string(i) +
                                     ".00)");
  }
  return "INSERT INTO mqdb.users VALUES " + values +
         ";\n"
         "UPDATE mqdb.users SET score = score + 10 WHERE id <= 6;\n"
         "DELETE FROM mqdb.users WHERE id IN (3, 9);\n"
         "INSERT INTO mqdb.orders VALUES (100, 1, 5), (101, 2, 7);\n"
         "UPDATE mqdb.users SET name = NULL WHERE id = 1;\n"
         "ALTER TABLE mqdb.users ADD COLUMN note VARCHAR(8);\n"
         "INSERT INTO mqdb.users VALUES (13, 'u13', 13.00, 'n');\n"
         "UPDATE mqdb.orders SET amount = 9 WHERE oid = 100;\n";
}

std::map<std::string, std::vector<std::string>> ExpectedChanges() {
  std::map<std::string, std::vector<std::string>> e;
  for (int i = 1; i <= 12; ++i) e["users/" + std::to_string(i)].push_back("INSERT");
  for (int i = 1; i <= 6; ++i) e["users/" + std::to_string(i)].push_back("UPDATE");
  e["users/3"].push_back("DELETE");
  e["users/9"].push_back("DELETE");
  e["orders/100"] = {"INSERT", "UPDATE"};
  e["orders/101"] = {"INSERT"};
  e["users/1"].push_back("UPDATE");
  e["users/13"] = {"INSERT"};
  return e;
}

namespace {

// The key column of the workload's tables and of the load table.
std::string KeyColumn(const std::string& table) { return table == "orders" ? "oid" : "id"; }

bool ParseFlat(const std::string& payload, int32_t partition, std::vector<Change>* out, std::string* error) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "not JSON: " + payload.substr(0, 200);
    return false;
  }
  if (j["isDdl"] == true) {
    Change c;
    c.table = j["table"];
    c.type = j["type"];
    c.ddl = true;
    c.sql = j["sql"];
    c.partition = partition;
    out->push_back(std::move(c));
    return true;
  }
  const std::string table = j["table"];
  const nlohmann::json& data = j["data"];
  const nlohmann::json& old = j["old"];
  for (size_t i = 0; i < data.size(); ++i) {
    Change c;
    c.table = table;
    c.type = j["type"];
    c.data = data[i];
    c.key = data[i].value(KeyColumn(table), std::string());
    if (old.is_array() && i < old.size()) c.old = old[i];
    c.partition = partition;
    out->push_back(std::move(c));
  }
  return true;
}

bool ParseProtobuf(const std::string& payload, int32_t partition, std::vector<Change>* out, std::string* error) {
  canal::protocol::Packet p;
  canal::protocol::Messages m;
  if (!p.ParseFromString(payload) || p.type() != canal::protocol::MESSAGES || !m.ParseFromString(p.body())) {
    *error = "not a Packet{MESSAGES}";
    return false;
  }
  for (const std::string& bytes : m.messages()) {
    canal::entry::Entry e;
    canal::entry::RowChange rc;
    if (!e.ParseFromString(bytes)) {
      *error = "an entry does not parse";
      return false;
    }
    if (e.entrytype() != canal::entry::ROWDATA) continue;
    if (!rc.ParseFromString(e.storevalue())) {
      *error = "a RowChange does not parse";
      return false;
    }
    const std::string type = canal::entry::EventType_Name(rc.eventtype());
    if (rc.isddl()) {
      Change c;
      c.table = e.header().tablename();
      c.type = type;
      c.ddl = true;
      c.sql = rc.sql();
      c.partition = partition;
      out->push_back(std::move(c));
      continue;
    }
    for (const auto& row : rc.rowdatas()) {
      Change c;
      c.table = e.header().tablename();
      c.type = type;
      c.partition = partition;
      const auto& cols = rc.eventtype() == canal::entry::DELETE ? row.beforecolumns() : row.aftercolumns();
      c.data = nlohmann::json::object();
      for (const auto& col : cols) {
        c.data[col.name()] = col.isnull() ? nlohmann::json() : nlohmann::json(col.value());
        if (col.name() == KeyColumn(c.table)) c.key = col.value();
      }
      out->push_back(std::move(c));
    }
  }
  return true;
}

}  // namespace

bool ParseChanges(const std::string& payload, bool flat, int32_t partition, std::vector<Change>* out,
                  std::string* error) {
  return flat ? ParseFlat(payload, partition, out, error) : ParseProtobuf(payload, partition, out, error);
}

bool ParseLoadRows(const std::string& payload, bool flat, int rows_per_txn, std::vector<int64_t>* rows,
                   std::string* error) {
  std::vector<Change> changes;
  if (!ParseChanges(payload, flat, 0, &changes, error)) return false;
  for (const Change& c : changes) {
    if (c.ddl || c.type != "INSERT") continue;
    const std::string txn = c.data.value("txn", std::string()), seq = c.data.value("seq", std::string());
    const int64_t n = canal::testing::LoadRowNumber(txn, seq, rows_per_txn);
    if (n < 0) {
      *error = "not a load row: " + c.data.dump();
      return false;
    }
    rows->push_back(n);
  }
  return true;
}

std::string JudgeStream(const std::vector<int64_t>& rows, int64_t expected, int64_t* duplicates) {
  std::vector<uint8_t> seen(static_cast<size_t>(expected), 0);
  int64_t highest = -1, out_of_order = 0, foreign = 0, distinct = 0;
  *duplicates = 0;
  for (int64_t r : rows) {
    if (r < 0 || r >= expected) {
      ++foreign;
      continue;
    }
    if (seen[r]) {
      ++*duplicates;
      continue;
    }
    seen[r] = 1;
    ++distinct;
    if (r < highest) ++out_of_order;
    highest = std::max(highest, r);
  }
  std::string faults;
  auto add = [&](int64_t n, const char* what) {
    if (n != 0) faults += (faults.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(expected - distinct, "missing");
  add(out_of_order, "out of order");
  add(foreign, "foreign");
  return faults;
}

}  // namespace canal::mq::testing
