// libFuzzer target: arbitrary bytes as the SQL text of a QUERY event.
//
// Drives what the parse thread does with a statement: the classifier, the DDL
// parser under the lexer's option combinations (chosen by the first byte), and
// the schema history replaying it over a few known tables. Any Status is a fine
// outcome; a crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "canal/schema/ddl.h"
#include "canal/schema/schema_history.h"
#include "canal/schema/statement.h"

namespace {

using namespace canal::schema;

SchemaHistory SeededHistory() {
  SchemaHistory h;
  h.ApplySql("CREATE TABLE t1 (id INT PRIMARY KEY, a VARCHAR(10), b TEXT, c ENUM('x','y'))", "shop")
      .PermitUncheckedError();
  h.ApplySql("CREATE TABLE t2 (id BIGINT UNSIGNED, d DECIMAL(10,2)) DEFAULT CHARSET=latin1", "shop")
      .PermitUncheckedError();
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  LexerOptions options;
  const uint8_t flags = data[0];
  options.ansi_quotes = (flags & 1) != 0;
  options.no_backslash_escapes = (flags & 2) != 0;
  options.mariadb = (flags & 4) == 0;
  options.server_version = (flags & 8) != 0 ? 50744 : 0;
  const std::string_view sql(reinterpret_cast<const char*>(data + 1), size - 1);

  const StatementClass cls = ClassifyStatement(sql, options);
  (void)MayChangeColumns(cls);
  DdlStatement ddl;
  if (ParseDdl(sql, (flags & 16) != 0 ? "" : "shop", options, &ddl).ok()) {
    SchemaHistory h = SeededHistory();
    h.Apply(ddl).PermitUncheckedError();
    // A second time: the history must also cope with its own result.
    h.Apply(ddl).PermitUncheckedError();
  }
  return 0;
}
