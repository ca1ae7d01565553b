#include "support/event_bytes.h"

#include <cstring>

#include "canal/parser/binlog/crc32.h"

namespace canal::testing::event_bytes {

void Put16(std::string* s, uint16_t v) { s->append(reinterpret_cast<const char*>(&v), 2); }
void Put32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); }
void Put48(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 6); }
void Put64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }

std::string Event(uint8_t type, const std::string& body, uint16_t flags) {
  std::string e;
  Put32(&e, 1700000000);
  e.push_back(static_cast<char>(type));
  Put32(&e, 1);  // server id
  Put32(&e, static_cast<uint32_t>(19 + body.size()));
  Put32(&e, 0);
  Put16(&e, flags);
  return e + body;
}

void SetLogPos(std::string* event, uint32_t log_pos) { std::memcpy(event->data() + 13, &log_pos, 4); }
void SetTimestamp(std::string* event, uint32_t timestamp) { std::memcpy(event->data(), &timestamp, 4); }
void SetServerId(std::string* event, uint32_t server_id) { std::memcpy(event->data() + 5, &server_id, 4); }

void AddChecksum(std::string* event) {
  const uint32_t size = static_cast<uint32_t>(event->size() + 4);
  std::memcpy(event->data() + 9, &size, 4);
  Put32(event, canal::binlog::Crc32(reinterpret_cast<const uint8_t*>(event->data()), event->size()));
}

std::string FormatDescription() {
  std::string b;
  Put16(&b, 4);
  std::string version = "8.0.36";
  version.resize(50, '\0');
  b += version;
  Put32(&b, 1700000000);
  b.push_back(19);
  std::string post(41, '\0');  // post-header lengths of types 1..41
  post[2 - 1] = 13;            // QUERY
  post[4 - 1] = 8;             // ROTATE
  post[19 - 1] = 8;            // TABLE_MAP
  post[30 - 1] = 10;           // WRITE_ROWS v2
  b += post;
  b.push_back(0);  // checksum algorithm: none
  Put32(&b, 0);    // its (unused) checksum slot
  return Event(15, b);
}

std::string FormatDescriptionFor(std::string_view version, bool crc32) {
  // binlog version 4, the server version padded to 50 bytes, create time 0 (not
  // the first file since the server started: a replica keeps its temp tables).
  std::string b;
  Put16(&b, 4);
  std::string v(version.substr(0, 49));
  v.resize(50, '\0');
  b += v;
  Put32(&b, 0);
  b.push_back(19);
  // MySQL 8.0's post-header lengths of types 1..41, as its FDEs list them.
  static constexpr uint8_t k80[41] = {0,  13, 0, 8, 0, 0, 0,  0,  4,  0,  4,  0,  0,  0,
                                      98, 0,  4, 26, 8, 0, 0, 0,  8,  8,  8,  2,  0,  0,
                                      0,  10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0};
  std::string post(reinterpret_cast<const char*>(k80), sizeof k80);
  // 8.4 on (our reference: a 9.6 FDE) add GTID_TAGGED (42), whose body carries
  // its own field sizes, and list 0 for the v1 rows events (23-25) no longer written.
  int major = 0, minor = 0;
  size_t i = 0;
  for (; i < version.size() && version[i] >= '0' && version[i] <= '9'; ++i) major = major * 10 + (version[i] - '0');
  for (++i; i < version.size() && version[i] >= '0' && version[i] <= '9'; ++i) minor = minor * 10 + (version[i] - '0');
  if (major > 8 || (major == 8 && minor >= 4)) {
    post.push_back(0);
    for (int type = 23; type <= 25; ++type) post[type - 1] = 0;
  }
  post[15 - 1] = static_cast<char>(2 + 50 + 4 + 1 + post.size());  // the FDE's own post-header: the table's end
  b += post;
  b.push_back(crc32 ? 1 : 0);
  return Event(15, b);
}

std::string Rotate(const std::string& next, uint64_t position, uint16_t flags) {
  std::string b;
  Put64(&b, position);
  return Event(4, b + next, flags);
}

std::string Query(const std::string& sql) {
  std::string b;
  Put32(&b, 7);  // thread id
  Put32(&b, 0);
  b.push_back(0);  // db length
  Put16(&b, 0);
  Put16(&b, 0);  // status variables length
  b.push_back('\0');
  return Event(2, b + sql);
}

std::string TableMap() {
  std::string b;
  Put48(&b, 70);
  Put16(&b, 1);
  b += std::string("\4shop\0", 6);
  b += std::string("\1t\0", 3);
  b.push_back(1);  // one column
  b.push_back(3);  // LONG
  b.push_back(0);  // no type metadata
  b.push_back(0);  // null bitmap
  b.push_back(4);  // COLUMN_NAME
  b.push_back(3);
  b += "\2id";
  return Event(19, b);
}

std::string WriteRow(uint32_t id) { return WriteRows({id}); }

std::string WriteRows(const std::vector<uint32_t>& ids) {
  std::string b;
  Put48(&b, 70);
  Put16(&b, 1);  // end of statement
  Put16(&b, 2);  // no extra data
  b.push_back(1);
  b.push_back(1);  // columns present
  for (uint32_t id : ids) {
    b.push_back(0);  // null bitmap
    Put32(&b, id);
  }
  return Event(30, b);
}

std::string Xid(uint64_t xid) {
  std::string b;
  Put64(&b, xid);
  return Event(16, b);
}

std::string Heartbeat(const std::string& file) { return Event(27, file, 0x20); }

}  // namespace canal::testing::event_bytes
