#include "support/ddl_generator.h"

#include <algorithm>
#include <utility>

namespace canal::testing {

DdlGenerator::DdlGenerator(uint32_t seed) : rng_(seed) {
  for (int i = 0; i < 4; ++i) state_.tables.push_back({"t" + std::to_string(i), {{"id", ValueKind::kInt}}, {}, true});
  pending_ = state_;
}

std::vector<std::string> DdlGenerator::Setup() const {
  std::vector<std::string> out;
  for (const auto& t : state_.tables) {
    out.push_back("CREATE TABLE " + t.name + " (id INT NOT NULL PRIMARY KEY) DEFAULT CHARSET=latin1");
  }
  return out;
}

std::string DdlGenerator::Comment() {
  switch (Pick(5)) {
    case 0: return "/* gen */ ";
    case 1: return "-- gen\n";
    case 2: return "# gen\n";
    default: return "";
  }
}

std::string DdlGenerator::Charset() {
  static const char* kCharsets[] = {"latin1", "utf8mb4", "gbk", "big5", "cp1251", "sjis"};
  return kCharsets[Pick(6)];
}

DdlGenerator::Type DdlGenerator::RandomType() {
  using K = ValueKind;
  switch (Pick(28)) {
    case 0: return {"INT", K::kInt};
    case 1: return {"INT UNSIGNED", K::kUint};
    case 2: return {"BIGINT", K::kInt};
    case 3: return {"BIGINT UNSIGNED", K::kUint};
    case 4: return {"TINYINT", K::kInt};
    case 5: return {"TINYINT UNSIGNED", K::kUint};
    case 6: return {"SMALLINT UNSIGNED ZEROFILL", K::kUint};
    case 7: return {"MEDIUMINT", K::kInt};
    case 8: return {"DECIMAL(" + std::to_string(5 + Pick(20)) + ",2)", K::kDecimal};
    case 9: return {"DECIMAL(12,4) UNSIGNED", K::kDecimal};
    case 10: return {"DOUBLE", K::kDouble};
    case 11: return {"VARCHAR(" + std::to_string(1 + Pick(60)) + ")", K::kText};  // the table's charset
    case 12: return {"VARCHAR(20) CHARACTER SET utf8mb4", K::kText};
    case 13: return {"VARCHAR(12) CHARACTER SET latin1", K::kText};
    case 14: return {"VARCHAR(10) CHARACTER SET " + Charset(), K::kText};
    case 15: return {"CHAR(3) COLLATE utf8mb4_bin", K::kText};
    case 16: return {"CHAR(5) CHARACTER SET latin1", K::kText};
    case 17: return {"TEXT", K::kText};
    case 18: return {"TEXT CHARACTER SET utf8mb4", K::kText};
    case 19: return {"BLOB", K::kBlob};
    case 20: return {"DATETIME(3)", K::kDatetime};
    case 21: return {"DATETIME", K::kDatetime};
    case 22: return {"DATE", K::kDate};
    case 23: return {"TIME", K::kTime};
    case 24: return {"YEAR", K::kYear};
    case 25: return {"ENUM('a','b','it''s')", K::kEnum};
    case 26: return {"SET('x','y')", K::kSet};
    default: return {"BIT(5)", K::kBit};
  }
}

std::string DdlGenerator::Value(ValueKind kind) {
  if (Pick(8) == 0) return "NULL";
  auto num = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); };
  switch (kind) {
    case ValueKind::kInt: {
      static const char* kEdges[] = {"-9223372036854775808", "-2147483648", "-128", "-1", "0", "127", "2147483647"};
      return Pick(3) == 0 ? kEdges[Pick(7)] : std::to_string(num(-1000000, 1000000));
    }
    case ValueKind::kUint: {
      static const char* kEdges[] = {"0", "255", "65535", "4294967295", "18446744073709551615"};
      return Pick(3) == 0 ? kEdges[Pick(5)] : std::to_string(num(0, 5000000));
    }
    case ValueKind::kDecimal:
      return std::string(Pick(3) == 0 ? "-" : "") + std::to_string(num(0, 99999999)) + "." +
             std::to_string(num(10, 99));
    case ValueKind::kDouble: {
      static const char* kDoubles[] = {"0", "-1.5", "3.25e10", "1e-5", "123456.75", "-0.125"};
      return kDoubles[Pick(6)];
    }
    case ValueKind::kText:
    case ValueKind::kBlob: {
      // ASCII, Latin-1, CJK, Cyrillic, a 4-byte emoji, quotes, a backslash.
      static const char* kTexts[] = {"''", "'abc'", "'café'", "'naïve Ünïcode'", "'你好'", "'😀 emoji'",
                                     "'it''s'", "'a\\\\b'", "'Привет'", "'x y z'"};
      if (kind == ValueKind::kBlob && Pick(3) == 0) return "x'00ff10'";
      return kTexts[Pick(10)];
    }
    case ValueKind::kDatetime: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "'%04d-%02d-%02d %02d:%02d:%02d.%03d'", static_cast<int>(num(1000, 9999)),
                    static_cast<int>(num(1, 12)), static_cast<int>(num(1, 28)), static_cast<int>(num(0, 23)),
                    static_cast<int>(num(0, 59)), static_cast<int>(num(0, 59)), static_cast<int>(num(0, 999)));
      return buf;
    }
    case ValueKind::kDate: {
      char buf[24];
      std::snprintf(buf, sizeof buf, "'%04d-%02d-%02d'", static_cast<int>(num(1000, 9999)),
                    static_cast<int>(num(1, 12)), static_cast<int>(num(1, 28)));
      return buf;
    }
    case ValueKind::kTime: {
      static const char* kTimes[] = {"'-838:59:59'", "'838:59:59'", "'00:00:00'", "'12:34:56'", "'-01:02:03'"};
      return kTimes[Pick(5)];
    }
    case ValueKind::kYear: return std::to_string(num(1901, 2155));
    case ValueKind::kEnum: {
      static const char* kLabels[] = {"'a'", "'b'", "'it''s'"};
      return kLabels[Pick(3)];
    }
    case ValueKind::kSet: {
      static const char* kSets[] = {"''", "'x'", "'y'", "'x,y'"};
      return kSets[Pick(4)];
    }
    case ValueKind::kBit: return std::to_string(num(0, 31));
  }
  return "NULL";
}

