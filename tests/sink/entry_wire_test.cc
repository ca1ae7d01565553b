// The wire writer behind EntryBuilder::RowsEntry against the protobuf-object
// path it replaced (entry_wire_reference.h): for every rows event of the
// fixture binlogs and for hand-built tables of every column type, the bytes are
// identical and parse into equal messages. Also the per-table cache (a reused
// TableMap address, many tables) and allocation-free rows once the buffers are
// warm. (The wire primitives themselves: tests/proto/wire_codec_test.cc.)
#include <gtest/gtest.h>

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "canal/sink/entry_wire.h"
#include "support/entry_wire_reference.h"
#include "canal/entry.pb.h"
#include "canal/sink/entry_builder.h"
#include "support/binlog_walk.h"
#include "support/fixtures.h"

#include "support/allocation_counter.h"

namespace canal::sink {
namespace {

using binlog::ColumnInfo;
using binlog::ColumnType;
using google::protobuf::util::MessageDifferencer;

// ---- comparing with the reference ---------------------------------------------

// Entries protobuf could not parse back (invalid UTF-8 in a string field), so
// only compared byte for byte.
size_t g_unparsable = 0;

size_t FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

// `got` (the writer's) and `want` (protobuf's) are the same entry: same bytes,
// and, where protobuf can parse them (proto3 refuses invalid UTF-8), equal
// Entry and RowChange messages.
void ExpectSameEntry(const std::string& want, const std::string& got, const std::string& what) {
  EXPECT_EQ(want.size(), got.size()) << what;
  EXPECT_TRUE(want == got) << what << ": first difference at byte " << FirstDifference(want, got);
  entry::Entry we, ge;
  const bool parsed = we.ParseFromString(want);
  ASSERT_EQ(ge.ParseFromString(got), parsed) << what;
  if (!parsed) {
    ++g_unparsable;
    return;
  }
  EXPECT_TRUE(MessageDifferencer::Equals(we, ge)) << what;
  entry::RowChange wc, gc;
  ASSERT_TRUE(wc.ParseFromString(we.storevalue())) << what;
  ASSERT_TRUE(gc.ParseFromString(ge.storevalue())) << what;
  EXPECT_TRUE(MessageDifferencer::Equals(wc, gc)) << what;
}

// One writer and one reference builder with the same options, kept across
// events (as a server keeps its builder) so the table cache is exercised.
struct Pair {
  explicit Pair(const EntryBuilderOptions& o) : builder(o), reference(o) {}

  void Compare(const EntryContext& ctx, const binlog::RowsEvent& ev, const std::string& what) {
    std::string want = "before", got = "before";
    uint64_t want_rows = 7, got_rows = 7;
    const Status ws = reference.Write(ctx, ev, &want, &want_rows);
    const Status gs = builder.RowsEntry(ctx, ev, &got, &got_rows);
    ++compared;
    ASSERT_EQ(ws.ToString(), gs.ToString()) << what;
    if (!ws.ok()) {
      ++errors;
      EXPECT_EQ(got, "before") << what << ": an error leaves *out alone";
      return;
    }
    rows += got_rows;
    EXPECT_EQ(want_rows, got_rows) << what;
    ExpectSameEntry(want, got, what);
  }

