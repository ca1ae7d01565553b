// EventParser::Locate: a start position turned into a binlog file and offset
// of the primary as it is now, for an operator who moves a cursor (the admin
// API). It reuses the start's own lookups, so "where a reset would start"
// and "where a configured start starts" cannot differ.
#include <string>
#include <vector>

#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/dump_connection.h"
#include "canal/parser/mysql/query_connection.h"
#include "dump_stream.h"

namespace canal::parser {

namespace {

// Events a GTID dump may send before the first one of the file (artificial
// ROTATE, FORMAT_DESCRIPTION, GTID_LIST, heartbeats): far fewer than this.
constexpr int kMaxLeadingEvents = 64;

}  // namespace

Status EventParser::Locate(const StartPosition& start, ResumePoint* out, std::string* how) {
  *out = ResumePoint{};
  mysql::QueryConnection query(options_.master);
  CANAL_RETURN_IF_ERROR(query.Connect().WithContext("connecting to " + options_.master.Address()));
  mysql::ServerInfo info;
  CANAL_RETURN_IF_ERROR(query.ReadServerInfo(&info));
  std::vector<mysql::BinaryLogFile> files;
  CANAL_RETURN_IF_ERROR(query.ShowBinaryLogs(&files));
  if (files.empty()) return Status::NotFound("SHOW BINARY LOGS on " + options_.master.Address() + " lists no files");

  if (!start.journal_name.empty()) {
    const uint64_t offset = start.position == 0 ? 4 : start.position;
    for (const mysql::BinaryLogFile& f : files) {
      if (f.name != start.journal_name) continue;
      if (offset < 4 || offset > f.size) {
        return Status::InvalidArgument("offset " + std::to_string(offset) + " is outside " + f.name + " (4 to " +
                                       std::to_string(f.size) + " on " + options_.master.Address() + ")");
      }
      out->file = f.name;
      out->position = offset;
      *how = "the position as given";
      return Status::OK();
    }
    return Status::NotFound("the primary " + options_.master.Address() + " has no binlog " + start.journal_name +
                            " (it has " + files.front().name + " to " + files.back().name + ")");
  }
  if (start.timestamp_ms > 0) {
    CANAL_RETURN_IF_ERROR(FindByTimestamp(&query, info, start.timestamp_ms, out));
    *how = "the first transaction that began at or after " + std::to_string(start.timestamp_ms) + " ms";
    return Status::OK();
  }
  if (start.gtid.empty()) return Status::InvalidArgument("no position, timestamp or GTID position to locate");
  if (!info.mariadb) {
    return Status::InvalidArgument("a GTID position is located on MariaDB only; on MySQL give a position or a time");
  }
  // Caught up to it: the primary would wait at its end.
  mysql::ResultSet rs;
  CANAL_RETURN_IF_ERROR(query.Query("SELECT @@global.gtid_binlog_pos", &rs));
  mysql::MasterStatus end;
  CANAL_RETURN_IF_ERROR(query.ShowMasterStatus(&end));
  if (!rs.rows.empty() && !rs.rows[0].empty() && rs.rows[0][0] && *rs.rows[0][0] == start.gtid) {
    out->file = end.file;
    out->position = end.position;
    out->gtid = start.gtid;
    *how = "the primary's end (its binlog GTID position is " + start.gtid + ")";
    return Status::OK();
  }
  StartPlan plan;
  plan.kind = StartPlan::Kind::kMariaGtid;
  plan.gtid = start.gtid;
  mysql::DumpConnection dump(options_.master);
  CANAL_RETURN_IF_ERROR(dump.Connect());
  CANAL_RETURN_IF_ERROR(StartDump(&dump, info, plan).WithContext("asking for GTID position " + start.gtid));
  binlog::EventDecoder decoder;
  DumpStream stream(&dump);
  DumpSource source(&stream, "", 4, info.binlog_checksum == "CRC32");
  SourceEvent se;
  for (int i = 0; i < kMaxLeadingEvents; ++i) {
    CANAL_RETURN_IF_ERROR(source.Next(&decoder, &se).WithContext("reading from GTID position " + start.gtid));
    if (se.event.As<binlog::HeartbeatEvent>() != nullptr) {
      // Nothing after the position yet (a heartbeat comes once the dump waits at the end).
      out->file = end.file;
      out->position = end.position;
      out->gtid = start.gtid;
      *how = "the primary's end (nothing follows GTID position " + start.gtid + ")";
      return Status::OK();
    }
    if (!se.in_file || se.event.type() == binlog::EventType::kFormatDescription) continue;
    if (se.event.type() == binlog::EventType::kMariaGtidList ||
        se.event.type() == binlog::EventType::kMariaBinlogCheckpoint) {
      continue;
    }
    out->file = std::string(se.file);
    out->position = se.offset;
    out->gtid = start.gtid;
    *how = "where the primary starts a dump from GTID position " + start.gtid;
    return Status::OK();
  }
  return Status::Corruption("the dump from GTID position " + start.gtid + " sent " + std::to_string(kMaxLeadingEvents) +
                          " events without one of its binlog");
}

}  // namespace canal::parser
