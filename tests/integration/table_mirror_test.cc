// The mirror oracle (support/table_mirror.h, support/table_compare.h) tested
// on its own: a random workload over many column kinds and key shapes goes
// through the real canal-server and the C++ SDK into TableMirror on a second
// MariaDB, and CompareTables finds both servers' tables equal; the comparator
// fails where a mirror row, a row, a column or a table differs; snapshot rows
// are upserts counted with their repeats; an error names its entry.
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_test_names.h"
#include "support/mariadb_sandbox.h"
#include "support/mirror_suite.h"
#include "support/server_suite.h"
#include "support/sql_session.h"
#include "support/table_compare.h"
#include "support/table_mirror.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

constexpr uint16_t kSourcePort = TestPort("mirror");
constexpr uint16_t kMirrorPort = TestPort("mirror", 1);
constexpr uint16_t kServerPort = TestPort("mirror", 2);

// ---- Literals -----------------------------------------------------------------

std::string Utf8(const std::string& text) { return "_utf8mb4 X'" + HexDigits(text) + "'"; }
std::string Latin1(const std::string& bytes) { return "_latin1 X'" + HexDigits(bytes) + "'"; }
std::string Binary(const std::string& bytes) { return "X'" + HexDigits(bytes) + "'"; }
std::string Quoted(const std::string& ascii) { return "'" + ascii + "'"; }

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  char buf[128];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

// ---- The random workload ------------------------------------------------------

// SQL over tables that cover many column kinds and key shapes, generated
// from a model of which keys are live, so that every statement succeeds and
// INSERT / UPDATE (key changes too) / DELETE all hit rows.
class Workload {
 public:
  using Rng = std::mt19937_64;
  static constexpr const char* kSchema = "mirror_db";
  static constexpr const char* kMarkerTable = "done";

  explicit Workload(uint64_t seed) : rng_(seed) {}

  // CREATE DATABASE and the tables.
  std::string CreateTables();
  // `steps` transactions of 1-4 statements, or autocommitted statements.
  std::string Steps(int steps) {
    std::string sql;
    for (int i = 0; i < steps; ++i) {
      const int n = Rand(3) == 0 ? 1 + Rand(4) : 0;
      if (n == 0) {
        sql += Statement() + ";\n";
        continue;
      }
      sql += "BEGIN;\n";
      for (int k = 0; k < n; ++k) sql += Statement() + ";\n";
      sql += "COMMIT;\n";
    }
    return sql;
  }
  // Mid-way DDL: a column added to two tables (one FIRST), a new table.
  std::string AlterTables();
  std::string TruncateLate() {
    Find("late").live.clear();
    return "TRUNCATE TABLE late;\n";
  }
  std::string RenameLate() {
    Find("late").name = "late2";
    return "RENAME TABLE late TO late2;\n";
  }
  static std::string Marker() { return "CREATE TABLE done (id INT PRIMARY KEY);\nINSERT INTO done VALUES (1);\n"; }

 private:
  using Gen = std::function<std::string(Rng&)>;
  struct Col {
    std::string name;
    Gen gen;
    bool nullable = true;
  };
  struct Table {
    std::string name;
    std::vector<std::string> key_names;                       // empty: no key
    std::function<std::vector<std::string>(int)> key_values;  // the key's literals for a slot
    std::vector<Col> cols = {};                               // the other columns
    int slots = 0;                                            // the key space
    std::set<int> live = {};
  };

  int Rand(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  Table& Find(const std::string& name) {
    return *std::find_if(tables_.begin(), tables_.end(), [&](const Table& t) { return t.name == name; });
  }
  std::string Value(const Col& c) { return c.nullable && Rand(10) == 0 ? "NULL" : c.gen(rng_); }
  std::string ColumnNames(const Table& t) const {
    std::string s;
    for (const std::string& k : t.key_names) s += (s.empty() ? "" : ", ") + k;
    for (const Col& c : t.cols) s += (s.empty() ? "" : ", ") + c.name;
    return s;
  }
  std::string Row(Table& t, int slot) {
    std::string s;
    if (slot >= 0) {
      for (const std::string& v : t.key_values(slot)) s += (s.empty() ? "" : ", ") + v;
    }
    for (const Col& c : t.cols) s += (s.empty() ? "" : ", ") + Value(c);
    return "(" + s + ")";
  }
  std::string KeyCondition(const Table& t, int slot) const {
    const std::vector<std::string> v = t.key_values(slot);
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? " AND " : "") + t.key_names[i] + " = " + v[i];
    return s;
  }
  int FreeSlot(const Table& t) {
    if (t.live.size() >= static_cast<size_t>(t.slots)) return -1;
    for (;;) {
      const int s = Rand(t.slots);
      if (!t.live.count(s)) return s;
    }
  }
  int LiveSlot(const Table& t) {
    if (t.live.empty()) return -1;
    auto it = t.live.begin();
    std::advance(it, Rand(static_cast<int>(t.live.size())));
    return *it;
  }

