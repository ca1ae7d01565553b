// A random DDL and row generator for the randomized schema-history test
//. It keeps its own model of each table (column names and value
// kinds, the rows' keys, whether `id` is the primary key) so that what it
// writes is valid; the server remains the judge: a statement it refuses is
// dropped (Discard) and the model keeps its previous state.
//
// Everything it produces depends only on the seed and on which statements the
// server accepted, so the same seed run in two databases writes the same SQL.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace canal::testing {

enum class ValueKind {
  kInt, kUint, kDecimal, kDouble, kText, kBlob, kDatetime, kDate, kTime, kYear, kEnum, kSet, kBit
};

struct ModelColumn {
  std::string name;
  ValueKind kind = ValueKind::kInt;
};

struct ModelTable {
  std::string name;
  std::vector<ModelColumn> columns;  // `id` (INT NOT NULL) is always one of them
  std::vector<int> ids;              // the keys of the rows the table holds
  bool has_pk = true;                // whether `id` is the primary key
};

class DdlGenerator {
 public:
  explicit DdlGenerator(uint32_t seed);

  // CREATE TABLE statements for the starting tables (already in the model).
  std::vector<std::string> Setup() const;

  // One DDL statement; the model changes only when Accept() is called.
  std::string Next();
  void Accept() { state_ = pending_; }

  // 1..3 row changes (INSERT/UPDATE/DELETE) on random tables, filling every
  // column with a random value of its kind or NULL; the model is updated at
  // once (the caller asserts the server ran them). Counts what it wrote.
  std::string RowChanges();
  int inserts() const { return inserts_; }
  int updates() const { return updates_; }
  int deletes() const { return deletes_; }

  const std::vector<ModelTable>& tables() const { return state_.tables; }

 private:
  struct State {
    std::vector<ModelTable> tables;
    std::vector<std::string> dropped;  // names to create again
  };
  struct Type {
    std::string sql;
    ValueKind kind;
  };

  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  std::string Comment();
  std::string Charset();
  Type RandomType();
  std::string Value(ValueKind kind);
  std::string Position(std::vector<ModelColumn>* cols, const ModelColumn& col);
  std::string Clause(ModelTable* t);
  bool Existed(const std::string& column) const;
  std::string RenameSwap();
  std::string Recreate();
  std::string Insert(ModelTable* t);

  std::mt19937 rng_;
  State state_, pending_;
  const ModelTable* before_ = nullptr;  // the altered table as it was before the statement
  int next_column_ = 0;
  int next_id_ = 0;
  int inserts_ = 0, updates_ = 0, deletes_ = 0;
};

}  // namespace canal::testing
