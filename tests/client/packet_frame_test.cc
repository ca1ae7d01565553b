// PacketFrame::Parse (the Connector's reader of a reply's outer Packet)
// against protobuf's generated class: what both read from well-formed bytes,
// fields in other orders, repeated and unknown, and malformed frames
// (truncated, wrong tags, oversize lengths) refused as Corruption saying where.
#include "canal/client/packet_frame.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "canal/packet.pb.h"

namespace canal::client {
namespace {

namespace pb = canal::protocol;

// A buffer of exactly the bytes' size, so that AddressSanitizer sees any read
// past the end.
std::unique_ptr<char[]> ExactCopy(std::string_view bytes) {
  std::unique_ptr<char[]> p(new char[bytes.size() + 1]);
  if (!bytes.empty()) std::memcpy(p.get(), bytes.data(), bytes.size());
  return p;
}

bool Within(std::string_view part, std::string_view whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

// Parses `bytes` both ways; when protobuf takes them, the frame must read the
// same. Returns the frame's status.
Status ParseAndCompare(std::string_view bytes) {
  auto copy = ExactCopy(bytes);
  const std::string_view in(copy.get(), bytes.size());
  PacketFrame f;
  Status s = PacketFrame::Parse(in, &f);
  pb::Packet p;
  const bool pb_ok = p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  if (s.ok()) {
    EXPECT_TRUE(pb_ok) << "the frame took bytes protobuf refuses";
    EXPECT_EQ(f.type, static_cast<int32_t>(p.type()));
    EXPECT_EQ(f.has_version, p.has_version());
    EXPECT_EQ(f.version, p.version());
    EXPECT_EQ(f.has_compression, p.has_compression());
    EXPECT_EQ(f.compression, static_cast<int32_t>(p.compression()));
    EXPECT_EQ(f.body, p.body());
    EXPECT_TRUE(Within(f.body, in)) << "the body must be a view into the frame, not a copy";
  } else {
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(f.type, 0) << "a refused frame reads as empty";
    EXPECT_TRUE(f.body.empty());
  }
  return s;
}

pb::Packet Full() {
  pb::Packet p;
  p.set_magic_number(17);
  p.set_version(1);
  p.set_type(pb::MESSAGES);
  p.set_compression(pb::NONE);
  p.set_body(std::string(300, 'b'));  // a two-byte length
  return p;
}

std::vector<std::string> Fields(const std::string& bytes);

TEST(PacketFrame, ReadsWhatProtobufWrites) {
  pb::Packet type_only;
  type_only.set_type(pb::ACK);
  pb::Packet ours;  // what our server writes: type and body
  ours.set_type(pb::MESSAGES);
  ours.set_body("entries");
  pb::Packet big;
  big.set_type(pb::MESSAGES);
  big.set_body(std::string(1 << 20, 'x'));  // a three-byte length
  pb::Packet odd;
  odd.set_version(-3);  // a ten-byte varint
  odd.set_type(static_cast<pb::PacketType>(99));  // not a known type: kept, as proto3 does
  odd.set_compression(pb::ZLIB);
  for (const pb::Packet& p : {type_only, ours, big, odd, Full(), pb::Packet()}) {
    const std::string bytes = p.SerializeAsString();
    ASSERT_TRUE(ParseAndCompare(bytes).ok());
  }
  PacketFrame f;
  ASSERT_TRUE(PacketFrame::Parse(Full().SerializeAsString(), &f).ok());
  EXPECT_EQ(f.type, pb::MESSAGES);
  EXPECT_EQ(f.body.size(), 300u);
  ASSERT_TRUE(PacketFrame::Parse("", &f).ok());
  EXPECT_EQ(f.type, 0);
  EXPECT_FALSE(f.has_version);
}

TEST(PacketFrame, FieldsInAnyOrderRepeatedOrUnknownReadAsProtobufDoes) {
  const std::string full = Full().SerializeAsString();
  std::string reversed;
  const std::vector<std::string> fields = Fields(full);
  for (auto it = fields.rbegin(); it != fields.rend(); ++it) reversed += *it;
  ASSERT_TRUE(ParseAndCompare(reversed).ok());
  // The type twice (the last wins), the body twice (the last wins, not merged).
  std::string twice = full + std::string("\x18\x03", 2) + std::string("\x2a\x02zz", 4);
  ASSERT_TRUE(ParseAndCompare(twice).ok());
  PacketFrame f;
  ASSERT_TRUE(PacketFrame::Parse(twice, &f).ok());
  EXPECT_EQ(f.type, pb::ACK);
  EXPECT_EQ(f.body, "zz");
  // Unknown fields of every wire type, and known numbers with another wire
  // type (skipped as protobuf skips them), between the known ones.
  std::string unknown;
  unknown += std::string("\x30\x05", 2);                        // field 6, varint
  unknown += std::string("\x18\x07", 2);                        // type 7 (MESSAGES)
  unknown += std::string("\x39") + std::string(8, '\x01');      // field 7, fixed64
  unknown += std::string("\x45") + std::string(4, '\x02');      // field 8, fixed32
  unknown += std::string("\x1a\x01q", 3);                       // field 3 as bytes: not the type
  unknown += std::string("\x2a\x03" "abc", 5);                  // body
  unknown += std::string("\x28\x01", 2);                        // field 5 as a varint: not the body
  unknown += std::string("\xfa\x3f\x01z", 4);                   // field 1023 (two-byte tag), bytes
  ASSERT_TRUE(ParseAndCompare(unknown).ok());
  ASSERT_TRUE(PacketFrame::Parse(unknown, &f).ok());
  EXPECT_EQ(f.type, pb::MESSAGES);
  EXPECT_EQ(f.body, "abc");
}

// ---- malformed frames ----

void ExpectCorruptionAt(const std::string& bytes, std::string_view problem, size_t at) {
  const Status s = ParseAndCompare(bytes);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("canal.protocol.Packet"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find(problem), std::string_view::npos) << s.ToString();
  const std::string where = "at byte " + std::to_string(at) + " of " + std::to_string(bytes.size());
  EXPECT_NE(s.message().find(where), std::string_view::npos) << s.ToString();
}

TEST(PacketFrameMalformed, EveryTruncationIsOkOrCorruption) {
  const std::string full = Full().SerializeAsString();
  int refused = 0;
  for (size_t n = 0; n < full.size(); ++n) {
    refused += !ParseAndCompare(full.substr(0, n)).ok();
    if (::testing::Test::HasFailure()) FAIL() << "prefix of " << n << " bytes";
  }
  EXPECT_GT(refused, 290) << "every cut inside the body's bytes must be refused";
  // The body cut short: its field is named with where it starts.
  std::string cut = full.substr(0, full.size() - 1);
  ExpectCorruptionAt(cut, "longer than the bytes left", full.size() - 300 - 3);
}

TEST(PacketFrameMalformed, WrongTagsAreCorruption) {
  ExpectCorruptionAt(std::string("\x18\x07\x00\x01", 4), "field number 0", 2);
  ExpectCorruptionAt(std::string("\x18\x07\x1e\x01", 4), "invalid wire type", 2);   // field 3, wire type 6
  ExpectCorruptionAt(std::string("\x18\x07\x1f\x01", 4), "invalid wire type", 2);   // wire type 7
  ExpectCorruptionAt(std::string("\x1b\x1c", 2), "group", 0);                       // start and end group
  ExpectCorruptionAt(std::string("\x18\x07\x80", 3), "tag's varint", 2);            // tag cut short
  ExpectCorruptionAt(std::string(11, '\x80'), "tag's varint", 0);                   // tag beyond 10 bytes
  ExpectCorruptionAt(std::string("\x80\x80\x80\x80\x80\x01", 6), "above 32 bits", 0);
  ExpectCorruptionAt(std::string("\x18", 1), "varint runs past", 0);               // the type's value missing
  ExpectCorruptionAt(std::string("\x18") + std::string(10, '\xff') + "\x01", "varint runs past", 0);
}

TEST(PacketFrameMalformed, OversizeLengthsAreCorruptionNotAWrap) {
  // A body declaring one byte more than is left, 2^32 bytes, and 2^64 - 1
  // (which must not wrap around when added to the position).
  ExpectCorruptionAt(std::string("\x18\x07\x2a\x04" "abc", 7), "(4 declared)", 2);
  ExpectCorruptionAt(std::string("\x2a\x80\x80\x80\x80\x10xyz", 9), "(4294967296 declared)", 0);
  ExpectCorruptionAt(std::string("\x2a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11), "longer than the bytes left", 0);
  ExpectCorruptionAt(std::string("\x2a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12), "length's varint", 0);
}

TEST(PacketFrameMalformed, RandomDamageIsOkOrCorruptionAndAgreesWithProtobuf) {
  google::protobuf::LogSilencer quiet;
  std::mt19937 rng(20261201);
  pb::Packet small;
  small.set_type(pb::ACK);
  small.set_body(std::string("\x08\x00", 2));
  const std::vector<std::string> corpus = {Full().SerializeAsString(), small.SerializeAsString()};
  int ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string bytes = corpus[rng() % corpus.size()];
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255)); break;
        case 1: bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), static_cast<char>(rng())); break;
        default: bytes[at] = static_cast<char>(0xff); break;
      }
    }
    ok += ParseAndCompare(bytes).ok();
    if (::testing::Test::HasFailure()) FAIL() << "iteration " << iter;
  }
  EXPECT_GT(ok, 1000) << "too few damaged frames that both readers take to compare them";
}

std::vector<std::string> Fields(const std::string& bytes) {
  // Splits a well-formed Packet at its fields (one-byte tags, one-byte
  // varints or lengths up to two bytes: enough for Full()).
  std::vector<std::string> out;
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t start = i;
    const int wire_type = bytes[i++] & 7;
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<uint8_t>(bytes[i++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    if (wire_type == 2) i += v;
    out.push_back(bytes.substr(start, i - start));
  }
  return out;
}

}  // namespace
}  // namespace canal::client
