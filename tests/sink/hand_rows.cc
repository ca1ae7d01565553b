// Hand-built rows events and their comparison with the reference (hand_rows.h).
#include "hand_rows.h"

#include <gtest/gtest.h>

#include <google/protobuf/util/message_differencer.h>

#include <cstring>
#include <utility>

#include "canal/entry.pb.h"

namespace canal::sink::testing_support {

using binlog::ColumnInfo;
using binlog::ColumnType;
using google::protobuf::util::MessageDifferencer;

size_t g_unparsable = 0;

size_t FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

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

Cell V(std::string raw) { return Cell{Cell::kValue, std::move(raw)}; }
Cell Null() { return Cell{Cell::kNull, {}}; }
Cell Absent() { return Cell{Cell::kAbsent, {}}; }

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

ColumnInfo Col(std::string name, ColumnType type, uint16_t meta) {
  ColumnInfo c;
  c.type = c.real_type = type;
  c.meta = meta;
  c.name = std::move(name);
  c.signedness_known = true;
  return c;
}

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

}  // namespace canal::sink::testing_support
