// Binlog v4 events built byte by byte (no checksum unless AddChecksum), for
// tests that need a stream no fixture has: generated dumps, offsets past 4 GiB,
// bad headers, whole files (mysql_binlog_writer.h). log_pos is left 0; SetLogPos
// patches it where the event is sent or written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace canal::testing::event_bytes {

void Put16(std::string* s, uint16_t v);
void Put32(std::string* s, uint32_t v);
void Put48(std::string* s, uint64_t v);
void Put64(std::string* s, uint64_t v);

// Header (time 1700000000, server id 1, size) + body.
std::string Event(uint8_t type, const std::string& body, uint16_t flags = 0);
void SetLogPos(std::string* event, uint32_t log_pos);
void SetTimestamp(std::string* event, uint32_t timestamp);
void SetServerId(std::string* event, uint32_t server_id);
// Appends the CRC32 of the event (its size field grown by 4 first), as every
// event of a binlog_checksum=CRC32 file and every FDE of a checksum-aware server
// carry one.
void AddChecksum(std::string* event);
// MySQL 8.0.36's, checksums off; QUERY, ROTATE, TABLE_MAP and WRITE_ROWS v2 post-headers.
std::string FormatDescription();
// A FORMAT_DESCRIPTION as MySQL `version` writes it ("8.0.36": 8.0's 41
// post-header lengths; from 8.4 on 9.6's 42), naming CRC32 or no checksums;
// without its CRC (AddChecksum: the FDE has one either way).
std::string FormatDescriptionFor(std::string_view version, bool crc32);
std::string Rotate(const std::string& next, uint64_t position, uint16_t flags);
std::string Query(const std::string& sql);
// shop.t (id INT), its column name in the optional metadata; table id 70.
std::string TableMap();
std::string WriteRow(uint32_t id);
// One WRITE_ROWS v2 event of shop.t with a row per id, in order.
std::string WriteRows(const std::vector<uint32_t>& ids);
std::string Xid(uint64_t xid);
// HEARTBEAT (v1): log_pos names the primary's position.
std::string Heartbeat(const std::string& file);

}  // namespace canal::testing::event_bytes
