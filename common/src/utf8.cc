#include "canal/common/utf8.h"

#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace canal {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  const size_t left = s.size() - i;
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(i + 1) > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(i + 1) > 0x8F) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  // Short text (a code, a name) is most values: all of it checked with two overlapping words.
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    std::memcpy(&a, s.data(), 8);
    std::memcpy(&b, s.data() + n - 8, 8);
    if (((a | b) & kHigh) == 0) return true;
  } else if (n < 8) {
    if (n == 0) return true;
    uint64_t a = 0;
    std::memcpy(&a, s.data(), n);
    if ((a & kHigh) == 0) return true;
  }
  while (i < n) {
#if defined(__SSE2__)
    // Sixteen bytes at a time (SSE2 is part of x86-64): text is mostly ASCII, so skip to the
    // first byte that is not, rather than testing each ASCII byte before it on its own.
    if (i + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      const auto high = static_cast<unsigned>(_mm_movemask_epi8(v));
      if (high == 0) {
        i += 16;
        continue;
      }
      i += static_cast<size_t>(__builtin_ctz(high));
    } else if (n >= 16) {
      // The tail: the last sixteen bytes, overlapping some already checked. All ASCII ends it;
      // otherwise on to the first byte past i that is not ASCII.
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + n - 16));
      const auto high = static_cast<unsigned>(_mm_movemask_epi8(v)) >> (i - (n - 16));
      if (high == 0) return true;
      i += static_cast<size_t>(__builtin_ctz(high));
    } else
#endif
    if (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if ((word & kHigh) == 0) {
        i += 8;
        continue;
      }
    }
    const uint8_t c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Two-byte sequences (Latin accents, Greek, Cyrillic...) without the general case's checks.
    if (c >= 0xC2 && c <= 0xDF && i + 1 < n && (byte(i + 1) & 0xC0) == 0x80) {
      i += 2;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

namespace {

// How many bytes from s[i] form the longest prefix of some well-formed
// sequence (at least 1): the "maximal subpart" Unicode's practice, and Java's
// decoder, replace with one U+FFFD.
size_t MaximalSubpart(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  uint8_t lo = 0x80, hi = 0xBF;
  size_t need = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 1;
  }
  size_t k = 1;
  for (; k <= need && i + k < s.size(); ++k) {
    const uint8_t x = b(i + k);
    if (x < lo || x > hi) break;
    lo = 0x80;
    hi = 0xBF;
  }
  return k;
}

}  // namespace

void AppendUtf8Replacing(std::string_view s, std::string* out) {
  size_t i = 0, run = 0;
  const size_t n = s.size();
  while (i < n) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len != 0) {
      i += len;
      continue;
    }
    out->append(s.data() + run, i - run);
    AppendUtf8(U'\uFFFD', out);
    i += MaximalSubpart(s, i);
    run = i;
  }
  out->append(s.data() + run, n - run);
}

}  // namespace canal
