// Collation ids to character sets, and conversion of column bytes to UTF-8.
//
// Collation ids are the ones MySQL and MariaDB put in TABLE_MAP optional metadata
// (information_schema.COLLATIONS.ID). The table below was checked against
// MariaDB 10.11's information_schema; MySQL 8's utf8mb4_*_0900_* collations are
// ids 255..323. MariaDB adds NO PAD variants at id + 1024 and, from 10.10, its
// UCA 14.0 collations in blocks of 256 from id 2048.
#include <array>

#include "canal/common/utf8.h"
#include <cstdint>
#include <string>
#include <string_view>

#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {
namespace internal {
// charset_iconv.cc
const char* IconvNameOfCollation(uint32_t id);
bool AppendViaIconv(std::string_view bytes, const char* name, std::string* out);
}  // namespace internal
namespace {

enum class Encoding : uint8_t {
  kUnknown,  // id not known: bytes pass through
  kUtf8,     // utf8mb3 and utf8mb4
  kAscii,
  kLatin1,  // MySQL's latin1 is cp1252
  kBinary,
  kUcs2,
  kUtf16,
  kUtf16le,
  kUtf32,
  kOther,  // a known charset we do not convert (cp1251, gbk, ...): bytes pass through
};

struct CharsetFacts {
  Encoding encoding = Encoding::kUnknown;
  uint8_t max_bytes_per_char = 0;  // 0 = unknown
};

constexpr uint32_t kTableSize = 324;

constexpr std::array<CharsetFacts, kTableSize> BuildTable() {
  std::array<CharsetFacts, kTableSize> t{};
  auto set = [&t](uint32_t id, Encoding e, uint8_t max_bytes) { t[id] = {e, max_bytes}; };
  auto set_range = [&set](uint32_t first, uint32_t last, Encoding e, uint8_t max_bytes) {
    for (uint32_t id = first; id <= last; ++id) set(id, e, max_bytes);
  };
  // Single-byte charsets we pass through: latin2, dec8, cp850, hp8, koi8r, swe7,
  // cp1251, hebrew, tis620, latin7, koi8u, greek, cp1250, cp1257, latin5,
  // armscii8, cp866, keybcs2, macce, macroman, cp852, cp1256, geostd8.
  for (uint32_t id : {2, 3, 4, 6, 7, 9, 10, 14, 16, 18, 20, 21, 22, 23, 25, 26, 27, 29, 30, 32,
                      34, 36, 37, 38, 39, 40, 41, 42, 43, 44, 50, 51, 52, 53, 57, 58, 59, 64, 66,
                      67, 68, 69, 70, 71, 72, 73, 74, 75, 77, 78, 79, 80, 81, 82, 89, 92, 93, 99}) {
    set(id, Encoding::kOther, 1);
  }
  // Multi-byte charsets we pass through: big5, sjis, euckr, gb2312, gbk, cp932
  // (2 bytes); ujis, eucjpms (3); gb18030 (4).
  for (uint32_t id : {1, 84, 13, 88, 19, 85, 24, 86, 28, 87, 95, 96}) set(id, Encoding::kOther, 2);
  for (uint32_t id : {12, 91, 97, 98}) set(id, Encoding::kOther, 3);
  set_range(248, 250, Encoding::kOther, 4);

  for (uint32_t id : {5, 8, 15, 31, 47, 48, 49, 94}) set(id, Encoding::kLatin1, 1);
  for (uint32_t id : {11, 65}) set(id, Encoding::kAscii, 1);
  set(63, Encoding::kBinary, 1);

  for (uint32_t id : {33, 76, 83, 223}) set(id, Encoding::kUtf8, 3);
  set_range(192, 215, Encoding::kUtf8, 3);
  for (uint32_t id : {45, 46}) set(id, Encoding::kUtf8, 4);
  set_range(224, 247, Encoding::kUtf8, 4);
  set_range(255, 323, Encoding::kUtf8, 4);

  for (uint32_t id : {35, 90, 159}) set(id, Encoding::kUcs2, 2);
  set_range(128, 151, Encoding::kUcs2, 2);
  for (uint32_t id : {54, 55}) set(id, Encoding::kUtf16, 4);
  set_range(101, 124, Encoding::kUtf16, 4);
  for (uint32_t id : {56, 62}) set(id, Encoding::kUtf16le, 4);
  for (uint32_t id : {60, 61}) set(id, Encoding::kUtf32, 4);
  set_range(160, 183, Encoding::kUtf32, 4);
  return t;
}

constexpr std::array<CharsetFacts, kTableSize> kCharsets = BuildTable();

CharsetFacts LookupCharset(uint32_t id) {
  if (id < kTableSize) return kCharsets[id];
  // MariaDB's "mysql561", myanmar and thai_520_w2 collations.
  if (id >= 576 && id <= 578) return {Encoding::kUtf8, 3};
  if (id >= 608 && id <= 610) return {Encoding::kUtf8, 4};
  if (id >= 640 && id <= 642) return {Encoding::kUcs2, 2};
  if (id >= 672 && id <= 674) return {Encoding::kUtf16, 4};
  if (id >= 736 && id <= 738) return {Encoding::kUtf32, 4};
  // MariaDB NO PAD collations: the PAD SPACE collation's id + 1024.
  if (id >= 1024 && id < 2048) return LookupCharset(id - 1024);
  // MariaDB UCA 14.0 (uca1400) collations: one block of 256 ids per charset.
  if (id >= 2048 && id < 2048 + 5 * 256) {
    switch ((id - 2048) / 256) {
      case 0: return {Encoding::kUtf8, 3};
      case 1: return {Encoding::kUtf8, 4};
      case 2: return {Encoding::kUcs2, 2};
      case 3: return {Encoding::kUtf16, 4};
      default: return {Encoding::kUtf32, 4};
    }
  }
  return {};
}

constexpr char32_t kReplacement = 0xFFFD;


bool IsSurrogate(char32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

// cp1252 code points for 0x80..0x9F. The five bytes cp1252 leaves undefined map
// to the C1 controls, as MySQL's latin1 does.
constexpr std::array<char16_t, 32> kCp1252High = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,  // 80-87
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,  // 88-8F
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,  // 90-97
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,  // 98-9F
};

// The UTF-8 size of single-byte text: each byte from 0x80 takes two bytes or,
// for some of cp1252's 0x80-0x9F, three.
size_t SingleByteUtf8Size(std::string_view bytes, bool cp1252) {
  size_t size = bytes.size();
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    if (b >= 0x80) size += cp1252 && b < 0xA0 && kCp1252High[b - 0x80] >= 0x800 ? 2 : 1;
  }
  return size;
}

