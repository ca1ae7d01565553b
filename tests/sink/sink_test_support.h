// Plumbing shared by the EntrySink tests: an ITEMSIZE ring, hand-built events.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <gtest/gtest.h>

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

}  // namespace canal::sink::testing_support
