// The EntrySink tests' harness: a sink on an ITEMSIZE ring with a settable
// clock, the entries it put (parsed, with their metas), hand-built transactions.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/sink/entry_sink.h"
#include "sink_test_support.h"

namespace canal::sink::testing_support {

using parser::Transaction;
using parser::TxEvent;
using parser::TxEventKind;
using store::RingStore;

inline constexpr char kFile[] = "mysql-bin.000007";

// ---- store plumbing ----------------------------------------------------------

struct Got {
  entry::Entry entry;
  entry::RowChange change;  // ROWDATA only
  store::EntryMeta meta;

  entry::EntryType type() const { return entry.entrytype(); }
  bool safe() const { return meta.safe_resume_point; }
  // What identifies an entry across runs: its type, event offset and table.
  std::string Key() const {
    return std::to_string(static_cast<int>(entry.entrytype())) + "@" +
           std::to_string(entry.header().logfileoffset()) + ":" + entry.header().schemaname() + "." +
           entry.header().tablename() + ":" + std::to_string(static_cast<int>(entry.header().eventtype()));
  }
};

// Takes (and acks) everything in the store.
inline std::vector<Got> Drain(RingStore* s) {
  std::vector<Got> out;
  store::Batch batch;
  while (true) {
    Status st = s->Get(1000, RingStore::kNoWait, &batch);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok() || batch.empty()) break;
    for (const auto& v : batch.entries) {
      Got g;
      EXPECT_TRUE(g.entry.ParseFromString(std::string(v.bytes)));
      if (g.entry.entrytype() == entry::ROWDATA) {
        EXPECT_TRUE(g.change.ParseFromString(g.entry.storevalue()));
      }
      g.meta = *v.meta;
      out.push_back(std::move(g));
    }
    EXPECT_TRUE(s->Ack(batch).ok());
  }
  return out;
}

// ---- hand-built transactions -----------------------------------------------------

inline TxEvent Commit(uint64_t offset, uint64_t xid) {
  TxEvent e = Ev(TxEventKind::kCommit, offset, offset + 31);
  e.has_xid = true;
  e.xid = xid;
  return e;
}

// A rows event with no rows (so it needs no row bytes) for schema.table.
inline TxEvent Rows(uint64_t offset, uint64_t end, const std::string& schema, const std::string& table,
             binlog::RowsKind kind = binlog::RowsKind::kWrite) {
  auto map = std::make_shared<binlog::TableMap>();
  map->table_id = 70;
  map->db = schema;
  map->table = table;
  TxEvent e = Ev(TxEventKind::kRows, offset, end);
  e.table = map;
  e.rows.info.kind = kind;
  e.rows.table_id = 70;
  e.rows.table = map.get();
  e.rows.offset = offset;
  return e;
}

inline Transaction Txn(uint64_t begin, std::vector<TxEvent> events, std::string gtid = "0-1-9") {
  Transaction t;
  t.file = kFile;
  t.begin_offset = begin;
  t.end_offset = events.empty() ? begin : events.back().end_offset;
  t.gtid = std::move(gtid);
  t.server_id = 1;
  t.timestamp = kTime;
  t.events = std::move(events);
  return t;
}

// BEGIN at `begin`, then `body`, then XID `xid`: offsets follow each other.
inline Transaction Tx(uint64_t begin, std::vector<TxEvent> body, uint64_t xid = 77) {
  std::vector<TxEvent> events;
  events.push_back(Ev(TxEventKind::kBegin, begin, begin + 42, "BEGIN"));
  for (auto& e : body) events.push_back(std::move(e));
  events.push_back(Commit(events.back().end_offset, xid));
  return Txn(begin, std::move(events));
}

// Standalone statement (a DDL with its GTID event before it).
inline Transaction Stmt(uint64_t begin, std::string_view sql, std::string_view db = "shop") {
  return Txn(begin, {Ev(TxEventKind::kQuery, begin + 42, begin + 200, sql, db)});
}

struct Harness {
  explicit Harness(EntrySinkOptions o = {}, uint32_t slots = 1024) : store(MakeStore(slots)) {
    if (!o.clock_ms) o.clock_ms = [this] { return now_ms.load(); };
    sink = std::make_unique<EntrySink>(std::move(o), store.get());
  }
  std::vector<Got> Run(const Transaction& t) {
    Status s = sink->OnTransaction(t);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return Drain(store.get());
  }

  std::atomic<int64_t> now_ms{0};
  std::unique_ptr<RingStore> store;
  std::unique_ptr<EntrySink> sink;
};

inline EntrySinkOptions Filtered(std::string_view regex, std::string_view black = "") {
  EntrySinkOptions o;
  Status s = o.CompileFilters(regex, black, "", "");
  EXPECT_TRUE(s.ok()) << s.ToString();
  return o;
}

}  // namespace canal::sink::testing_support
