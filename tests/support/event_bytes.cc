#include "support/event_bytes.h"

#include <cstring>

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

std::string WriteRow(uint32_t id) {
  std::string b;
  Put48(&b, 70);
  Put16(&b, 1);  // end of statement
  Put16(&b, 2);  // no extra data
  b.push_back(1);
  b.push_back(1);  // columns present
  b.push_back(0);  // null bitmap
  Put32(&b, id);
  return Event(30, b);
}

std::string Xid(uint64_t xid) {
  std::string b;
  Put64(&b, xid);
  return Event(16, b);
}

std::string Heartbeat(const std::string& file) { return Event(27, file, 0x20); }

}  // namespace canal::testing::event_bytes
