// The project's one SQL statement classifier: what kind of statement a QUERY
// event holds and which table it names. The parser (schema cache), the sink
// (Canal event type, isDdl, event-type filters, entry header table) and the
// schema history all ask it, so they agree on comments, executable comments
// and quoting.
#pragma once

#include <string>
#include <string_view>

#include "canal/schema/sql_lexer.h"

namespace canal::schema {

enum class StatementKind : uint8_t { kDml, kDdl, kDcl, kOther };

// What a DDL statement acts on.
enum class DdlObject : uint8_t { kNone, kTable, kIndex, kDatabase, kOther };

enum class DdlVerb : uint8_t { kNone, kCreate, kAlter, kDrop, kRename, kTruncate };

struct StatementClass {
  StatementKind kind = StatementKind::kOther;
  DdlVerb verb = DdlVerb::kNone;
  DdlObject object = DdlObject::kNone;
  // The first table the statement names (tables and indexes), db empty when
  // unqualified; both empty when it names none.
  std::string db, table;
};

StatementClass ClassifyStatement(std::string_view sql, const LexerOptions& options = {});

// True when a statement of this class may change some table's columns (the
// schema history replays it; caches of columns must forget).
bool MayChangeColumns(const StatementClass& c);

}  // namespace canal::schema
