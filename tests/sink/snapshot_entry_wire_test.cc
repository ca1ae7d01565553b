// Snapshot rows on the wire: EntryBuilder::SnapshotRow renders a row (the
// decoder's values) as the RowData field RowsEntry writes for the same row of a
// WRITE_ROWS event, and SnapshotRowsEntry wraps such rows in the ROWDATA
// INSERT entry. For every column type, NULLs, empty and invalid UTF-8 strings,
// unsigned promotion, big values and field filters, the entry made from the
// rows is byte for byte the one made from the event; with extra header props
// it is the reference (protobuf objects) entry with those props.
#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "canal/entry.pb.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/sink/entry_builder.h"
#include "canal/sink/entry_sink.h"
#include "hand_rows.h"
#include "support/entry_wire_reference.h"

// Beside the hand-built events it reads (hand_rows.h).
namespace canal::sink::testing_support {
namespace {

using binlog::ColumnType;

// WRITE_ROWS events over every column type and over big values.
std::vector<std::unique_ptr<HandEvent>> InsertEvents() {
  auto t = EveryTypeTable();
  const std::string long_note = std::string(150, 'a') + "\xc3\xa9";
  const std::string longer_body = std::string(20000, 'b') + "\xe2\x82\xac";
  // Not UTF-8 in utf8mb4 columns: rendered, not copied through.
  const std::string bad_note = "caf\xe9 \xff\xfe", bad_body = std::string(300, 'x') + "\xc3";
  Image small_unsigned = FullRow(6, 4, "u", "b", "p");
  small_unsigned[2] = V(LE(100, 1));  // TINYINT UNSIGNED 100: not promoted
  small_unsigned[5] = V(LE(9, 8));    // BIGINT UNSIGNED 9: not promoted
  std::vector<std::unique_ptr<HandEvent>> events;
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite,
                             {{FullRow(1, 0, "hello", "text", "\x01\x02"), {}},
                              {AllNullRow(2), {}},
                              {EmptyStringsRow(3), {}},
                              {FullRow(4, 1, long_note, longer_body, Bytes(1500000, 3)), {}},
                              {FullRow(5, 2, bad_note, bad_body, "p"), {}},
                              {small_unsigned, {}}}));
  // Columns absent from the image are left out, as the event's are.
  Image partial = FullRow(7, 3, "partial", "b", "p");
  for (size_t i = 10; i < 20; ++i) partial[i] = Absent();
  events.push_back(MakeEvent(t, binlog::RowsKind::kWrite, {{partial, {}}, {partial, {}}}));
  const std::string blob(200000, '\x7f'), text = std::string(100000, 'x') + "\xc3\xa9", latin(70000, '\xe9');
  const std::string at_threshold(65536, 'a'), below = std::string(65534, 'a') + "\xe9";
  const std::string huge(size_t{3} << 20, '\xb5');
  events.push_back(MakeEvent(BigValueTable(), binlog::RowsKind::kWrite,
                             {{BigRow(1, Big(blob), Big(text), Big(latin)), {}},
                              {BigRow(2, Big("ab"), Null(), Big(at_threshold)), {}},
                              {BigRow(3, Null(), Big("t"), Big(below)), {}},
                              // Over 1 MiB of values: a snapshot writes it in its rows buffer.
                              {BigRow(4, Big(huge), Big(text), Big(latin)), {}}}));
  return events;
}

// The rows of `ev` as a snapshot driver renders them, concatenated.
Status SnapshotRows(EntryBuilder* driver, const binlog::RowsEvent& ev, std::string* rows, uint64_t* count) {
  binlog::RowsReader reader;
  binlog::RowChange change;
  reader.Reset(ev);
  *count = 0;
  while (true) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader.Next(&change, &done));
    if (done) return Status::OK();
    CANAL_RETURN_IF_ERROR(driver->SnapshotRow(*ev.table, change.after.values, rows));
    ++*count;
  }
}

