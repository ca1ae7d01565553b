#include "replay_test_util.h"

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

}  // namespace canal::testing
