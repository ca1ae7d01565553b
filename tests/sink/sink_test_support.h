// Plumbing shared by the EntrySink tests: an ITEMSIZE ring, hand-built events.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <gtest/gtest.h>

#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/parser/transaction.h"
#include "canal/store/ring_store.h"

namespace canal::sink::testing_support {

inline constexpr uint32_t kTime = 1700000000;

inline std::unique_ptr<store::RingStore> MakeStore(uint32_t slots = 1024) {
  store::RingStoreOptions o;
  o.buffer_size = slots;
  o.batch_mode = store::BatchMode::kItemSize;
  std::unique_ptr<store::RingStore> s;
  Status st = store::RingStore::Create(o, &s);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return s;
}

// An event at [offset, end) at kTime from server 1.
inline parser::TxEvent Ev(parser::TxEventKind kind, uint64_t offset, uint64_t end, std::string_view sql = {},
                          std::string_view db = {}) {
  parser::TxEvent e;
  e.kind = kind;
  e.offset = offset;
  e.end_offset = end;
  e.timestamp = kTime;
  e.server_id = 1;
  e.sql = sql;
  e.db = db;
  return e;
}

// shop.items (id INT key, name VARCHAR utf8mb4): a table for snapshot rows.
inline std::shared_ptr<binlog::TableMap> ItemsTable() {
  auto t = std::make_shared<binlog::TableMap>();
  t->table_id = 31;
  t->db = "shop";
  t->table = "items";
  binlog::ColumnInfo id;
  id.type = id.real_type = binlog::ColumnType::kLong;
  id.name = "id";
  id.is_key = true;
  id.signedness_known = true;
  binlog::ColumnInfo name;
  name.type = name.real_type = binlog::ColumnType::kVarchar;
  name.meta = 65535;
  name.max_length = 65535;
  name.charset = 45;  // utf8mb4
  name.name = "name";
  t->columns = {id, name};
  return t;
}

// A row of ItemsTable as the decoder's values (name viewed, not copied).
inline void ItemsRow(int64_t id, std::string_view name, binlog::ColumnValue (&v)[2]) {
  v[0] = binlog::ColumnValue();
  v[0].kind = binlog::ColumnValue::Kind::kSigned;
  v[0].type = binlog::ColumnType::kLong;
  v[0].i64 = id;
  v[1] = binlog::ColumnValue();
  v[1].kind = binlog::ColumnValue::Kind::kString;
  v[1].type = binlog::ColumnType::kVarchar;
  v[1].raw = name;
}

}  // namespace canal::sink::testing_support