  EntryBuilder builder;
  wire::ReferenceRowsEntryBuilder reference;
  uint64_t compared = 0, errors = 0, rows = 0;
};

EntryContext Context(uint64_t offset) {
  EntryContext ctx;
  ctx.position.journal_name = "mariadb-bin.000002";
  ctx.position.position = offset;
  ctx.position.server_id = 1;
  ctx.position.gtid = "0-1-42";
  ctx.position.timestamp_ms = 1591600659000;
  ctx.event_length = 321;
  return ctx;
}

// ---- hand-built rows events --------------------------------------------------------

std::string LE(uint64_t v, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
std::string BE(uint64_t v, size_t n) {
  std::string s;
  for (size_t i = n; i-- > 0;) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
std::string Prefixed(std::string_view bytes, size_t length_bytes) {
  return LE(bytes.size(), length_bytes) + std::string(bytes);
}

// One column value of a row image as the binlog holds it.
struct Cell {
  enum Kind { kAbsent, kNull, kValue } kind = kValue;
  std::string raw;
};
Cell V(std::string raw) { return Cell{Cell::kValue, std::move(raw)}; }
Cell Null() { return Cell{Cell::kNull, {}}; }
Cell Absent() { return Cell{Cell::kAbsent, {}}; }
using Image = std::vector<Cell>;

std::string PresentBitmap(const Image& img) {
  std::string bits((img.size() + 7) / 8, '\0');
  for (size_t i = 0; i < img.size(); ++i) {
    if (img[i].kind != Cell::kAbsent) bits[i / 8] = static_cast<char>(bits[i / 8] | (1 << (i % 8)));
  }
  return bits;
}

void AppendImage(const Image& img, std::string* out) {
  size_t present = 0;
  for (const Cell& c : img) present += c.kind != Cell::kAbsent;
  std::string nulls((present + 7) / 8, '\0');
  size_t k = 0;
  std::string values;
  for (const Cell& c : img) {
    if (c.kind == Cell::kAbsent) continue;
    if (c.kind == Cell::kNull) nulls[k / 8] = static_cast<char>(nulls[k / 8] | (1 << (k % 8)));
    ++k;
    values += c.raw;
  }
  *out += nulls;
  *out += values;
}

// A rows event over `table` that owns its bytes. Every row's images must have
// the same columns present (one bitmap per event).
struct HandEvent {
  std::shared_ptr<binlog::TableMap> table;
  std::string before_bits, after_bits, bytes;
  binlog::RowsEvent ev;
};

std::unique_ptr<HandEvent> MakeEvent(std::shared_ptr<binlog::TableMap> table, binlog::RowsKind kind,
                                     const std::vector<std::pair<Image, Image>>& rows) {
  auto h = std::make_unique<HandEvent>();
  h->table = std::move(table);
  for (const auto& [first, second] : rows) {
    AppendImage(first, &h->bytes);
    if (kind == binlog::RowsKind::kUpdate) AppendImage(second, &h->bytes);
  }
  if (!rows.empty()) {
    h->before_bits = PresentBitmap(rows[0].first);
    if (kind == binlog::RowsKind::kUpdate) h->after_bits = PresentBitmap(rows[0].second);
  }
  h->ev.info.is_rows = true;
  h->ev.info.kind = kind;
  h->ev.info.version = 2;
  h->ev.table_id = h->table->table_id;
  h->ev.column_count = static_cast<uint32_t>(h->table->columns.size());
  h->ev.columns_before = h->before_bits;
  h->ev.columns_after = h->after_bits;
  h->ev.rows = h->bytes;
  h->ev.table = h->table.get();
  h->ev.source = "hand-built";
  h->ev.offset = 4;
  return h;
}

ColumnInfo Col(std::string name, ColumnType type, uint16_t meta = 0) {
  ColumnInfo c;
  c.type = c.real_type = type;
  c.meta = meta;
  c.name = std::move(name);
  c.signedness_known = true;
  return c;
}

// Every column type the reader decodes, with the facts that change their text.
std::shared_ptr<binlog::TableMap> EveryTypeTable() {
  auto t = std::make_shared<binlog::TableMap>();
  t->table_id = 4242;
  t->db = "shop";
  t->table = "every_type";
  t->names_known = t->keys_known = true;
  auto& c = t->columns;
  c.push_back(Col("id", ColumnType::kLong));
  c.back().is_key = true;
  c.back().is_unsigned = true;
  c.back().nullable = false;
  c.push_back(Col("tiny", ColumnType::kTiny));
  c.push_back(Col("tiny_u", ColumnType::kTiny));
  c.back().is_unsigned = true;
  c.push_back(Col("small", ColumnType::kShort));
  c.push_back(Col("medium", ColumnType::kInt24));
  c.push_back(Col("big_u", ColumnType::kLongLong));
  c.back().is_unsigned = true;
  c.push_back(Col("big", ColumnType::kLongLong));
  c.push_back(Col("f", ColumnType::kFloat, 4));
  c.push_back(Col("d", ColumnType::kDouble, 8));
  c.push_back(Col("amount", ColumnType::kNewDecimal, (10 << 8) | 2));
  c.back().precision = 10;
  c.back().decimals = 2;
  c.push_back(Col("flags", ColumnType::kBit, (1 << 8) | 2));
  c.back().max_length = 10;
  c.push_back(Col("color", ColumnType::kString));
  c.back().real_type = ColumnType::kEnum;
  c.back().max_length = 1;
  c.back().enum_or_set_labels = {"red", "green", "blue"};
  c.push_back(Col("tags", ColumnType::kString));
  c.back().real_type = ColumnType::kSet;
  c.back().max_length = 1;
  c.back().enum_or_set_labels = {"x", "y", "z"};
  c.push_back(Col("day", ColumnType::kDate));
  c.push_back(Col("t_old", ColumnType::kTime));
  c.push_back(Col("t", ColumnType::kTime2, 3));
  c.push_back(Col("dt_old", ColumnType::kDateTime));
  c.push_back(Col("dt", ColumnType::kDateTime2, 6));
  c.push_back(Col("ts_old", ColumnType::kTimestamp));
  c.push_back(Col("ts", ColumnType::kTimestamp2, 3));
  c.push_back(Col("yr", ColumnType::kYear));
  c.push_back(Col("note", ColumnType::kVarchar, 65535));  // 2-byte lengths
  c.back().max_length = 65535;
  c.back().charset = 45;  // utf8mb4
  c.push_back(Col("code", ColumnType::kVarchar, 200));
  c.back().max_length = 200;
  c.back().charset = 63;  // VARBINARY
  c.push_back(Col("initials", ColumnType::kString));
  c.back().max_length = 30;
  c.back().charset = 8;  // latin1
  c.push_back(Col("body", ColumnType::kBlob, 2));
  c.back().charset = 45;  // TEXT
  c.push_back(Col("payload", ColumnType::kBlob, 3));
  c.back().charset = 63;  // MEDIUMBLOB
  c.push_back(Col("place", ColumnType::kGeometry, 4));
  c.back().geometry_type = 1;
  c.push_back(Col("doc", ColumnType::kJson, 4));
  c.push_back(Col("", ColumnType::kLong));  // name unknown: no name field
  c.push_back(Col("nothing", ColumnType::kNull));
  return t;
}

std::string Float(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return LE(bits, 4);
}
std::string Double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return LE(bits, 8);
}
std::string DateTime2(int y, int mo, int d, int h, int mi, int s, uint32_t micros) {
  const uint64_t ym = static_cast<uint64_t>(y) * 13 + static_cast<uint64_t>(mo);
  const uint64_t ymd = (ym << 5) | static_cast<uint64_t>(d);
  const uint64_t hms = (static_cast<uint64_t>(h) << 12) | (static_cast<uint64_t>(mi) << 6) | static_cast<uint64_t>(s);
  return BE(((ymd << 17) | hms) + 0x8000000000ULL, 5) + BE(micros, 3);
}
std::string Bytes(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed) & 0xFF);
  return s;
}

// A full row of `EveryTypeTable`; `v` varies the values, `text` is the note.
Image FullRow(uint32_t id, int v, const std::string& note, const std::string& body, const std::string& payload) {
  return {
      V(LE(id, 4)),
      V(LE(static_cast<uint64_t>(-5 - v), 1)),
      V(LE(250, 1)),
      V(LE(static_cast<uint64_t>(-30000 + v), 2)),
      V(LE(8000000 + static_cast<uint64_t>(v), 3)),
      V(LE(~uint64_t{0} - static_cast<uint64_t>(v), 8)),
      V(LE(static_cast<uint64_t>(int64_t{-9000000000} - v), 8)),
      V(Float(1.5f + static_cast<float>(v))),
      V(Double(-2.25e-3 * (v + 1))),
      V(BE(0x80000000u | static_cast<uint32_t>(1234 + v), 4) + BE(56, 1)),  // 1234.56
      V(BE(0x2A5, 2)),
      V(LE(static_cast<uint64_t>(1 + v % 3), 1)),
      V(LE(5, 1)),
      V(LE((2024u << 9) | (2u << 5) | 29u, 3)),
      V(LE(static_cast<uint64_t>(-123456), 3)),
      V(BE(0x800000 + ((10u << 12) | (20u << 6) | 30u), 3) + BE(1230, 2)),
      V(LE(20240229235958ULL, 8)),
      V(DateTime2(2024, 2, 29, 23, 59, 58, 123456 + static_cast<uint32_t>(v))),
      V(LE(1700000000 + static_cast<uint64_t>(v), 4)),
      V(BE(1700000000, 4) + BE(4560, 2)),
      V(LE(124, 1)),
      V(Prefixed(note, 2)),
      V(Prefixed(std::string("\x00\x7f\x80\xff", 4) + "bin", 1)),
      V(Prefixed("Jos\xe9", 1)),
      V(Prefixed(body, 2)),
      V(Prefixed(payload, 3)),
      V(Prefixed(std::string(4, '\0') + std::string("\x01\x01\x00\x00\x00", 5) + Bytes(16, 7), 4)),
      V(Prefixed("\x0c\x03" "abc", 4)),
      V(LE(static_cast<uint64_t>(v), 4)),
      Null(),
  };
}

Image AllNullRow(uint32_t id) {
  Image img(EveryTypeTable()->columns.size(), Null());
  img[0] = V(LE(id, 4));
  return img;
}

// Empty strings are set (isNull false) yet carry no value field.
Image EmptyStringsRow(uint32_t id) {
  Image img = FullRow(id, 3, "", "", "");
  img[22] = V(Prefixed("", 1));
  img[23] = V(Prefixed("", 1));
  return img;
}

std::vector<EntryBuilderOptions> OptionVariants(std::vector<std::unique_ptr<FieldFilter>>* keep_alive,
                                                std::string_view keep_spec, std::string_view drop_spec) {
  std::vector<EntryBuilderOptions> out(1);  // Canal's defaults
  EntryBuilderOptions readable;
  readable.values.readable = true;
  readable.values.timestamp_utc_offset_seconds = 8 * 3600;
  out.push_back(readable);
  std::unique_ptr<FieldFilter> keep, drop;
  EXPECT_TRUE(FieldFilter::Create(keep_spec, "canal.instance.filter.field", &keep).ok());
  EXPECT_TRUE(FieldFilter::Create(drop_spec, "canal.instance.filter.black.field", &drop).ok());
  EntryBuilderOptions kept, dropped, both;
  kept.fields = keep.get();
  dropped.black_fields = drop.get();
  both.fields = keep.get();
  both.black_fields = drop.get();
  out.push_back(kept);
  out.push_back(dropped);
  out.push_back(both);
  keep_alive->push_back(std::move(keep));
  keep_alive->push_back(std::move(drop));
  return out;
}

std::vector<std::unique_ptr<HandEvent>> EveryTypeEvents() {
  auto t = EveryTypeTable();
  const std::string long_note = std::string(150, 'a') + "\xc3\xa9";       // > 127 bytes
  const std::string longer_body = std::string(20000, 'b') + "\xe2\x82\xac";  // > 16383 bytes
  const std::string huge_payload = Bytes(1500000, 3);  // binary: ~2.2 MB as ISO-8859-1 text, 4-byte lengths
  std::vector<std::unique_ptr<HandEvent>> events;
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite,
                             {{FullRow(1, 0, "hello", "text", "\x01\x02"), {}},
                              {AllNullRow(2), {}},
                              {EmptyStringsRow(3), {}},
                              {FullRow(4, 1, long_note, longer_body, huge_payload), {}}}));
  // FULL update images: same values, changed values, NULL <-> value, NULL -> NULL, "" -> "".
  Image changed = FullRow(1, 2, "hello!", "text", "\x01\x02");
  Image to_null = AllNullRow(2);
  Image from_null = FullRow(2, 0, "now set", "x", "y");
  events.push_back(MakeEvent(t, binlog::RowsKind::kUpdate,
                             {{FullRow(1, 0, "hello", "text", "\x01\x02"), changed},
                              {FullRow(1, 0, "same", "same", "same"), FullRow(1, 0, "same", "same", "same")},
                              {AllNullRow(2), from_null},
                              {FullRow(2, 0, "now set", "x", "y"), to_null},
                              {AllNullRow(5), AllNullRow(5)},
                              {EmptyStringsRow(3), EmptyStringsRow(3)},
                              {FullRow(4, 1, long_note, longer_body, "p"), FullRow(4, 1, long_note, "short", "p")}}));
  // MINIMAL images: the key before, a few columns after (some absent before).
  Image key_only(t->columns.size(), Absent());
  key_only[0] = V(LE(7, 4));
  Image some_after(t->columns.size(), Absent());
  some_after[0] = V(LE(7, 4));
  some_after[21] = V(Prefixed(long_note, 2));
  some_after[24] = Null();
  some_after[27] = V(Prefixed("\x04\x01", 4));
  events.push_back(MakeEvent(t, binlog::RowsKind::kUpdate, {{key_only, some_after}, {key_only, some_after}}));
  // NOBLOB-like images: the before image has columns the after one lacks, and
  // the other way round.
  Image before_part = FullRow(8, 0, "b", "b", "b");
  Image after_part = FullRow(8, 1, "a", "b", "b");
  for (size_t i = 20; i < before_part.size(); ++i) after_part[i] = Absent();
  for (size_t i = 1; i < 10; ++i) before_part[i] = Absent();
  events.push_back(MakeEvent(t, binlog::RowsKind::kUpdate, {{before_part, after_part}}));
  events.push_back(MakeEvent(t, binlog::RowsKind::kDelete,
                             {{FullRow(1, 0, "hello", "text", "\x01\x02"), {}}, {AllNullRow(2), {}}}));
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite, {}));  // no rows at all
  return events;
}