std::string DdlGenerator::Position(std::vector<ModelColumn>* cols, const ModelColumn& col) {
  const size_t p = Pick(5);
  if (p == 0 && !cols->empty()) {
    cols->insert(cols->begin(), col);
    return " FIRST";
  }
  if (p <= 2 && !cols->empty()) {
    const size_t after = Pick(cols->size());
    const std::string name = (*cols)[after].name;
    cols->insert(cols->begin() + static_cast<long>(after) + 1, col);
    return " AFTER `" + name + "`";
  }
  cols->push_back(col);
  return "";
}

// MariaDB checks a column clause's IF EXISTS against the table as it was
// before the statement: a column renamed or added by an earlier clause of the
// same ALTER does not exist for it, and the clause is skipped.
bool DdlGenerator::Existed(const std::string& column) const {
  return std::any_of(before_->columns.begin(), before_->columns.end(),
                     [&](const ModelColumn& c) { return c.name == column; });
}

std::string DdlGenerator::Clause(ModelTable* t) {
  const size_t kind = Pick(15);
  std::vector<ModelColumn>& cols = t->columns;
  if (kind == 13) return "ADD INDEX ix" + std::to_string(next_column_++) + " (id)";  // no column change
  if (kind == 14) {  // MariaDB's parenthesized list: appended in order
    const Type a = RandomType(), b = RandomType();
    const ModelColumn ca{"c" + std::to_string(next_column_++), a.kind};
    const ModelColumn cb{"c" + std::to_string(next_column_++), b.kind};
    cols.push_back(ca);
    cols.push_back(cb);
    return "ADD COLUMN (" + ca.name + " " + a.sql + ", " + cb.name + " " + b.sql + ")";
  }
  if (kind == 11) {  // the primary key on and off
    t->has_pk = !t->has_pk;
    return t->has_pk ? "ADD PRIMARY KEY (id)" : "DROP PRIMARY KEY";
  }
  if (kind < 4 || cols.size() < 3) {
    const Type type = RandomType();
    const ModelColumn col{"c" + std::to_string(next_column_++), type.kind};
    static const char* kAdd[] = {"ADD ", "ADD COLUMN ", "ADD COLUMN IF NOT EXISTS "};
    std::string sql = kAdd[Pick(3)] + col.name + " " + type.sql;
    return sql + Position(&cols, col);
  }
  // Any column but the key.
  std::vector<size_t> others;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (cols[i].name != "id") others.push_back(i);
  }
  const size_t victim = others[Pick(others.size())];
  const ModelColumn old = cols[victim];
  if (kind == 12) {  // ALTER ... DEFAULT: no column change, but the parser must accept it
    const std::string head = std::string(Pick(2) ? "ALTER COLUMN " : "ALTER ") + old.name;
    return Pick(3) == 0 ? head + " DROP DEFAULT" : head + " SET DEFAULT " + Value(old.kind);
  }
  if (kind < 6) {
    static const char* kDrop[] = {"DROP ", "DROP COLUMN ", "DROP COLUMN IF EXISTS "};
    const size_t form = Pick(3);
    if (form == 2 && !Existed(old.name)) return kDrop[form] + ("`" + old.name + "`");  // skipped: see Existed
    cols.erase(cols.begin() + static_cast<long>(victim));
    return kDrop[form] + ("`" + old.name + "`");
  }
  if (kind < 8) {
    const Type type = RandomType();
    cols.erase(cols.begin() + static_cast<long>(victim));
    const std::string head = Pick(2) ? "MODIFY " : "MODIFY COLUMN ";
    return head + old.name + " " + type.sql + Position(&cols, {old.name, type.kind});
  }
  const std::string renamed = "r" + std::to_string(next_column_++);
  if (kind < 9 || kind == 10) {
    cols[victim].name = renamed;
    return "RENAME COLUMN " + old.name + " TO " + renamed;
  }
  const Type type = RandomType();
  const bool if_exists = Pick(2) == 0;
  const std::string head = if_exists ? "CHANGE COLUMN IF EXISTS " : "CHANGE ";
  if (if_exists && !Existed(old.name)) {
    return head + old.name + " " + renamed + " " + type.sql;  // skipped: see Existed
  }
  cols.erase(cols.begin() + static_cast<long>(victim));
  return head + old.name + " " + renamed + " " + type.sql + Position(&cols, {renamed, type.kind});
}

