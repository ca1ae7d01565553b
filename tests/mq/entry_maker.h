// Builds serialised canal.entry.Entry messages for the mq tests.
#pragma once

#include <string>
#include <vector>

#include "canal/entry.pb.h"

namespace canal::mq::testing {

struct Col {
  std::string name;
  std::string value;
  bool is_null = false;
  bool is_key = false;
  bool updated = false;
  int sql_type = 12;
  std::string mysql_type = "varchar(32)";
};

struct Row {
  std::vector<Col> before, after;
};

inline void Fill(const Col& c, int index, canal::entry::Column* out) {
  out->set_index(index);
  out->set_name(c.name);
  out->set_value(c.value);
  if (c.is_null) out->set_isnull(true);
  out->set_iskey(c.is_key);
  out->set_updated(c.updated);
  out->set_sqltype(c.sql_type);
  out->set_mysqltype(c.mysql_type);
}

inline std::string RowEntry(const std::string& db, const std::string& table, canal::entry::EventType type,
                            const std::vector<Row>& rows, int64_t es = 1700000000123, const std::string& file = "mysql-bin.000001",
                            int64_t offset = 4) {
  canal::entry::Entry e;
  auto* h = e.mutable_header();
  h->set_logfilename(file);
  h->set_logfileoffset(offset);
  h->set_executetime(es);
  h->set_schemaname(db);
  h->set_tablename(table);
  h->set_eventtype(type);
  h->set_gtid("");
  e.set_entrytype(canal::entry::ROWDATA);
  canal::entry::RowChange rc;
  rc.set_eventtype(type);
  rc.set_tableid(7);
  for (const Row& r : rows) {
    auto* rd = rc.add_rowdatas();
    for (size_t i = 0; i < r.before.size(); ++i) Fill(r.before[i], static_cast<int>(i), rd->add_beforecolumns());
    for (size_t i = 0; i < r.after.size(); ++i) Fill(r.after[i], static_cast<int>(i), rd->add_aftercolumns());
  }
  e.set_storevalue(rc.SerializeAsString());
  return e.SerializeAsString();
}

inline std::string DdlEntry(const std::string& db, const std::string& table, const std::string& sql,
                            canal::entry::EventType type = canal::entry::ALTER, int64_t es = 1700000000456) {
  canal::entry::Entry e;
  auto* h = e.mutable_header();
  h->set_logfilename("mysql-bin.000001");
  h->set_logfileoffset(900);
  h->set_executetime(es);
  h->set_schemaname(db);
  h->set_tablename(table);
  h->set_eventtype(type);
  e.set_entrytype(canal::entry::ROWDATA);
  canal::entry::RowChange rc;
  rc.set_eventtype(type);
  rc.set_isddl(true);
  rc.set_sql(sql);
  rc.set_ddlschemaname(db);
  e.set_storevalue(rc.SerializeAsString());
  return e.SerializeAsString();
}

// `entry` with a header prop `key`=`value` added (a snapshot chunk's entries
// carry snapshot=true).
inline std::string WithHeaderProp(const std::string& entry, const std::string& key, const std::string& value) {
  canal::entry::Entry e;
  e.ParseFromString(entry);
  canal::entry::Pair* p = e.mutable_header()->add_props();
  p->set_key(key);
  p->set_value(value);
  return e.SerializeAsString();
}

inline std::string BoundaryEntry(canal::entry::EntryType type) {
  canal::entry::Entry e;
  e.mutable_header()->set_logfilename("mysql-bin.000001");
  e.set_entrytype(type);
  if (type == canal::entry::TRANSACTIONBEGIN) {
    canal::entry::TransactionBegin b;
    b.set_threadid(3);
    e.set_storevalue(b.SerializeAsString());
  } else {
    canal::entry::TransactionEnd t;
    t.set_transactionid("42");
    e.set_storevalue(t.SerializeAsString());
  }
  return e.SerializeAsString();
}

}  // namespace canal::mq::testing
