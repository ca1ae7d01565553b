// ColumnType: the MySQL field type codes that appear in TABLE_MAP events,
// and the per-type facts the row decoder needs.
#pragma once

#include <cstdint>
#include <string_view>

namespace canal::binlog {

enum class ColumnType : uint8_t {
  kDecimal = 0,  // pre-5.0 DECIMAL; never written in ROW format by any supported server
  kTiny = 1,
  kShort = 2,
  kLong = 3,
  kFloat = 4,
  kDouble = 5,
  kNull = 6,
  kTimestamp = 7,
  kLongLong = 8,
  kInt24 = 9,
  kDate = 10,
  kTime = 11,
  kDateTime = 12,
  kYear = 13,
  kNewDate = 14,
  kVarchar = 15,
  kBit = 16,
  kTimestamp2 = 17,
  kDateTime2 = 18,
  kTime2 = 19,
  kTypedArray = 20,
  kVector = 242,  // MySQL 9
  kJson = 245,
  kNewDecimal = 246,
  kEnum = 247,
  kSet = 248,
  kTinyBlob = 249,
  kMediumBlob = 250,
  kLongBlob = 251,
  kBlob = 252,
  kVarString = 253,
  kString = 254,
  kGeometry = 255,
};

std::string_view ColumnTypeName(ColumnType t);

// Number of metadata bytes a column of this type has in TABLE_MAP, or -1 for a
// type code that cannot appear in a TABLE_MAP.
int ColumnMetaLength(ColumnType t);

}  // namespace canal::binlog