TEST(EntryWire, EveryColumnTypeNullsEmptyAndLongValuesMatchProtobuf) {
  std::vector<std::unique_ptr<FieldFilter>> filters;
  auto variants = OptionVariants(&filters, "shop.every_type:id/NOTE/body/payload/tags/doc",
                                 "shop.every_type:payload/place/tiny");
  auto events = EveryTypeEvents();
  for (size_t o = 0; o < variants.size(); ++o) {
    Pair pair(variants[o]);
    for (size_t i = 0; i < events.size(); ++i) {
      pair.Compare(Context(1000 + i), events[i]->ev, "options " + std::to_string(o) + ", event " + std::to_string(i));
    }
    EXPECT_EQ(pair.errors, 0u);
    EXPECT_EQ(pair.rows, 16u);
  }
}

// The RowChange of the entry a default builder makes of `ev` (empty on failure).
entry::RowChange BuildAndParse(const binlog::RowsEvent& ev) {
  EntryBuilder b;
  std::string bytes;
  uint64_t rows = 0;
  entry::Entry e;
  entry::RowChange rc;
  const Status s = b.RowsEntry(Context(4), ev, &bytes, &rows);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(e.ParseFromString(bytes));
  EXPECT_TRUE(rc.ParseFromString(e.storevalue()));
  return rc;
}

