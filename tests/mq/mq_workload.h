// What the MQ integration tests (Kafka, RabbitMQ) write to MariaDB and how
// they judge what the broker received, in either form (flat JSON, protobuf
// Packet).
//
// The workload: inserts, multi-row updates, deletes, a NULL, a DDL and a
// second table, on mqdb.users (id, name, score) and mqdb.orders (oid, uid,
// amount). ExpectedChanges() is the change sequence of every key.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace canal::mq::testing {

// (Re)creates the two tables; run before the destination's start position.
std::string WorkloadSetupSql();
// The changes, one statement per line.
std::string WorkloadSql();

// One changed row (or a DDL) as a broker message carried it.
struct Change {
  std::string table;  // "users", "orders"
  std::string key;    // the primary key's value; "" for a DDL
  std::string type;   // INSERT, UPDATE, DELETE, ALTER, ...
  bool ddl = false;
  std::string sql;
  nlohmann::json data;  // column -> value (null for NULL)
  nlohmann::json old;   // UPDATE: the changed columns' old values (flat form); null otherwise
  int32_t partition = 0;
};

// "users/1" -> {"INSERT", "UPDATE", ...}
std::map<std::string, std::vector<std::string>> ExpectedChanges();

// Appends the changes a message carries; false with *error for a payload
// that is not what the form says.
bool ParseChanges(const std::string& payload, bool flat, int32_t partition, std::vector<Change>* out,
                  std::string* error);

// The load table's rows (load_table.h) a message carries, as row numbers.
bool ParseLoadRows(const std::string& payload, bool flat, int rows_per_txn, std::vector<int64_t>* rows,
                   std::string* error);

// Judges a stream of load rows (one partition or queue, in arrival order)
// against 0..expected-1: "" when every row came and the first arrivals are in
// order; duplicates (repeats of rows already seen) are counted in *duplicates.
std::string JudgeStream(const std::vector<int64_t>& rows, int64_t expected, int64_t* duplicates);

}  // namespace canal::mq::testing
