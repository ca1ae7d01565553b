// Tests for transaction-payload (zstd) and MariaDB (zlib) event decompression.
#include "canal/parser/binlog/compression.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "canal/parser/binlog/gtid_events.h"

#ifndef CANAL_SHARED_DIR
#define CANAL_SHARED_DIR ""
#endif

#include "support/fixtures.h"

namespace canal::binlog {
namespace {

std::string FixtureDir() { return ::canal::testing::FixturePath(""); }

uint32_t U32(std::string_view d, size_t p) {
  return uint32_t(uint8_t(d[p])) | uint32_t(uint8_t(d[p + 1])) << 8 |
         uint32_t(uint8_t(d[p + 2])) << 16 | uint32_t(uint8_t(d[p + 3])) << 24;
}

struct RawEvent {
  uint8_t type = 0;
  std::string_view body;  // after the 19-byte header, checksum removed
};

// Minimal v4 walker: magic, then 19-byte headers (type at 4, size at 9).
// `crc32` says whether events end in a 4-byte CRC32 (the fixture README's
// "checksum" column; all files used here are CRC32).
std::vector<RawEvent> WalkEvents(std::string_view d, bool crc32, size_t start = 4) {
  std::vector<RawEvent> events;
  size_t pos = start;
  while (pos + 19 <= d.size()) {
    const uint32_t size = U32(d, pos + 9);
    if (size < 19 || size > d.size() - pos) {
      ADD_FAILURE() << "bad event size " << size << " at " << pos;
      break;
    }
    RawEvent e;
    e.type = uint8_t(d[pos + 4]);
    const size_t trailer = crc32 ? 4 : 0;
    if (size < 19 + trailer) {
      ADD_FAILURE() << "event at " << pos << " smaller than its checksum";
      break;
    }
    // The FDE carries an algorithm byte before its CRC; it is not needed here.
    e.body = d.substr(pos + 19, size - 19 - trailer);
    events.push_back(e);
    pos += size;
  }
  EXPECT_EQ(pos, d.size()) << "events do not tile the input";
  return events;
}

std::string ReadFile(const std::string& rel) {
  std::ifstream in(FixtureDir() + "/" + rel, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << rel;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Zstd(std::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::string Zlib(std::string_view data) {
  uLongf n = compressBound(data.size());
  std::string out(n, '\0');
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(out.data()), &n,
                     reinterpret_cast<const Bytef*>(data.data()), data.size()),
            Z_OK);
  out.resize(n);
  return out;
}

std::string SampleText(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "row " + std::to_string(i * 7919 % 1000) + ";";
  s.resize(n);
  return s;
}

TransactionPayloadEvent Payload(std::string_view payload, uint64_t uncompressed, uint8_t type = 0) {
  TransactionPayloadEvent ev;
  ev.compression = type;
  ev.payload = payload;
  ev.payload_size = payload.size();
  ev.uncompressed_size = uncompressed;
  return ev;
}

// ======================= DecompressTransactionPayload =======================

TEST(DecompressTransactionPayload, ZstdRoundTrip) {
  const std::string text = SampleText(300000);  // several output-buffer growths
  const std::string z = Zstd(text);
  std::string out;
  const Status s = DecompressTransactionPayload(Payload(z, text.size()), &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out, text);
}

TEST(DecompressTransactionPayload, ConcatenatedFramesAreOnePayload) {
  const std::string a = SampleText(1000), b = SampleText(77);
  std::string out;
  ASSERT_TRUE(DecompressTransactionPayload(Payload(Zstd(a) + Zstd(b), a.size() + b.size()), &out).ok());
  EXPECT_EQ(out, a + b);
}

TEST(DecompressTransactionPayload, DeclaredSizeMustMatch) {
  const std::string text = SampleText(5000);
  const std::string z = Zstd(text);
  std::string out = "untouched";
  EXPECT_TRUE(DecompressTransactionPayload(Payload(z, text.size() + 1), &out).IsCorruption());
  EXPECT_TRUE(DecompressTransactionPayload(Payload(z, text.size() - 1), &out).IsCorruption());
  EXPECT_TRUE(DecompressTransactionPayload(Payload(z, 0), &out).IsCorruption());
  // A small payload claiming (almost) the limit fails once the data runs out.
  EXPECT_TRUE(DecompressTransactionPayload(Payload(z, kMaxUncompressedEventBytes), &out).IsCorruption());
  EXPECT_EQ(out, "untouched");
}

TEST(DecompressTransactionPayload, SizesOverOneGiBAreRefused) {
  std::string out;
  const std::string z = Zstd("x");
  EXPECT_TRUE(
      DecompressTransactionPayload(Payload(z, kMaxUncompressedEventBytes + 1), &out).IsNotSupported());
  EXPECT_TRUE(DecompressTransactionPayload(Payload(z, ~uint64_t{0}), &out).IsNotSupported());
}

TEST(DecompressTransactionPayload, TruncatedFrameAtEveryLength) {
  const std::string text = SampleText(3000);
  const std::string z = Zstd(text);
  for (size_t len = 0; len < z.size(); ++len) {
    std::string out;
    const Status s =
        DecompressTransactionPayload(Payload(std::string_view(z).substr(0, len), text.size()), &out);
    EXPECT_TRUE(s.IsCorruption()) << len << " " << s.ToString();
  }
}

TEST(DecompressTransactionPayload, GarbageIsCorruption) {
  std::string out;
  EXPECT_TRUE(DecompressTransactionPayload(Payload("not a zstd frame at all", 10), &out).IsCorruption());
  std::string z = Zstd(SampleText(100));
  z[0] ^= 0x55;  // bad magic
  EXPECT_TRUE(DecompressTransactionPayload(Payload(z, 100), &out).IsCorruption());
  // Trailing bytes after a complete frame.
  EXPECT_TRUE(DecompressTransactionPayload(Payload(Zstd(SampleText(100)) + "xyz", 100), &out)
                  .IsCorruption());
}

TEST(DecompressTransactionPayload, UncompressedPayloadIsCopied) {
  std::string out;
  ASSERT_TRUE(DecompressTransactionPayload(Payload("abcdef", 6, 255), &out).ok());
  EXPECT_EQ(out, "abcdef");
  ASSERT_TRUE(DecompressTransactionPayload(Payload("abc", 0, 255), &out).ok());
  EXPECT_EQ(out, "abc");
  EXPECT_TRUE(DecompressTransactionPayload(Payload("abc", 4, 255), &out).IsCorruption());
}

TEST(DecompressTransactionPayload, UnknownCompressionIsNotSupported) {
  std::string out;
  EXPECT_TRUE(DecompressTransactionPayload(Payload("abc", 3, 1), &out).IsNotSupported());
}

// Inflates the only TRANSACTION_PAYLOAD of a fixture and returns the inner
// events' type codes (inner events have no checksums).
void CheckPayloadFixture(const std::string& rel, size_t expected_size,
                         const std::vector<uint8_t>& expected_types) {
  const std::string file = ReadFile(rel);
  std::vector<RawEvent> payloads;
  for (const RawEvent& e : WalkEvents(file, /*crc32=*/true)) {
    if (e.type == 40) payloads.push_back(e);
  }
  ASSERT_EQ(payloads.size(), 1u);
  TransactionPayloadEvent ev;
  const Status hs = DecodeTransactionPayloadHeader(payloads[0].body, &ev);
  ASSERT_TRUE(hs.ok()) << hs.ToString();
  EXPECT_EQ(ev.compression, 0);
  std::string out;
  const Status s = DecompressTransactionPayload(ev, &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out.size(), expected_size);
  std::vector<uint8_t> types;
  for (const RawEvent& e : WalkEvents(out, /*crc32=*/false, 0)) types.push_back(e.type);
  EXPECT_EQ(types, expected_types);
}

TEST(DecompressTransactionPayloadFixture, MySQL8028CompressedTransaction) {
  CANAL_REQUIRE_FIXTURES();
  // QUERY (BEGIN), TABLE_MAP, UPDATE_ROWS_V2, XID.
  CheckPayloadFixture("mysql-binlog-connector-java/mysql-bin.compressed", 960, {2, 19, 31, 16});
}

TEST(DecompressTransactionPayloadFixture, MySQL8032CompressedTransaction) {
  CANAL_REQUIRE_FIXTURES();
  // QUERY, TABLE_MAP, WRITE_ROWS_V2, XID.
  CheckPayloadFixture("rust_mysql_common/transaction_compression.000001", 179, {2, 19, 30, 16});
}

// ======================= MariaUncompress =======================

std::string MariaBlock(std::string_view text, int len_bytes, uint64_t declared) {
  std::string b(1, static_cast<char>(0x80 | len_bytes));
  for (int i = len_bytes - 1; i >= 0; --i) b.push_back(static_cast<char>(declared >> (8 * i)));
  return b + Zlib(text);
}

TEST(MariaUncompress, EveryLengthWidth) {
  const std::string text = SampleText(70000);
  for (int len_bytes = 1; len_bytes <= 4; ++len_bytes) {
    const std::string t = text.substr(0, len_bytes == 1 ? 200 : len_bytes == 2 ? 60000 : 70000);
    const std::string block = MariaBlock(t, len_bytes, t.size());
    std::string out;
    size_t consumed = 0;
    const Status s = MariaUncompress(block, &out, &consumed);
    ASSERT_TRUE(s.ok()) << len_bytes << " " << s.ToString();
    EXPECT_EQ(out, t);
    EXPECT_EQ(consumed, block.size());
  }
}

TEST(MariaUncompress, BytesAfterTheStreamAreNotConsumed) {
  const std::string block = MariaBlock("hello hello hello", 1, 17);
  std::string out;
  size_t consumed = 0;
  ASSERT_TRUE(MariaUncompress(block + "tail", &out, &consumed).ok());
  EXPECT_EQ(out, "hello hello hello");
  EXPECT_EQ(consumed, block.size());
}

TEST(MariaUncompress, BadHeadersAreRejected) {
  const std::string z = Zlib("abc");
  std::string out;
  size_t consumed = 0;
  EXPECT_TRUE(MariaUncompress("", &out, &consumed).IsTruncated());
  EXPECT_TRUE(MariaUncompress(std::string("\x01\x03") + z, &out, &consumed).IsCorruption());  // no flag
  EXPECT_TRUE(MariaUncompress(std::string("\x91\x03") + z, &out, &consumed).IsNotSupported());  // alg 1
  EXPECT_TRUE(MariaUncompress(std::string("\x80") + z, &out, &consumed).IsCorruption());  // 0 len bytes
  EXPECT_TRUE(MariaUncompress(std::string("\x85\0\0\0\0\3", 6) + z, &out, &consumed).IsCorruption());
  EXPECT_TRUE(MariaUncompress(std::string("\x81\x00", 2) + z, &out, &consumed).IsCorruption());  // len 0
  EXPECT_TRUE(MariaUncompress("\x84\x00\x00", &out, &consumed).IsTruncated());
  // Over 1 GiB: refused before inflating.
  EXPECT_TRUE(MariaUncompress(std::string("\x84\x40\x00\x00\x01", 5) + z, &out, &consumed)
                  .IsNotSupported());
}

TEST(MariaUncompress, DeclaredLengthMustMatch) {
  std::string out = "untouched";
  size_t consumed = 7;
  EXPECT_TRUE(MariaUncompress(MariaBlock("abcdef", 1, 5), &out, &consumed).IsCorruption());
  EXPECT_TRUE(MariaUncompress(MariaBlock("abcdef", 1, 7), &out, &consumed).IsCorruption());
  EXPECT_TRUE(MariaUncompress(MariaBlock("abcdef", 4, 0x3FFFFFFF), &out, &consumed).IsCorruption());
  EXPECT_EQ(out, "untouched");
  EXPECT_EQ(consumed, 7u);
}

TEST(MariaUncompress, TruncatedAtEveryLength) {
  const std::string text = SampleText(4000);
  const std::string block = MariaBlock(text, 2, text.size());
  for (size_t len = 0; len < block.size(); ++len) {
    std::string out;
    size_t consumed = 0;
    const Status s = MariaUncompress(std::string_view(block).substr(0, len), &out, &consumed);
    EXPECT_TRUE(len < 3 ? s.IsTruncated() : s.IsCorruption()) << len << " " << s.ToString();
  }
}

TEST(MariaUncompress, CorruptStreamIsCorruption) {
  std::string block = MariaBlock(SampleText(500), 2, 500);
  block[3] ^= 0xFF;  // zlib header byte
  std::string out;
  size_t consumed = 0;
  EXPECT_TRUE(MariaUncompress(block, &out, &consumed).IsCorruption());
  std::string block2 = MariaBlock(SampleText(500), 2, 500);
  block2[block2.size() - 1] ^= 0xFF;  // adler32 trailer
  EXPECT_TRUE(MariaUncompress(block2, &out, &consumed).IsCorruption());
}

// mariadb-10.11/mariadb-bin.000003 section M.5 (log_bin_compress=ON).
TEST(MariaUncompressFixture, CompressedQueryAndRowsEvents) {
  CANAL_REQUIRE_FIXTURES();
  const std::string file = ReadFile("mariadb-10.11/mariadb-bin.000003");
  std::vector<RawEvent> compressed;
  for (const RawEvent& e : WalkEvents(file, /*crc32=*/true)) {
    if (e.type >= 165 && e.type <= 171) compressed.push_back(e);
  }
  ASSERT_EQ(compressed.size(), 4u);

  // QUERY_COMPRESSED: post-header 13, status vars, db, NUL, then the block.
  const RawEvent& q = compressed[0];
  ASSERT_EQ(q.type, 165);
  const size_t db_len = uint8_t(q.body[8]);
  const size_t status_len = uint8_t(q.body[11]) | uint8_t(q.body[12]) << 8;
  const size_t query_at = 13 + status_len + db_len + 1;
  EXPECT_EQ(q.body.substr(13 + status_len, db_len), "cdc_test");
  std::string out;
  size_t consumed = 0;
  Status s = MariaUncompress(q.body.substr(query_at), &out, &consumed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out,
            "CREATE TABLE t_compressed (\n  id INT NOT NULL PRIMARY KEY,\n  payload VARCHAR(2000)\n) "
            "ENGINE=InnoDB");
  EXPECT_EQ(consumed, q.body.size() - query_at);

  // Rows V1: table_id 6 + flags 2, packed width, bitmap(s), then the block.
  const std::vector<uint8_t> types = {166, 167, 168};
  const std::vector<size_t> sizes = {0x08a6, 0x0afe, 0x03ef};
  for (size_t i = 0; i < 3; ++i) {
    const RawEvent& r = compressed[i + 1];
    ASSERT_EQ(r.type, types[i]);
    const size_t width = uint8_t(r.body[8]);  // < 251: one byte
    ASSERT_EQ(width, 2u);
    const size_t bitmaps = (r.type == 167 ? 2 : 1) * ((width + 7) / 8);
    const std::string_view block = r.body.substr(9 + bitmaps);
    s = MariaUncompress(block, &out, &consumed);
    ASSERT_TRUE(s.ok()) << int(r.type) << " " << s.ToString();
    EXPECT_EQ(out.size(), sizes[i]);
    EXPECT_EQ(consumed, block.size());
    EXPECT_NE(out.find(r.type == 168 ? "zzzzzzzzzz" : "compress me"), std::string::npos);
  }
  // DELETE of (2, 'z' x 1000): null bitmap (bits of absent columns set), INT 2,
  // VARCHAR length 1000, data.
  EXPECT_EQ(out, std::string("\xfc\x02\x00\x00\x00\xe8\x03", 7) + std::string(1000, 'z'));
}

}  // namespace
}  // namespace canal::binlog
