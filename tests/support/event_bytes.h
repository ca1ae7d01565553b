// Binlog v4 events built byte by byte (no checksum), for tests that need a
// stream no fixture has: generated dumps, offsets past 4 GiB, bad headers.
// log_pos is left 0; SetLogPos patches it where the event is sent.
#pragma once

#include <cstdint>
#include <string>

namespace canal::testing::event_bytes {

void Put16(std::string* s, uint16_t v);
void Put32(std::string* s, uint32_t v);
void Put48(std::string* s, uint64_t v);
void Put64(std::string* s, uint64_t v);

// Header (time 1700000000, server id 1, size) + body.
std::string Event(uint8_t type, const std::string& body, uint16_t flags = 0);
void SetLogPos(std::string* event, uint32_t log_pos);
// MySQL 8.0.36's, checksums off; QUERY, ROTATE, TABLE_MAP and WRITE_ROWS v2 post-headers.
std::string FormatDescription();
std::string Rotate(const std::string& next, uint64_t position, uint16_t flags);
std::string Query(const std::string& sql);
// shop.t (id INT), its column name in the optional metadata; table id 70.
std::string TableMap();
std::string WriteRow(uint32_t id);
std::string Xid(uint64_t xid);
// HEARTBEAT (v1): log_pos names the primary's position.
std::string Heartbeat(const std::string& file);

}  // namespace canal::testing::event_bytes