TEST(EntryWire, TheHandBuiltEntriesCarryWhatTheyWereBuiltFrom) {
  auto events = EveryTypeEvents();
  const entry::RowChange rc = BuildAndParse(events[0]->ev);
  ASSERT_EQ(rc.rowdatas_size(), 4);
  const auto& first = rc.rowdatas(0).aftercolumns();
  ASSERT_EQ(first.size(), 30);
  EXPECT_EQ(first[0].name(), "id");
  EXPECT_TRUE(first[0].iskey());
  EXPECT_EQ(first[0].value(), "1");
  EXPECT_EQ(first[9].value(), "1234.56");
  EXPECT_EQ(first[23].value(), "Jos\xc3\xa9");
  EXPECT_EQ(first[28].name(), "");
  EXPECT_TRUE(first[29].isnull());
  const auto& empty = rc.rowdatas(2).aftercolumns();
  EXPECT_FALSE(empty[21].isnull());
  EXPECT_EQ(empty[21].value(), "");
  const auto& longest = rc.rowdatas(3).aftercolumns();
  EXPECT_EQ(longest[24].value().size(), 20003u);
  EXPECT_GT(longest[25].value().size(), size_t{1} << 21);
}

// Column.sqlType is Canal's per value (render/canal_sql_type.h): unsigned
// values past the signed range one type up, NULLs the reader's mapping,
// binary strings BLOB, written by the same plan as the value's other fields.
TEST(EntryWire, SqlTypesFollowTheValueAsCanalSetsThem) {
  auto events = EveryTypeEvents();
  const entry::RowChange rc = BuildAndParse(events[0]->ev);
  ASSERT_EQ(rc.rowdatas_size(), 4);
  const auto& full = rc.rowdatas(0).aftercolumns();
  const auto& nulls = rc.rowdatas(1).aftercolumns();
  ASSERT_EQ(full.size(), 30);
  ASSERT_EQ(nulls.size(), 30);
  EXPECT_EQ(full[0].sqltype(), 4);   // INT UNSIGNED 1: fits, INTEGER
  EXPECT_EQ(full[2].value(), "250");
  EXPECT_EQ(full[2].sqltype(), 5);   // TINYINT UNSIGNED 250: SMALLINT
  EXPECT_EQ(nulls[2].sqltype(), -6);  // its NULL: TINYINT
  EXPECT_EQ(full[5].sqltype(), 3);   // BIGINT UNSIGNED near 2^64: DECIMAL
  EXPECT_EQ(nulls[5].sqltype(), -5);
  EXPECT_EQ(full[6].sqltype(), -5);  // signed BIGINT
  EXPECT_EQ(full[12].sqltype(), -7);  // SET
  EXPECT_EQ(nulls[12].sqltype(), -2);
  EXPECT_EQ(full[22].sqltype(), 2004);  // VARBINARY
  EXPECT_EQ(nulls[22].sqltype(), -3);
  EXPECT_EQ(full[24].sqltype(), 2005);  // TEXT
  EXPECT_EQ(nulls[24].sqltype(), -4);
  EXPECT_EQ(full[25].sqltype(), 2004);  // MEDIUMBLOB
  EXPECT_EQ(nulls[25].sqltype(), -4);
  EXPECT_EQ(full[26].sqltype(), 2004);  // GEOMETRY
  EXPECT_EQ(nulls[26].sqltype(), -2);
  EXPECT_EQ(full[27].sqltype(), 12);  // JSON
  EXPECT_EQ(nulls[27].sqltype(), 1111);
  for (int i = 0; i < 30; ++i) EXPECT_TRUE(i == 0 || nulls[i].isnull()) << i;
}

