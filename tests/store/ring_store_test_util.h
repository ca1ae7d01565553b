// Helpers the RingStore tests share: a ring with given settings, an entry's
// meta at an offset.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "canal/store/ring_store.h"

namespace canal::store::testing {

inline std::unique_ptr<RingStore> MakeStore(uint32_t size, BatchMode mode, uint32_t memunit = 1024,
                                            bool ddl_isolation = false) {
  RingStoreOptions o;
  o.buffer_size = size;
  o.buffer_memunit = memunit;
  o.batch_mode = mode;
  o.ddl_isolation = ddl_isolation;
  std::unique_ptr<RingStore> store;
  EXPECT_TRUE(RingStore::Create(o, &store).ok());
  return store;
}

inline EntryMeta MetaAt(uint64_t offset) {
  EntryMeta m;
  m.position.journal_name = "mysql-bin.000001";
  m.position.position = offset;
  return m;
}

}  // namespace canal::store::testing
