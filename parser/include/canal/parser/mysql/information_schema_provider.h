// InformationSchemaProvider: table columns from information_schema on the query
// connection, for binlogs written without FULL row metadata. Cached per table;
// Invalidate() (called after DDL on the table) forgets one entry.
//
// The decoder calls it from the parse thread only; not thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/parser/binlog/schema_provider.h"
#include "canal/parser/mysql/query_connection.h"

namespace canal::mysql {

class InformationSchemaProvider : public binlog::TableSchemaProvider {
 public:
  // `conn` must outlive the provider; it is reconnected on demand when closed.
  explicit InformationSchemaProvider(QueryConnection* conn) : conn_(conn) {}

  Status GetColumns(std::string_view db, std::string_view table,
                    std::vector<binlog::SchemaColumn>* columns) override;
  void Invalidate(std::string_view db, std::string_view table) override;
  void Clear() { cache_.clear(); }

  uint64_t queries() const { return queries_; }  // information_schema round trips (tests)

 private:
  QueryConnection* conn_;
  std::map<std::pair<std::string, std::string>, std::vector<binlog::SchemaColumn>, std::less<>> cache_;
  uint64_t queries_ = 0;
};

}  // namespace canal::mysql
