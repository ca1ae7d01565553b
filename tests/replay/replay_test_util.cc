#include "replay_test_util.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "support/fixtures.h"
#include "support/row_render.h"

namespace canal::testing {

const std::vector<std::string>& Mysql8Fixtures() {
  static const std::vector<std::string> kFiles = {
      "mysql-binlog-connector-java/mysql-bin.compressed",      // 8.0.28, TRANSACTION_PAYLOAD
      "rust_mysql_common/transaction_compression.000001",      // 8.0.32, TRANSACTION_PAYLOAD
      "rust_mysql_common/mysql-enum-string-set.000001",        // 8.0.28, GTID, FULL metadata
      "rust_mysql_common/binlog-invisible-columns.000001",     // 8.0.26, GTID
      "rust_mysql_common/mysql_type_bit.000001",               // 8.0.26, GTID
      "rust_mysql_common/json.binlog.000001",                  // 8.0.22, JSON + PARTIAL_UPDATE_ROWS
      "rust_mysql_common/minimal_row_metadata.000001",         // 8.0.40
      "rust_mysql_common/time_issue.000001",                   // 8.0.40
      "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",  // 9.6.0, tagged GTID
      "rust_mysql_common/vector.binlog",                       // 9.0.1
      "rust_mysql_common/json-opaque.binlog",                  // 9.0.1
      "mysql-cdc-rs/8.0/02_query_bigger/binlog.000733",        // 8.0.31
      "mysql-cdc-rs/8.0/32_delete_rows_v2/binlog.000001",      // 8.2.0
  };
  return kFiles;
}

const std::vector<std::string>& Mysql8GtidFixtures() {
  static const std::vector<std::string> kFiles = {
      "rust_mysql_common/mysql-enum-string-set.000001",
      "rust_mysql_common/binlog-invisible-columns.000001",
      "rust_mysql_common/mysql_type_bit.000001",
  };
  return kFiles;
}

Status DecodeFixtureFile(const std::string& path, FileDecode* out) {
  *out = FileDecode{};
  binlog::EventDecoder decoder;
  binlog::BinlogFileReader reader(&decoder);
  CANAL_RETURN_IF_ERROR(reader.Open(path));
  std::string gtid;
  uint64_t outer_offset = 0;
  for (;;) {
    binlog::Event ev;
    bool eof = false;
    CANAL_RETURN_IF_ERROR(reader.Next(&ev, &eof));
    if (eof) return Status::OK();
    if (!ev.in_payload) outer_offset = ev.offset;
    if (!ev.in_payload && ev.type() != binlog::EventType::kFormatDescription) {
      out->events.emplace_back(ev.raw);
      out->offsets.push_back(ev.offset);
    }
    if (const auto* g = ev.As<binlog::GtidEvent>()) {
      gtid = g->anonymous ? "" : g->ToString();
      if (!gtid.empty()) out->gtids.push_back(gtid);
    }
    if (const auto* r = ev.As<binlog::RowsEvent>()) {
      std::vector<std::string> lines;
      CANAL_RETURN_IF_ERROR(RenderRows(*r, &lines));
      for (std::string& l : lines) {
        out->rows.emplace_back(gtid, std::move(l));
        out->row_offsets.push_back(outer_offset);
      }
    }
  }
}

std::vector<std::string> RowsAfterGtids(const FileDecode& d, size_t skip) {
  std::vector<std::string> rows;
  for (const auto& [gtid, line] : d.rows) {
    bool skipped = false;
    for (size_t i = 0; i < skip && i < d.gtids.size(); ++i) skipped = skipped || d.gtids[i] == gtid;
    if (!skipped) rows.push_back(line);
  }
  return rows;
}

Status ReadStream(mysql::DumpConnection* conn, StreamDecode* out, size_t max_events) {
  binlog::EventDecoder decoder;
  decoder.set_source_name("replay stream");
  while (out->events.size() < max_events) {
    std::string_view raw;
    CANAL_RETURN_IF_ERROR(conn->ReadEvent(&raw));
    if (raw.size() > 4 && static_cast<uint8_t>(raw[4]) == static_cast<uint8_t>(binlog::EventType::kHeartbeat)) {
      out->heartbeat = true;
      return Status::OK();
    }
    out->events.emplace_back(raw);
    const std::string& ev_bytes = out->events.back();
    binlog::Event ev;
    // Offset 0: positions are checked against the file's events byte for byte.
    const auto* data = reinterpret_cast<const uint8_t*>(ev_bytes.data());
    CANAL_RETURN_IF_ERROR(decoder.Decode(data, ev_bytes.size(), 0, &ev));
    for (;;) {
      if (const auto* r = ev.As<binlog::RowsEvent>()) CANAL_RETURN_IF_ERROR(RenderRows(*r, &out->rows));
      if (!decoder.has_pending_inner()) break;
      bool done = false;
      CANAL_RETURN_IF_ERROR(decoder.NextInner(&ev, &done));
      if (done) break;
    }
  }
  return Status::OK();
}

mysql::ConnectionOptions ReplicaOptions(const ReplayPrimary& primary, const ReplayPrimaryOptions& o) {
  mysql::ConnectionOptions c;
  c.host = "127.0.0.1";
  c.port = primary.port();
  c.user = o.user;
  c.password = o.password;
  c.tls = mysql::TlsMode::kDisabled;
  c.connect_timeout_ms = 10'000;
  c.read_timeout_ms = 20'000;
  return c;
}

std::unique_ptr<ReplayPrimary> StartPrimary(ReplayPrimaryOptions o) {
  auto p = std::make_unique<ReplayPrimary>(std::move(o));
  Status s = p->Start();
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return nullptr;
  return p;
}

std::string HistoryRow(uint32_t id) { return "shop.t INSERT after: id=" + std::to_string(id); }

GtidHistory SmallHistory(const std::string& uuid_a, const std::string& uuid_b) {
  GtidHistory h;
  h.uuids = {uuid_a, uuid_b};
  h.runs = {{0, "", 1, 3}, {0, "blue", 1, 2}, {1, "", 1, 2}, {0, "", 4, 5}};
  return h;
}

RawMysqlClient::RawMysqlClient(uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

RawMysqlClient::~RawMysqlClient() { ::close(fd_); }

bool RawMysqlClient::TrySend(uint8_t seq, std::string_view payload) {
  std::string f;
  for (int i = 0; i < 3; ++i) f.push_back(static_cast<char>((payload.size() >> (8 * i)) & 0xFF));
  f.push_back(static_cast<char>(seq));
  f.append(payload);
  size_t done = 0;
  while (done < f.size()) {
    const ssize_t n = ::send(fd_, f.data() + done, f.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool RawMysqlClient::Read(std::string* payload) {
  char h[4];
  if (!ReadN(h, 4)) return false;
  const size_t len = static_cast<uint8_t>(h[0]) | static_cast<uint8_t>(h[1]) << 8 | static_cast<uint8_t>(h[2]) << 16;
  payload->resize(len);
  return ReadN(payload->data(), len);
}

bool RawMysqlClient::LogIn(std::string* why) {
  std::string p;
  if (!connected_ || !Read(&p)) {
    *why = "no greeting";
    return false;
  }
  std::string login;
  const uint32_t caps = 0x200 | 0x8000 | 0x80000;  // protocol 41, secure connection, plugin auth
  for (int i = 0; i < 4; ++i) login.push_back(static_cast<char>((caps >> (8 * i)) & 0xFF));
  login.append(4, '\0');
  login.push_back(45);
  login.append(23, '\0');
  login.append("repl");
  login.push_back('\0');
  login.push_back('\0');  // no scramble: empty password
  login.append("mysql_native_password");
  login.push_back('\0');
  if (!TrySend(1, login) || !Read(&p) || p.empty()) {
    *why = "no answer to the login";
    return false;
  }
  if (static_cast<uint8_t>(p[0]) != 0x00) {
    *why = "login refused: " + p.substr(1);
    return false;
  }
  return true;
}

int RawMysqlClient::ReadError() {
  std::string p;
  if (!Read(&p)) return -1;
  if (p.size() < 3 || static_cast<uint8_t>(p[0]) != 0xFF) return 0;
  return static_cast<uint8_t>(p[1]) | static_cast<uint8_t>(p[2]) << 8;
}

bool RawMysqlClient::ReadN(char* dst, size_t n) {
  for (size_t done = 0; done < n;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 10'000) <= 0) return false;
    const ssize_t got = ::recv(fd_, dst + done, n - done, 0);
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

}  // namespace canal::testing
