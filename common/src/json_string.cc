#include "canal/common/json_string.h"

#include <array>
#include <bit>
#include <cstring>

#include "canal/common/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace canal {

namespace {

// Bytes that cannot be copied as they are: controls, '"', '\\', non-ASCII.
constexpr std::array<bool, 256> MakeSpecial() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return t;
}
constexpr std::array<bool, 256> kSpecial = MakeSpecial();

// One bit (the high bit of its byte) for each of the 8 bytes in `w` that needs
// attention: a control byte (< 0x20), '"', '\\' or a byte >= 0x80. Classic
// SWAR byte tests, so plain ASCII text is scanned a word at a time. A borrow can
// flag a byte above a flagged one, never below: the lowest bit is exact.
inline uint64_t SpecialBytes(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto zero_bytes = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  return below_space | zero_bytes(w ^ (kOnes * '"')) | zero_bytes(w ^ (kOnes * '\\')) | (w & kHigh);
}

// The index of the first byte from i that needs attention, or n: 16 bytes at a
// time with SSE2, then 8 with SpecialBytes, then one by one.
inline size_t NextSpecial(const char* d, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i below_space = _mm_set1_epi8(0x1F);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, below_space), below_space);  // v <= 0x1F
    const __m128i hit = _mm_or_si128(control, _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    // movemask takes each byte's high bit: bytes >= 0x80 come with it.
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(hit, v)));
    if (mask != 0) return i + static_cast<size_t>(std::countr_zero(mask));
  }
#endif
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, d + i, 8);
    if (const uint64_t mask = SpecialBytes(w); mask != 0) return i + static_cast<size_t>(std::countr_zero(mask)) / 8;
  }
  while (i < n && !kSpecial[static_cast<uint8_t>(d[i])]) ++i;
  return i;
}

// Sinks for EscapeJson: a std::string, or raw memory with room for the bound.
struct StringSink {
  std::string* out;
  void Put(const char* p, size_t n) { out->append(p, n); }
};
struct PointerSink {
  char* p;
  void Put(const char* q, size_t n) {
    std::memcpy(p, q, n);
    p += n;
  }
};

// `s` as a quoted JSON string into `sink`: runs of plain bytes are put whole.
template <typename Sink>
void EscapeJson(std::string_view s, Sink& sink) {
  static const char kHex[] = "0123456789abcdef";
  const char* d = s.data();
  const size_t n = s.size();
  sink.Put("\"", 1);
  size_t i = 0, run = 0;
  while (true) {
    i = NextSpecial(d, i, n);
    if (i >= n) break;
    const uint8_t c = static_cast<uint8_t>(d[i]);
    if (c >= 0x80) {
      // Well-formed UTF-8 is copied as it is: it stays in the run. The common
      // two-byte case (accented Latin, Greek, Cyrillic...) is checked here.
      const size_t len = c >= 0xC2 && c <= 0xDF && i + 1 < n && (static_cast<uint8_t>(d[i + 1]) & 0xC0) == 0x80
                             ? 2
                             : Utf8SequenceLength(s, i);
      if (len != 0) {
        i += len;
        continue;
      }
    }
    sink.Put(d + run, i - run);
    if (c < 0x80) {
      switch (c) {
        case '"': sink.Put("\\\"", 2); break;
        case '\\': sink.Put("\\\\", 2); break;
        case '\n': sink.Put("\\n", 2); break;
        case '\r': sink.Put("\\r", 2); break;
        case '\t': sink.Put("\\t", 2); break;
        case '\b': sink.Put("\\b", 2); break;
        case '\f': sink.Put("\\f", 2); break;
        default: {
          const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
          sink.Put(u, 6);
        }
      }
      ++i;
    } else {
      sink.Put("\\ufffd", 6);  // not well-formed UTF-8
      ++i;
    }
    run = i;
  }
  sink.Put(d + run, n - run);
  sink.Put("\"", 1);
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  StringSink sink{out};
  EscapeJson(s, sink);
}

char* WriteJsonString(std::string_view s, char* out) {
  PointerSink sink{out};
  EscapeJson(s, sink);
  return sink.p;
}

}  // namespace canal
