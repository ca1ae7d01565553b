// EntrySink on the MariaDB fixture binlog, decoded and grouped by
// TransactionBuffer: the rules on real events, in pieces, and every safe
// position resumes the stream with nothing repeated or lost.
#include "canal/sink/entry_sink.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/parser/resume_from_cursor.h"
#include "canal/parser/transaction_buffer.h"
#include "support/binlog_stream.h"
#include "support/fixtures.h"
#include "sink_harness.h"
#include "sink_test_support.h"

namespace canal::sink {
namespace {

using parser::Transaction;
using store::EntryKind;
using store::RingStore;

using testing_support::Drain;
using testing_support::Filtered;
using testing_support::Got;
using testing_support::MakeStore;

constexpr char kFixture[] = "mariadb-10.11/mariadb-bin.000001";
constexpr char kFixtureName[] = "mariadb-bin.000001";

// Feeds the whole file (from `from`, after the FORMAT_DESCRIPTION) to `buffer`.
Status Stream(const std::string& bytes, uint64_t from, parser::TransactionBuffer* buffer) {
  return testing::StreamBinlogBytes(kFixtureName, bytes, from, buffer);
}

// The sink behind a TransactionBuffer, draining the store after every call.
struct Pipeline : parser::TransactionSink {
  explicit Pipeline(EntrySinkOptions o = {}) : store(MakeStore()) {
    o.clock_ms = [] { return int64_t{0}; };  // markers by threshold only: runs compare exactly
    sink = std::make_unique<EntrySink>(std::move(o), store.get());
  }
  Status OnTransaction(const Transaction& txn) override {
    CANAL_RETURN_IF_ERROR(sink->OnTransaction(txn));
    for (auto& g : Drain(store.get())) got.push_back(std::move(g));
    return Status::OK();
  }
  Status Run(uint64_t from = 4, parser::TransactionBufferOptions bo = {}, const parser::ResumePoint* resume = nullptr) {
    std::string bytes;
    CANAL_RETURN_IF_ERROR(testing::ReadFileToString(testing::FixturePath(kFixture), &bytes));
    parser::TransactionBuffer buffer(this, bo);
    if (resume != nullptr) buffer.ResetTo(*resume);
    return Stream(bytes, from, &buffer);
  }

