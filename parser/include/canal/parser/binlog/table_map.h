// TableMap: what a TABLE_MAP event says about one table, plus the column facts
// (names, keys, signedness, charsets, ENUM/SET labels) merged in from optional
// metadata or from a TableSchemaProvider.
//
// TableMaps are owned by the EventDecoder (keyed by table id) and stay valid until
// the next TABLE_MAP for the same id or the end of the statement. They own their
// strings, so rows can refer to them after the event buffer is gone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/parser/binlog/column_type.h"

namespace canal::binlog {

struct ColumnInfo {
  ColumnType type = ColumnType::kNull;  // as written in TABLE_MAP
  ColumnType real_type = ColumnType::kNull;  // STRING meta unfolded: ENUM, SET or STRING
  uint16_t meta = 0;                    // type metadata, decoded per type
  // For TIMESTAMP/DATETIME/TIME (old codes 7/12/11) meta is MariaDB's
  // fractional precision N (0..6): MariaDB 5.3+ logs TIMESTAMP(N) etc. made
  // without mysql56_temporal_format under these codes, with no metadata and a
  // length that depends on N. kUnknownTemporalPrecision until a schema says N.
  bool nullable = true;
  // Optional metadata (or schema provider); *_known says whether it was there.
  bool is_unsigned = false;
  bool signedness_known = false;
  uint32_t charset = 0;  // collation id; 63 = binary; 0 = unknown
  std::string name;      // empty when unknown
  bool is_key = false;   // part of the primary key
  bool visible = true;
  uint8_t geometry_type = 0;
  uint32_t vector_dimensions = 0;
  std::vector<std::string> enum_or_set_labels;
  // information_schema COLUMN_TYPE ("int(10) unsigned") when a schema provider
  // supplied the column; empty when the binlog alone described it.
  std::string column_type;

  // Derived facts.
  // Field length for STRING/VARCHAR (bytes) and BIT (bits).
  uint32_t max_length = 0;
  uint8_t precision = 0, decimals = 0;  // NEWDECIMAL
};

inline constexpr uint16_t kUnknownTemporalPrecision = 0xFF;

// Old-code TIMESTAMP, DATETIME or TIME (see ColumnInfo::meta).
inline bool IsOldTemporalColumn(const ColumnInfo& c) {
  return c.type == ColumnType::kTimestamp || c.type == ColumnType::kDateTime || c.type == ColumnType::kTime;
}

// Names a table map's column layout for RowsReader, which keeps the per-column
// decode plan it built under (map address, id) instead of building it for every
// rows event. DecodeTableMap and ApplySchemaProvider give each map they fill a
// fresh process-unique id, and so does a copy or an assignment of a map that
// has one (so that a copy edited before its first use, even at a freed map's
// address, is never read with another map's plan). 0 (maps built by hand)
// means "build the plan for every rows event". A map with an id that is edited
// after a RowsReader has read it must be given a new one (Renew).
class TableLayoutId {
 public:
  TableLayoutId() = default;
  TableLayoutId(const TableLayoutId& other) { CopyFrom(other); }
  TableLayoutId& operator=(const TableLayoutId& other) {
    CopyFrom(other);
    return *this;
  }
  uint64_t value() const { return value_; }
  void Renew();  // after every change to the columns

 private:
  void CopyFrom(const TableLayoutId& other) {
    if (other.value_ == 0) {
      value_ = 0;
    } else {
      Renew();
    }
  }
  uint64_t value_ = 0;
};

struct TableMap {
  uint64_t table_id = 0;
  uint16_t flags = 0;
  std::string db;
  std::string table;
  std::vector<ColumnInfo> columns;
  // True when names came from the binlog or a schema provider; false means the
  // decoder is naming columns by position ("@1", "@2", ...).
  bool names_known = false;
  bool keys_known = false;
  bool has_json = false;  // some column is MySQL binary JSON
  // The server prints integer display widths ("int(11)", "year(4)"): MariaDB,
  // MySQL before 8.0.19. Set by the decoder from FORMAT_DESCRIPTION's version.
  bool integer_display_widths = false;
  // Optional-metadata kinds seen (bit i = kind i), for diagnostics and tests.
  uint32_t optional_metadata_kinds = 0;
  TableLayoutId layout_id;
};

// Optional metadata field types (TABLE_MAP trailer TLVs).
enum class OptionalMetadataType : uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
  kColumnVisibility = 12,
  kVectorDimensionality = 13,
};

}  // namespace canal::binlog
