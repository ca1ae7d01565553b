// TABLE_MAP decoding (column types, metadata, nullability, optional metadata)
// and merging column facts from a TableSchemaProvider. Internal to parser/.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"
#include "canal/parser/binlog/schema_provider.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::binlog {

// `body`: post-header + payload, checksum excluded. `flavor`: the server that
// wrote it (from FORMAT_DESCRIPTION), which decides how optional metadata
// numbers its columns.
Status DecodeTableMap(std::string_view body, uint8_t post_header_length, ServerFlavor flavor, TableMap* table);

// Fills names, keys, signedness and charsets from the provider when the binlog
// did not carry them. A provider whose column count differs from the event's is
// an error: labelling values with the wrong column is never acceptable.
Status ApplySchemaProvider(TableSchemaProvider* provider, TableMap* table);

// Facts about a column's binlog type used by optional metadata numbering:
// whether the SIGNEDNESS bitmap and the charset lists count it.
bool IsNumericColumn(const ColumnInfo& c, ServerFlavor flavor);
bool IsCharacterColumn(const ColumnInfo& c, ServerFlavor flavor);
bool IsEnumOrSetColumn(const ColumnInfo& c);

// MariaDB >= 5.3 binlogs (WritesMariaDbHiresTemporal): marks every old-code
// TIMESTAMP/DATETIME/TIME as of unknown precision; true when there was one.
// ApplySchemaProvider then sets N from the schema's COLUMN_TYPE ("timestamp(3)");
// RowsReader refuses a value of a column still unknown, naming the fix.
bool MarkTemporalPrecisionUnknown(TableMap* table);
bool HasUnknownTemporalPrecision(const TableMap& table);
// The schema's precision for each such column whose precision is unknown.
void ApplySchemaTemporalPrecision(const std::vector<SchemaColumn>& columns, TableMap* table);
// Only that, from the provider, for a map whose metadata named the columns (FULL).
Status ApplySchemaPrecision(TableSchemaProvider* provider, TableMap* table);

}  // namespace canal::binlog
