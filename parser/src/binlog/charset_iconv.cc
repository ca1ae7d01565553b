// The charsets charset.cc does not convert itself (gbk, big5, sjis, cp1251,
// ...): their iconv names and a per-thread cache of converters, and the default
// collation of a charset name (for column facts from the schema history).
#include <iconv.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/utf8.h"
#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {
namespace internal {

const char* IconvNameOfCollation(uint32_t id) {
  if (id >= 1024 && id < 2048) id -= 1024;  // MariaDB NO PAD variants
  switch (id) {
    case 1: case 84: return "BIG5";
    case 13: case 88: return "SHIFT_JIS";
    case 95: case 96: return "CP932";
    case 28: case 87: return "GBK";
    case 24: case 86: return "GB2312";
    case 248: case 249: case 250: return "GB18030";
    case 19: case 85: return "EUC-KR";
    case 12: case 91: return "EUC-JP";
    case 97: case 98: return "EUC-JP-MS";
    case 14: case 23: case 50: case 51: case 52: return "CP1251";
    case 26: case 34: case 44: case 66: case 99: return "CP1250";
    case 2: case 9: case 21: case 27: case 77: return "ISO-8859-2";
    case 7: case 74: return "KOI8-R";
    case 22: case 75: return "KOI8-U";
    case 25: case 70: return "ISO-8859-7";
    case 16: case 71: return "ISO-8859-8";
    case 57: case 67: return "CP1256";
    case 29: case 58: case 59: return "CP1257";
    case 30: case 78: return "ISO-8859-9";
    case 20: case 41: case 42: case 79: return "ISO-8859-13";
    case 36: case 68: return "CP866";
    case 40: case 81: return "CP852";
    case 4: case 80: return "CP850";
    case 18: case 89: return "TIS-620";
    case 39: case 53: return "MACINTOSH";
    case 32: case 64: return "ARMSCII-8";
    default: return nullptr;  // dec8, hp8, swe7, keybcs2, macce, geostd8: bytes pass through
  }
}

// Converts with a cached iconv descriptor; bytes the charset does not define
// become U+FFFD (one per byte), never an error. False when iconv has no
// converter for `name` (the caller copies the bytes).
bool AppendViaIconv(std::string_view bytes, const char* name, std::string* out) {
  struct Slot {
    const char* name = nullptr;
    iconv_t cd = reinterpret_cast<iconv_t>(-1);
  };
  thread_local std::array<Slot, 8> cache;
  thread_local size_t next = 0;
  Slot* slot = nullptr;
  for (Slot& s : cache) {
    if (s.name == name) slot = &s;
  }
  if (slot == nullptr) {
    slot = &cache[next++ % cache.size()];
    if (slot->cd != reinterpret_cast<iconv_t>(-1)) iconv_close(slot->cd);
    slot->name = name;
    slot->cd = iconv_open("UTF-8", name);
  }
  if (slot->cd == reinterpret_cast<iconv_t>(-1)) return false;
  iconv(slot->cd, nullptr, nullptr, nullptr, nullptr);  // reset shift state
  char* in = const_cast<char*>(bytes.data());
  size_t in_left = bytes.size();
  char buf[1024];
  while (in_left > 0) {
    char* o = buf;
    size_t o_left = sizeof buf;
    const size_t r = iconv(slot->cd, &in, &in_left, &o, &o_left);
    out->append(buf, static_cast<size_t>(o - buf));
    if (r == static_cast<size_t>(-1)) {
      if (errno == E2BIG) continue;
      AppendUtf8(U'\uFFFD', out);  // EILSEQ / EINVAL: an undefined or cut character
      ++in;
      --in_left;
      iconv(slot->cd, nullptr, nullptr, nullptr, nullptr);
    }
  }
  return true;
}

}  // namespace internal

uint32_t DefaultCollationOfCharset(std::string_view charset) {
  struct Entry {
    std::string_view name;
    uint32_t id;
  };
  // information_schema.CHARACTER_SETS.DEFAULT_COLLATE_NAME's ids.
  static constexpr Entry kDefaults[] = {
      {"big5", 1},      {"dec8", 3},     {"cp850", 4},     {"hp8", 6},       {"koi8r", 7},    {"latin1", 8},
      {"latin2", 9},    {"swe7", 10},    {"ascii", 11},    {"ujis", 12},     {"sjis", 13},    {"hebrew", 16},
      {"tis620", 18},   {"euckr", 19},   {"koi8u", 22},    {"gb2312", 24},   {"greek", 25},   {"cp1250", 26},
      {"gbk", 28},      {"latin5", 30},  {"armscii8", 32}, {"utf8mb3", 33},  {"utf8", 33},    {"ucs2", 35},
      {"cp866", 36},    {"keybcs2", 37}, {"macce", 38},    {"macroman", 39}, {"cp852", 40},   {"latin7", 41},
      {"utf8mb4", 45},  {"cp1251", 51},  {"utf16", 54},    {"utf16le", 56},  {"cp1256", 57},  {"cp1257", 59},
      {"utf32", 60},    {"binary", 63},  {"geostd8", 92},  {"cp932", 95},    {"eucjpms", 97}, {"gb18030", 248},
  };
  for (const Entry& e : kDefaults) {
    if (e.name == charset) return e.id;
  }
  return 0;
}

}  // namespace canal::binlog