std::string DdlGenerator::RenameSwap() {
  auto& tables = pending_.tables;
  const size_t a = Pick(tables.size());
  size_t b = Pick(tables.size());
  if (a == b) b = (a + 1) % tables.size();
  std::swap(tables[a], tables[b]);
  std::swap(tables[a].name, tables[b].name);  // the contents move, the names stay
  return "RENAME TABLE " + tables[b].name + " TO tmp_swap, " + tables[a].name + " TO " + tables[b].name +
         ", tmp_swap TO " + tables[a].name;
}

// A dropped table comes back, as a copy of another (LIKE) or with new columns.
std::string DdlGenerator::Recreate() {
  ModelTable t;
  t.name = pending_.dropped.back();
  pending_.dropped.pop_back();
  std::string sql;
  if (Pick(2) == 0) {
    const ModelTable& like = pending_.tables[Pick(pending_.tables.size())];
    t.columns = like.columns;
    t.has_pk = like.has_pk;
    sql = "CREATE TABLE " + std::string(Pick(2) ? "IF NOT EXISTS " : "") + t.name + " LIKE `" + like.name + "`";
  } else {
    sql = "CREATE TABLE " + t.name + " (id INT NOT NULL";
    t.columns.push_back({"id", ValueKind::kInt});
    for (size_t i = 0, n = Pick(4); i < n; ++i) {
      const Type type = RandomType();
      t.columns.push_back({"c" + std::to_string(next_column_++), type.kind});
      sql += ", " + t.columns.back().name + " " + type.sql;
    }
    sql += ", PRIMARY KEY (id)) DEFAULT CHARSET=" + Charset();
  }
  pending_.tables.push_back(std::move(t));
  return Comment() + sql;
}