  std::unique_ptr<RingStore> store;
  std::unique_ptr<EntrySink> sink;
  std::vector<Got> got;
};

std::vector<std::string> Keys(const std::vector<Got>& got, size_t from = 0) {
  std::vector<std::string> k;
  for (size_t i = from; i < got.size(); ++i) k.push_back(got[i].Key());
  return k;
}

TEST(EntrySinkFixture, EveryTransactionIsBeginRowsEndOrALoneStatement) {
  CANAL_REQUIRE_FIXTURES();
  Pipeline p;
  Status s = p.Run();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(p.got.empty());
  bool in_txn = false;
  uint64_t ends = 0, ddls = 0, rows = 0, table_rows = 0;
  int64_t last_offset = 0;
  for (const Got& g : p.got) {
    const auto& h = g.entry.header();
    EXPECT_EQ(h.logfilename(), kFixtureName);
    EXPECT_GE(h.logfileoffset(), last_offset);
    last_offset = h.logfileoffset();
    EXPECT_FALSE(h.gtid().empty());
    switch (g.type()) {
      case entry::TRANSACTIONBEGIN:
        EXPECT_FALSE(in_txn);
        EXPECT_TRUE(g.safe());  // after the BEGIN's event, inside the transaction
        EXPECT_NE(g.meta.position.transaction_begin, 0u);
        in_txn = true;
        break;
      case entry::TRANSACTIONEND: {
        EXPECT_TRUE(in_txn);
        EXPECT_TRUE(g.safe());
        EXPECT_FALSE(g.meta.position.included);
        in_txn = false;
        ++ends;
        break;
      }
      case entry::ROWDATA:
        if (g.change.isddl()) {
          ++ddls;
          EXPECT_FALSE(in_txn);
          EXPECT_TRUE(g.safe());
          EXPECT_EQ(g.meta.kind, EntryKind::kDdl);
        } else if (g.change.sql().empty()) {
          ++rows;
          // The ring knows each entry's rows (put/get/ack rows metrics).
          EXPECT_EQ(g.meta.rows, static_cast<uint32_t>(g.change.rowdatas_size()));
          table_rows += g.meta.rows;
          EXPECT_TRUE(in_txn);
          EXPECT_TRUE(g.safe());
          EXPECT_EQ(h.schemaname(), "cdc_test");
          EXPECT_EQ(g.change.rowdatas_size() > 0, true) << h.tablename();
        }
        break;
      default:
        ADD_FAILURE() << "unexpected entry type " << g.type();
    }
    if (g.type() == entry::TRANSACTIONEND || g.change.isddl()) {
      EXPECT_EQ(g.meta.position.transaction_begin, 0u);
    }
  }
  EXPECT_FALSE(in_txn);
  EXPECT_GT(ends, 30u);
  EXPECT_GE(ddls, 10u);
  EXPECT_EQ(rows, p.sink->stats().rows_entries);
  EXPECT_EQ(table_rows, p.sink->stats().rows);
  EXPECT_GT(table_rows, rows) << "some events change several rows";
  EXPECT_EQ(p.sink->stats().skipped_transactions, 0u);

  // XIDs: the END of GTID 0-1-4 carries xid 39 (show_binlog_events: "COMMIT /* xid=39 */").
  bool saw = false;
  for (const Got& g : p.got) {
    if (g.type() != entry::TRANSACTIONEND || g.entry.header().gtid() != "0-1-4") continue;
    entry::TransactionEnd end;
    ASSERT_TRUE(end.ParseFromString(g.entry.storevalue()));
    EXPECT_EQ(end.transactionid(), "39");
    EXPECT_EQ(g.entry.header().logfileoffset(), 4470);
    EXPECT_EQ(g.meta.position.position, 4501u);
    saw = true;
  }
  EXPECT_TRUE(saw);
}

TEST(EntrySinkFixture, RegexAndBlackListLeaveOnlyTheWantedTables) {
  CANAL_REQUIRE_FIXTURES();
  Pipeline p(Filtered("cdc_test\\.t_num,cdc_test\\.t_ddl.*", "cdc_test\\.t_ddl_renamed"));
  ASSERT_TRUE(p.Run().ok());
  uint64_t num_rows = 0;
  for (const Got& g : p.got) {
    if (g.type() != entry::ROWDATA) continue;
    const std::string table = g.entry.header().tablename();
    if (g.change.isddl()) {
      // Table DDL only for the wanted tables; database DDL has no table and stays.
      std::string schema, t;
      if (DdlTable(g.change.sql(), "cdc_test", &schema, &t)) {
        EXPECT_TRUE(t == "t_num" || t == "t_ddl") << g.change.sql();
      }
      continue;
    }
    if (!g.change.sql().empty()) continue;
    EXPECT_TRUE(table == "t_num" || table == "t_ddl") << table;
    num_rows += table == "t_num";
  }
  EXPECT_GT(num_rows, 0u);
  EXPECT_GT(p.sink->stats().filtered_events, 0u);
  EXPECT_GT(p.sink->stats().skipped_transactions, 0u);
  EXPECT_EQ(p.sink->stats().empty_markers, 0u) << "threshold 8192 and a frozen clock: no marker";
}

TEST(EntrySinkFixture, FilterMatchingNoTablePutsMarkersInsteadOfRows) {
  CANAL_REQUIRE_FIXTURES();
  EntrySinkOptions o = Filtered("nothing\\.here");
  o.empty_transaction_threshold = 10;
  Pipeline p(std::move(o));
  ASSERT_TRUE(p.Run().ok());
  const EntrySinkStats st = p.sink->stats();
  ASSERT_GT(st.skipped_transactions, 20u);
  EXPECT_EQ(st.rows_entries, 0u);
  // Markers: a BEGIN directly followed by its END. (Statements with no table,
  // like CREATE DATABASE or XA COMMIT, are not table-filtered and still come.)
  uint64_t markers = 0, last = 0;
  for (size_t i = 0; i + 1 < p.got.size(); ++i) {
    if (p.got[i].type() != entry::TRANSACTIONBEGIN || p.got[i + 1].type() != entry::TRANSACTIONEND) continue;
    ++markers;
    ASSERT_TRUE(p.got[i + 1].safe());
    EXPECT_GT(p.got[i + 1].meta.position.position, last);
    last = p.got[i + 1].meta.position.position;
  }
  EXPECT_EQ(markers, st.empty_markers);
  EXPECT_GT(markers, 0u);
  EXPECT_LE(markers, st.skipped_transactions / 10);
  for (const Got& g : p.got) {
    if (g.type() == entry::ROWDATA) {
      EXPECT_FALSE(g.change.sql().empty()) << "no row changes pass";
    }
  }
}

TEST(EntrySinkFixture, FieldFilterKeepsOnlyTheListedColumns) {
  CANAL_REQUIRE_FIXTURES();
  EntrySinkOptions o;
  ASSERT_TRUE(o.CompileFilters("", "", "cdc_test.t_num:id/ti", "").ok());
  Pipeline p(std::move(o));
  ASSERT_TRUE(p.Run().ok());
  bool saw = false;
  for (const Got& g : p.got) {
    if (g.type() != entry::ROWDATA || g.entry.header().tablename() != "t_num") continue;
    for (const auto& rd : g.change.rowdatas()) {
      for (const auto& c : rd.aftercolumns()) {
        EXPECT_TRUE(c.name() == "id" || c.name() == "ti") << c.name();
        saw = true;
      }
    }
  }
  EXPECT_TRUE(saw);
}

TEST(EntrySinkFixture, PiecesGiveTheSameEntriesWithSafePointsInsideTransactions) {
  CANAL_REQUIRE_FIXTURES();
  Pipeline whole;
  ASSERT_TRUE(whole.Run().ok());
  Pipeline pieces;
  parser::TransactionBufferOptions bo;
  bo.max_events = 2;
  ASSERT_TRUE(pieces.Run(4, bo).ok());
  EXPECT_EQ(Keys(pieces.got), Keys(whole.got));
  uint64_t inside = 0;
  for (const Got& g : pieces.got) {
    if (!g.safe() || g.meta.position.transaction_begin == 0) continue;
    ++inside;
    EXPECT_TRUE(g.meta.position.included);
    EXPECT_LT(g.meta.position.transaction_begin, g.meta.position.position);
    EXPECT_NE(g.type(), entry::TRANSACTIONEND);
  }
  EXPECT_GT(inside, 10u);
}

// The point of safe positions: a restart from any of them, through
// ResumePointFromCursor, hands over exactly the entries after it.
TEST(EntrySinkFixture, EverySafePositionResumesWithNothingRepeatedOrLost) {
  CANAL_REQUIRE_FIXTURES();
  parser::TransactionBufferOptions bo;
  bo.max_events = 2;
  Pipeline full;
  ASSERT_TRUE(full.Run(4, bo).ok());
  const std::vector<std::string> all = Keys(full.got);
  size_t checked = 0;
  for (size_t i = 0; i < full.got.size(); ++i) {
    if (!full.got[i].safe()) continue;
    // Every safe point inside a transaction, and every fifth boundary: enough
    // to cover each kind without re-reading the file hundreds of times.
    if (full.got[i].meta.position.transaction_begin == 0 && i % 5 != 0) continue;
    parser::ResumePoint rp;
    Status s = parser::ResumePointFromCursor(full.got[i].meta.position, &rp);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Pipeline resumed;
    s = resumed.Run(rp.position, bo, &rp);
    ASSERT_TRUE(s.ok()) << "from " << rp.ToString() << ": " << s.ToString();
    EXPECT_EQ(Keys(resumed.got), std::vector<std::string>(all.begin() + static_cast<long>(i) + 1, all.end()))
        << "resumed from " << rp.ToString();
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

}  // namespace
}  // namespace canal::sink
