// A rows event is checked whole before any of its changes leaves RowsReader
//: a last row cut short, a length running past the end in the middle
// row of several, a corrupt row that only shows as trouble rows later, in
// events small enough to be held and large enough to be checked and decoded
// again: no change at all comes out, every call returns the error, and the
// error names the file, the offset and the row.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::binlog {
namespace {

ColumnInfo Col(std::string name, ColumnType type) {
  ColumnInfo c;
  c.name = std::move(name);
  c.type = type;
  c.real_type = type;
  c.charset = 33;
  return c;
}

// (id INT, v VARCHAR(20), n BIGINT)
TableMap Table() {
  TableMap t;
  t.db = "db";
  t.table = "t";
  t.columns.push_back(Col("id", ColumnType::kLong));
  ColumnInfo v = Col("v", ColumnType::kVarchar);
  v.max_length = 20;
  t.columns.push_back(v);
  t.columns.push_back(Col("n", ColumnType::kLongLong));
  return t;
}

std::string Row(uint32_t id, const std::string& v, uint8_t length_byte_delta = 0) {
  std::string r(1, '\0');  // null bitmap
  for (int i = 0; i < 4; ++i) r.push_back(static_cast<char>(id >> (8 * i)));
  r.push_back(static_cast<char>(v.size() + length_byte_delta));
  r += v;
  for (int i = 0; i < 8; ++i) r.push_back(static_cast<char>(i == 0 ? id * 3 : 0));
  return r;
}

RowsEvent Event(const TableMap& t, const std::string& rows) {
  RowsEvent e;
  e.info.is_rows = true;
  e.info.kind = RowsKind::kWrite;
  e.info.version = 2;
  e.column_count = 3;
  e.columns_before = "\x07";
  e.rows = rows;
  e.table = &t;
  e.source = "mariadb-bin.000042";
  e.offset = 123456;
  return e;
}

// Reads until done or an error; the changes that came out go to *out.
Status Drain(RowsReader* reader, const RowsEvent& e, std::vector<uint32_t>* ids) {
  reader->Reset(e);
  RowChange change;
  for (;;) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader->Next(&change, &done));
    if (done) return Status::OK();
    ids->push_back(static_cast<uint32_t>(change.after.values[0].i64));
  }
}

void ExpectNoRowAndError(const RowsEvent& e, const std::string& where) {
  RowsReader reader;
  std::vector<uint32_t> ids;
  const Status s = Drain(&reader, e, &ids);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(ids.empty()) << ids.size() << " change(s) left a bad event";
  const std::string m = s.ToString();
  EXPECT_NE(m.find("mariadb-bin.000042: offset 123456: rows event for `db`.`t`, " + where), std::string::npos) << m;
  // Asking again gives the same error, never the rows.
  RowChange change;
  bool done = false;
  EXPECT_EQ(reader.Next(&change, &done).ToString(), m);
  EXPECT_FALSE(done);
  EXPECT_EQ(reader.row_index(), 0u);
}

std::string Rows(uint32_t first, uint32_t count) {
  std::string rows;
  for (uint32_t i = first; i < first + count; ++i) rows += Row(i, "value" + std::to_string(i));
  return rows;
}

TEST(RowsReaderWholeEvent, LastRowCutShortYieldsNoRow) {
  const TableMap t = Table();
  const std::string rows = Rows(1, 5);
  for (size_t cut = 1; cut < Row(5, "value5").size(); ++cut) {
    SCOPED_TRACE(cut);
    ExpectNoRowAndError(Event(t, rows.substr(0, rows.size() - cut)), "row 5");
  }
}

TEST(RowsReaderWholeEvent, LengthPastTheEndInTheMiddleRowYieldsNoRow) {
  const TableMap t = Table();
  // Row 3's VARCHAR says 19 bytes more than it has, which runs past the event's end.
  const std::string rows = Rows(1, 2) + Row(3, "v", 19 + 70) + Rows(4, 2);
  ExpectNoRowAndError(Event(t, rows), "row 3, column 2 (v)");
}

