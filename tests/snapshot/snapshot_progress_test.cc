// SnapshotProgress: the form a snapshot's progress takes in a cursor. Every key kind reads back
// as the same typed value (what the next chunk binds), and a progress that is not one this wrote
// is Corruption naming the member.
#include "canal/snapshot/snapshot_progress.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

namespace canal::snapshot {
namespace {

KeyValue Key(FieldKind kind, uint8_t type) {
  KeyValue v;
  v.kind = kind;
  v.field_type = type;
  return v;
}

SnapshotProgress Sample() {
  SnapshotProgress p;
  p.id = "initial-1733450000000";
  p.started_ms = 1733450000000;
  TableProgress a;
  a.schema = "shop";
  a.table = "customer";
  a.state = TableSnapshotState::kReading;
  a.rows = 8192;
  a.where = "region = 'eu'";
  KeyValue i = Key(FieldKind::kSigned, 8);
  i.i64 = std::numeric_limits<int64_t>::min();
  KeyValue u = Key(FieldKind::kUnsigned, 8);
  u.u64 = std::numeric_limits<uint64_t>::max();
  KeyValue d = Key(FieldKind::kDouble, 5);
  d.f64 = 0.1 + 0.2;
  KeyValue t = Key(FieldKind::kTime, 12);
  t.time = TimeValue{2024, 2, 29, 23, 59, 58, 999999, false};
  KeyValue tm = Key(FieldKind::kTime, 11);
  tm.time = TimeValue{0, 0, 0, 838, 59, 59, 0, true};
  KeyValue b = Key(FieldKind::kBytes, 253);
  b.bytes = std::string("\0\xff\"\\ü", 7);
  KeyValue bin = Key(FieldKind::kBytes, 254);
  bin.binary = true;
  bin.bytes = std::string(16, '\x80');
  KeyValue null = Key(FieldKind::kNull, 6);
  a.after = {i, u, d, t, tm, b, bin, null};
  TableProgress done;
  done.schema = "shop";
  done.table = "order.items";  // a dot in a name stays a name
  done.state = TableSnapshotState::kDone;
  done.rows = 3;
  TableProgress pending;
  pending.schema = "db`x";
  pending.table = "t\"q";
  p.tables = {a, done, pending};
  return p;
}

void ExpectSameKey(const KeyValue& a, const KeyValue& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.field_type, b.field_type);
  EXPECT_EQ(a.binary, b.binary);
  EXPECT_EQ(a.i64, b.i64);
  EXPECT_EQ(a.u64, b.u64);
  EXPECT_EQ(std::memcmp(&a.f64, &b.f64, sizeof a.f64), 0) << a.f64 << " vs " << b.f64;
  EXPECT_EQ(a.time.year, b.time.year);
  EXPECT_EQ(a.time.hour, b.time.hour);
  EXPECT_EQ(a.time.microsecond, b.time.microsecond);
  EXPECT_EQ(a.time.negative, b.time.negative);
  EXPECT_EQ(a.bytes, b.bytes);
}

TEST(SnapshotProgress, EveryKeyKindReadsBackAsTheSameTypedValue) {
  const SnapshotProgress p = Sample();
  SnapshotProgress back;
  ASSERT_TRUE(SnapshotProgress::Decode(p.Encode(), &back).ok()) << p.Encode();
  EXPECT_EQ(back.id, p.id);
  EXPECT_EQ(back.started_ms, p.started_ms);
  ASSERT_EQ(back.tables.size(), 3u);
  EXPECT_EQ(back.tables[0].where, "region = 'eu'");
  EXPECT_EQ(back.tables[0].state, TableSnapshotState::kReading);
  EXPECT_EQ(back.tables[0].rows, 8192u);
  ASSERT_EQ(back.tables[0].after.size(), p.tables[0].after.size());
  for (size_t i = 0; i < p.tables[0].after.size(); ++i) ExpectSameKey(back.tables[0].after[i], p.tables[0].after[i]);
  EXPECT_EQ(back.tables[1].Name(), "shop.order.items");
  EXPECT_EQ(back.tables[1].state, TableSnapshotState::kDone);
  EXPECT_EQ(back.tables[2].schema, "db`x");
  EXPECT_EQ(back.tables[2].table, "t\"q");
  EXPECT_EQ(back.Encode(), p.Encode());  // canonical: the same progress, the same text
  EXPECT_EQ(back.TablesDone(), 1u);
  EXPECT_FALSE(back.Complete());
}

TEST(SnapshotProgress, DoublesKeepEveryBit) {
  for (double d : {0.0, -0.0, 1e-310, 5e-324, 1.7976931348623157e308, -123.456, 1.0 / 3}) {
    SnapshotProgress p;
    p.id = "x";
    TableProgress t;
    t.schema = "a";
    t.table = "b";
    KeyValue v = Key(FieldKind::kDouble, 5);
    v.f64 = d;
    t.after = {v};
    p.tables = {t};
    SnapshotProgress back;
    ASSERT_TRUE(SnapshotProgress::Decode(p.Encode(), &back).ok());
    EXPECT_EQ(std::memcmp(&back.tables[0].after[0].f64, &d, sizeof d), 0) << d;
  }
}

TEST(SnapshotProgress, WhatItDidNotWriteIsCorruptionNamingTheMember) {
  const struct {
    const char* text;
    const char* names;
  } cases[] = {
      {"", "(top)"},
      {"[]", "(top)"},
      {"{}", ".id"},
      {R"({"id":"x"})", ".tables"},
      {R"({"id":"x","tables":{}})", ".tables"},
      {R"({"id":"x","tables":[1]})", ".tables[0]"},
      {R"({"id":"x","tables":[{"schema":"a","state":"done"}]})", ".tables[0].table"},
      {R"({"id":"x","tables":[{"schema":"a","table":"b","state":"half"}]})", ".tables[0].state"},
      {R"({"id":"x","tables":[{"schema":"a","table":"b","state":"done","rows":-1}]})", ".tables[0].rows"},
      {R"({"id":"x","tables":[{"schema":"a","table":"b","state":"reading","after":[{"k":9,"t":3}]}]})",
       ".tables[0].after[0].k"},
      {R"({"id":"x","tables":[{"schema":"a","table":"b","state":"reading","after":[{"k":1,"t":3}]}]})",
       ".tables[0].after[0].i"},
      {R"({"id":"x","tables":[{"schema":"a","table":"b","state":"reading","after":[{"k":5,"t":3,"x":"abc"}]}]})",
       ".tables[0].after[0].x"},
      {R"({"id":"x","tables":[{"schema":"a","table":"b","state":"reading","after":[{"k":3,"t":5,"f":"1e999"}]}]})",
       ".tables[0].after[0].f"},
      {R"({"id":"x","tables":[{"schema":"a","table":"b","state":"reading","after":[{"k":4,"t":12,"tm":[1,2]}]}]})",
       ".tables[0].after[0].tm"},
  };
  for (const auto& c : cases) {
    SnapshotProgress p;
    Status s = SnapshotProgress::Decode(c.text, &p);
    EXPECT_TRUE(s.IsCorruption()) << c.text << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.names), std::string::npos) << c.text << ": " << s.ToString();
  }
}

}  // namespace
}  // namespace canal::snapshot