std::string DdlGenerator::Next() {
  pending_ = state_;
  if (!pending_.dropped.empty()) return Recreate();
  const size_t index = Pick(pending_.tables.size());
  ModelTable& t = pending_.tables[index];
  before_ = &state_.tables[index];
  const int kind = static_cast<int>(Pick(100));
  if (kind < 5 && pending_.tables.size() > 2) {
    const std::string name = t.name;
    pending_.dropped.push_back(name);
    std::erase_if(pending_.tables, [&](const ModelTable& m) { return m.name == name; });
    return Comment() + "DROP TABLE " + std::string(Pick(2) ? "IF EXISTS " : "") + "`" + name + "`";
  }
  if (kind < 12) return Comment() + RenameSwap();
  if (kind < 15) return Comment() + "ALTER TABLE `" + t.name + "` CONVERT TO CHARACTER SET " + Charset();
  if (kind < 18) return "ALTER TABLE " + t.name + " DEFAULT CHARSET = " + Charset();
  std::string sql = Comment() + "ALTER TABLE `" + t.name + "` ";
  const size_t clauses = 1 + Pick(3);
  for (size_t i = 0; i < clauses; ++i) {
    if (i > 0) sql += ", ";
    sql += Clause(&t);
  }
  if (Pick(8) == 0) sql += ", ALGORITHM = COPY, LOCK = DEFAULT";
  return sql;
}

std::string DdlGenerator::Insert(ModelTable* t) {
  const int id = ++next_id_;
  std::string names, values;
  for (const ModelColumn& c : t->columns) {
    if (!names.empty()) names += ", ", values += ", ";
    names += "`" + c.name + "`";
    values += c.name == "id" ? std::to_string(id) : Value(c.kind);
  }
  t->ids.push_back(id);
  ++inserts_;
  return "INSERT INTO `" + t->name + "` (" + names + ") VALUES (" + values + ");\n";
}

std::string DdlGenerator::RowChanges() {
  std::string sql;
  for (size_t n = 1 + Pick(3); n > 0; --n) {
    ModelTable& t = state_.tables[Pick(state_.tables.size())];
    const size_t op = Pick(10);
    if (t.ids.empty() || op < 5 || (op < 8 && t.columns.size() < 2)) {
      sql += Insert(&t);
      continue;
    }
    const size_t row = Pick(t.ids.size());
    const std::string where = " WHERE id = " + std::to_string(t.ids[row]) + ";\n";
    if (op >= 8) {
      t.ids.erase(t.ids.begin() + static_cast<long>(row));
      ++deletes_;
      sql += "DELETE FROM `" + t.name + "`" + where;
      continue;
    }
    std::string set;
    for (const ModelColumn& c : t.columns) {
      if (c.name == "id") continue;
      set += (set.empty() ? "" : ", ") + ("`" + c.name + "` = ") + Value(c.kind);
    }
    ++updates_;
    sql += "UPDATE `" + t.name + "` SET " + set + where;
  }
  pending_ = state_;
  return sql;
}

}  // namespace canal::testing