void AppendSingleByte(std::string_view bytes, bool cp1252, std::string* out) {
  // Sized exactly first, not for the worst case: the sink renders big values
  // into an entry sized exactly, where growing more would move the whole entry.
  const size_t at = out->size();
  out->resize(at + SingleByteUtf8Size(bytes, cp1252));
  char* p = out->data() + at;
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    if (b < 0x80) {
      *p++ = c;
      continue;
    }
    const char32_t cp = cp1252 && b < 0xA0 ? char32_t{kCp1252High[b - 0x80]} : char32_t{b};
    if (cp < 0x800) {
      *p++ = static_cast<char>(0xC0 | (cp >> 6));
    } else {
      *p++ = static_cast<char>(0xE0 | (cp >> 12));
      *p++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    }
    *p++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t Load16(const uint8_t* p, bool little_endian) {
  return little_endian ? (uint32_t(p[1]) << 8 | p[0]) : (uint32_t(p[0]) << 8 | p[1]);
}

// UCS-2 (no surrogates allowed) or UTF-16 (surrogate pairs), either byte order.
// Unpaired surrogates and a dangling odd byte become U+FFFD.
void AppendUtf16(std::string_view bytes, bool little_endian, bool allow_pairs, std::string* out) {
  out->reserve(out->size() + bytes.size() * 3 / 2);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  size_t i = 0;
  while (i + 2 <= n) {
    const char32_t unit = Load16(p + i, little_endian);
    i += 2;
    if (!IsSurrogate(unit)) {
      AppendUtf8(unit, out);
      continue;
    }
    if (allow_pairs && unit < 0xDC00 && i + 2 <= n) {
      const char32_t low = Load16(p + i, little_endian);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        i += 2;
        AppendUtf8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), out);
        continue;
      }
    }
    AppendUtf8(kReplacement, out);
  }
  if (i < n) AppendUtf8(kReplacement, out);
}