TEST(EntryWire, ContextDefaultsAndExtremesMatchProtobuf) {
  auto events = EveryTypeEvents();
  Pair pair{EntryBuilderOptions{}};
  EntryContext zero;  // every header scalar at its default: left out
  pair.Compare(zero, events[0]->ev, "zero context");
  EntryContext big = Context(uint64_t{1} << 40);
  big.position.timestamp_ms = -1;  // negative int64: ten bytes
  big.position.server_id = 0xFFFFFFFFu;
  big.event_length = uint64_t{1} << 33;
  big.position.gtid = std::string(300, 'g');
  pair.Compare(big, events[1]->ev, "extreme context");

  auto t = std::make_shared<binlog::TableMap>(*events[0]->table);
  t->table_id = 0;  // tableId 0 is left out
  t->db.clear();
  t->table.clear();
  auto h = MakeEvent(t, binlog::RowsKind::kWrite, {{AllNullRow(9), {}}});
  pair.Compare(Context(9), h->ev, "unnamed table");
}

// Decode and render errors: the same Status as before, and *out untouched.
TEST(EntryWire, BadRowsFailWithTheSameErrorAndLeaveTheOutputAlone) {
  auto t = EveryTypeTable();
  Pair pair{EntryBuilderOptions{}};
  Image bad_json = FullRow(1, 0, "x", "y", "z");
  bad_json[27] = V(Prefixed("\x04\x07", 4));  // unknown JSON literal
  auto h = MakeEvent(t, binlog::RowsKind::kWrite, {{FullRow(1, 0, "x", "y", "z"), {}}, {bad_json, {}}});
  pair.Compare(Context(10), h->ev, "bad JSON in row 2");

  auto truncated = MakeEvent(t, binlog::RowsKind::kWrite, {{FullRow(1, 0, "x", "y", "z"), {}}});
  truncated->bytes.resize(truncated->bytes.size() - 3);
  truncated->ev.rows = truncated->bytes;
  pair.Compare(Context(11), truncated->ev, "truncated row");

  auto bad_update = MakeEvent(t, binlog::RowsKind::kUpdate, {{FullRow(1, 0, "x", "y", "z"), bad_json}});
  pair.Compare(Context(12), bad_update->ev, "bad JSON in an after image");
  EXPECT_EQ(pair.errors, 3u);

  // The writer still works after an error.
  auto good = MakeEvent(t, binlog::RowsKind::kWrite, {{FullRow(1, 0, "x", "y", "z"), {}}});
  pair.Compare(Context(13), good->ev, "good after bad");
  EXPECT_EQ(pair.errors, 3u);
}

// A freed TableMap's address is often reused for the next TABLE_MAP: the cache
// must notice that the definition behind the same pointer and id changed.
TEST(EntryWire, ATableMapChangedBehindTheSamePointerIsNotServedFromTheCache) {
  auto t = EveryTypeTable();
  Pair pair{EntryBuilderOptions{}};
  auto h = MakeEvent(t, binlog::RowsKind::kWrite, {{FullRow(1, 0, "x", "y", "z"), {}}});
  pair.Compare(Context(20), h->ev, "first definition");
  t->columns[1].name = "renamed";
  pair.Compare(Context(21), h->ev, "renamed column");
  t->columns[2].is_unsigned = false;
  pair.Compare(Context(22), h->ev, "signedness changed");
  t->columns[11].enum_or_set_labels.push_back("violet");
  pair.Compare(Context(23), h->ev, "enum labels changed");
  t->columns[0].is_key = false;
  pair.Compare(Context(24), h->ev, "key changed");
  t->table = "other";
  pair.Compare(Context(25), h->ev, "table renamed");
  t->table_id = 99;
  h->ev.table_id = 99;
  pair.Compare(Context(26), h->ev, "new id");
  EXPECT_EQ(pair.errors, 0u);
}