TEST(SnapshotEntryWire, RowsEntryOfSnapshotRowsIsTheWriteRowsEntryByteForByte) {
  std::vector<std::unique_ptr<FieldFilter>> filters;
  auto variants = OptionVariants(&filters, "shop.every_type:id/NOTE/body/payload/tags/doc,shop.big_values:id/blob",
                                 "shop.every_type:payload/place/tiny,shop.big_values:latin");
  auto events = InsertEvents();
  for (size_t o = 0; o < variants.size(); ++o) {
    // The driver's builder and the sink's, from the same options: the rows
    // one renders are wrapped by the other. Kept across events and tables.
    EntryBuilder driver(variants[o]), sink(variants[o]);
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < events.size(); ++i) {
        const std::string what = "options " + std::to_string(o) + ", event " + std::to_string(i);
        const EntryContext ctx = Context(500 + i);
        std::string want, got, rows = "left alone";
        uint64_t want_rows = 0, count = 0;
        ASSERT_TRUE(sink.RowsEntry(ctx, events[i]->ev, &want, &want_rows).ok()) << what;
        ASSERT_TRUE(SnapshotRows(&driver, events[i]->ev, &rows, &count).ok()) << what;
        ASSERT_EQ(rows.substr(0, 10), "left alone") << what << ": rows are appended";
        EXPECT_EQ(count, want_rows) << what;
        ASSERT_TRUE(sink.SnapshotRowsEntry(ctx, *events[i]->table, std::string_view(rows).substr(10), count, {}, &got)
                        .ok());
        ExpectSameEntry(want, got, what);
      }
    }
  }
}

TEST(SnapshotEntryWire, ExtraPropsFollowRowsCountAsProtobufWritesThem) {
  auto events = InsertEvents();
  const HeaderProp marker[] = {{kSnapshotPropKey, kSnapshotPropValue}};
  // Empty keys and values are left out of their Pair; a long value takes a
  // two-byte length.
  const std::string long_value(300, 'p');
  const HeaderProp several[] = {
      {kSnapshotPropKey, kSnapshotPropValue}, {"k", ""}, {"", "v"}, {"", ""}, {"long", long_value}};
  const std::span<const HeaderProp> prop_sets[] = {marker, several};
  EntryBuilder driver, sink;
  wire::ReferenceRowsEntryBuilder reference{EntryBuilderOptions{}};
  for (const std::span<const HeaderProp> props : prop_sets) {
    for (size_t i = 0; i < events.size(); ++i) {
      const std::string what = std::to_string(props.size()) + " props, event " + std::to_string(i);
      const EntryContext ctx = Context(700 + i);
      std::string want, got, rows;
      uint64_t want_rows = 0, count = 0;
      ASSERT_TRUE(reference.Write(ctx, events[i]->ev, &want, &want_rows, props).ok()) << what;
      ASSERT_TRUE(SnapshotRows(&driver, events[i]->ev, &rows, &count).ok()) << what;
      ASSERT_TRUE(sink.SnapshotRowsEntry(ctx, *events[i]->table, rows, count, props, &got).ok()) << what;
      ExpectSameEntry(want, got, what);
      if (i == 0) continue;  // the first event's invalid UTF-8 stops protobuf's parser
      entry::Entry e;
      ASSERT_TRUE(e.ParseFromString(got)) << what;
      ASSERT_EQ(e.header().props_size(), static_cast<int>(props.size()) + 1) << what;
      EXPECT_EQ(e.header().props(0).key(), "rowsCount");
      EXPECT_EQ(e.header().props(0).value(), std::to_string(count));
      for (size_t p = 0; p < props.size(); ++p) {
        EXPECT_EQ(e.header().props(static_cast<int>(p) + 1).key(), props[p].key) << what;
        EXPECT_EQ(e.header().props(static_cast<int>(p) + 1).value(), props[p].value) << what;
      }
      EXPECT_EQ(e.header().eventtype(), entry::INSERT);
      entry::RowChange rc;
      ASSERT_TRUE(rc.ParseFromString(e.storevalue()));
      EXPECT_EQ(rc.rowdatas_size(), static_cast<int>(count));
      EXPECT_EQ(rc.tableid(), static_cast<int64_t>(events[i]->table->table_id));
      EXPECT_FALSE(rc.isddl());
    }
  }
}

