// EntryView and friends against the protobuf-generated classes: every field of
// every shape reads the same through both, and malformed bytes (truncations,
// random damage, hand-made bad wire data) are Corruption, never a crash or a
// read outside the buffer (run under -DCANAL_SANITIZE=ON to see the latter).
#include "canal/client/entry_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "canal/client/message.h"
#include "canal/proto/wire.h"

#include <google/protobuf/stubs/logging.h>

#include "support/allocation_counter.h"

namespace canal::client {
namespace {

namespace ce = canal::entry;
using google::protobuf::UnknownFieldSet;

// ---- building entries with the generated classes ----

ce::Column Col(int index, const std::string& name, const std::string& value, int sql_type = 12,
               const std::string& mysql_type = "varchar(64)") {
  ce::Column c;
  c.set_index(index);
  c.set_sqltype(sql_type);
  c.set_name(name);
  c.set_value(value);
  c.set_mysqltype(mysql_type);
  c.set_length(static_cast<int>(value.size()));
  return c;
}

ce::Column NullCol(int index, const std::string& name) {
  ce::Column c = Col(index, name, "");
  c.set_isnull(true);
  return c;
}

ce::Header FullHeader(ce::EventType type) {
  ce::Header h;
  h.set_version(1);
  h.set_logfilename("mysql-bin.000042");
  h.set_logfileoffset(123456789012LL);
  h.set_serverid(7);
  h.set_serverencode("UTF-8");
  h.set_executetime(1700000000123LL);
  h.set_sourcetype(ce::MYSQL);
  h.set_schemaname("shop");
  h.set_tablename("orders");
  h.set_eventlength(311);
  h.set_eventtype(type);
  h.set_gtid("0-1-42");
  auto* p = h.add_props();
  p->set_key("rowsCount");
  p->set_value("3");
  return h;
}

std::string EntryBytes(const ce::Header& h, ce::EntryType type, const std::string& store_value) {
  ce::Entry e;
  *e.mutable_header() = h;
  e.set_entrytype(type);
  e.set_storevalue(store_value);
  return e.SerializeAsString();
}

std::string RowEntryBytes(const ce::RowChange& rc) {
  return EntryBytes(FullHeader(rc.eventtype()), ce::ROWDATA, rc.SerializeAsString());
}

ce::RowChange TenColumnInsert(int rows) {
  ce::RowChange rc;
  rc.set_tableid(88);
  rc.set_eventtype(ce::INSERT);
  rc.set_isddl(false);
  for (int r = 0; r < rows; ++r) {
    auto* row = rc.add_rowdatas();
    *row->add_aftercolumns() = Col(0, "id", std::to_string(r), 4, "int(11)");
    row->mutable_aftercolumns(0)->set_iskey(true);
    *row->add_aftercolumns() = Col(1, "name", "name-" + std::to_string(r));
    *row->add_aftercolumns() = Col(2, "price", "500.00", 3, "decimal(10,2)");
    *row->add_aftercolumns() = NullCol(3, "note");
    *row->add_aftercolumns() = Col(4, "created", "2024-01-02 03:04:05", 93, "datetime");
    *row->add_aftercolumns() = Col(5, "qty", "-17", -5, "bigint(20)");
    *row->add_aftercolumns() = Col(6, "flag", "1", -7, "bit(1)");
    *row->add_aftercolumns() = Col(7, "empty", "", 12);
    *row->add_aftercolumns() = Col(8, "doc", "{\"a\": [1, 2]}", 12, "json");
    *row->add_aftercolumns() = Col(9, "sent_us", "1700000000123456", -5, "bigint(20)");
    for (auto& c : *row->mutable_aftercolumns()) c.set_updated(true);
  }
  return rc;
}

ce::RowChange UpdateWithBeforeAndAfter() {
  ce::RowChange rc;
  rc.set_tableid(5);
  rc.set_eventtype(ce::UPDATE);
  for (int r = 0; r < 3; ++r) {
    auto* row = rc.add_rowdatas();
    *row->add_beforecolumns() = Col(0, "id", std::to_string(r), 4, "int(11)");
    *row->add_beforecolumns() = Col(1, "v", "old");
    *row->add_beforecolumns() = NullCol(2, "n");
    *row->add_aftercolumns() = Col(0, "id", std::to_string(r), 4, "int(11)");
    *row->add_aftercolumns() = Col(1, "v", "new");
    row->mutable_aftercolumns(1)->set_updated(true);
    *row->add_aftercolumns() = Col(2, "n", "now set");
    row->mutable_aftercolumns(2)->set_updated(true);
    row->mutable_aftercolumns(2)->set_isnull(false);  // present and false
    auto* p = row->add_props();
    p->set_key("k");
    p->set_value("v");
  }
  return rc;
}

ce::RowChange DeleteWithBeforeOnly() {
  ce::RowChange rc;
  rc.set_tableid(6);
  rc.set_eventtype(ce::DELETE);
  auto* row = rc.add_rowdatas();
  *row->add_beforecolumns() = Col(0, "id", "9", 4, "int(11)");
  *row->add_beforecolumns() = NullCol(1, "gone");
  return rc;
}

// Values whose lengths take 1, 2, 3 and 4 varint bytes.
ce::RowChange LongValues() {
  ce::RowChange rc;
  rc.set_eventtype(ce::INSERT);
  auto* row = rc.add_rowdatas();
  int i = 0;
  for (size_t n : {size_t{127}, size_t{128}, size_t{200}, size_t{16383}, size_t{16384}, size_t{70000},
                   size_t{(1u << 21) + 5}}) {
    std::string v(n, 'a');
    for (size_t k = 0; k < n; ++k) v[k] = static_cast<char>('a' + k % 26);
    *row->add_aftercolumns() = Col(i, "c" + std::to_string(i), v, 2004, "longblob");
    ++i;
  }
  return rc;
}

// Negative numbers (10-byte varints) and enum values outside the schema.
ce::RowChange NegativeNumbers() {
  ce::RowChange rc;
  rc.set_tableid(-9);
  rc.set_eventtype(static_cast<ce::EventType>(99));
  auto* row = rc.add_rowdatas();
  ce::Column c = Col(-1, "neg", "-1", -5, "bigint(20)");
  c.set_length(-7);
  *row->add_aftercolumns() = c;
  ce::Column m = Col(INT32_MIN, "min", "x", INT32_MAX);
  m.set_length(INT32_MIN);
  *row->add_aftercolumns() = m;
  return rc;
}

ce::RowChange Ddl() {
  ce::RowChange rc;
  rc.set_tableid(0);
  rc.set_eventtype(ce::ALTER);
  rc.set_isddl(true);
  rc.set_sql("ALTER TABLE orders ADD c INT");
  rc.set_ddlschemaname("shop");
  return rc;
}

// Adds one unknown field of every wire type, and a known field number with
// the wrong wire type, which protobuf keeps as unknown.
void AddUnknownFields(google::protobuf::Message* m, int wrong_wire_number) {
  UnknownFieldSet* u = m->GetReflection()->MutableUnknownFields(m);
  u->AddVarint(100, 12345678901234ULL);
  u->AddFixed64(101, 0x0102030405060708ULL);
  u->AddLengthDelimited(536870911, std::string(300, 'u'));  // the highest field number
  u->AddFixed32(102, 0xdeadbeef);
  u->AddFixed32(wrong_wire_number, 7);
}

// ---- comparing the views with the generated classes ----

std::unique_ptr<char[]> ExactCopy(std::string_view bytes) {
  // An allocation of exactly the input's size, so that AddressSanitizer sees
  // any read past its end (a std::string may have spare capacity).
  std::unique_ptr<char[]> p(new char[bytes.size() + (bytes.empty() ? 1 : 0)]);
  if (!bytes.empty()) std::memcpy(p.get(), bytes.data(), bytes.size());
  return p;
}

bool Within(std::string_view part, std::string_view whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void ExpectSameColumn(const ce::Column& pb, const ColumnView& v, std::string_view bytes) {
  EXPECT_EQ(v.index(), pb.index());
  EXPECT_EQ(v.sql_type(), pb.sqltype());
  EXPECT_EQ(v.name(), pb.name());
  EXPECT_EQ(v.is_key(), pb.iskey());
  EXPECT_EQ(v.updated(), pb.updated());
  EXPECT_EQ(v.has_is_null(), pb.has_isnull());
  EXPECT_EQ(v.is_null(), pb.isnull());
  EXPECT_EQ(IsNull(v), IsNull(pb));
  EXPECT_EQ(v.value(), pb.value());
  EXPECT_EQ(v.length(), pb.length());
  EXPECT_EQ(v.mysql_type(), pb.mysqltype());
  EXPECT_TRUE(Within(v.name(), bytes) && Within(v.value(), bytes) && Within(v.mysql_type(), bytes))
      << "a view must point into the input, not at a copy";
}

void ExpectSameRowChange(const ce::RowChange& pb, std::string_view bytes) {
  RowChangeView v;
  ASSERT_TRUE(RowChangeView::Parse(bytes, &v).ok());
  EXPECT_EQ(v.table_id(), pb.tableid());
  EXPECT_EQ(v.has_event_type(), pb.has_eventtype());
  EXPECT_EQ(v.event_type(), pb.eventtype());
  EXPECT_EQ(EventTypeOf(v), EventTypeOf(pb));
  EXPECT_EQ(v.has_is_ddl(), pb.has_isddl());
  EXPECT_EQ(v.is_ddl(), pb.isddl());
  EXPECT_EQ(IsDdl(v), IsDdl(pb));
  EXPECT_EQ(v.sql(), pb.sql());
  EXPECT_EQ(v.ddl_schema_name(), pb.ddlschemaname());
  EXPECT_EQ(v.row_count(), pb.rowdatas_size());
  RowDataView row;
  Status s;
  int r = 0;
  while (v.NextRow(&row, &s)) {
    ASSERT_LT(r, pb.rowdatas_size());
    const ce::RowData& pr = pb.rowdatas(r);
    ColumnView c;
    int i = 0;
    while (row.NextBefore(&c, &s)) {
      ASSERT_LT(i, pr.beforecolumns_size());
      ExpectSameColumn(pr.beforecolumns(i++), c, bytes);
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(i, pr.beforecolumns_size());
    i = 0;
    while (row.NextAfter(&c, &s)) {
      ASSERT_LT(i, pr.aftercolumns_size());
      ExpectSameColumn(pr.aftercolumns(i++), c, bytes);
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(i, pr.aftercolumns_size());
    ++r;
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r, pb.rowdatas_size());
}

void ExpectSameEntryFields(const ce::Entry& pb, const EntryView& v, std::string_view bytes) {
  EXPECT_EQ(v.has_header(), pb.has_header());
  EXPECT_EQ(v.has_entry_type(), pb.has_entrytype());
  EXPECT_EQ(v.entry_type(), pb.entrytype());
  EXPECT_EQ(EntryTypeOf(v), EntryTypeOf(pb));
  EXPECT_EQ(v.store_value(), pb.storevalue());
  EXPECT_TRUE(Within(v.store_value(), bytes));
  const ce::Header& ph = pb.header();
  const HeaderView& h = v.header();
  EXPECT_EQ(h.has_version(), ph.has_version());
  EXPECT_EQ(h.version(), ph.version());
  EXPECT_EQ(h.logfile_name(), ph.logfilename());
  EXPECT_EQ(h.logfile_offset(), ph.logfileoffset());
  EXPECT_EQ(h.server_id(), ph.serverid());
  EXPECT_EQ(h.serveren_code(), ph.serverencode());
  EXPECT_EQ(h.execute_time(), ph.executetime());
  EXPECT_EQ(h.has_source_type(), ph.has_sourcetype());
  EXPECT_EQ(h.source_type(), ph.sourcetype());
  EXPECT_EQ(h.schema_name(), ph.schemaname());
  EXPECT_EQ(h.table_name(), ph.tablename());
  EXPECT_EQ(h.event_length(), ph.eventlength());
  EXPECT_EQ(h.has_event_type(), ph.has_eventtype());
  EXPECT_EQ(h.event_type(), ph.eventtype());
  EXPECT_EQ(EventTypeOf(h), EventTypeOf(ph));
  EXPECT_EQ(h.gtid(), ph.gtid());
  PairCursor props = h.props();
  PairView p;
  Status s;
  int i = 0;
  while (props.Next(&p, &s)) {
    ASSERT_LT(i, ph.props_size());
    EXPECT_EQ(p.key(), ph.props(i).key());
    EXPECT_EQ(p.value(), ph.props(i).value());
    ++i;
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(i, ph.props_size());
}

void ExpectSameEntry(const ce::Entry& pb, std::string_view bytes) {
  EntryView v;
  ASSERT_TRUE(EntryView::Parse(bytes, &v).ok());
  ExpectSameEntryFields(pb, v, bytes);
  // The store value by entry type, as a client reads it.
  if (pb.entrytype() == ce::ROWDATA) {
    ce::RowChange rc;
    ASSERT_TRUE(rc.ParseFromString(pb.storevalue()));
    ExpectSameRowChange(rc, v.store_value());
  } else if (pb.entrytype() == ce::TRANSACTIONBEGIN) {
    ce::TransactionBegin tb;
    ASSERT_TRUE(tb.ParseFromString(pb.storevalue()));
    TransactionBeginView tv;
    ASSERT_TRUE(TransactionBeginView::Parse(v.store_value(), &tv).ok());
    EXPECT_EQ(tv.execute_time(), tb.executetime());
    EXPECT_EQ(tv.transaction_id(), tb.transactionid());
    EXPECT_EQ(tv.thread_id(), tb.threadid());
  } else if (pb.entrytype() == ce::TRANSACTIONEND) {
    ce::TransactionEnd te;
    ASSERT_TRUE(te.ParseFromString(pb.storevalue()));
    TransactionEndView tv;
    ASSERT_TRUE(TransactionEndView::Parse(v.store_value(), &tv).ok());
    EXPECT_EQ(tv.execute_time(), te.executetime());
    EXPECT_EQ(tv.transaction_id(), te.transactionid());
  }
}

// Parses `bytes` with protobuf and compares every view field with it.
void ExpectSameAsProtobuf(const std::string& bytes) {
  ce::Entry pb;
  ASSERT_TRUE(pb.ParseFromString(bytes));
  auto copy = ExactCopy(bytes);
  ExpectSameEntry(pb, std::string_view(copy.get(), bytes.size()));
}

// ---- the same values through both ----

TEST(EntryView, InsertOfTenColumnRowsReadsAsProtobufDoes) {
  ExpectSameAsProtobuf(RowEntryBytes(TenColumnInsert(50)));
}

TEST(EntryView, UpdateBeforeAndAfterImagesReadAsProtobufDoes) {
  ExpectSameAsProtobuf(RowEntryBytes(UpdateWithBeforeAndAfter()));
}

TEST(EntryView, DeleteWithOnlyBeforeImageReadsAsProtobufDoes) {
  ExpectSameAsProtobuf(RowEntryBytes(DeleteWithBeforeOnly()));
}

TEST(EntryView, NullColumnsReadAsNullWithEmptyValue) {
  const std::string bytes = RowEntryBytes(DeleteWithBeforeOnly());
  ExpectSameAsProtobuf(bytes);
  EntryView e;
  ASSERT_TRUE(EntryView::Parse(bytes, &e).ok());
  RowChangeView rc;
  ASSERT_TRUE(RowChangeView::Parse(e.store_value(), &rc).ok());
  RowDataView row;
  Status s;
  ASSERT_TRUE(rc.NextRow(&row, &s));
  ColumnView c;
  ASSERT_TRUE(row.NextBefore(&c, &s));
  EXPECT_FALSE(c.is_null());
  EXPECT_FALSE(c.has_is_null());
  ASSERT_TRUE(row.NextBefore(&c, &s));
  EXPECT_TRUE(c.is_null());
  EXPECT_EQ(c.value(), "");
  EXPECT_FALSE(row.NextBefore(&c, &s));
  EXPECT_TRUE(s.ok());
  EXPECT_FALSE(row.NextAfter(&c, &s)) << "a DELETE has no after image";
  EXPECT_TRUE(s.ok());
}

TEST(EntryView, LongValuesWithMultiByteLengthsReadWhole) {
  ExpectSameAsProtobuf(RowEntryBytes(LongValues()));
}

TEST(EntryView, NegativeNumbersAndUnknownEnumValuesReadAsProtobufDoes) {
  ce::Header h = FullHeader(static_cast<ce::EventType>(-3));
  h.set_version(-1);
  h.set_logfileoffset(-1);
  h.set_serverid(INT64_MIN);
  h.set_executetime(-123);
  h.set_eventlength(INT64_MAX);
  h.set_sourcetype(static_cast<ce::Type>(77));
  ExpectSameAsProtobuf(EntryBytes(h, ce::ROWDATA, NegativeNumbers().SerializeAsString()));
  ExpectSameAsProtobuf(EntryBytes(h, static_cast<ce::EntryType>(-2), "x"));
}

TEST(EntryView, DdlCarriesItsStatementAndNoRows) {
  const std::string bytes = RowEntryBytes(Ddl());
  ExpectSameAsProtobuf(bytes);
  EntryView e;
  ASSERT_TRUE(EntryView::Parse(bytes, &e).ok());
  RowChangeView rc;
  ASSERT_TRUE(RowChangeView::Parse(e.store_value(), &rc).ok());
  EXPECT_TRUE(rc.is_ddl());
  EXPECT_EQ(rc.sql(), "ALTER TABLE orders ADD c INT");
  EXPECT_EQ(rc.ddl_schema_name(), "shop");
  EXPECT_EQ(rc.row_count(), 0);
  RowDataView row;
  Status s;
  EXPECT_FALSE(rc.NextRow(&row, &s));
  EXPECT_TRUE(s.ok());
}

TEST(EntryView, TransactionBeginAndEndReadAsProtobufDoes) {
  ce::TransactionBegin tb;
  tb.set_executetime(1700000000999LL);
  tb.set_transactionid("");
  tb.set_threadid(33);
  tb.add_props()->set_key("k");
  const ce::Header h = FullHeader(ce::EVENT_TYPE_PLACEHOLDER);
  ExpectSameAsProtobuf(EntryBytes(h, ce::TRANSACTIONBEGIN, tb.SerializeAsString()));
  ce::TransactionEnd te;
  te.set_executetime(1700000001000LL);
  te.set_transactionid("55");
  ExpectSameAsProtobuf(EntryBytes(h, ce::TRANSACTIONEND, te.SerializeAsString()));
}

TEST(EntryView, AbsentFieldsReadAsTheGeneratedClassesDefaults) {
  // No header, no entry type, no store value: everything default, and
  // Canal's defaults through EntryTypeOf / EventTypeOf.
  EntryView e;
  ASSERT_TRUE(EntryView::Parse("", &e).ok());
  EXPECT_FALSE(e.has_header());
  EXPECT_FALSE(e.has_entry_type());
  EXPECT_EQ(e.entry_type(), ce::ENTRY_TYPE_PLACEHOLDER);
  EXPECT_EQ(EntryTypeOf(e), ce::ROWDATA);
  EXPECT_FALSE(e.header().has_version());
  EXPECT_EQ(e.header().version(), 0);
  EXPECT_EQ(e.header().source_type(), ce::TYPE_PLACEHOLDER);
  EXPECT_EQ(EventTypeOf(e.header()), ce::UPDATE);
  ExpectSameAsProtobuf("");

  // An empty header is present; oneof members set to 0 are present too.
  ce::Entry pb;
  pb.mutable_header();
  pb.set_entrytype(ce::ENTRY_TYPE_PLACEHOLDER);
  pb.mutable_header()->set_version(0);
  pb.mutable_header()->set_eventtype(ce::EVENT_TYPE_PLACEHOLDER);
  ExpectSameAsProtobuf(pb.SerializeAsString());

  ce::RowChange rc;
  rc.set_isddl(false);
  rc.add_rowdatas();  // an empty row
  rc.mutable_rowdatas(0)->add_aftercolumns();  // an empty column
  ExpectSameAsProtobuf(EntryBytes(ce::Header(), ce::ROWDATA, rc.SerializeAsString()));
  RowChangeView v;
  ASSERT_TRUE(RowChangeView::Parse("", &v).ok());
  EXPECT_EQ(EventTypeOf(v), ce::UPDATE);
  EXPECT_FALSE(IsDdl(v));
}

// A length-delimited field of `number` (< 16) holding `bytes` (< 128 bytes).
std::string Ld(int number, const std::string& bytes) {
  return std::string(1, static_cast<char>(number << 3 | 2)) + static_cast<char>(bytes.size()) + bytes;
}

TEST(EntryView, EmptyStringsWrittenExplicitlyReadAsEmpty) {
  // proto3 writes no empty string; a server (or another library) may.
  const std::string col = Ld(3, "") + Ld(8, "") + Ld(10, "");  // name, value, mysqlType
  const std::string rc = Ld(12, Ld(2, col));                   // one row, one after column
  const std::string entry = Ld(1, Ld(2, "")) + Ld(3, rc);       // header.logfileName = ""
  ExpectSameAsProtobuf(entry);
  ce::Column pb;
  ASSERT_TRUE(pb.ParseFromString(col));
  ColumnView c;
  ASSERT_TRUE(ColumnView::Parse(col, &c).ok());
  ExpectSameColumn(pb, c, col);
}

TEST(EntryView, UnknownFieldsAndUnexpectedWireTypesAreSkipped) {
  ce::RowChange rc = UpdateWithBeforeAndAfter();
  AddUnknownFields(&rc, /*sql*/ 11);
  for (auto& row : *rc.mutable_rowdatas()) {
    AddUnknownFields(&row, /*beforeColumns*/ 1);
    for (auto& c : *row.mutable_aftercolumns()) AddUnknownFields(&c, /*value*/ 8);
    for (auto& c : *row.mutable_beforecolumns()) AddUnknownFields(&c, /*index*/ 1);
  }
  ce::Header h = FullHeader(ce::UPDATE);
  AddUnknownFields(&h, /*logfileName*/ 2);
  AddUnknownFields(h.mutable_props(0), /*key*/ 1);
  ce::Entry e;
  *e.mutable_header() = h;
  e.set_entrytype(ce::ROWDATA);
  e.set_storevalue(rc.SerializeAsString());
  AddUnknownFields(&e, /*entryType*/ 2);
  ExpectSameAsProtobuf(e.SerializeAsString());

  ce::TransactionBegin tb;
  tb.set_threadid(4);
  AddUnknownFields(&tb, /*threadId*/ 4);
  ExpectSameAsProtobuf(EntryBytes(h, ce::TRANSACTIONBEGIN, tb.SerializeAsString()));
}

TEST(EntryView, RepeatedFieldsReadAsProtobufMergesThem) {
  // Two serialised entries back to back parse as one merged entry: the last
  // scalar wins, the header merges, props concatenate.
  ce::Header h2;
  h2.set_tablename("other");
  h2.set_logfileoffset(0);  // written? proto3 writes no zero: the first one stays
  h2.add_props()->set_key("second");
  const std::string a = RowEntryBytes(TenColumnInsert(2));
  const std::string b = EntryBytes(h2, ce::ROWDATA, UpdateWithBeforeAndAfter().SerializeAsString());
  ExpectSameAsProtobuf(a + b);
  ExpectSameAsProtobuf(b + a);
  // And RowChanges: rows of both, in order.
  ce::Entry e;
  e.set_storevalue(TenColumnInsert(2).SerializeAsString() + Ddl().SerializeAsString() +
                   DeleteWithBeforeOnly().SerializeAsString());
  ExpectSameAsProtobuf(e.SerializeAsString());
}

// The views read fields in the order servers write them first and fall back
// to a generic loop for the rest (in_order_fields.h); any other order, and a
// field repeated across that boundary, must still read as protobuf reads it.
std::vector<std::string> TopLevelFields(std::string_view bytes) {
  std::vector<std::string> fields;
  canal::proto::wire::WireReader r(bytes, 0);
  canal::proto::wire::Field f;
  size_t start = 0;
  while (r.Next(&f)) {
    fields.emplace_back(bytes.substr(start, r.pos() - start));
    start = r.pos();
  }
  EXPECT_FALSE(r.failed());
  return fields;
}

std::string Joined(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& f : fields) out += f;
  return out;
}

// `bytes` with its top-level fields reversed, rotated, shuffled, and with its
// first and last fields repeated at the other end.
std::vector<std::string> Reordered(std::string_view bytes, std::mt19937* rng) {
  std::vector<std::string> fields = TopLevelFields(bytes);
  std::vector<std::string> out;
  if (fields.size() < 2) return out;
  std::vector<std::string> v(fields.rbegin(), fields.rend());
  out.push_back(Joined(v));
  v = fields;
  std::rotate(v.begin(), v.begin() + 1, v.end());
  out.push_back(Joined(v));
  for (int i = 0; i < 5; ++i) {
    v = fields;
    std::shuffle(v.begin(), v.end(), *rng);
    out.push_back(Joined(v));
  }
  out.push_back(Joined(fields) + fields.front());
  out.push_back(fields.back() + Joined(fields));
  return out;
}

TEST(EntryView, FieldsInAnyOrderReadAsProtobufDoes) {
  std::mt19937 rng(20261201);
  ce::Column col = Col(3, "name", "value", -5, "bigint(20)");
  col.set_iskey(true);
  col.set_updated(true);
  col.set_isnull(false);
  col.add_props()->set_key("k");
  for (const std::string& bytes : Reordered(col.SerializeAsString(), &rng)) {
    ce::Column pb;
    ASSERT_TRUE(pb.ParseFromString(bytes));
    ColumnView c;
    ASSERT_TRUE(ColumnView::Parse(bytes, &c).ok());
    ExpectSameColumn(pb, c, bytes);
  }
  const ce::RowChange rc = UpdateWithBeforeAndAfter();
  ce::RowChange with_sql = rc;
  with_sql.set_sql("update t set a = 1");
  with_sql.set_ddlschemaname("shop");
  with_sql.set_tableid(77);
  for (const std::string& bytes : Reordered(with_sql.SerializeAsString(), &rng)) {
    ExpectSameAsProtobuf(EntryBytes(FullHeader(ce::UPDATE), ce::ROWDATA, bytes));
  }
  // A row whose after image comes before its before image, columns shuffled.
  ce::RowChange one;
  one.set_eventtype(ce::UPDATE);
  const std::string row = rc.rowdatas(0).SerializeAsString();
  for (const std::string& row_bytes : Reordered(row, &rng)) {
    std::string rc_bytes = one.SerializeAsString();
    canal::proto::wire::AppendBytesField(12, row_bytes, &rc_bytes);
    ExpectSameAsProtobuf(EntryBytes(FullHeader(ce::UPDATE), ce::ROWDATA, rc_bytes));
  }
  const std::string entry = RowEntryBytes(rc);
  for (const std::string& bytes : Reordered(entry, &rng)) ExpectSameAsProtobuf(bytes);
  const ce::Header h = FullHeader(ce::UPDATE);
  for (const std::string& header_bytes : Reordered(h.SerializeAsString(), &rng)) {
    std::string bytes;
    canal::proto::wire::AppendBytesField(1, header_bytes, &bytes);
    canal::proto::wire::AppendVarintField(2, ce::ROWDATA, &bytes);
    canal::proto::wire::AppendBytesField(3, rc.SerializeAsString(), &bytes);
    ExpectSameAsProtobuf(bytes);
  }
}

TEST(EntryView, ReadingAllocatesNothing) {
  const std::string bytes = RowEntryBytes(TenColumnInsert(100));
  size_t columns = 0, value_bytes = 0;
  canal::testing::g_allocations = 0;
  canal::testing::g_count_allocations = true;
  EntryView e;
  Status s = EntryView::Parse(bytes, &e);
  RowChangeView rc;
  if (s.ok()) s = RowChangeView::Parse(e.store_value(), &rc);
  RowDataView row;
  ColumnView c;
  while (s.ok() && rc.NextRow(&row, &s)) {
    while (row.NextAfter(&c, &s)) ++columns, value_bytes += c.value().size();
  }
  PairCursor props = e.header().props();
  PairView p;
  while (props.Next(&p, &s)) {
  }
  canal::testing::g_count_allocations = false;
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(columns, 1000u);
  EXPECT_GT(value_bytes, 0u);
  EXPECT_EQ(canal::testing::g_allocations, 0u);
}

TEST(EntryView, CursorsRewindAndCopiesAreIndependent) {
  const std::string bytes = TenColumnInsert(3).SerializeAsString();
  RowChangeView rc;
  ASSERT_TRUE(RowChangeView::Parse(bytes, &rc).ok());
  RowDataView row;
  Status s;
  ASSERT_TRUE(rc.NextRow(&row, &s));
  RowChangeView copy = rc;
  int left = 0;
  while (rc.NextRow(&row, &s)) ++left;
  EXPECT_EQ(left, 2);
  ASSERT_TRUE(copy.NextRow(&row, &s)) << "the copy keeps its own place";
  rc.RewindRows();
  int all = 0;
  while (rc.NextRow(&row, &s)) ++all;
  EXPECT_EQ(all, 3);
  ColumnView c;
  ASSERT_TRUE(row.NextAfter(&c, &s));
  EXPECT_EQ(c.name(), "id");
  ASSERT_TRUE(row.NextAfter(&c, &s));
  row.RewindColumns();
  ASSERT_TRUE(row.NextAfter(&c, &s));
  EXPECT_EQ(c.name(), "id");
}

TEST(EntryView, MessageViewParsesTheBatchEntryAndNamesABadOne) {
  Message m(17, {RowEntryBytes(Ddl()), std::string("\x0a\x05\x12", 3)});
  EntryView e;
  ASSERT_TRUE(m.View(0, &e).ok());
  EXPECT_EQ(e.header().table_name(), "orders");
  Status s = m.View(1, &e);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("batch 17"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("entry 1 of 2"), std::string_view::npos) << s.ToString();
  s = m.View(2, &e);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
}

// ---- malformed bytes ----

Status ParseEntry(const std::string& bytes) {
  EntryView e;
  return EntryView::Parse(bytes, &e);
}

TEST(EntryViewMalformed, LengthBeyondTheBytesLeftIsCorruptionNamingWhere) {
  const Status s = ParseEntry(std::string("\x08\x01\x1a\x05xy", 6));  // storeValue declares 5, has 2
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("canal.entry.Entry"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("5 declared"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("at byte 2 of 6"), std::string_view::npos) << s.ToString();
}

TEST(EntryViewMalformed, HugeLengthIsCorruptionNotAWrap) {
  // A length of 2^64-1: must not wrap around when added to the position.
  EXPECT_TRUE(ParseEntry(std::string("\x1a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)).IsCorruption());
  EXPECT_TRUE(ParseEntry(std::string("\x1a\xff\xff\xff\xff\x0f", 6)).IsCorruption());
}

TEST(EntryViewMalformed, BadVarintsAreCorruption) {
  EXPECT_TRUE(ParseEntry("\x10").IsCorruption()) << "value missing";
  EXPECT_TRUE(ParseEntry("\x10\x80").IsCorruption()) << "varint cut short";
  EXPECT_TRUE(ParseEntry(std::string("\x10") + std::string(10, '\x80') + "\x01").IsCorruption()) << "11 bytes";
  EXPECT_TRUE(ParseEntry("\x80").IsCorruption()) << "tag cut short";
  EXPECT_TRUE(ParseEntry(std::string("\x80\x80\x80\x80\x80\x01\x00", 7)).IsCorruption()) << "tag above 32 bits";
  // A 10-byte varint is fine (a negative entry type).
  EXPECT_TRUE(ParseEntry(std::string("\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)).ok());
}

TEST(EntryViewMalformed, GroupsInvalidWireTypesAndFieldZeroAreCorruption) {
  EXPECT_TRUE(ParseEntry("\x0b\x0c").IsCorruption()) << "start and end group of field 1";
  EXPECT_TRUE(ParseEntry("\x0c").IsCorruption()) << "end group";
  EXPECT_TRUE(ParseEntry("\x0e").IsCorruption()) << "wire type 6";
  EXPECT_TRUE(ParseEntry("\x0f").IsCorruption()) << "wire type 7";
  EXPECT_TRUE(ParseEntry(std::string("\x00\x00", 2)).IsCorruption()) << "field 0";
  EXPECT_TRUE(ParseEntry("\x02\x00").IsCorruption()) << "field 0, length-delimited";
  EXPECT_TRUE(ParseEntry("\x09\x01\x02").IsCorruption()) << "fixed64 cut short";
  EXPECT_TRUE(ParseEntry("\x0d\x01\x02").IsCorruption()) << "fixed32 cut short";
}

TEST(EntryViewMalformed, BadHeaderIsCorruptionNamingTheHeader) {
  const Status s = ParseEntry(std::string("\x0a\x02\x12\x05", 4));  // logfileName declares 5 of 0
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("canal.entry.Header"), std::string_view::npos) << s.ToString();
}

TEST(EntryViewMalformed, BadColumnStopsTheCursorWithCorruption) {
  ce::RowChange rc = TenColumnInsert(1);
  std::string bytes = rc.SerializeAsString();
  // Make the last column's mysqlType length run past its column: the column
  // is then the one that is malformed, the row and the RowChange are not.
  const std::string last = rc.rowdatas(0).aftercolumns(9).SerializeAsString();
  const size_t at = bytes.rfind(last);
  ASSERT_NE(at, std::string::npos);
  const size_t mysql_type_len = at + last.rfind("bigint(20)") - 1;
  bytes[mysql_type_len] = 0x7f;
  RowChangeView v;
  ASSERT_TRUE(RowChangeView::Parse(bytes, &v).ok());
  RowDataView row;
  Status s;
  ASSERT_TRUE(v.NextRow(&row, &s));
  ColumnView c;
  int good = 0;
  while (row.NextAfter(&c, &s)) ++good;
  EXPECT_EQ(good, 9);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("canal.entry.Column"), std::string_view::npos) << s.ToString();
  EXPECT_FALSE(row.NextAfter(&c, &s)) << "a failed cursor stays at its end";
  EXPECT_TRUE(s.ok());
}

TEST(EntryViewMalformed, BadPairStopsThePropsCursorWithCorruption) {
  ce::Entry e;
  e.mutable_header()->add_props()->set_key("k");
  std::string bytes = e.SerializeAsString();  // 0a 05 62 03 0a 01 6b
  ASSERT_EQ(bytes.size(), 7u);
  bytes[5] = 0x09;  // key declares 9 bytes of 1
  EntryView v;
  ASSERT_TRUE(EntryView::Parse(bytes, &v).ok()) << "props are checked when read";
  PairCursor props = v.header().props();
  PairView p;
  Status s;
  EXPECT_FALSE(props.Next(&p, &s));
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("canal.entry.Pair"), std::string_view::npos) << s.ToString();
}

// Reads every view of `bytes` to its end; every status met must be OK or
// Corruption. Where protobuf also parses the same bytes, the values agree.
// Returns whether a comparison was made.
bool ReadAllAndCompare(std::string_view bytes, bool compare) {
  auto ok_or_corruption = [](const Status& s) { return s.ok() || s.IsCorruption(); };
  EntryView e;
  Status s = EntryView::Parse(bytes, &e);
  EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
  if (!s.ok()) return false;
  PairCursor props = e.header().props();
  PairView p;
  while (props.Next(&p, &s)) {
  }
  EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
  bool all_ok = s.ok();
  TransactionBeginView tb;
  s = TransactionBeginView::Parse(e.store_value(), &tb);
  EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
  TransactionEndView te;
  s = TransactionEndView::Parse(e.store_value(), &te);
  EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
  RowChangeView rc;
  s = RowChangeView::Parse(e.store_value(), &rc);
  EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
  bool rc_ok = s.ok();
  RowDataView row;
  while (rc_ok && rc.NextRow(&row, &s)) {
    ColumnView c;
    while (row.NextBefore(&c, &s)) {
    }
    EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
    rc_ok = rc_ok && s.ok();
    while (row.NextAfter(&c, &s)) {
    }
    EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
    rc_ok = rc_ok && s.ok();
  }
  EXPECT_TRUE(ok_or_corruption(s)) << s.ToString();
  rc_ok = rc_ok && s.ok();
  if (!compare || !all_ok) return false;
  // Protobuf refuses invalid UTF-8 in strings and takes groups, the views do
  // the opposite: compare where both take the bytes.
  ce::Entry pb;
  if (!pb.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
  ExpectSameEntryFields(pb, e, bytes);
  ce::RowChange pb_rc;
  if (rc_ok && pb_rc.ParseFromString(pb.storevalue())) ExpectSameRowChange(pb_rc, e.store_value());
  return true;
}

std::vector<std::string> Corpus() {
  ce::RowChange with_unknown = UpdateWithBeforeAndAfter();
  AddUnknownFields(&with_unknown, 11);
  ce::TransactionBegin tb;
  tb.set_threadid(33);
  tb.set_transactionid("tx");
  return {RowEntryBytes(TenColumnInsert(2)), RowEntryBytes(UpdateWithBeforeAndAfter()),
          RowEntryBytes(DeleteWithBeforeOnly()), RowEntryBytes(Ddl()), RowEntryBytes(NegativeNumbers()),
          RowEntryBytes(with_unknown),
          EntryBytes(FullHeader(ce::UPDATE), ce::TRANSACTIONBEGIN, tb.SerializeAsString())};
}

TEST(EntryViewMalformed, EveryTruncationIsOkOrCorruption) {
  for (const std::string& full : Corpus()) {
    for (size_t n = 0; n < full.size(); ++n) {
      auto copy = ExactCopy(std::string_view(full).substr(0, n));
      ReadAllAndCompare(std::string_view(copy.get(), n), /*compare=*/false);
      if (::testing::Test::HasFailure()) FAIL() << "prefix of " << n << " bytes";
    }
  }
  // And every truncation of a RowChange inside an intact entry, so that the
  // inner walkers meet the cut.
  google::protobuf::LogSilencer quiet;  // protobuf logs every invalid UTF-8 string it refuses
  const std::string rc = TenColumnInsert(2).SerializeAsString();
  for (size_t n = 0; n < rc.size(); ++n) {
    const std::string entry = EntryBytes(FullHeader(ce::INSERT), ce::ROWDATA, rc.substr(0, n));
    auto copy = ExactCopy(entry);
    ReadAllAndCompare(std::string_view(copy.get(), entry.size()), /*compare=*/true);
    if (::testing::Test::HasFailure()) FAIL() << "RowChange cut at " << n << " bytes";
  }
}

TEST(EntryViewMalformed, RandomDamageIsOkOrCorruptionAndAgreesWithProtobuf) {
  const std::vector<std::string> corpus = Corpus();
  google::protobuf::LogSilencer quiet;  // protobuf logs every invalid UTF-8 string it refuses
  std::mt19937 rng(20240611);
  int compared = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string bytes = corpus[rng() % corpus.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      const size_t at = bytes.empty() ? 0 : rng() % bytes.size();
      switch (rng() % 4) {
        case 0:  // flip some bits
          if (!bytes.empty()) bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
          break;
        case 1:  // insert a byte
          bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), static_cast<char>(rng()));
          break;
        case 2:  // drop a byte
          if (!bytes.empty()) bytes.erase(at, 1);
          break;
        default:  // a byte that makes varints and lengths long
          if (!bytes.empty()) bytes[at] = static_cast<char>(0xff);
          break;
      }
    }
    auto copy = ExactCopy(bytes);
    compared += ReadAllAndCompare(std::string_view(copy.get(), bytes.size()), /*compare=*/true);
    if (::testing::Test::HasFailure()) FAIL() << "iteration " << iter;
  }
  EXPECT_GT(compared, 2000) << "too few damaged entries that both parsers take to compare them";
}

}  // namespace
}  // namespace canal::client