TEST(EntryWire, ManyTablesEvictOldPlansAndStayCorrect) {
  wire::RowsEntryWriter writer{EntryBuilderOptions{}};
  wire::ReferenceRowsEntryBuilder reference{EntryBuilderOptions{}};
  std::vector<std::unique_ptr<HandEvent>> events;
  for (int round = 0; round < 2; ++round) {
    for (uint64_t id = 1; id <= 100; ++id) {
      auto t = std::make_shared<binlog::TableMap>();
      t->table_id = id;
      t->db = "db";
      t->table = "t" + std::to_string(id);
      t->columns.push_back(Col("c" + std::to_string(id % 7), ColumnType::kLong));
      auto h = MakeEvent(t, binlog::RowsKind::kWrite, {{{V(LE(id, 4))}, {}}});
      std::string want, got;
      uint64_t wn = 0, gn = 0;
      ASSERT_TRUE(reference.Write(Context(id), h->ev, &want, &wn).ok());
      ASSERT_TRUE(writer.Write(Context(id), h->ev, &got, &gn).ok());
      ExpectSameEntry(want, got, "table " + std::to_string(id));
      events.push_back(std::move(h));  // keep the maps alive: distinct addresses
    }
  }
  EXPECT_LE(writer.cached_tables(), 64u);
}

TEST(EntryWire, TransactionEntriesAllocateNothingOnceTheBufferIsWarm) {
  EntryBuilder b;
  const EntryContext ctx = Context(1234);
  std::string out;
  ASSERT_TRUE(b.BeginEntry(ctx, 1, &out).ok());
  ASSERT_TRUE(b.EndEntry(ctx, "1", &out).ok());
  testing::CountAllocations count;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(b.BeginEntry(ctx, 1, &out).ok());
    ASSERT_TRUE(b.EndEntry(ctx, "1", &out).ok());
  }
  EXPECT_EQ(count.allocations(), 0u);
}

TEST(EntryWire, RowsAllocateNothingOnceTheBuffersAreWarm) {
  auto t = EveryTypeTable();
  std::vector<std::pair<Image, Image>> rows;
  for (uint32_t i = 0; i < 500; ++i) {
    rows.push_back({FullRow(i, static_cast<int>(i % 5), "note " + std::to_string(i), "body", "payload"),
                    FullRow(i, static_cast<int>(i % 3), "note", "body", "payload")});
  }
  auto update = MakeEvent(t, binlog::RowsKind::kUpdate, rows);
  std::unique_ptr<FieldFilter> drop;
  ASSERT_TRUE(FieldFilter::Create("shop.every_type:place", "canal.instance.filter.black.field", &drop).ok());
  EntryBuilderOptions o;
  o.black_fields = drop.get();
  EntryBuilder b(o);
  const EntryContext ctx = Context(30);
  std::string out;
  uint64_t n = 0;
  // Warm up: the writer writes into its own buffer and swaps it with the
  // caller's, so two buffers take turns (as in EntrySink, whose buffers come
  // back from the ring).
  ASSERT_TRUE(b.RowsEntry(ctx, update->ev, &out, &n).ok());
  ASSERT_TRUE(b.RowsEntry(ctx, update->ev, &out, &n).ok());
  canal::testing::g_allocations = 0;
  canal::testing::g_count_allocations = true;
  const Status s = b.RowsEntry(ctx, update->ev, &out, &n);
  canal::testing::g_count_allocations = false;
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(n, 500u);
  EXPECT_EQ(canal::testing::g_allocations, 0u);
}

// ---- big values: rendered straight into the entry ------------------------------------

// Values of 64 KiB and more are rendered straight into the entry (framed after,
// and moved down) and never kept as text beside it; the bytes must not change,
// nor an update's `updated` flags (compared with the before text in the entry).
std::shared_ptr<binlog::TableMap> BigValueTable() {
  auto t = std::make_shared<binlog::TableMap>();
  t->table_id = 77;
  t->db = "shop";
  t->table = "big_values";
  t->names_known = t->keys_known = true;
  t->columns.push_back(Col("id", ColumnType::kLong));
  t->columns.back().is_key = true;
  t->columns.push_back(Col("blob", ColumnType::kBlob, 4));
  t->columns.back().charset = 63;  // LONGBLOB: ISO-8859-1 text (or base64)
  t->columns.push_back(Col("text", ColumnType::kBlob, 4));
  t->columns.back().charset = 45;  // LONGTEXT utf8mb4: copied through
  t->columns.push_back(Col("latin", ColumnType::kBlob, 4));
  t->columns.back().charset = 8;  // LONGTEXT latin1: converted
  return t;
}

Image BigRow(uint32_t id, Cell blob, Cell text, Cell latin) { return {V(LE(id, 4)), blob, text, latin}; }
Cell Big(const std::string& s) { return V(Prefixed(s, 4)); }

