// CRC-32 (the IEEE polynomial, as zlib's crc32 and binlog checksums use it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace canal::binlog {

// crc32(crc, p, n) with zlib's convention: start from 0, feed the result back
// for the next piece. Folds 64 bytes at a time with carry-less multiplication
// when the CPU has PCLMULQDQ (zlib's table code was ~5-10% of canal-server's
// catch-up profile), 128 at a time on 256-bit registers from 256 bytes on when
// it has VPCLMULQDQ and AVX2; short inputs and the last < 16 bytes go through a
// slicing-by-8 table, and zlib does the rest without PCLMULQDQ.
uint32_t Crc32(const uint8_t* p, size_t n, uint32_t crc = 0);

// zlib alone, for tests comparing the two.
uint32_t Crc32Zlib(const uint8_t* p, size_t n, uint32_t crc = 0);

}  // namespace canal::binlog