  std::string Statement() {
    Table& t = tables_[static_cast<size_t>(Rand(static_cast<int>(tables_.size())))];
    if (t.key_names.empty()) return KeylessStatement(t);
    const int op = Rand(10);
    if (op < 5 || t.live.size() < 3) {
      // INSERT of 1-3 rows (one rows event with several).
      std::string values;
      for (int n = 1 + (Rand(4) == 0 ? Rand(3) : 0); n > 0; --n) {
        const int slot = FreeSlot(t);
        if (slot < 0) break;
        t.live.insert(slot);
        values += (values.empty() ? "" : ", ") + Row(t, slot);
      }
      if (!values.empty()) return "INSERT INTO " + t.name + " (" + ColumnNames(t) + ") VALUES " + values;
    }
    const int slot = LiveSlot(t);
    if (op < 8) {
      std::string set;
      const int free = FreeSlot(t);
      if (Rand(3) == 0 && free >= 0) {  // a key change
        const std::vector<std::string> v = t.key_values(free);
        for (size_t i = 0; i < v.size(); ++i) set += (i ? ", " : "") + t.key_names[i] + " = " + v[i];
        t.live.erase(slot);
        t.live.insert(free);
      }
      for (const Col& c : t.cols) {
        if (set.empty() || Rand(3) == 0) set += (set.empty() ? "" : ", ") + c.name + " = " + Value(c);
      }
      return "UPDATE " + t.name + " SET " + set + " WHERE " + KeyCondition(t, slot);
    }
    t.live.erase(slot);
    return "DELETE FROM " + t.name + " WHERE " + KeyCondition(t, slot);
  }

  // The keyless table: rows that repeat exactly or differ only in case or a
  // trailing space; UPDATE and DELETE by a non-unique column.
  std::string KeylessStatement(Table& t) {
    const int op = Rand(10);
    const std::string a = std::to_string(Rand(8));
    if (op < 5 || keyless_rows_.size() < 4) {
      std::string row = Row(t, -1);
      if (!keyless_rows_.empty() && Rand(4) == 0) {
        row = keyless_rows_[static_cast<size_t>(Rand(static_cast<int>(keyless_rows_.size())))];
      }
      keyless_rows_.push_back(row);
      return "INSERT INTO " + t.name + " (" + ColumnNames(t) + ") VALUES " + row;
    }
    if (op < 8) {
      return "UPDATE " + t.name + " SET b = " + Value(t.cols[1]) + ", c = " + Value(t.cols[2]) + " WHERE a = " + a +
             " LIMIT 2";
    }
    return "DELETE FROM " + t.name + " WHERE a = " + a + " LIMIT 1";
  }

  Rng rng_;
  std::vector<Table> tables_;
  std::vector<std::string> keyless_rows_;  // earlier keyless rows, to insert again
};

// ---- Value generators -----------------------------------------------------------

using Rng = Workload::Rng;
using Gen = std::function<std::string(Rng&)>;

int Below(Rng& r, int n) { return static_cast<int>(r() % static_cast<uint64_t>(n)); }

Gen SignedInt(int bits) {
  const int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  return [=](Rng& r) {
    switch (Below(r, 6)) {
      case 0: return std::to_string(min);
      case 1: return std::to_string(max);
      case 2: return std::string(Below(r, 2) ? "0" : "-1");
      default: return std::to_string(std::uniform_int_distribution<int64_t>(min, max)(r));
    }
  };
}

Gen UnsignedInt(int bits) {
  const uint64_t max = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  return [=](Rng& r) {
    switch (Below(r, 5)) {
      case 0: return std::string("0");
      case 1: return std::to_string(max);
      case 2: return std::to_string(max / 2 + 1);  // the sign bit of the signed kind
      default: return std::to_string(std::uniform_int_distribution<uint64_t>(0, max)(r));
    }
  };
}

// DECIMAL(precision, scale): edges (all nines, the smallest fraction) and random digits.
Gen Decimal(int precision, int scale) {
  return [=](Rng& r) {
    const int int_digits = precision - scale;
    std::string s = Below(r, 2) ? "-" : "";
    switch (Below(r, 5)) {
      case 0:
        return s + std::string(static_cast<size_t>(int_digits), '9') + (scale ? "." + std::string(static_cast<size_t>(scale), '9') : "");
      case 1:
        return s + "0" + (scale ? "." + std::string(static_cast<size_t>(scale - 1), '0') + "1" : "");
      default: {
        const int n = Below(r, int_digits + 1);
        std::string digits = n == 0 ? "0" : "";
        for (int i = 0; i < n; ++i) digits += static_cast<char>('0' + (i == 0 ? 1 + Below(r, 9) : Below(r, 10)));
        s += digits;
        if (scale) {
          s += ".";
          for (int i = Below(r, scale) + 1; i > 0; --i) s += static_cast<char>('0' + Below(r, 10));
        }
        return s;
      }
    }
  };
}

// A double as an SQL literal that reads back as that very double ("-0" would be the integer 0).
std::string DoubleLiteral(double d) {
  std::string s = Format("%.17g", d);
  if (s.find_first_of("e.") == std::string::npos) s += "e0";
  return s;
}