TEST(EntryWire, BigValuesRenderedInPlaceMatchProtobufAndTheirUpdatedFlags) {
  auto t = BigValueTable();
  const std::string blob_a = Bytes(200000, 1), blob_b = Bytes(200000, 2);
  const std::string text_a = std::string(100000, 'x') + "\xc3\xa9", text_b = std::string(100000, 'y') + "\xc3\xa9";
  const std::string latin_a(70000, '\xe9'), latin_b(70000, '\xe8');
  // Either side of the threshold with texts of the same size: 65536 ASCII
  // bytes, and 65535 bytes whose last one renders as two.
  const std::string at_threshold(65536, 'a'), below = std::string(65534, 'a') + "\xe9";
  std::vector<std::unique_ptr<HandEvent>> events;
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite,
                             {{BigRow(1, Big(blob_a), Big(text_a), Big(latin_a)), {}},
                              {BigRow(2, Big("ab"), Big(text_b), Null()), {}},
                              {BigRow(3, Big(blob_b), Big("t"), Big(at_threshold)), {}}}));
  events.push_back(MakeEvent(
      t, binlog::RowsKind::kUpdate,
      {{BigRow(1, Big(blob_a), Big(text_a), Big(latin_a)), BigRow(1, Big(blob_a), Big(text_a), Big(latin_a))},
       {BigRow(1, Big(blob_a), Big(text_a), Big(latin_a)), BigRow(1, Big(blob_b), Big(text_b), Big(latin_b))},
       {BigRow(2, Big(blob_a), Big(text_a), Big(at_threshold)), BigRow(2, Big("x"), Null(), Big(below))},
       {BigRow(3, Null(), Big("small"), Big(below)), BigRow(3, Big(blob_b), Big(text_a), Big(at_threshold))},
       {BigRow(4, Big(blob_a), Big(text_a), Big(latin_a)), BigRow(4, Big(blob_a), Big(text_a), Big(latin_b))}}));
  events.push_back(MakeEvent(t, binlog::RowsKind::kDelete, {{BigRow(5, Big(blob_b), Big(text_b), Big(latin_b)), {}}}));
  std::vector<std::unique_ptr<FieldFilter>> filters;
  for (const EntryBuilderOptions& o : OptionVariants(&filters, "shop.big_values:id/blob/latin", "shop.big_values:text")) {
    Pair pair(o);
    for (size_t i = 0; i < events.size(); ++i) pair.Compare(Context(2000 + i), events[i]->ev, "event " + std::to_string(i));
    EXPECT_EQ(pair.errors, 0u);
    EXPECT_EQ(pair.rows, 9u);
  }
  // The flags themselves (the reference could share a mistake in principle).
  const entry::RowChange rc = BuildAndParse(events[1]->ev);
  ASSERT_EQ(rc.rowdatas_size(), 5);
  const auto updated = [&](int row, int column) { return rc.rowdatas(row).aftercolumns(column).updated(); };
  EXPECT_FALSE(updated(0, 1) || updated(0, 2) || updated(0, 3)) << "same big values";
  EXPECT_TRUE(updated(1, 1) && updated(1, 2) && updated(1, 3)) << "different bytes, same sizes";
  EXPECT_TRUE(updated(2, 3) && updated(3, 3)) << "either side of the threshold, same text size";
  EXPECT_FALSE(updated(4, 1) || updated(4, 2));
  EXPECT_TRUE(updated(4, 3)) << "latin1 bytes that differ, rendered again to compare";
  EXPECT_EQ(rc.rowdatas(1).aftercolumns(2).value(), text_b);
}

// The writer guesses the lengths that precede what they measure (a Column's
// body and value lengths, `updated`, a RowData's length, the entry's prefix
// with its row count) and moves the bytes when a guess misses: every miss
// here, in both directions, must give protobuf's bytes.
TEST(EntryWire, GuessedLengthsThatMissMoveTheBytesIntoPlace) {
  auto t = std::make_shared<binlog::TableMap>();
  t->table_id = 91;
  t->db = "shop";
  t->table = "guesses";
  t->names_known = t->keys_known = true;
  // A name long enough that its Column's body takes two length bytes.
  t->columns.push_back(Col(std::string(150, 'c'), ColumnType::kLong));
  t->columns.back().is_key = true;
  t->columns.push_back(Col("n", ColumnType::kLongLong));
  t->columns.push_back(Col("d", ColumnType::kDouble, 8));
  t->columns.push_back(Col("s", ColumnType::kVarchar, 65535));
  t->columns.back().max_length = 65535;
  t->columns.back().charset = 45;
  const auto row = [](uint32_t id, uint64_t n, double d, size_t s_size) {
    uint64_t bits = 0;
    std::memcpy(&bits, &d, 8);
    return Image{V(LE(id, 4)), V(LE(n, 8)), V(LE(bits, 8)), V(Prefixed(std::string(s_size, 's'), 2))};
  };
  std::vector<std::unique_ptr<HandEvent>> events;
  // Row counts of 1, 12, 1, 150 (the rowsCount text and the change's length
  // grow and shrink); rows of ~200 bytes, ~20 KiB (three length bytes) and back.
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite, {{row(1, 5, 1.5, 3), {}}}));
  std::vector<std::pair<Image, Image>> twelve;
  for (uint32_t i = 0; i < 12; ++i) twelve.push_back({row(i, i, i * 0.25, i % 3 == 0 ? 20000 : 10), {}});
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite, twelve));
  events.push_back(MakeEvent(t, binlog::RowsKind::kDelete, {{row(2, 6, -2.5, 0), {}}}));
  std::vector<std::pair<Image, Image>> many;
  for (uint32_t i = 0; i < 150; ++i) many.push_back({row(i, uint64_t{1} << (i % 64), 1e300 / (i + 1), i), {}});
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite, many));
  // Updates: the after image guesses `updated` false for numbers; changed and
  // unchanged values of every kind, and a value whose text grows.
  events.push_back(MakeEvent(t, binlog::RowsKind::kUpdate,
                             {{row(1, 5, 1.5, 3), row(1, 5, 1.5, 3)},
                              {row(1, 5, 1.5, 3), row(2, 6, 2.5, 4)},
                              {row(1, 5, 1.5, 3), row(1, 500000000000, 1.5e-300, 20000)},
                              {row(1, 5, 1.5, 20000), row(1, 5, 1.5, 20000)}}));
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite, {}));
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite, {{row(3, 7, 0.0, 1), {}}}));
  std::vector<std::unique_ptr<FieldFilter>> filters;
  for (const EntryBuilderOptions& o : OptionVariants(&filters, "shop.guesses:n/s", "shop.guesses:d")) {
    Pair pair(o);
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < events.size(); ++i) {
        pair.Compare(Context(3000 + i), events[i]->ev, "round " + std::to_string(round) + " event " + std::to_string(i));
      }
    }
    EXPECT_EQ(pair.errors, 0u);
    EXPECT_EQ(pair.rows, 2u * (1 + 12 + 1 + 150 + 4 + 0 + 1));
  }
  const entry::RowChange rc = BuildAndParse(events[4]->ev);
  ASSERT_EQ(rc.rowdatas_size(), 4);
  for (int c = 0; c < 4; ++c) EXPECT_FALSE(rc.rowdatas(0).aftercolumns(c).updated()) << "unchanged row, column " << c;
  for (int c = 0; c < 4; ++c) EXPECT_TRUE(rc.rowdatas(1).aftercolumns(c).updated()) << "changed row, column " << c;
  EXPECT_EQ(rc.rowdatas(2).aftercolumns(1).value(), "500000000000");
  EXPECT_EQ(rc.rowdatas(0).aftercolumns(0).name(), std::string(150, 'c'));
}

