// Private to the publisher's two loops (publisher.cc, publisher_pipeline.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "canal/store/ring_store.h"

namespace canal::mq {

inline int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "mysql-bin.000003:856 .. mysql-bin.000003:4064", for log lines naming a batch.
inline std::string RangeOf(const store::Batch& b) {
  return b.first_position.ToString() + " .. " + b.last_position.ToString();
}

}  // namespace canal::mq
