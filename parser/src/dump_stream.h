// Private to the parser: the pieces EventParser's start-position search and
// its session share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog_source.h"
#include "canal/parser/binlog/gtid_set.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/dump_connection.h"
#include "canal/parser/resume_from_cursor.h"
#include "canal/parser/transaction.h"

namespace canal::parser {

// The replica connection as the dump source's raw stream.
class DumpStream final : public RawEventStream {
 public:
  explicit DumpStream(mysql::DumpConnection* dump) : dump_(dump) {}
  Status ReadEvent(std::string_view* event) override { return dump_->ReadEvent(event); }
  void Shutdown() override { dump_->Shutdown(); }

 private:
  mysql::DumpConnection* dump_;
};

// How the next dump starts.
struct EventParser::StartPlan {
  enum class Kind : uint8_t { kPosition, kMariaGtid, kMysqlGtid } kind = Kind::kPosition;
  ResumePoint point;
  std::string gtid;
  std::string origin;  // for the log line: "stored cursor", "journal.name", ...
  // The GTID state at the start when the start names one (the cursor's set, a GTID start).
  std::optional<binlog::GtidSet> state;
};

}  // namespace canal::parser