// FLOAT: any finite float (random bits: subnormals too) or an edge, written
// as its exact double so the source stores that very float.
Gen Float() {
  return [](Rng& r) {
    static const float kEdges[] = {FLT_MAX, -FLT_MAX, FLT_MIN, std::numeric_limits<float>::denorm_min(), 0.0f,
                                   -0.0f,   0.1f,     1.5f,    -2.25f, 16777217.0f, 1e10f};
    float f;
    if (Below(r, 3) == 0) {
      f = kEdges[Below(r, static_cast<int>(std::size(kEdges)))];
    } else {
      do {
        const uint32_t bits = static_cast<uint32_t>(r());
        std::memcpy(&f, &bits, sizeof f);
      } while (!std::isfinite(f));
    }
    return DoubleLiteral(static_cast<double>(f));
  };
}

Gen Double() {
  return [](Rng& r) {
    static const double kEdges[] = {DBL_MAX, -DBL_MAX, DBL_MIN, std::numeric_limits<double>::denorm_min(), 0.0,
                                    -0.0,    0.1,      1e15,    1e-15, 123456789012345678.0};
    double d;
    if (Below(r, 3) == 0) {
      d = kEdges[Below(r, static_cast<int>(std::size(kEdges)))];
    } else {
      do {
        const uint64_t bits = r();
        std::memcpy(&d, &bits, sizeof d);
      } while (!std::isfinite(d));
    }
    return DoubleLiteral(d);
  };
}

Gen Year() {
  return [](Rng& r) {
    static const char* kEdges[] = {"0", "1901", "2155"};
    return Below(r, 2) ? std::string(kEdges[Below(r, 3)]) : std::to_string(1901 + Below(r, 255));
  };
}

Gen Bits(int n) {
  return [=](Rng& r) {
    const uint64_t max = n == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << n) - 1;
    switch (Below(r, 4)) {
      case 0: return std::string("0");
      case 1: return std::to_string(max);
      default: return std::to_string(r() & max);
    }
  };
}

Gen OneOf(std::vector<std::string> literals) {
  return [=](Rng& r) { return literals[static_cast<size_t>(Below(r, static_cast<int>(literals.size())))]; };
}

Gen SetOf(std::vector<std::string> labels) {
  return [=](Rng& r) {
    std::string s;
    for (const std::string& l : labels) {
      if (Below(r, 2)) s += (s.empty() ? "" : ",") + l;
    }
    return Utf8(s);
  };
}

std::string DateText(Rng& r) {
  switch (Below(r, 8)) {
    case 0: return "0000-00-00";
    case 1: return "1000-01-01";
    case 2: return "9999-12-31";
    case 3: return "2020-02-29";
    case 4: return Format("%04d-%02d-00", 1 + Below(r, 9999), Below(r, 13));  // zero in date
    default: return Format("%04d-%02d-%02d", 1000 + Below(r, 9000), 1 + Below(r, 12), 1 + Below(r, 28));
  }
}

std::string ClockText(Rng& r) { return Format("%02d:%02d:%02d", Below(r, 24), Below(r, 60), Below(r, 60)); }

Gen Date() {
  return [](Rng& r) { return Quoted(DateText(r)); };
}

Gen DateTime(int fsp) {
  return [=](Rng& r) {
    std::string s = Below(r, 8) == 0 ? "0000-00-00 00:00:00" : DateText(r) + " " + ClockText(r);
    if (fsp) s += "." + Format("%06d", Below(r, 1000000)).substr(0, static_cast<size_t>(fsp));
    return Quoted(s);
  };
}