// tableId 0 and an empty table name are left out, as protobuf leaves them out;
// no rows at all is still an entry (the sink never asks for one).
TEST(SnapshotEntryWire, DefaultsAndNoRowsMatchTheReference) {
  auto t = std::make_shared<binlog::TableMap>(*EveryTypeTable());
  t->table_id = 0;
  t->db.clear();
  t->table.clear();
  auto ev = MakeEvent(t, binlog::RowsKind::kWrite, {{AllNullRow(9), {}}});
  auto none = MakeEvent(t, binlog::RowsKind::kWrite, {});
  const HeaderProp marker[] = {{kSnapshotPropKey, kSnapshotPropValue}};
  EntryBuilder b;
  wire::ReferenceRowsEntryBuilder reference{EntryBuilderOptions{}};
  for (const auto* h : {ev.get(), none.get()}) {
    for (const EntryContext& ctx : {EntryContext{}, Context(9)}) {
      std::string want, got, rows;
      uint64_t want_rows = 0, count = 0;
      ASSERT_TRUE(reference.Write(ctx, h->ev, &want, &want_rows, marker).ok());
      ASSERT_TRUE(SnapshotRows(&b, h->ev, &rows, &count).ok());
      ASSERT_TRUE(b.SnapshotRowsEntry(ctx, *t, rows, count, marker, &got).ok());
      ExpectSameEntry(want, got, "unnamed table, " + std::to_string(count) + " rows");
    }
  }
}

TEST(SnapshotEntryWire, ABadRowLeavesTheRowsAsTheyWere) {
  auto t = EveryTypeTable();
  auto good = MakeEvent(t, binlog::RowsKind::kWrite, {{FullRow(1, 0, "x", "y", "z"), {}}});
  Image bad_json = FullRow(2, 0, "x", "y", "z");
  bad_json[27] = V(Prefixed("\x04\x07", 4));  // unknown JSON literal
  auto bad = MakeEvent(t, binlog::RowsKind::kWrite, {{bad_json, {}}});
  EntryBuilder b;
  std::string rows;
  uint64_t count = 0;
  ASSERT_TRUE(SnapshotRows(&b, good->ev, &rows, &count).ok());
  const std::string before = rows;
  const Status s = SnapshotRows(&b, bad->ev, &rows, &count);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("`shop`.`every_type`"), std::string::npos) << s.ToString();
  EXPECT_EQ(rows, before);

  // A value per column, no more and no fewer.
  binlog::RowsReader reader;
  binlog::RowChange change;
  reader.Reset(good->ev);
  bool done = false;
  ASSERT_TRUE(reader.Next(&change, &done).ok());
  const std::span<const binlog::ColumnValue> values = change.after.values;
  const Status short_row = b.SnapshotRow(*t, values.first(values.size() - 1), &rows);
  EXPECT_EQ(short_row.code(), Status::Code::kInvalidArgument) << short_row.ToString();
  EXPECT_EQ(rows, before);

  // The builder still works after an error: the same row again.
  ASSERT_TRUE(b.SnapshotRow(*t, values, &rows).ok());
  EXPECT_EQ(rows, before + before);
}

// shop.plan (id INT, n INT), table id 5.
std::shared_ptr<binlog::TableMap> TwoIntTable() {
  auto t = std::make_shared<binlog::TableMap>();
  t->table_id = 5;
  t->db = "shop";
  t->table = "plan";
  t->columns.push_back(Col("id", ColumnType::kLong));
  t->columns.push_back(Col("n", ColumnType::kLong));
  return t;
}

// A table whose definition changed behind the same TableMap between rows gets
// a new plan (the cache compares the definition, not the address).
TEST(SnapshotEntryWire, AChangedTableMapIsNotServedFromTheCache) {
  auto t = TwoIntTable();
  auto ev = MakeEvent(t, binlog::RowsKind::kWrite, {{{V(LE(1, 4)), V(LE(2, 4))}, {}}});
  EntryBuilder driver, sink;
  for (int change = 0; change < 3; ++change) {
    if (change == 1) t->columns[1].name = "renamed";
    if (change == 2) t->columns[0].is_key = true;
    std::string want, got, rows;
    uint64_t want_rows = 0, count = 0;
    ASSERT_TRUE(sink.RowsEntry(Context(1), ev->ev, &want, &want_rows).ok());
    ASSERT_TRUE(SnapshotRows(&driver, ev->ev, &rows, &count).ok());
    ASSERT_TRUE(sink.SnapshotRowsEntry(Context(1), *t, rows, count, {}, &got).ok());
    ExpectSameEntry(want, got, "change " + std::to_string(change));
  }
}

