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
  // A cursor inside a transaction: that transaction's GTID (MySQL: checked against the
  // server's binlog before the position inside it is trusted).
  std::string inside_gtid;

  // A start after `resume` by GTID (it begins at a transaction: nothing to skip).
  void ResumeAfter(Kind gtid_kind, const binlog::GtidSet& resume) {
    kind = gtid_kind;
    gtid = resume.ToString();
    point = ResumePoint{};
    state = resume;
  }
};

// SELECT @@GLOBAL.<name> as a GTID set (empty when NULL); errors name the variable.
Status ReadGtidVariable(mysql::QueryConnection* query, const char* name, binlog::GtidSet* out);

}  // namespace canal::parser
