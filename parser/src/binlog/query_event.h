// QUERY / QUERY_COMPRESSED event bodies, status variables included. Internal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"

namespace canal::binlog {

// `body` is post-header + payload without checksum. For QUERY_COMPRESSED the
// statement text is inflated into *scratch and q->query points there.
Status DecodeQueryEvent(std::string_view body, uint8_t post_header_length, bool compressed, QueryEvent* q,
                        std::string* scratch);

}  // namespace canal::binlog