TEST(EntryWire, ABigValueIsHeldOnceWhileItsEntryIsWritten) {
  // 16 MiB of ASCII: its text is as long as its bytes, so the entry is ~16 MiB.
  constexpr size_t kSize = size_t{16} << 20;
  std::string value(kSize, '\0');
  for (size_t i = 0; i < kSize; ++i) value[i] = static_cast<char>('a' + i % 26);
  auto ev = MakeEvent(BigValueTable(), binlog::RowsKind::kWrite, {{BigRow(1, Big(value), Big("t"), Null()), {}}});
  value = std::string();
  EntryBuilder b;
  std::string out;
  uint64_t n = 0;
  ASSERT_TRUE(b.RowsEntry(Context(8), ev->ev, &out, &n).ok());  // warm: plans, small buffers
  std::string entry;
  long long peak = 0;
  {
    testing::PeakBytes measure;
    ASSERT_TRUE(b.RowsEntry(Context(8), ev->ev, &entry, &n).ok());
    peak = measure.peak();
  }
  ASSERT_GT(entry.size(), kSize);
  // Rendering into a buffer first and then into the entry would hold 2x.
  EXPECT_LT(peak, static_cast<long long>(entry.size() + entry.size() / 4))
      << "peak heap while writing a " << entry.size() << "-byte entry";
  EXPECT_EQ(entry, out);
}

// ---- fixture binlogs ---------------------------------------------------------------

// Every binlog file under fixtures/binlog (by its magic number), MariaDB first.
std::vector<std::string> FixtureBinlogs() {
  std::vector<std::string> out;
  const std::string root = testing::FixturePath("");
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::ifstream f(it->path(), std::ios::binary);
    char magic[4] = {};
    if (!f.read(magic, 4) || std::memcmp(magic, "\xfe" "bin", 4) != 0) continue;
    out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    const bool am = a.find("mariadb-10.11") != std::string::npos, bm = b.find("mariadb-10.11") != std::string::npos;
    return am != bm ? am : a < b;
  });
  return out;
}

TEST(EntryWireFixture, EveryRowsEventOfEveryFixtureBinlogMatchesProtobuf) {
  CANAL_REQUIRE_FIXTURES();
  const auto files = FixtureBinlogs();
  std::vector<std::unique_ptr<FieldFilter>> filters;
  // Columns by common names across the fixtures' tables.
  auto variants = OptionVariants(&filters, ".*\\..*:id/name/c1/col1/value", ".*\\..*:id/data/b");
  uint64_t mariadb_events = 0, events = 0, rows = 0, errors = 0;
  g_unparsable = 0;
  for (const std::string& path : files) {
    std::vector<std::unique_ptr<Pair>> pairs;
    for (const auto& o : variants) pairs.push_back(std::make_unique<Pair>(o));
    testing::WalkOptions wo;
    wo.continue_after_corrupt_event = true;
    wo.on_event = [&](const binlog::Event& ev) -> Status {
      const auto* re = ev.As<binlog::RowsEvent>();
      if (re == nullptr) return Status::OK();
      EntryContext ctx = Context(ev.offset);
      ctx.position.server_id = ev.header.server_id;
      ctx.position.timestamp_ms = int64_t{ev.header.timestamp} * 1000;
      ctx.event_length = ev.header.event_size;
      for (size_t o = 0; o < pairs.size(); ++o) {
        pairs[o]->Compare(ctx, *re, path + " @" + std::to_string(ev.offset) + " options " + std::to_string(o));
      }
      ++events;
      if (path.find("mariadb-10.11") != std::string::npos) ++mariadb_events;
      return Status::OK();
    };
    testing::WalkBinlog(path, wo);  // files that stop decoding part-way still compare what decoded
    rows += pairs[0]->rows;
    errors += pairs[0]->errors;
  }
  EXPECT_GT(mariadb_events, 10u) << "the MariaDB fixtures hold many rows events";
  EXPECT_GT(rows, 0u);
  std::cout << "[ compared " << events << " rows events (" << rows << " rows) in " << files.size()
            << " fixture binlogs, " << variants.size() << " option sets each; " << errors
            << " events failed alike in both; " << g_unparsable << " entries compared as bytes only ]\n";
}

}  // namespace
}  // namespace canal::sink
