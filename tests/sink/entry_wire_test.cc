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
#include "hand_rows.h"

#include "support/allocation_counter.h"

namespace canal::sink {
namespace {

using binlog::ColumnInfo;
using binlog::ColumnType;
using google::protobuf::util::MessageDifferencer;
// The hand-built events (hand_rows.h).
using testing_support::Absent;
using testing_support::AllNullRow;
using testing_support::Big;
using testing_support::BigRow;
using testing_support::BigValueTable;
using testing_support::Bytes;
using testing_support::Cell;
using testing_support::Col;
using testing_support::Context;
using testing_support::EveryTypeEvents;
using testing_support::EveryTypeTable;
using testing_support::ExpectSameEntry;
using testing_support::FullRow;
using testing_support::g_unparsable;
using testing_support::HandEvent;
using testing_support::Image;
using testing_support::LE;
using testing_support::MakeEvent;
using testing_support::Null;
using testing_support::OptionVariants;
using testing_support::Prefixed;
using testing_support::V;

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