TEST(RowsReaderWholeEvent, CorruptMiddleRowThatFailsRowsLaterYieldsNoRow) {
  const TableMap t = Table();
  // Row 3's length is 2 too long: its bytes still fit, the rows after it are
  // misaligned and the event fails further on. Nothing of it comes out,
  // neither rows 1-2 nor the misread row 3.
  const std::string rows = Rows(1, 2) + Row(3, "abc", 2) + Rows(4, 3);
  RowsReader reader;
  std::vector<uint32_t> ids;
  const Status s = Drain(&reader, Event(t, rows), &ids);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(ids.empty());
  EXPECT_NE(s.ToString().find("mariadb-bin.000042: offset 123456"), std::string::npos) << s.ToString();
}

TEST(RowsReaderWholeEvent, ALengthPastTheDeclaredMaximumIsRefusedEvenWhenTheEventStillAligns) {
  const TableMap t = Table();
  // Row 3's VARCHAR(20) says 30 bytes and the event holds exactly that many before its BIGINT:
  // every row parses and the event ends where it should, so only the declared maximum shows
  // that the value swallowed bytes that are not its own (a corrupt length can swallow whole
  // rows this way).
  const std::string swallowed(30, 'x');
  const std::string rows = Rows(1, 2) + Row(3, swallowed);
  ExpectNoRowAndError(Event(t, rows), "row 3, column 2 (v)");
  RowsReader reader;
  std::vector<uint32_t> ids;
  const Status s = Drain(&reader, Event(t, rows), &ids);
  EXPECT_NE(s.ToString().find("length 30 is past the column's declared maximum of 20 byte(s)"), std::string::npos)
      << s.ToString();
  // The maximum itself, and an empty value, are values.
  ids.clear();
  ASSERT_TRUE(Drain(&reader, Event(t, Rows(1, 2) + Row(3, std::string(20, 'y')) + Row(4, "")), &ids).ok());
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 2, 3, 4}));
}

TEST(RowsReaderWholeEvent, EventsPastTheHeldRowsAreCheckedWholeToo) {
  const TableMap t = Table();
  const uint32_t count = RowsReader::kHeldValues + 500;  // 3 values a row: past what is held
  const std::string rows = Rows(1, count);
  // Good: every change, in order, with its values.
  RowsReader reader;
  std::vector<uint32_t> ids;
  ASSERT_TRUE(Drain(&reader, Event(t, rows), &ids).ok());
  ASSERT_EQ(ids.size(), count);
  for (uint32_t i = 0; i < count; ++i) ASSERT_EQ(ids[i], i + 1);
  EXPECT_EQ(reader.row_index(), count);
  // The last one cut, or one past the held ones with a length past the end: no change.
  ExpectNoRowAndError(Event(t, rows.substr(0, rows.size() - 3)), "row " + std::to_string(count));
  const uint32_t bad = count - 100;
  const std::string bad_rows = Rows(1, bad - 1) + Row(bad, "v", 100) + Rows(bad + 1, 3);
  ExpectNoRowAndError(Event(t, bad_rows), "row " + std::to_string(bad) + ", column 2 (v)");
  // The reader goes on with the next event as if nothing happened.
  ids.clear();
  ASSERT_TRUE(Drain(&reader, Event(t, Rows(7, 3)), &ids).ok());
  EXPECT_EQ(ids, (std::vector<uint32_t>{7, 8, 9}));
}

TEST(RowsReaderWholeEvent, ValuesOfHeldAndReDecodedChangesStayPut) {
  // Every change's values stay as they were while the caller holds it: the
  // swap hands the caller the reader's storage, not a view of a slot reused.
  const TableMap t = Table();
  const uint32_t count = RowsReader::kHeldValues / 3 + 10;
  const std::string rows = Rows(1, count);
  const RowsEvent e = Event(t, rows);
  RowsReader reader;
  reader.Reset(e);
  std::vector<RowChange> kept(count);
  for (uint32_t i = 0; i < count; ++i) {
    bool done = false;
    ASSERT_TRUE(reader.Next(&kept[i], &done).ok());
    ASSERT_FALSE(done);
  }
  for (uint32_t i = 0; i < count; ++i) {
    ASSERT_EQ(kept[i].after.values[0].i64, i + 1);
    ASSERT_EQ(kept[i].after.values[1].raw, "value" + std::to_string(i + 1));
    ASSERT_EQ(kept[i].after.values[2].i64, static_cast<int64_t>(static_cast<uint8_t>((i + 1) * 3)));
  }
  bool done = false;
  RowChange end;
  ASSERT_TRUE(reader.Next(&end, &done).ok());
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace canal::binlog
