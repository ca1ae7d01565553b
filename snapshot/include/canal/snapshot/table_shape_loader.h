// LoadTableShape: a table's columns and indexes from the server's information_schema, the input
// of ChooseChunkKey (chunk_key.h).
//
// TABLES gives the engine (a view is refused: its rows have no binlog events of their own);
// COLUMNS gives the columns in ORDINAL_POSITION order with DATA_TYPE and IS_NULLABLE; STATISTICS
// gives every index with its columns in SEQ_IN_INDEX order and NON_UNIQUE. An index over an
// expression (MySQL 8's functional indexes: COLUMN_NAME is NULL) is left out, since it cannot
// page a table by columns.
//
// information_schema lists only the tables the user holds some privilege on, so a table that
// does not exist and one the user may not see are the same NotFound; its message names the table
// and the grant that makes it visible.
#pragma once

#include <cstdint>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/snapshot/chunk_key.h"

namespace canal::snapshot {

// Fills *shape for `schema`.`table` on `conn` (connected). NotFound naming the table when it has
// no columns there; IOError naming the table and the server's error (Status::subcode()) when a
// query fails.
Status LoadTableShape(mysql::QueryConnection* conn, std::string_view schema, std::string_view table,
                      TableShape* shape);

// information_schema.TABLES' estimate of the table's rows (for the time left, and whether a
// table is worth splitting); 0 when the server gives none.
uint64_t EstimatedRows(mysql::QueryConnection* conn, std::string_view schema, std::string_view table);

}  // namespace canal::snapshot
