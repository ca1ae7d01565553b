// What the decoder knows how to turn into text, independent of how a consumer
// prints values (Canal's strings are rendered by render/, canal/render/canal_value.h):
// a collation's bytes as UTF-8, MySQL's binary decimal as digits, and the
// column type text the server would print for a column.
//
// Pure functions; thread-safe. Output is appended, so a caller can reuse one
// std::string across rows without allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::binlog {

// Decimal text with exactly `scale` fraction digits, from MySQL's binary decimal.
// `raw` must be DecimalBinarySize(precision, scale) bytes.
Status AppendDecimalText(std::string_view raw, int precision, int scale, std::string* out);
// The same text written at `out`, which must have room for kDecimalTextMax
// chars; returns its end, or nullptr (the text unspecified) where
// AppendDecimalText returns an error.
inline constexpr size_t kDecimalTextMax = 68;  // "-", 65 digits, "." (67) and one spare
char* WriteDecimalText(std::string_view raw, int precision, int scale, char* out);
size_t DecimalBinarySize(int precision, int scale);

// Appends `bytes` in collation `charset` as UTF-8. UTF-8 family and ASCII copy
// through; latin1 (cp1252), binary and ucs2/utf16/utf16le/utf32 convert here;
// gbk, big5, sjis, cp932, gb2312, gb18030, euckr, ujis, cp1251, cp1250, the
// ISO-8859 and KOI8 families and the other charsets iconv knows convert through
// iconv (undefined bytes become U+FFFD); dec8, hp8, swe7, keybcs2, macce and
// geostd8 copy through unchanged.
void AppendAsUtf8(std::string_view bytes, uint32_t charset, std::string* out);

// The default collation id of a character set name ("gbk" -> 28), 0 when unknown.
uint32_t DefaultCollationOfCharset(std::string_view charset);

// The size AppendAsUtf8 would append, when it is known without converting
// (UTF-8 family, ASCII, binary, latin1 and the other copied-through charsets:
// one pass over the bytes at most); false for the charsets that convert
// through code units or iconv.
bool SizeAsUtf8(std::string_view bytes, uint32_t charset, size_t* size);

// True when AppendAsUtf8 copies bytes of this collation unchanged as long as
// they are well-formed UTF-8 (canal::IsValidUtf8, canal/common/utf8.h), so a
// caller may use a kString value's raw bytes directly after that check; bytes
// that fail it are repaired (U+FFFD) or, of an unknown charset, kept as
// ISO-8859-1 text.
bool CopiesThroughAsUtf8(uint32_t charset);

// True when the collation id is a binary one (63) — BLOB vs TEXT, BINARY vs CHAR.
inline bool IsBinaryCharset(uint32_t charset) { return charset == 63; }

// BLOB vs TEXT by charset. An unknown charset (no optional metadata) counts as
// text, as in the row decoder, which renders such values as UTF-8 text: the
// sqlType then tells clients to read the value as the string it is. (Canal,
// without a table schema, says BLOB and sends ISO-8859-1 instead.)
inline bool IsTextBlob(const ColumnInfo& column) { return !IsBinaryCharset(column.charset); }

// The type that decides a column's text: TABLE_MAP writes ENUM and SET as
// STRING with the real type in the metadata, which the decoder unfolds into
// real_type.
inline ColumnType EffectiveType(const ColumnInfo& column) {
  return column.real_type != ColumnType::kNull ? column.real_type : column.type;
}

// The column's type as the server prints it, derived from the binlog's
// metadata ("int unsigned", "varchar(255)", "enum('a','b')", "datetime(3)"),
// with the integer display widths MariaDB and MySQL before 8.0.19 print when
// `integer_display_widths` ("int(11)", "year(4)"). Ignores ColumnInfo::column_type
// (the schema's own text, when a schema provider supplied it). Empty for a
// type without a name.
std::string ColumnTypeText(const ColumnInfo& column, bool integer_display_widths);

// `column_type` ("int unsigned", "year") with the display width a server that
// prints them (MariaDB, MySQL before 8.0.19) shows for an integer or YEAR
// declared without one ("int(10) unsigned", "year(4)"); other text unchanged.
// A schema history parsed from DDL knows no width the DDL did not write.
std::string WithDefaultDisplayWidth(std::string_view column_type);

// The labels of an ENUM or SET column from its COLUMN_TYPE as the server prints
// it ("enum('a','it''s','x,y')": quotes doubled, backslashes escaped, commas
// allowed inside quotes). False when the text does not have that shape.
bool ParseEnumOrSetLabels(std::string_view column_type, std::vector<std::string>* labels);

// MySQL's binary DECIMAL(precision, scale) of the decimal text "[-]digits[.digits]"
// (as the server sends a DECIMAL value), appended to *out: the bytes a rows
// event carries for that value. InvalidArgument when the text is not a decimal
// or does not fit the column (more integer or fraction digits than it has).
Status AppendDecimalBinary(std::string_view text, int precision, int scale, std::string* out);

}  // namespace canal::binlog
