// ReadBinaryValue: binary-protocol row values as the snapshot reader takes them from the packet
// (in place, no client-library conversion). Values the server sends, and packets cut short or
// with lengths no type has: those name the problem, stop at the packet's end and never read past
// it (the buffers here are exactly the packet, so ASan sees any over-read).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "canal/parser/binlog/column_type.h"
#include "canal/snapshot/field_value.h"

namespace canal::snapshot {
namespace {

using binlog::ColumnType;
// The server's type code of a column (the protocol's codes are the binlog's).
constexpr uint8_t T(ColumnType t) { return static_cast<uint8_t>(t); }

std::vector<unsigned char> Bytes(std::initializer_list<int> b) {
  std::vector<unsigned char> v;
  for (int x : b) v.push_back(static_cast<unsigned char>(x));
  return v;
}

struct Read {
  const char* error = nullptr;
  FieldValue value;
  size_t consumed = 0;
  uint64_t counted = 0;
};

// Reads one value of `type` from a heap copy of exactly `packet`.
Read ReadOne(uint8_t type, const std::vector<unsigned char>& packet, bool is_unsigned = false) {
  auto* copy = new unsigned char[packet.size() + (packet.empty() ? 1 : 0)];
  if (!packet.empty()) std::memcpy(copy, packet.data(), packet.size());
  const unsigned char* at = copy;
  Read r;
  r.error = ReadBinaryValue(BinaryFieldKind(type, is_unsigned), type, &at, copy + packet.size(), &r.value, &r.counted);
  r.consumed = static_cast<size_t>(at - copy);
  if (r.value.kind == FieldKind::kBytes && r.error == nullptr) {
    // The view must lie inside the packet; keep its bytes before the copy goes.
    static thread_local std::string kept;
    EXPECT_GE(reinterpret_cast<const unsigned char*>(r.value.bytes.data()), copy);
    EXPECT_LE(reinterpret_cast<const unsigned char*>(r.value.bytes.data() + r.value.bytes.size()),
              copy + packet.size());
    kept.assign(r.value.bytes);
    r.value.bytes = kept;
  }
  delete[] copy;
  return r;
}

TEST(ReadBinaryValue, IntegersOfEveryWidthSignedAndUnsigned) {
  EXPECT_EQ(ReadOne(T(ColumnType::kTiny), Bytes({0xff})).value.i64, -1);
  EXPECT_EQ(ReadOne(T(ColumnType::kTiny), Bytes({0xff}), true).value.u64, 255u);
  EXPECT_EQ(ReadOne(T(ColumnType::kShort), Bytes({0xfe, 0xff})).value.i64, -2);
  EXPECT_EQ(ReadOne(T(ColumnType::kYear), Bytes({0xe8, 0x07}), true).value.u64, 2024u);
  EXPECT_EQ(ReadOne(T(ColumnType::kInt24), Bytes({0x00, 0x00, 0x80, 0xff})).value.i64, -8388608);  // sent in 4 bytes
  EXPECT_EQ(ReadOne(T(ColumnType::kLong), Bytes({0x00, 0x00, 0x00, 0x80})).value.i64, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(ReadOne(T(ColumnType::kLong), Bytes({0xff, 0xff, 0xff, 0xff}), true).value.u64, 4294967295u);
  const Read min = ReadOne(T(ColumnType::kLongLong), Bytes({0, 0, 0, 0, 0, 0, 0, 0x80}));
  EXPECT_EQ(min.value.kind, FieldKind::kSigned);
  EXPECT_EQ(min.value.i64, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(min.consumed, 8u);
  EXPECT_EQ(min.counted, 8u);
  EXPECT_EQ(ReadOne(T(ColumnType::kLongLong), Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), true).value.u64,
            std::numeric_limits<uint64_t>::max());
}

TEST(ReadBinaryValue, FloatWidensExactlyAndDoubleIsBitForBit) {
  std::vector<unsigned char> f(4), d(8);
  const float fv = 1.1f;
  const double dv = -0.1;
  std::memcpy(f.data(), &fv, 4);
  std::memcpy(d.data(), &dv, 8);
  const Read rf = ReadOne(T(ColumnType::kFloat), f);
  EXPECT_EQ(rf.value.kind, FieldKind::kDouble);
  EXPECT_EQ(rf.value.f64, static_cast<double>(fv));
  EXPECT_EQ(static_cast<float>(rf.value.f64), fv);
  EXPECT_EQ(rf.consumed, 4u);
  EXPECT_EQ(ReadOne(T(ColumnType::kDouble), d).value.f64, dv);
}

TEST(ReadBinaryValue, TemporalValuesOfEveryLength) {
  const Read zero = ReadOne(T(ColumnType::kDateTime), Bytes({0}));
  EXPECT_EQ(zero.value.kind, FieldKind::kTime);
  EXPECT_EQ(zero.value.time.year, 0u);
  EXPECT_EQ(zero.consumed, 1u);
  const Read date = ReadOne(T(ColumnType::kDate), Bytes({4, 0xe8, 0x07, 2, 29}));
  EXPECT_EQ(date.value.time.year, 2024u);
  EXPECT_EQ(date.value.time.month, 2u);
  EXPECT_EQ(date.value.time.day, 29u);
  EXPECT_EQ(date.value.time.hour, 0u);
  const Read dt = ReadOne(T(ColumnType::kDateTime), Bytes({7, 0xe8, 0x07, 12, 31, 23, 59, 58}));
  EXPECT_EQ(dt.value.time.hour, 23u);
  EXPECT_EQ(dt.value.time.second, 58u);
  EXPECT_EQ(dt.value.time.microsecond, 0u);
  const Read ts = ReadOne(T(ColumnType::kTimestamp), Bytes({11, 0xb2, 0x07, 1, 1, 0, 0, 1, 0x3f, 0x42, 0x0f, 0x00}));
  EXPECT_EQ(ts.value.time.year, 1970u);
  EXPECT_EQ(ts.value.time.microsecond, 999999u);
  EXPECT_EQ(ts.consumed, 12u);
  // TIME: negative flag, days (4 bytes), hours, minutes, seconds, [microseconds].
  const Read t = ReadOne(T(ColumnType::kTime), Bytes({8, 1, 34, 0, 0, 0, 22, 59, 59}));
  EXPECT_TRUE(t.value.time.negative);
  EXPECT_EQ(t.value.time.day, 0u);
  EXPECT_EQ(t.value.time.hour, 838u);  // days folded into the hours
  EXPECT_EQ(t.value.time.minute, 59u);
  const Read tf = ReadOne(T(ColumnType::kTime), Bytes({12, 0, 0, 0, 0, 0, 1, 2, 3, 0x39, 0x30, 0, 0}));
  EXPECT_FALSE(tf.value.time.negative);
  EXPECT_EQ(tf.value.time.hour, 1u);
  EXPECT_EQ(tf.value.time.microsecond, 12345u);
  EXPECT_EQ(ReadOne(T(ColumnType::kTime), Bytes({0})).value.time.hour, 0u);
}

TEST(ReadBinaryValue, LengthEncodedBytesOfEveryPrefix) {
  const Read empty = ReadOne(T(ColumnType::kVarString), Bytes({0}));
  EXPECT_EQ(empty.value.kind, FieldKind::kBytes);
  EXPECT_EQ(empty.value.bytes, "");
  EXPECT_EQ(empty.consumed, 1u);
  EXPECT_EQ(ReadOne(T(ColumnType::kNewDecimal), Bytes({4, '-', '1', '.', '5'})).value.bytes, "-1.5");
  for (const auto& [prefix, n] : {std::pair{std::vector<int>{250}, size_t{250}},
                                  std::pair{std::vector<int>{252, 0x2c, 0x01}, size_t{300}},
                                  std::pair{std::vector<int>{253, 0x00, 0x00, 0x01}, size_t{65536}},
                                  std::pair{std::vector<int>{254, 3, 0, 0, 0, 0, 0, 0, 0}, size_t{3}}}) {
    std::vector<unsigned char> packet;
    for (int b : prefix) packet.push_back(static_cast<unsigned char>(b));
    const std::string value(n, 'x');
    packet.insert(packet.end(), value.begin(), value.end());
    const Read r = ReadOne(T(ColumnType::kBlob), packet);
    ASSERT_EQ(r.error, nullptr) << n;
    EXPECT_EQ(r.value.bytes, value);
    EXPECT_EQ(r.consumed, packet.size());
    EXPECT_EQ(r.counted, n);
  }
}

TEST(ReadBinaryValue, ARowOfSeveralValuesIsReadInTurn) {
  const std::vector<unsigned char> row = Bytes({7, 0, 0, 0, 3, 'a', 'b', 'c', 4, 0xe8, 0x07, 1, 2});
  std::vector<unsigned char> packet(row);
  const unsigned char* at = packet.data();
  const unsigned char* end = packet.data() + packet.size();
  FieldValue a, b, c;
  uint64_t counted = 0;
  ASSERT_EQ(ReadBinaryValue(FieldKind::kSigned, T(ColumnType::kLong), &at, end, &a, &counted), nullptr);
  ASSERT_EQ(ReadBinaryValue(FieldKind::kBytes, T(ColumnType::kVarString), &at, end, &b, &counted), nullptr);
  ASSERT_EQ(ReadBinaryValue(FieldKind::kTime, T(ColumnType::kDate), &at, end, &c, &counted), nullptr);
  EXPECT_EQ(at, end);
  EXPECT_EQ(a.i64, 7);
  EXPECT_EQ(b.bytes, "abc");
  EXPECT_EQ(c.time.day, 2u);
  EXPECT_EQ(counted, 8u + 3u + 8u);
}

// Bad input: each cut short, or with a length no value of its type has.
TEST(ReadBinaryValue, CutShortOrMalformedValuesNameTheProblemAndStopAtTheEnd) {
  struct Case {
    uint8_t type;
    std::vector<unsigned char> packet;
    const char* want;  // a word of the error
  };
  const std::vector<Case> cases = {
      {T(ColumnType::kTiny), {}, "past"},
      {T(ColumnType::kShort), Bytes({1}), "past"},
      {T(ColumnType::kLong), Bytes({1, 2, 3}), "past"},
      {T(ColumnType::kInt24), Bytes({1, 2, 3}), "past"},
      {T(ColumnType::kLongLong), Bytes({1, 2, 3, 4, 5, 6, 7}), "past"},
      {T(ColumnType::kFloat), Bytes({1, 2, 3}), "past"},
      {T(ColumnType::kDouble), Bytes({1, 2, 3, 4, 5, 6, 7}), "past"},
      {T(ColumnType::kDateTime), {}, "past"},
      {T(ColumnType::kDateTime), Bytes({7, 0xe8, 0x07, 1, 1, 0, 0}), "past"},
      {T(ColumnType::kDateTime), Bytes({5, 0xe8, 0x07, 1, 1, 0}), "length"},
      {T(ColumnType::kDate), Bytes({3, 0xe8, 0x07, 1}), "length"},
      {T(ColumnType::kTime), Bytes({4, 0, 0, 0, 0}), "TIME"},
      {T(ColumnType::kTime), Bytes({12, 0, 0, 0, 0, 0, 1, 2, 3, 0x39}), "past"},
      {T(ColumnType::kVarString), {}, "past"},
      {T(ColumnType::kVarString), Bytes({5, 'a', 'b'}), "past"},
      {T(ColumnType::kVarString), Bytes({251}), "prefix"},
      {T(ColumnType::kVarString), Bytes({255, 1}), "prefix"},
      {T(ColumnType::kVarString), Bytes({252, 1}), "past"},
      {T(ColumnType::kVarString), Bytes({253, 1, 0}), "past"},
      {T(ColumnType::kVarString), Bytes({254, 1, 0, 0, 0}), "past"},
      // A length near 2^64: no overflow past the check.
      {T(ColumnType::kBlob), Bytes({254, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'a'}), "past"},
      {T(ColumnType::kBlob), Bytes({254, 2, 0, 0, 0, 0, 0, 0, 0x80, 'a', 'b'}), "past"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Read r = ReadOne(c.type, c.packet);
    ASSERT_NE(r.error, nullptr) << "case " << i;
    EXPECT_NE(std::string(r.error).find(c.want), std::string::npos) << "case " << i << ": " << r.error;
    EXPECT_EQ(r.consumed, c.packet.size()) << "case " << i << ": stops at the packet's end";
  }
  // NULL is a flag in the row's bitmap, never a value to read.
  std::vector<unsigned char> packet = Bytes({1});
  const unsigned char* at = packet.data();
  FieldValue v;
  uint64_t counted = 0;
  EXPECT_NE(ReadBinaryValue(FieldKind::kNull, T(ColumnType::kLong), &at, packet.data() + 1, &v, &counted), nullptr);
}

TEST(BinaryFieldKind, FromTheServersTypeAndUnsignedFlag) {
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kLong), false), FieldKind::kSigned);
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kYear), true), FieldKind::kUnsigned);
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kFloat), false), FieldKind::kDouble);
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kTimestamp), false), FieldKind::kTime);
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kNewDate), false), FieldKind::kTime);  // NEWDATE
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kNewDecimal), false), FieldKind::kBytes);
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kBit), true), FieldKind::kBytes);  // BIT: bytes, whatever its flags
  EXPECT_EQ(BinaryFieldKind(T(ColumnType::kBlob), false), FieldKind::kBytes);
}

