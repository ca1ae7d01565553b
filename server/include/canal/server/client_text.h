// ClientText: a client-supplied string made safe for one log line (or an
// error message): cut to a bounded length and escaped, so that no client
// can flood the log with a huge name or forge a line with a newline.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace canal::server {

// Longest part of a client's string a log line shows.
inline constexpr size_t kClientTextMax = 128;
// Longest message (which may quote client strings) a log line shows.
inline constexpr size_t kLogLineMax = 1024;

// At most `max` bytes of `text`, with '\\', control characters and bytes
// outside ASCII written as \\, \n, \t, \xNN... (and '"' as \" when
// `escape_quotes`, for text shown in quotes); a longer text ends with
// "...(N bytes)" giving its full length.
std::string ClientText(std::string_view text, size_t max = kClientTextMax, bool escape_quotes = true);

}  // namespace canal::server
