#include "binlog/query_event.h"

#include "canal/parser/binlog/byte_reader.h"
#include "canal/parser/binlog/compression.h"

namespace canal::binlog {

namespace {

// Status variable codes (MySQL; MariaDB adds 128+).
enum : uint8_t {
  kFlags2 = 0,
  kSqlMode = 1,
  kCatalog = 2,  // 5.0.0-5.0.3 only: length, text, NUL
  kAutoIncrement = 3,
  kCharset = 4,
  kTimeZone = 5,
  kCatalogNz = 6,
  kLcTimeNames = 7,
  kCharsetDatabase = 8,
  kTableMapForUpdate = 9,
  kMasterDataWritten = 10,
  kInvoker = 11,
  kUpdatedDbNames = 12,
  kMicroseconds = 13,
  kCommitTs = 14,
  kCommitTs2 = 15,
  kExplicitDefaultsForTimestamp = 16,
  kDdlLoggedWithXid = 17,
  kDefaultCollationForUtf8mb4 = 18,
  kSqlRequirePrimaryKey = 19,
  kDefaultTableEncryption = 20,
  kMariaHrnow = 128,
  kMariaXid = 129,
  kMariaGtidFlags3 = 130,
  kMariaCharacterSetCollations = 131,
};

// Parses the status block; stops (flagging it) at a code it does not know,
// since the remaining variables cannot be delimited.
void ParseStatusVars(ByteReader r, QueryEvent* q) {
  while (!r.empty()) {
    uint8_t code = 0;
    r.ReadU8(&code);
    bool ok = true;
    switch (code) {
      case kFlags2: ok = r.ReadLE(&q->flags2); q->has_flags2 = ok; break;
      case kSqlMode: ok = r.ReadLE(&q->sql_mode); q->has_sql_mode = ok; break;
      case kCatalog: {
        uint8_t len = 0;
        ok = r.ReadU8(&len) && r.ReadBytes(len, &q->catalog) && r.Skip(1);
        break;
      }
      case kAutoIncrement:
        ok = r.ReadLE(&q->auto_increment_increment) && r.ReadLE(&q->auto_increment_offset);
        break;
      case kCharset:
        ok = r.ReadLE(&q->charset_client) && r.ReadLE(&q->collation_connection) && r.ReadLE(&q->collation_server);
        q->has_charset = ok;
        break;
      case kTimeZone: {
        uint8_t len = 0;
        ok = r.ReadU8(&len) && r.ReadBytes(len, &q->time_zone);
        break;
      }
      case kCatalogNz: {
        uint8_t len = 0;
        ok = r.ReadU8(&len) && r.ReadBytes(len, &q->catalog);
        break;
      }
      case kLcTimeNames: ok = r.Skip(2); break;
      case kCharsetDatabase: ok = r.Skip(2); break;
      case kTableMapForUpdate: ok = r.Skip(8); break;
      case kMasterDataWritten: ok = r.Skip(4); break;
      case kInvoker: {
        uint8_t len = 0;
        ok = r.ReadU8(&len) && r.Skip(len) && r.ReadU8(&len) && r.Skip(len);
        break;
      }
      case kUpdatedDbNames: {
        uint8_t count = 0;
        ok = r.ReadU8(&count);
        // 254 (OVER_MAX_DBS_IN_EVENT_MTS) means "too many": no names follow.
        if (ok && count != 254) {
          for (uint8_t i = 0; ok && i < count; ++i) {
            while (ok) {
              uint8_t c = 0;
              ok = r.ReadU8(&c);
              if (c == 0) break;
            }
          }
        }
        break;
      }
      case kMicroseconds: ok = r.Skip(3); break;
      case kCommitTs: ok = r.Skip(8); break;
      case kCommitTs2: ok = r.Skip(8); break;
      case kExplicitDefaultsForTimestamp: ok = r.Skip(1); break;
      case kDdlLoggedWithXid: ok = r.ReadLE(&q->ddl_xid); q->has_ddl_xid = ok; break;
      case kDefaultCollationForUtf8mb4: ok = r.Skip(2); break;
      case kSqlRequirePrimaryKey: ok = r.Skip(1); break;
      case kDefaultTableEncryption: ok = r.Skip(1); break;
      case kMariaHrnow: ok = r.Skip(3); break;
      case kMariaXid: ok = r.Skip(8); break;
      case kMariaGtidFlags3: ok = r.Skip(1); break;
      case kMariaCharacterSetCollations: {
        uint8_t count = 0;
        ok = r.ReadU8(&count) && r.Skip(size_t{count} * 4);
        break;
      }
      default:
        ok = false;
        break;
    }
    if (!ok) {
      q->unknown_status_var = true;
      return;
    }
  }
}

}  // namespace

Status DecodeQueryEvent(std::string_view body, uint8_t post_header_length, bool compressed, QueryEvent* q,
                        std::string* scratch) {
  ByteReader r(body);
  uint8_t db_len = 0;
  uint16_t status_len = 0;
  if (post_header_length < 11) {
    return Status::Corruption("post-header length " + std::to_string(post_header_length) + " below 11");
  }
  if (!r.ReadLE(&q->thread_id) || !r.ReadLE(&q->exec_time) || !r.ReadU8(&db_len) || !r.ReadLE(&q->error_code)) {
    return Status::Truncated("post-header truncated");
  }
  if (post_header_length >= 13) {
    if (!r.ReadLE(&status_len)) return Status::Truncated("status-variables length truncated");
    if (!r.Skip(post_header_length - 13u)) return Status::Truncated("post-header truncated");
  }
  std::string_view status;
  if (!r.ReadBytes(status_len, &status)) {
    return Status::Corruption("status variables length " + std::to_string(status_len) + " exceeds the " +
                              std::to_string(r.remaining()) + " byte(s) left in the event");
  }
  ParseStatusVars(ByteReader(status), q);
  if (!r.ReadBytes(db_len, &q->db) || !r.Skip(1)) {
    return Status::Corruption("database name length " + std::to_string(db_len) + " exceeds the event");
  }
  std::string_view text = r.Rest();
  if (compressed) {
    size_t consumed = 0;
    CANAL_RETURN_IF_ERROR(MariaUncompress(text, scratch, &consumed));
    q->query = *scratch;
  } else {
    q->query = text;
  }
  return Status::OK();
}

}  // namespace canal::binlog