// The inline reader of the common values against ReadBinaryValue, over every type the protocol
// sends, both signs, and packets of every length up to 300 bytes (random bytes; the length
// prefixes at and around 251): where it reads a value, it reads exactly ReadBinaryValue's, and
// it declines what it does not read (and every cut-short value) without moving.
TEST(ReadCommonBinaryValue, ReadsWhatReadBinaryValueReadsOrDeclines) {
  const uint8_t types[] = {T(ColumnType::kTiny),     T(ColumnType::kShort),  T(ColumnType::kInt24),
                           T(ColumnType::kLong),     T(ColumnType::kLongLong), T(ColumnType::kYear),
                           T(ColumnType::kFloat),    T(ColumnType::kDouble), T(ColumnType::kNewDecimal),
                           T(ColumnType::kVarString), T(ColumnType::kBlob),  T(ColumnType::kDateTime),
                           T(ColumnType::kDate),     T(ColumnType::kTime),   T(ColumnType::kBit)};
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto next = [&seed] {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return static_cast<unsigned char>(seed);
  };
  size_t fast_reads = 0;
  for (uint8_t type : types) {
    for (bool is_unsigned : {false, true}) {
      const FieldKind kind = BinaryFieldKind(type, is_unsigned);
      const uint8_t fixed = BinaryFixedBytes(kind, type);
      for (size_t size = 0; size <= 300; ++size) {
        for (int first : {-1, 0, 1, 250, 251, 252, 253, 254, 255}) {
          std::vector<unsigned char> packet(size);
          for (unsigned char& b : packet) b = next();
          if (first >= 0 && size > 0) packet[0] = static_cast<unsigned char>(first);
          auto* copy = new unsigned char[size + 1];
          if (size > 0) std::memcpy(copy, packet.data(), size);
          const unsigned char* end = copy + size;
          const unsigned char* fast_at = copy;
          FieldValue fast;
          uint64_t fast_counted = 0;
          const bool read = ReadCommonBinaryValue(kind, fixed, &fast_at, end, &fast, &fast_counted);
          const unsigned char* at = copy;
          FieldValue slow;
          uint64_t counted = 0;
          const char* error = ReadBinaryValue(kind, type, &at, end, &slow, &counted);
          if (read) {
            ++fast_reads;
            ASSERT_EQ(error, nullptr) << int{type} << " size " << size;
            EXPECT_EQ(fast_at, at);
            EXPECT_EQ(fast_counted, counted);
            EXPECT_EQ(fast.kind, slow.kind);
            switch (kind) {
              case FieldKind::kSigned: EXPECT_EQ(fast.i64, slow.i64); break;
              case FieldKind::kUnsigned: EXPECT_EQ(fast.u64, slow.u64); break;
              case FieldKind::kDouble: EXPECT_EQ(std::memcmp(&fast.f64, &slow.f64, 8), 0); break;
              case FieldKind::kBytes:
                EXPECT_EQ(fast.bytes.data(), slow.bytes.data());
                EXPECT_EQ(fast.bytes.size(), slow.bytes.size());
                break;
              default: ADD_FAILURE() << "read a kind it should decline: " << int{type};
            }
          } else {
            EXPECT_EQ(fast_at, copy) << "declined, yet moved";
            EXPECT_EQ(fast_counted, 0u);
            // Declined: only what it does not take, or a value ReadBinaryValue finds cut short.
            const bool common_kind = fixed != 0 || kind == FieldKind::kBytes;
            if (common_kind && (fixed != 0 || (size > 0 && packet[0] < 251))) {
              EXPECT_NE(error, nullptr) << int{type} << " size " << size;
            }
          }
          delete[] copy;
        }
      }
    }
  }
  EXPECT_GT(fast_reads, 1000u);
}

}  // namespace
}  // namespace canal::snapshot
