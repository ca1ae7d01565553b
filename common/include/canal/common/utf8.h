// UTF-8: encoding one code point, checking well-formedness, and repairing
// text that is not (protobuf string fields and JSON must carry valid UTF-8:
// proto3 parsers such as canal-python's and canal-go's refuse a whole message
// over one bad byte).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace canal {

// Appends the UTF-8 encoding of `cp` (at most U+10FFFF; callers validate) to *out.
inline void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Length of the well-formed UTF-8 sequence starting at s[i] (i < s.size()),
// or 0 when it is not one: overlong forms, surrogates and code points past
// U+10FFFF are not well-formed.
size_t Utf8SequenceLength(std::string_view s, size_t i);

// Whether all of `s` is well-formed UTF-8 (ASCII runs are checked 8 bytes at a time).
bool IsValidUtf8(std::string_view s);

// Appends `s` with each maximal ill-formed subsequence replaced by U+FFFD, as
// Java's UTF-8 decoder does (so a value reads as Canal's server would send it).
void AppendUtf8Replacing(std::string_view s, std::string* out);

}  // namespace canal