// TIMESTAMP(3), written in UTC (the workload's session is +00:00).
Gen Timestamp3() {
  return [](Rng& r) {
    switch (Below(r, 6)) {
      case 0: return Quoted("0000-00-00 00:00:00.000");
      case 1: return Quoted("1970-01-01 00:00:01.000");
      case 2: return Quoted("2038-01-19 03:14:07.999");
      default: {
        const time_t t = 1 + static_cast<time_t>(r() % 2147483646u);
        struct tm tm {};
        gmtime_r(&t, &tm);
        return Quoted(Format("%04d-%02d-%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                             tm.tm_hour, tm.tm_min, tm.tm_sec, Below(r, 1000)));
      }
    }
  };
}

Gen Time(int fsp) {
  return [=](Rng& r) {
    switch (Below(r, 6)) {
      case 0: return Quoted(fsp ? "-838:59:59.000000" : "-838:59:59");
      case 1: return Quoted(fsp ? "838:59:59.000000" : "838:59:59");
      case 2: return Quoted(fsp ? "-00:00:00.500000" : "00:00:00");
      default: {
        const int hours = Below(r, 838);
        std::string s = Format("%s%d:%02d:%02d", Below(r, 2) ? "-" : "", hours, Below(r, 60), Below(r, 60));
        if (fsp) s += Format(".%06d", Below(r, 1000000));
        return Quoted(s);
      }
    }
  };
}

// Characters of 1 to 4 UTF-8 bytes, quotes, backslashes, NUL, controls.
const std::vector<std::string>& CharPool() {
  static const std::vector<std::string> pool = {
      "a", "Z", "0", " ", "'", "\\", "\"", "%", "_", std::string(1, '\0'), "\t", "\n", "\x7f",
      "é", "ü", "ß", "Ω", "中", "文", "€", "ﬀ", "😀", "𝄞", "🀄", "\xF4\x8F\xBF\xBF" /* U+10FFFF */};
  return pool;
}

std::string RandomText(Rng& r, int max_chars) {
  std::string s;
  for (int n = Below(r, max_chars + 1); n > 0; --n) s += CharPool()[static_cast<size_t>(Below(r, static_cast<int>(CharPool().size())))];
  return s;
}

Gen Utf8Text(int max_chars) {
  return [=](Rng& r) { return Utf8(RandomText(r, max_chars)); };
}

std::string AllBytes() {
  std::string s;
  for (int b = 0; b < 256; ++b) s += static_cast<char>(b);
  return s;
}

std::string RandomBytes(Rng& r, int max) {
  if (max >= 256 && Below(r, 6) == 0) return AllBytes();
  std::string s;
  for (int n = Below(r, max + 1); n > 0; --n) s += static_cast<char>(r());
  // Trailing 0x00s, which a BINARY(n)'s row image drops.
  if (Below(r, 4) == 0 && !s.empty()) s.back() = '\0';
  return s;
}

Gen Latin1Text(int max) {
  return [=](Rng& r) { return Latin1(RandomBytes(r, max)); };
}

Gen Bytes(int max, int big = 0) {
  return [=](Rng& r) {
    if (big && Below(r, 40) == 0) return Binary(RandomBytes(r, big));  // past 64 KiB
    return Binary(RandomBytes(r, max));
  };
}

Gen Json() {
  return [](Rng& r) {
    std::function<std::string(int)> value = [&](int depth) -> std::string {
      switch (Below(r, depth > 2 ? 5 : 7)) {
        case 0: return "null";
        case 1: return Below(r, 2) ? "true" : "false";
        case 2: return std::to_string(static_cast<int64_t>(r()));
        case 3: return Format("%.17g", std::uniform_real_distribution<double>(-1e10, 1e10)(r));
        case 4: {
          std::string s = "\"";
          for (int n = Below(r, 8); n > 0; --n) {
            const std::string& c = CharPool()[static_cast<size_t>(Below(r, static_cast<int>(CharPool().size())))];
            if (c == "\"" || c == "\\") {
              s += "\\" + c;
            } else if (static_cast<unsigned char>(c[0]) < 0x20) {
              s += Format("\\u%04x", static_cast<unsigned char>(c[0]));
            } else {
              s += c;
            }
          }
          return s + "\"";
        }
        case 5: {
          std::string s = "[";
          for (int n = Below(r, 4); n > 0; --n) s += (s.size() > 1 ? ", " : "") + value(depth + 1);
          return s + "]";
        }
        default: {
          std::string s = "{";
          for (int n = Below(r, 4); n > 0; --n) {
            s += (s.size() > 1 ? ", " : "") + Format("\"k%d\": ", Below(r, 100)) + value(depth + 1);
          }
          return s + "}";
        }
      }
    };
    return Utf8(value(0));
  };
}

Gen Geometry() {
  return [](Rng& r) {
    auto coord = [&] { return Format("%.17g", std::uniform_real_distribution<double>(-1e6, 1e6)(r)); };
    switch (Below(r, 3)) {
      case 0: return "ST_GeomFromText('POINT(" + coord() + " " + coord() + ")')";
      case 1: return "ST_GeomFromText('LINESTRING(" + coord() + " " + coord() + ", " + coord() + " " + coord() + ")')";
      default: return std::string("ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 0))', 4326)");
    }
  };
}

// Key texts: unique by slot under any collation, with 2- and 4-byte chars.
std::string KeyText(int slot) { return "ключ-" + std::to_string(slot) + (slot % 2 ? "-😀" : "-é"); }

std::string Workload::CreateTables() {
  // nums: every integer width at its extremes, DECIMAL, FLOAT, DOUBLE, YEAR,
  // BIT(1..64), ENUM, SET; an INT key including INT's extremes.
  Table nums{"nums", {"id"}, [](int slot) {
               return std::vector<std::string>{slot == 0   ? "-2147483648"
                                               : slot == 1 ? "2147483647"
                                                           : std::to_string(slot - 150)};
             }};
  nums.slots = 300;
  nums.cols = {{"ti", SignedInt(8)},   {"tu", UnsignedInt(8)},  {"si", SignedInt(16)}, {"su", UnsignedInt(16)},
               {"mi", SignedInt(24)},  {"mu", UnsignedInt(24)}, {"i", SignedInt(32)},  {"iu", UnsignedInt(32)},
               {"bi", SignedInt(64)},  {"bu", UnsignedInt(64)}, {"d1", Decimal(65, 30)}, {"d2", Decimal(5, 2)},
               {"d3", Decimal(18, 0)}, {"f", Float()},          {"db", Double()},      {"y", Year()},
               {"b1", Bits(1)},        {"b13", Bits(13)},       {"b64", Bits(64)},
               {"e", OneOf({Utf8("a"), Utf8("b"), Utf8("c"), Utf8("ü")})},
               {"s", SetOf({"x", "y", "z", "w"})}};
  // times: a composite key (INT, VARCHAR); zero dates, zero-in-date, negative TIME.
  Table times{"times", {"k1", "k2"}, [](int slot) {
                return std::vector<std::string>{std::to_string(slot / 10 - 5), Utf8(KeyText(slot))};
              }};
  times.slots = 250;
  times.cols = {{"dt", Date()},        {"dt6", DateTime(6)}, {"dt0", DateTime(0)}, {"ts", Timestamp3()},
                {"tm6", Time(6)},      {"tm0", Time(0)}};
  // texts: a VARCHAR key; utf8mb4 with 4-byte chars and NUL, latin1 with every byte, JSON.
  Table texts{"texts", {"k"}, [](int slot) { return std::vector<std::string>{Utf8(KeyText(slot))}; }};
  texts.slots = 250;
  texts.cols = {{"c", Utf8Text(20)},      {"v", Utf8Text(100)},    {"l", Latin1Text(300)},
                {"tt", Utf8Text(300)},    {"lt", Latin1Text(300)}, {"j", Json()}};
  // bins: a BIGINT UNSIGNED key with its extremes; every byte value, values past 64 KiB, GEOMETRY.
  Table bins{"bins", {"id"}, [](int slot) {
               return std::vector<std::string>{slot == 0   ? "0"
                                               : slot == 1 ? "18446744073709551615"
                                               : slot == 2 ? "9223372036854775808"
                                                           : std::to_string(uint64_t(slot) * 7919)};
             }};
  bins.slots = 200;
  bins.cols = {{"bn", Bytes(8)},   {"vb", Bytes(300)}, {"bl", Bytes(600)},
               {"tb", Bytes(255)}, {"mb", Bytes(100, 70000)}, {"g", Geometry()}};
  // uniq: no primary key, a unique one; key changes move it.
  Table uniq{"uniq", {"u"}, [](int slot) { return std::vector<std::string>{std::to_string(slot - 100)}; }};
  uniq.slots = 200;
  uniq.cols = {{"v", Utf8Text(20)}, {"w", Double()}};
  // keyless: no index at all; rows that repeat, or differ in case or a trailing space.
  Table keyless{"keyless", {}, {}};
  keyless.cols = {{"a", [](Rng& r) { return std::to_string(Below(r, 8)); }},
                  {"b", OneOf({Utf8("x"), Utf8("X"), Utf8("x "), Utf8("ü"), Utf8("Ü"), Utf8("😀")})},
                  {"c", Double()},
                  {"d", DateTime(6)},
                  {"e", Bytes(40)},
                  {"f", Float()}};
  tables_ = {nums, times, texts, bins, uniq, keyless};
  return std::string("CREATE DATABASE ") + kSchema + ";\nUSE " + kSchema +
         ";\n"
         "CREATE TABLE nums (id INT NOT NULL PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, "
         "su SMALLINT UNSIGNED, mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, "
         "bu BIGINT UNSIGNED, d1 DECIMAL(65,30), d2 DECIMAL(5,2), d3 DECIMAL(18,0), f FLOAT, db DOUBLE, y YEAR, "
         "b1 BIT(1), b13 BIT(13), b64 BIT(64), e ENUM('a','b','c','ü'), s SET('x','y','z','w')) "
         "DEFAULT CHARSET utf8mb4;\n"
         "CREATE TABLE times (k1 INT NOT NULL, k2 VARCHAR(40) NOT NULL, dt DATE, dt6 DATETIME(6), dt0 DATETIME, "
         "ts TIMESTAMP(3) NULL DEFAULT NULL, tm6 TIME(6), tm0 TIME, PRIMARY KEY (k1, k2)) DEFAULT CHARSET utf8mb4;\n"
         "CREATE TABLE texts (k VARCHAR(100) NOT NULL PRIMARY KEY, c CHAR(20), v VARCHAR(100), "
         "l VARCHAR(300) CHARACTER SET latin1, tt TEXT, lt MEDIUMTEXT CHARACTER SET latin1, j JSON) "
         "DEFAULT CHARSET utf8mb4;\n"
         "CREATE TABLE bins (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, bn BINARY(8), vb VARBINARY(300), bl BLOB, "
         "tb TINYBLOB, mb MEDIUMBLOB, g GEOMETRY NULL);\n"
         "CREATE TABLE uniq (u INT NOT NULL, v VARCHAR(20), w DOUBLE, UNIQUE KEY uk (u)) DEFAULT CHARSET utf8mb4;\n"
         "CREATE TABLE keyless (a INT, b VARCHAR(20), c DOUBLE, d DATETIME(6), e VARBINARY(40), f FLOAT) "
         "DEFAULT CHARSET utf8mb4;\n";
}

std::string Workload::AlterTables() {
  Table& nums = Find("nums");
  nums.cols.insert(nums.cols.begin() + 1, Col{"extra", Utf8Text(20)});
  Table& texts = Find("texts");
  texts.cols.insert(texts.cols.begin(), Col{"n2", SignedInt(32), false});
  Table late{"late", {"id"}, [](int slot) { return std::vector<std::string>{std::to_string(slot)}; }};
  late.slots = 100;
  late.cols = {{"v", Utf8Text(10)}};
  tables_.push_back(late);
  return "ALTER TABLE nums ADD COLUMN extra VARCHAR(20) NULL DEFAULT 'dflt' AFTER ti;\n"
         "ALTER TABLE texts ADD COLUMN n2 INT NOT NULL DEFAULT 7 FIRST;\n"
         "CREATE TABLE late (id INT NOT NULL PRIMARY KEY, v VARCHAR(10)) DEFAULT CHARSET utf8mb4;\n";
}

// ---- The suite ------------------------------------------------------------------

// Two sandboxes: the source (ServerSuite's, with canal-server's binlog
// settings) and the mirror, started side by side.
class MirrorOracle : public MirrorSuite<kSourcePort, kMirrorPort> {};

uint64_t Seed() {
  const char* env = std::getenv("CANAL_MIRROR_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 20240611;
}

// 1. A random workload through canal-server and the SDK: the mirror ends equal.
TEST_F(MirrorOracle, RandomWorkloadThroughCanalServerRebuildsEqualTables) {
  const auto start = Clock::now();
  const uint64_t seed = Seed();
  BothSql(std::string("DROP DATABASE IF EXISTS ") + Workload::kSchema);
  Workload w(seed);
  const std::string prologue = std::string("SET time_zone = '+00:00';\nUSE ") + Workload::kSchema + ";\n";
  // One part at a time: the model changes with each (the operands of + are unsequenced).
  std::vector<std::string> chunks(3);
  chunks[0] = "SET time_zone = '+00:00';\n" + w.CreateTables();
  chunks[0] += w.Steps(500);
  chunks[1] = prologue + w.Steps(500);
  chunks[1] += w.AlterTables();
  chunks[1] += w.Steps(500);
  chunks[2] = prologue + w.TruncateLate();
  chunks[2] += w.Steps(300);
  chunks[2] += w.RenameLate();
  chunks[2] += w.Steps(300) + Workload::Marker();

  CanalInstall install("mirror-oracle", kSourcePort);
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort));
  install.WriteInstance("example", StartHere());
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());

  TableMirror mirror(mirror_->socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  FirstError error;
  std::atomic<bool> marker{false};
  std::atomic<uint64_t> batches{0};
  // jthreads: a failed ASSERT below still stops and joins them.
  std::jthread client([&](std::stop_token stop) {
    Connector c(ServerClientOptions(kServerPort));
    Status st = ConnectAndSubscribe(c, 20s);
    if (!st.ok()) return error.Set("connect: " + st.ToString());
    Message m;
    while (!stop.stop_requested() && !marker) {
      st = c.GetWithoutAck(100, 200, TimeUnit::kMilliseconds, &m);
      if (!st.ok()) return error.Set("get: " + st.ToString());
      if (m.batch_id() == -1) continue;
      st = mirror.Apply(m);
      if (!st.ok()) return error.Set("apply: " + st.ToString());
      ++batches;
      for (const entry::Entry& e : m.entries()) {
        if (e.header().tablename() == Workload::kMarkerTable && client::EventTypeOf(e.header()) == entry::INSERT) {
          marker = true;
        }
      }
      st = c.Ack(m.batch_id());
      if (!st.ok()) return error.Set("ack: " + st.ToString());
    }
  });
  std::jthread writer([&] {
    for (size_t i = 0; i < chunks.size(); ++i) {
      const std::string path = sandbox_->dir() + "/mirror-workload-" + std::to_string(i) + ".sql";
      WriteFile(path, chunks[i]);
      if (!sandbox_->SqlFile(path)) return error.Set("workload " + path + ": " + sandbox_->error());
    }
  });
  writer.join();
  ASSERT_TRUE(WaitFor([&] { return marker || error.failed(); }, 60s))
      << "no marker row after " << batches << " batches; " << mirror.counts().ToString();
  client.request_stop();
  client.join();
  ASSERT_FALSE(error.failed()) << error.Get();

  std::string report;
  s = CompareTables(*sandbox_, *mirror_, Workload::kSchema, {}, &report);
  const MirrorCounts& n = mirror.counts();
  std::printf("[ mirror ] seed %" PRIu64 ": %" PRIu64 " batches, %s in %.1f s\n%s", seed, batches.load(),
              n.ToString().c_str(), SecondsSince(start), report.c_str());
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;
  EXPECT_GT(n.inserts, 1000u);
  EXPECT_GT(n.updates, 500u);
  EXPECT_GT(n.key_updates, 100u);
  EXPECT_GT(n.deletes, 300u);
  EXPECT_GE(n.ddls, 12u);  // CREATE DATABASE, 6 + 2 CREATE TABLE, 2 ALTER, TRUNCATE, RENAME
  EXPECT_EQ(n.snapshot_rows, 0u);
  EXPECT_EQ(n.missed_updates, 0u);
  EXPECT_EQ(n.missed_deletes, 0u);
  EXPECT_NE(report.find("late2"), std::string::npos) << report;
}

// 2. The comparator fails, naming them, on a changed column value (a FLOAT
// by one bit too), a missing row, an extra row in a table without key, an
// added column and a missing table.
TEST_F(MirrorOracle, TheComparatorNamesEachDifference) {
  const std::string setup =
      "DROP DATABASE IF EXISTS mirror_neg; CREATE DATABASE mirror_neg; USE mirror_neg;"
      "CREATE TABLE t1 (id INT PRIMARY KEY, v VARCHAR(20), b VARBINARY(10), f FLOAT);"
      "INSERT INTO t1 VALUES (1, 'one', X'01', 0.1), (2, 'two', NULL, 0.1), (3, 'three', X'', 0.1), (4, NULL, X'FF', 0.1);"
      "CREATE TABLE t2 (a INT, b VARCHAR(10));"
      "INSERT INTO t2 VALUES (1, 'x'), (1, 'x'), (2, NULL);";
  BothSql(setup);
  std::string report;
  Status s = CompareTables(*sandbox_, *mirror_, "mirror_neg", {"t1", "t2"}, &report);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << report;
  EXPECT_NE(report.find("`mirror_neg`.`t1`: source 4 rows, mirror 4 rows: equal"), std::string::npos) << report;

  ASSERT_TRUE(mirror_->Sql("USE mirror_neg; UPDATE t1 SET v = 'TWO' WHERE id = 2; UPDATE t1 SET b = X'00FF' WHERE id = 1;"
                           "UPDATE t1 SET f = 0.10000000894069672 WHERE id = 4;"  // the next float up: both print "0.1"
                           "DELETE FROM t1 WHERE id = 3; INSERT INTO t2 VALUES (1, 'x');"
                           "ALTER TABLE t1 ADD COLUMN added INT;"))
      << mirror_->error();
  ASSERT_TRUE(sandbox_->Sql("CREATE TABLE mirror_neg.t3 (id INT PRIMARY KEY)")) << sandbox_->error();
  s = CompareTables(*sandbox_, *mirror_, "mirror_neg", {}, &report);
  std::printf("[ mirror ] the comparator's report:\n%s", report.c_str());
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_NE(s.ToString().find("t1, t2, t3"), std::string::npos) << s.ToString();
  for (const char* expected : {"column `added` (int(11)) only in the mirror",
                               "key (id='2') column v: source 'two', mirror 'TWO'",
                               "key (id='1') column b: source X'01', mirror X'00FF'",
                               "key (id='4') column f: source '0.10000000149011612', mirror '0.10000000894069672'",
                               "missing in the mirror: key (id='3'): id='3', v='three', b='', f='0.10000000149011612'",
                               "`mirror_neg`.`t2`: source 3 rows, mirror 4 rows (no primary key",
                               "only in the mirror: row (a='1', b='x')", "`mirror_neg`.`t3`:",
                               "the table is missing in the mirror"}) {
    EXPECT_NE(report.find(expected), std::string::npos) << "no \"" << expected << "\" in\n" << report;
  }
}

// ---- Entries made by hand -----------------------------------------------------------

entry::Column MakeColumn(const std::string& name, const char* value, const std::string& mysql_type,
                         bool key = false) {
  entry::Column c;
  c.set_name(name);
  c.set_mysqltype(mysql_type);
  c.set_iskey(key);
  if (value == nullptr) {
    c.set_isnull(true);
  } else {
    c.set_isnull(false);
    c.set_value(value);
  }
  return c;
}

entry::Entry MakeEntry(const std::string& schema, const std::string& table, entry::EventType type,
                       const entry::RowChange& change, bool snapshot, int64_t offset) {
  entry::Entry e;
  entry::Header* h = e.mutable_header();
  h->set_logfilename("mysql-bin.000007");
  h->set_logfileoffset(offset);
  h->set_schemaname(schema);
  h->set_tablename(table);
  h->set_eventtype(type);
  if (snapshot) {
    entry::Pair* p = h->add_props();
    p->set_key("snapshot");
    p->set_value("true");
  }
  e.set_entrytype(entry::ROWDATA);
  change.SerializeToString(e.mutable_storevalue());
  return e;
}

entry::Entry DdlEntry(const std::string& schema, const std::string& sql, int64_t offset) {
  entry::RowChange change;
  change.set_eventtype(entry::CREATE);
  change.set_isddl(true);
  change.set_sql(sql);
  change.set_ddlschemaname(schema);
  return MakeEntry(schema, "", entry::CREATE, change, false, offset);
}

// Rows of table t (id INT key, v VARCHAR, f FLOAT): (id, v, f) each; a null v as nullptr.
struct SnapRow {
  const char* id;
  const char* v;
  const char* f;
};
std::vector<entry::Column> Image(const SnapRow& r, bool keyed) {
  return {MakeColumn("id", r.id, "int(11)", keyed), MakeColumn("v", r.v, "varchar(20)"),
          MakeColumn("f", r.f, "float")};
}

entry::Entry RowsEntry(const std::string& table, entry::EventType type, const std::vector<SnapRow>& before,
                       const std::vector<SnapRow>& after, bool snapshot, int64_t offset, bool keyed = true) {
  entry::RowChange change;
  change.set_eventtype(type);
  for (size_t i = 0; i < std::max(before.size(), after.size()); ++i) {
    entry::RowData* row = change.add_rowdatas();
    if (i < before.size()) {
      for (const entry::Column& c : Image(before[i], keyed)) *row->add_beforecolumns() = c;
    }
    if (i < after.size()) {
      for (const entry::Column& c : Image(after[i], keyed)) *row->add_aftercolumns() = c;
    }
  }
  return MakeEntry("mirror_snap", table, type, change, snapshot, offset);
}

// 3. Snapshot rows are upserts, their repeats counted; DDL runs in its
// schema; a keyless DELETE finds its row byte for byte (not 'X' for 'x', nor
// a FLOAT by its double); an error names the entry and the SQL error.
TEST_F(MirrorOracle, SnapshotRowsUpsertAndRepeatsAreCountedAndErrorsNameTheEntry) {
  const std::string table_sql = "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), f FLOAT)";
  const std::string keyless_sql = "CREATE TABLE k (id INT, v VARCHAR(20), f FLOAT)";
  ASSERT_TRUE(sandbox_->Sql("DROP DATABASE IF EXISTS mirror_snap; CREATE DATABASE mirror_snap; USE mirror_snap;" +
                            table_sql + ";" + keyless_sql +
                            "; INSERT INTO t VALUES (1, 'one', 0.1), (2, 'two-new', NULL), (3, NULL, -1.5);"
                            "INSERT INTO k VALUES (1, 'X', 0.1), (1, 'x ', 0.1), (2, 'x', 3.4028234663852886e38);"))
      << sandbox_->error();
  ASSERT_TRUE(mirror_->Sql("DROP DATABASE IF EXISTS mirror_snap")) << mirror_->error();

  TableMirror mirror(mirror_->socket());
  Status s = mirror.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<entry::Entry> entries = {
      DdlEntry("mirror_snap", "CREATE DATABASE mirror_snap", 100),
      DdlEntry("mirror_snap", table_sql, 200),  // unqualified: runs in the entry's schema
      DdlEntry("mirror_snap", keyless_sql, 300),
      RowsEntry("t", entry::INSERT, {}, {{"1", "one", "0.1"}, {"2", "two", nullptr}}, true, 400),
      RowsEntry("t", entry::UPDATE, {{"2", "two", nullptr}}, {{"2", "two-mid", nullptr}}, false, 500),
      RowsEntry("t", entry::INSERT, {}, {{"2", "two-new", nullptr}, {"3", nullptr, "-1.5"}}, true, 600),
      // 'X' and 'x ' first: a match by the column's collation (case-insensitive, PAD SPACE) would take one of them.
      RowsEntry("k", entry::INSERT, {}, {{"1", "X", "0.1"}, {"1", "x ", "0.1"}, {"1", "x", "0.1"}}, false, 700, false),
      RowsEntry("k", entry::INSERT, {}, {{"2", "x", "3.4028235E38"}}, false, 800, false),
      RowsEntry("k", entry::DELETE, {{"1", "x", "0.1"}}, {}, false, 900, false),
  };
  for (const entry::Entry& e : entries) {
    s = mirror.Apply(e);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  const MirrorCounts& n = mirror.counts();
  EXPECT_EQ(n.snapshot_rows, 4u);
  EXPECT_EQ(n.snapshot_repeats, 1u);
  EXPECT_EQ(n.updates, 1u);
  EXPECT_EQ(n.inserts, 4u);
  EXPECT_EQ(n.deletes, 1u);
  EXPECT_EQ(n.ddls, 3u);
  EXPECT_EQ(n.missed_updates + n.missed_deletes, 0u) << n.ToString();
  std::string report;
  s = CompareTables(*sandbox_, *mirror_, "mirror_snap", {}, &report);
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;

  s = mirror.Apply(RowsEntry("nosuch", entry::INSERT, {}, {{"1", "one", "0.1"}}, false, 1234));
  EXPECT_FALSE(s.ok());
  for (const char* expected : {"mysql-bin.000007:1234", "mirror_snap.nosuch", "INSERT row 0", "doesn't exist"}) {
    EXPECT_NE(s.ToString().find(expected), std::string::npos) << "no \"" << expected << "\" in " << s.ToString();
  }
  std::printf("[ mirror ] %s\n[ mirror ] an error: %s\n", n.ToString().c_str(), s.ToString().c_str());
}

}  // namespace
}  // namespace canal::testing