void AppendUtf32(std::string_view bytes, std::string* out) {
  out->reserve(out->size() + bytes.size());
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const char32_t cp = char32_t(p[i]) << 24 | char32_t(p[i + 1]) << 16 |
                        char32_t(p[i + 2]) << 8 | char32_t(p[i + 3]);
    AppendUtf8(cp > 0x10FFFF || IsSurrogate(cp) ? kReplacement : cp, out);
  }
  if (i < n) AppendUtf8(kReplacement, out);
}

}  // namespace

namespace internal {
// Shared with column_type_text.cc (for varchar(N) in characters); 0 when unknown.
int CharsetMaxBytesPerChar(uint32_t collation) {
  return LookupCharset(collation).max_bytes_per_char;
}
}  // namespace internal

// UTF-8 columns copy through; bytes that are not well-formed UTF-8 (a server
// that did not validate, a wrong charset) become U+FFFD as Java's decoder
// makes them in Canal's server: a protobuf string must be valid UTF-8 or
// proto3 clients (canal-python, canal-go) refuse the whole entry. Bytes of an
// unknown charset that are not UTF-8 may be binary (a BLOB of a binlog with
// no charset metadata and no schema): they keep every byte as ISO-8859-1
// text, Canal's form for binary values.
void AppendAsUtf8(std::string_view bytes, uint32_t charset, std::string* out) {
  switch (LookupCharset(charset).encoding) {
    case Encoding::kLatin1:
      AppendSingleByte(bytes, /*cp1252=*/true, out);
      return;
    case Encoding::kBinary:
      AppendSingleByte(bytes, /*cp1252=*/false, out);
      return;
    case Encoding::kUcs2:
      AppendUtf16(bytes, /*little_endian=*/false, /*allow_pairs=*/false, out);
      return;
    case Encoding::kUtf16:
      AppendUtf16(bytes, /*little_endian=*/false, /*allow_pairs=*/true, out);
      return;
    case Encoding::kUtf16le:
      AppendUtf16(bytes, /*little_endian=*/true, /*allow_pairs=*/true, out);
      return;
    case Encoding::kUtf32:
      AppendUtf32(bytes, out);
      return;
    case Encoding::kOther:
      if (const char* name = internal::IconvNameOfCollation(charset);
          name != nullptr && internal::AppendViaIconv(bytes, name, out)) {
        return;
      }
      AppendUtf8Replacing(bytes, out);
      return;
    case Encoding::kUnknown:
      if (IsValidUtf8(bytes)) {
        out->append(bytes);
      } else {
        AppendSingleByte(bytes, /*cp1252=*/false, out);
      }
      return;
    case Encoding::kUtf8:
    case Encoding::kAscii:
      AppendUtf8Replacing(bytes, out);
      return;
  }
  AppendUtf8Replacing(bytes, out);
}

}  // namespace canal::binlog

namespace canal::binlog {

bool SizeAsUtf8(std::string_view bytes, uint32_t charset, size_t* size) {
  switch (LookupCharset(charset).encoding) {
    case Encoding::kLatin1:
      *size = SingleByteUtf8Size(bytes, /*cp1252=*/true);
      return true;
    case Encoding::kBinary:
      *size = SingleByteUtf8Size(bytes, /*cp1252=*/false);
      return true;
    default:
      if (!CopiesThroughAsUtf8(charset)) return false;
      if (IsValidUtf8(bytes)) {
        *size = bytes.size();
        return true;
      }
      if (LookupCharset(charset).encoding == Encoding::kUnknown) {
        *size = SingleByteUtf8Size(bytes, /*cp1252=*/false);
        return true;
      }
      return false;  // repaired: known only by converting
  }
}

bool CopiesThroughAsUtf8(uint32_t charset) {
  switch (LookupCharset(charset).encoding) {
    case Encoding::kOther:
      return internal::IconvNameOfCollation(charset) == nullptr;
    case Encoding::kUnknown:
    case Encoding::kUtf8:
    case Encoding::kAscii:
      return true;
    default:
      return false;
  }
}

}  // namespace canal::binlog
