// JSON string escaping (RFC 8259) as every JSON line we print has it:
// canal-binlog decode, canal-cli --json and MQ mode's flat messages. Controls,
// '"' and '\\' are escaped; invalid UTF-8 is replaced by U+FFFD, so every
// string is valid JSON whatever bytes a column held. Plain ASCII is scanned
// a word (SSE2: 16 bytes) at a time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace canal {

// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string_view s, std::string* out);

// The most WriteJsonString writes for `n` bytes: every byte may become a
// six-char escape (\u001f, or \ufffd for a byte of invalid UTF-8), plus quotes.
constexpr size_t JsonStringBound(size_t n) { return 6 * n + 2; }

// Writes what AppendJsonString appends at `out`, which has room for
// JsonStringBound(s.size()) chars; returns the end. For callers that size their
// buffer once per row instead of once per append.
char* WriteJsonString(std::string_view s, char* out);

}  // namespace canal
