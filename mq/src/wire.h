// The few protobuf wire-format steps the protobuf form needs to rebuild an
// entry around one row: walk a message's fields, append a length-delimited
// field. Bounds are checked; malformed bytes are Corruption.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::mq::wire {

struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  std::string_view whole;  // tag and value, as they are in the message
  std::string_view value;  // the payload of a length-delimited field
};

// Reads the field at `*pos` of `msg` and moves `*pos` past it.
Status NextField(std::string_view msg, size_t* pos, Field* out);

void AppendVarint(uint64_t v, std::string* out);
void AppendBytesField(uint32_t number, std::string_view value, std::string* out);

}  // namespace canal::mq::wire
