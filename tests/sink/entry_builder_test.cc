// Entries as Canal clients read them: built from real decoded events, parsed
// back with the protobuf classes, field by field.
#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/sink/entry_builder.h"
#include "support/binlog_walk.h"
#include "support/fixtures.h"

namespace canal::sink {
namespace {

struct Built {
  entry::Entry entry;
  entry::RowChange change;
  uint64_t rows = 0;
  uint64_t offset = 0;
};

std::vector<Built> BuildAll(const std::string& rel, EntryBuilderOptions opts = {}) {
  std::vector<Built> out;
  EntryBuilder builder(opts);
  testing::WalkOptions wo;
  wo.on_event = [&](const binlog::Event& ev) -> Status {
    const auto* rows = ev.As<binlog::RowsEvent>();
    if (rows == nullptr) return Status::OK();
    EntryContext ctx;
    ctx.position.journal_name = "mariadb-bin.000002";
    ctx.position.position = ev.offset;
    ctx.position.server_id = ev.header.server_id;
    ctx.position.timestamp_ms = int64_t{ev.header.timestamp} * 1000;
    ctx.event_length = ev.header.event_size;
    std::string bytes;
    Built b;
    CANAL_RETURN_IF_ERROR(builder.RowsEntry(ctx, *rows, &bytes, &b.rows));
    b.offset = ev.offset;
    if (!b.entry.ParseFromString(bytes) || !b.change.ParseFromString(b.entry.storevalue())) {
      return Status::Corruption("entry does not parse");
    }
    out.push_back(std::move(b));
    return Status::OK();
  };
  testing::WalkResult r = testing::WalkBinlog(testing::FixturePath(rel), wo);
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  return out;
}

TEST(EntryBuilder, RowsEntriesCarryHeaderRowsAndColumnsAsCanalFillsThem) {
  CANAL_REQUIRE_FIXTURES();
  auto built = BuildAll("mariadb-10.11/mariadb-bin.000002");
  ASSERT_FALSE(built.empty());
  uint64_t rows = 0;
  bool saw_update = false, saw_minimal = false;
  for (const auto& b : built) {
    const auto& h = b.entry.header();
    EXPECT_EQ(b.entry.entrytype(), entry::ROWDATA);
    EXPECT_EQ(h.logfilename(), "mariadb-bin.000002");
    EXPECT_EQ(h.logfileoffset(), static_cast<int64_t>(b.offset));
    EXPECT_EQ(h.sourcetype(), entry::MYSQL);
    EXPECT_EQ(h.schemaname(), "cdc_test");
    EXPECT_FALSE(h.tablename().empty());
    ASSERT_EQ(h.props_size(), 1);
    EXPECT_EQ(h.props(0).key(), "rowsCount");
    EXPECT_EQ(h.props(0).value(), std::to_string(b.rows));
    EXPECT_EQ(b.change.eventtype(), h.eventtype());
    EXPECT_FALSE(b.change.isddl());
    EXPECT_EQ(static_cast<uint64_t>(b.change.rowdatas_size()), b.rows);
    rows += b.rows;
    for (const auto& rd : b.change.rowdatas()) {
      if (h.eventtype() == entry::INSERT) {
        EXPECT_EQ(rd.beforecolumns_size(), 0);
        for (const auto& c : rd.aftercolumns()) EXPECT_TRUE(c.updated()) << c.name();
      }
      if (h.eventtype() == entry::DELETE) {
        EXPECT_EQ(rd.aftercolumns_size(), 0);
      }
      if (h.eventtype() == entry::UPDATE) {
        saw_update = true;
        for (const auto& a : rd.aftercolumns()) {
          bool in_before = false;
          for (const auto& bc : rd.beforecolumns()) {
            if (bc.index() != a.index()) continue;
            in_before = true;
            EXPECT_EQ(a.updated(), bc.value() != a.value() || bc.isnull() != a.isnull()) << a.name();
            EXPECT_FALSE(bc.updated());
          }
          if (!in_before) {
            saw_minimal = true;  // MINIMAL image: the after column has no before
            EXPECT_TRUE(a.updated()) << a.name();
          }
        }
      }
      for (const auto* cols : {&rd.beforecolumns(), &rd.aftercolumns()}) {
        for (const auto& c : *cols) {
          EXPECT_FALSE(c.name().empty());
          EXPECT_FALSE(c.mysqltype().empty());
          if (c.isnull()) {
            EXPECT_EQ(c.value(), "");
          }
          if (c.name() == "id") {
            EXPECT_TRUE(c.iskey());
          }
        }
      }
    }
  }
  EXPECT_EQ(rows, 5u);
  EXPECT_TRUE(saw_update);
  EXPECT_TRUE(saw_minimal) << "section 10 logs MINIMAL images: absent columns are left out";
}

TEST(EntryBuilder, FieldFiltersKeepOrDropColumns) {
  CANAL_REQUIRE_FIXTURES();
  std::unique_ptr<FieldFilter> keep, drop;
  ASSERT_TRUE(FieldFilter::Create("cdc_test\\..*:id", "canal.instance.filter.field", &keep).ok());
  EntryBuilderOptions o;
  o.fields = keep.get();
  for (const auto& b : BuildAll("mariadb-10.11/mariadb-bin.000002", o)) {
    for (const auto& rd : b.change.rowdatas()) {
      for (const auto& c : rd.aftercolumns()) EXPECT_EQ(c.name(), "id");
    }
  }
  ASSERT_TRUE(FieldFilter::Create("cdc_test\\..*:id", "canal.instance.filter.black.field", &drop).ok());
  o.fields = nullptr;
  o.black_fields = drop.get();
  for (const auto& b : BuildAll("mariadb-10.11/mariadb-bin.000002", o)) {
    for (const auto& rd : b.change.rowdatas()) {
      for (const auto& c : rd.aftercolumns()) EXPECT_NE(c.name(), "id");
    }
  }
}

TEST(EntryBuilder, StatementsAreClassifiedAsCanalDoes) {
  struct Case {
    const char* sql;
    int type;
    bool ddl;
  } cases[] = {
      {"CREATE TABLE t (a INT)", entry::CREATE, true},
      {"create unique index i on t (a)", entry::CINDEX, true},
      {"/* c */ CREATE INDEX i ON t (a)", entry::CINDEX, true},
      {"DROP TABLE t", entry::ERASE, true},
      {"drop index i on t", entry::DINDEX, true},
      {"ALTER TABLE t ADD b INT", entry::ALTER, true},
      {"TRUNCATE t", entry::TRUNCATE, true},
      {"RENAME TABLE a TO b", entry::RENAME, true},
      {"INSERT INTO t VALUES (1)", entry::QUERY, false},
      {"GRANT ALL ON *.* TO x", entry::QUERY, false},
      // One classifier for the whole project: comments of every kind, and DCL is not DDL.
      {"-- why\nALTER TABLE t ADD b INT", entry::ALTER, true},
      {"# why\nDROP INDEX i ON t", entry::DINDEX, true},
      {"/*!40000 ALTER TABLE `t` DISABLE KEYS */", entry::ALTER, true},
      {"CREATE USER u", entry::QUERY, false},
      // Canal types DDL on tables and indexes only: the rest is a QUERY that is still DDL.
      {"CREATE VIEW v AS SELECT 1", entry::QUERY, true},
      {"CREATE DATABASE d", entry::QUERY, true},
      {"create database if not exists `d` character set utf8mb4", entry::QUERY, true},
      {"DROP DATABASE d", entry::QUERY, true},
      {"ALTER DATABASE d CHARACTER SET latin1", entry::QUERY, true},
      {"DROP VIEW v", entry::QUERY, true},
  };
  for (const auto& c : cases) {
    bool ddl = !c.ddl;
    EXPECT_EQ(ClassifyStatement(c.sql, &ddl), c.type) << c.sql;
    EXPECT_EQ(ddl, c.ddl) << c.sql;
  }
}

TEST(EntryBuilder, QueryBeginAndEndEntries) {
  EntryBuilder b;
  EntryContext ctx;
  ctx.position.journal_name = "mysql-bin.000004";
  ctx.position.position = 13885;
  ctx.position.server_id = 1;
  ctx.position.gtid = "0-1-7";
  ctx.position.timestamp_ms = 1591600659000;
  std::string bytes;
  entry::Entry e;
  ASSERT_TRUE(b.QueryEntry(ctx, "shop", "ALTER TABLE orders ADD note TEXT", &bytes, "orders").ok());
  ASSERT_TRUE(e.ParseFromString(bytes));
  entry::RowChange rc;
  ASSERT_TRUE(rc.ParseFromString(e.storevalue()));
  EXPECT_TRUE(rc.isddl());
  EXPECT_EQ(rc.eventtype(), entry::ALTER);
  EXPECT_EQ(rc.sql(), "ALTER TABLE orders ADD note TEXT");
  EXPECT_EQ(rc.ddlschemaname(), "shop");
  EXPECT_EQ(e.header().schemaname(), "shop");
  EXPECT_EQ(e.header().tablename(), "orders");
  EXPECT_EQ(e.header().gtid(), "0-1-7");
  EXPECT_EQ(e.header().executetime(), 1591600659000);

  ASSERT_TRUE(b.BeginEntry(ctx, 42, &bytes).ok());
  ASSERT_TRUE(e.ParseFromString(bytes));
  EXPECT_EQ(e.entrytype(), entry::TRANSACTIONBEGIN);
  entry::TransactionBegin tb;
  ASSERT_TRUE(tb.ParseFromString(e.storevalue()));
  EXPECT_EQ(tb.threadid(), 42);
  // Canal leaves a transaction boundary's event type unset (a Java client reads UPDATE).
  EXPECT_EQ(e.header().eventType_present_case(), entry::Header::EVENTTYPE_PRESENT_NOT_SET);

  ASSERT_TRUE(b.EndEntry(ctx, "1234", &bytes).ok());
  ASSERT_TRUE(e.ParseFromString(bytes));
  EXPECT_EQ(e.entrytype(), entry::TRANSACTIONEND);
  entry::TransactionEnd te;
  ASSERT_TRUE(te.ParseFromString(e.storevalue()));
  EXPECT_EQ(te.transactionid(), "1234");
  EXPECT_EQ(e.header().eventType_present_case(), entry::Header::EVENTTYPE_PRESENT_NOT_SET);
  EXPECT_EQ(e.header().logfileoffset(), 13885);
}

}  // namespace
}  // namespace canal::sink
