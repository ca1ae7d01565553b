// The folding CRC-32 against zlib's, on every length up to 1 KiB at every
// alignment, across split points, and on known check values.
#include "canal/parser/binlog/crc32.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace canal::binlog {
namespace {

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(Crc32, KnownCheckValues) {
  const std::string check = "123456789";
  EXPECT_EQ(Crc32(reinterpret_cast<const uint8_t*>(check.data()), check.size()), 0xCBF43926u);
  EXPECT_EQ(Crc32(nullptr, 0), 0u);
  EXPECT_EQ(Crc32(nullptr, 0, 0x12345678u), 0x12345678u);
  const std::vector<uint8_t> zeros(4096, 0);
  EXPECT_EQ(Crc32(zeros.data(), zeros.size()), Crc32Zlib(zeros.data(), zeros.size()));
  const std::vector<uint8_t> ones(4096, 0xff);
  EXPECT_EQ(Crc32(ones.data(), ones.size()), Crc32Zlib(ones.data(), ones.size()));
}

TEST(Crc32, MatchesZlibOnEveryLengthAndAlignment) {
  const std::vector<uint8_t> data = RandomBytes(1024 + 16, 7);
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t n = 0; n <= 1024; ++n) {
      ASSERT_EQ(Crc32(data.data() + offset, n), Crc32Zlib(data.data() + offset, n))
          << "offset " << offset << " length " << n;
    }
  }
}

TEST(Crc32, ChainsAcrossPiecesLikeZlib) {
  const std::vector<uint8_t> data = RandomBytes(100000, 11);
  const uint32_t whole = Crc32Zlib(data.data(), data.size());
  EXPECT_EQ(Crc32(data.data(), data.size()), whole);
  for (size_t split : {1u, 15u, 63u, 64u, 65u, 4096u, 77777u, 99999u}) {
    const uint32_t first = Crc32(data.data(), split);
    EXPECT_EQ(Crc32(data.data() + split, data.size() - split, first), whole) << "split " << split;
  }
}

TEST(Crc32, ManyRandomBuffersAndSeeds) {
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    const size_t n = rng() % 20000;
    const std::vector<uint8_t> data = RandomBytes(n, static_cast<uint32_t>(i));
    const uint32_t seed = rng();
    ASSERT_EQ(Crc32(data.data(), n, seed), Crc32Zlib(data.data(), n, seed)) << "length " << n;
  }
}

}  // namespace
}  // namespace canal::binlog
