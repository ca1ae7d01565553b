// RingStoreOptions: the settings of one destination's RingStore, under the
// names and defaults Canal gives them in instance.properties.
//
// A plain value type; thread-compatible. Validate() (also run by
// RingStore::Create) rejects values the ring cannot honour, naming the key.
#pragma once

#include <cstdint>
#include <string_view>

#include "canal/common/status.h"

namespace canal::store {

// canal.instance.memory.batch.mode
enum class BatchMode : uint8_t {
  // "MEMSIZE" (Canal's default): a get returns at most batch_size * memunit
  // bytes and the un-acked entries hold at most buffer_size * memunit bytes.
  kMemSize,
  // "ITEMSIZE": a get returns at most batch_size entries; only the entry
  // count bounds the ring.
  kItemSize,
};

std::string_view BatchModeName(BatchMode mode);  // "MEMSIZE" / "ITEMSIZE"

struct RingStoreOptions {
  // canal.instance.memory.buffer.size: number of slots (entries) in the
  // ring. A power of two, so that a sequence maps to its slot with a mask.
  uint32_t buffer_size = 16384;

  // canal.instance.memory.buffer.memunit: bytes per unit in MEMSIZE mode.
  // Also (with a floor of 256) the most spare capacity a slot's buffer keeps
  // for reuse; and buffer_size * memunit is the retained budget, the most
  // that acked slots keep in buffers for reuse in all (both modes).
  uint32_t buffer_memunit = 1024;

  // canal.instance.memory.batch.mode
  BatchMode batch_mode = BatchMode::kMemSize;

  // canal.instance.get.ddl.isolation: a DDL entry always travels in a batch
  // of its own, so a client can apply schema changes between row batches.
  bool ddl_isolation = false;

  // MEMSIZE bound on the bytes of un-acked entries: buffer_size * memunit.
  uint64_t ByteBound() const { return uint64_t{buffer_size} * buffer_memunit; }

  // OK, or InvalidArgument naming the offending key and value.
  Status Validate() const;

  // Applies one property from instance.properties (value as written there:
  // "16384", "MEMSIZE", "true"). InvalidArgument for a bad value (naming key
  // and value); NotFound for a key that is not a store setting, so a caller
  // can offer every key to every module.
  Status SetFromProperty(std::string_view key, std::string_view value);
};

}  // namespace canal::store