// With a table version (the snapshot reader's promise that the TableMap is unchanged while the
// version is) the plan is looked up once per version: a new version after the definition changed
// gets the new plan, and a plan looked up for another table in between does not leave the
// version pointing at a plan that was rebuilt for that other table.
TEST(SnapshotEntryWire, ATableVersionKeepsThePlanUntilANewVersionOrAnotherTable) {
  auto t = TwoIntTable();
  auto other = std::make_shared<binlog::TableMap>();  // not a copy: that would share t's layout id
  other->table_id = 6;
  other->db = "shop";
  other->table = "other";
  other->columns.push_back(Col("id", ColumnType::kLong));
  other->columns.push_back(Col("s", ColumnType::kVarchar, 20));
  other->columns.back().max_length = 20;
  other->columns.back().charset = 45;  // utf8mb4
  auto ev = MakeEvent(t, binlog::RowsKind::kWrite, {{{V(LE(1, 4)), V(LE(2, 4))}, {}}});
  auto other_ev = MakeEvent(other, binlog::RowsKind::kWrite, {{{V(LE(1, 4)), V(Prefixed("x", 1))}, {}}});
  EntryBuilder driver, sink;
  const auto row_of = [&](const HandEvent& e) {
    binlog::RowsReader reader;
    binlog::RowChange change;
    reader.Reset(e.ev);
    bool done = false;
    EXPECT_TRUE(reader.Next(&change, &done).ok());
    return std::vector<binlog::ColumnValue>(change.after.values.begin(), change.after.values.end());
  };
  const auto expect_entry = [&](uint64_t version, const std::string& what) {
    std::string want, got, rows;
    uint64_t want_rows = 0;
    ASSERT_TRUE(sink.RowsEntry(Context(1), ev->ev, &want, &want_rows).ok());
    const std::vector<binlog::ColumnValue> values = row_of(*ev);
    ASSERT_TRUE(driver.SnapshotRow(*t, values, &rows, version).ok());
    ASSERT_TRUE(driver.SnapshotRow(*t, values, &rows, version).ok());  // the cached plan
    ASSERT_TRUE(sink.SnapshotRowsEntry(Context(1), *t, rows.substr(0, rows.size() / 2), 1, {}, &got).ok());
    ExpectSameEntry(want, got, what);
    EXPECT_EQ(rows.substr(0, rows.size() / 2), rows.substr(rows.size() / 2)) << what;
  };
  expect_entry(1, "version 1");
  t->columns[1].name = "renamed";
  expect_entry(2, "version 2 after a rename");
  // Another table's rows through the same writer, then the first table's version again.
  std::string other_rows;
  const std::vector<binlog::ColumnValue> other_values = row_of(*other_ev);
  ASSERT_TRUE(driver.SnapshotRow(*other, other_values, &other_rows, 3).ok());
  std::string unused;
  uint64_t unused_rows = 0;
  ASSERT_TRUE(driver.RowsEntry(Context(1), other_ev->ev, &unused, &unused_rows).ok());
  expect_entry(2, "version 2 after another table");
  // Enough other tables (more than the writer caches plans for) that the first table's plan is
  // evicted and its place taken by one of them: version 2 must not find that one.
  for (uint64_t id = 100; id < 200; ++id) {
    other->table_id = id;
    other->table = "other" + std::to_string(id);
    ASSERT_TRUE(driver.RowsEntry(Context(1), other_ev->ev, &unused, &unused_rows).ok());
  }
  expect_entry(2, "version 2 after its plan was evicted");
  t->columns[0].is_key = true;
  expect_entry(0, "no version after a key change");
}

}  // namespace
}  // namespace canal::sink::testing_support
