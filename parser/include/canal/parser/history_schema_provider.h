// HistorySchemaProvider: a schema::SchemaHistory as the decoder's
// TableSchemaProvider (column names, keys, signedness, charsets and ENUM/SET
// labels for TABLE_MAPs without FULL metadata). Used by the parse thread's
// schema tracker and by `canal-binlog decode --schema`.
#pragma once

#include <functional>
#include <string>

#include "canal/parser/binlog/schema_provider.h"
#include "canal/schema/schema_history.h"

namespace canal::parser {

class HistorySchemaProvider : public binlog::TableSchemaProvider {
 public:
  // `history` must outlive the provider. Strict (the parse thread): only tables
  // in the history's scope are named, and one it does not hold is an error
  // naming why and ending with `missing_hint`; not strict (an offline tool):
  // every table it holds is named, the others keep positional names.
  HistorySchemaProvider(const schema::SchemaHistory* history, bool strict, std::string missing_hint = "")
      : history_(history), strict_(strict), missing_hint_(std::move(missing_hint)) {}

  // NotFound outside the history's scope (the decoder keeps positional names);
  // Corruption for a table in scope that the history does not hold (strict).
  Status GetColumns(std::string_view db, std::string_view table,
                    std::vector<binlog::SchemaColumn>* columns) override;
  void Invalidate(std::string_view, std::string_view) override {}

  void set_history(const schema::SchemaHistory* history) { history_ = history; }
  // Asked (strict) for a table in scope the history does not hold, before
  // that is an error: OK when it made the history hold it exactly.
  using LearnMissing = std::function<Status(std::string_view db, std::string_view table)>;
  void set_learn_missing(LearnMissing learn) { learn_missing_ = std::move(learn); }

 private:
  const schema::SchemaHistory* history_;
  bool strict_;
  std::string missing_hint_;
  LearnMissing learn_missing_;
};

// COLUMN_TYPE as information_schema prints it, near enough for Canal's
// mysqlType: "decimal(12,2)", "enum('a','b')", "int unsigned".
std::string HistoryColumnType(const schema::Column& c);

}  // namespace canal::parser
