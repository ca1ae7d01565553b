// Tests for the GTID / XA / heartbeat / transaction-payload body decoders.
#include "canal/parser/binlog/gtid_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#ifndef CANAL_SHARED_DIR
#define CANAL_SHARED_DIR ""
#endif

#include "support/fixtures.h"

namespace canal::binlog {
namespace {

// ---- byte builders ----

class Bytes {
 public:
  Bytes& U8(uint8_t v) {
    s_.push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& LE(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Bytes& BE(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) U8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Bytes& Raw(std::string_view r) {
    s_.append(r);
    return *this;
  }
  Bytes& Sid(const std::array<uint8_t, 16>& sid) {
    for (uint8_t b : sid) U8(b);
    return *this;
  }
  // MySQL length-encoded integer.
  Bytes& Packed(uint64_t v) {
    if (v < 0xFB) return U8(static_cast<uint8_t>(v));
    if (v <= 0xFFFF) return U8(0xFC).LE(v, 2);
    if (v <= 0xFFFFFF) return U8(0xFD).LE(v, 3);
    return U8(0xFE).LE(v, 8);
  }
  // Serialization-library varlen: n-1 trailing one bits then the value; 9 bytes
  // for values over 56 bits.
  Bytes& Varlen(uint64_t v) {
    int n = 1;
    while (n < 9 && (n == 8 ? v >> 56 : v >> (7 * n)) != 0) ++n;
    if (n == 9) return U8(0xFF).LE(v, 8);
    U8(static_cast<uint8_t>(((1u << (n - 1)) - 1) | (v << n)));
    return LE(v >> (8 - n), n - 1);
  }
  Bytes& SVarlen(int64_t v) {
    const uint64_t u = v < 0 ? (static_cast<uint64_t>(-(v + 1)) << 1) | 1 : static_cast<uint64_t>(v) << 1;
    return Varlen(u);
  }
  const std::string& str() const { return s_; }
  size_t size() const { return s_.size(); }

 private:
  std::string s_;
};

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

constexpr std::array<uint8_t, 16> kSidA = {0x80, 0x54, 0x9e, 0xcc, 0xd2, 0xf2, 0x11, 0xea,
                                           0xb7, 0x90, 0x02, 0x42, 0xac, 0x13, 0x00, 0x02};
constexpr std::array<uint8_t, 16> kSidB = {0x55, 0x77, 0x89, 0x04, 0x02, 0x99, 0x11, 0xf1,
                                           0xb1, 0xb8, 0x4e, 0xf0, 0xc4, 0x95, 0x6f, 0xeb};
constexpr const char* kSidAText = "80549ecc-d2f2-11ea-b790-0242ac130002";
constexpr const char* kSidBText = "55778904-0299-11f1-b1b8-4ef0c4956feb";

// ---- fixture walker ----

uint32_t Crc32(std::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

struct FixtureEvent {
  size_t offset = 0;
  uint8_t type = 0;
  uint32_t server_id = 0;
  std::string_view body;  // after the 19-byte header, checksum removed
};

struct Fixture {
  std::string data;
  std::vector<FixtureEvent> events;
  std::vector<const FixtureEvent*> OfType(uint8_t type) const {
    std::vector<const FixtureEvent*> v;
    for (const auto& e : events) {
      if (e.type == type) v.push_back(&e);
    }
    return v;
  }
};

std::string FixtureDir() { return ::canal::testing::FixturePath(""); }

// Walks a v4 binlog: magic, then events of 19-byte headers. Whether events
// carry a CRC32 is read from each FDE: it has the algorithm byte + CRC when its
// last 4 bytes are the CRC32 of the rest (computed with the in-use flag clear).
bool LoadFixture(const std::string& rel, Fixture* f) {
  std::ifstream in(FixtureDir() + "/" + rel, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot open " << rel;
    return false;
  }
  f->data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  const std::string& d = f->data;
  if (d.size() < 4 || d.compare(0, 4, "\xfe" "bin") != 0) {
    ADD_FAILURE() << rel << ": bad magic";
    return false;
  }
  auto u32 = [&](size_t p) {
    return uint32_t(uint8_t(d[p])) | uint32_t(uint8_t(d[p + 1])) << 8 |
           uint32_t(uint8_t(d[p + 2])) << 16 | uint32_t(uint8_t(d[p + 3])) << 24;
  };
  bool crc = false;
  size_t pos = 4;
  while (pos + 19 <= d.size()) {
    const uint32_t size = u32(pos + 9);
    if (size < 19 || size > d.size() - pos) break;  // cut-off tail
    FixtureEvent e;
    e.offset = pos;
    e.type = uint8_t(d[pos + 4]);
    e.server_id = u32(pos + 5);
    std::string_view whole(d.data() + pos, size);
    if (e.type == 15 && size >= 19 + 5) {
      std::string copy(whole.substr(0, size - 4));
      copy[17] = static_cast<char>(copy[17] & ~1);  // LOG_EVENT_BINLOG_IN_USE_F
      const bool has_alg = Crc32(copy) == u32(pos + size - 4);
      crc = has_alg && whole[size - 5] == 1;
      e.body = whole.substr(19, size - 19 - (has_alg ? 5 : 0));
    } else {
      const size_t trailer = crc ? 4 : 0;
      if (size < 19 + trailer) {
        ADD_FAILURE() << rel << ": event at " << pos << " smaller than its checksum";
        return false;
      }
      e.body = whole.substr(19, size - 19 - trailer);
      if (crc && Crc32(whole.substr(0, size - 4)) != u32(pos + size - 4)) {
        ADD_FAILURE() << rel << ": CRC mismatch at " << pos;
        return false;
      }
    }
    f->events.push_back(e);
    pos += size;
  }
  return true;
}

// ======================= MySQL GTID / ANONYMOUS_GTID =======================

std::string GtidPrefix(uint8_t flags, const std::array<uint8_t, 16>& sid, uint64_t gno) {
  return Bytes().U8(flags).Sid(sid).LE(gno, 8).str();
}

TEST(DecodeGtidEvent, MySQL56BodyHasNoLogicalClock) {
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidEvent(GtidPrefix(1, kSidA, 7), false, &g).ok());
  EXPECT_FALSE(g.anonymous);
  EXPECT_EQ(g.flags, 1);
  EXPECT_EQ(g.sid, kSidA);
  EXPECT_EQ(g.gno, 7);
  EXPECT_FALSE(g.has_logical_clock);
  EXPECT_EQ(g.immediate_commit_timestamp, 0u);
  EXPECT_EQ(g.ToString(), std::string(kSidAText) + ":7");
}

TEST(DecodeGtidEvent, MySQL57BodyHasLogicalClock) {
  const std::string body = GtidPrefix(0, kSidA, 3) + Bytes().U8(2).LE(2, 8).LE(3, 8).str();
  ASSERT_EQ(body.size(), 42u);
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidEvent(body, false, &g).ok());
  EXPECT_TRUE(g.has_logical_clock);
  EXPECT_EQ(g.last_committed, 2);
  EXPECT_EQ(g.sequence_number, 3);
  EXPECT_EQ(g.transaction_length, 0u);
}

std::string Full80Body(bool with_original) {
  Bytes b;
  b.Raw(GtidPrefix(1, kSidA, 42)).U8(2).LE(10, 8).LE(11, 8);
  if (with_original) {
    b.LE(1700000000000001ull | (1ull << 55), 7).LE(1600000000000000ull, 7);
  } else {
    b.LE(1700000000000001ull, 7);
  }
  b.Packed(0x1234);                           // transaction length, 3 bytes
  b.LE(80028u | (with_original ? 1u << 31 : 0), 4);  // immediate server version
  if (with_original) b.LE(50700, 4);          // original server version
  b.LE(99, 8);                                // commit group ticket
  return b.str();
}

TEST(DecodeGtidEvent, MySQL80OptionalFieldsWithEqualTimestamps) {
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidEvent(Full80Body(false), false, &g).ok());
  EXPECT_EQ(g.gno, 42);
  EXPECT_EQ(g.last_committed, 10);
  EXPECT_EQ(g.sequence_number, 11);
  EXPECT_EQ(g.immediate_commit_timestamp, 1700000000000001ull);
  EXPECT_EQ(g.original_commit_timestamp, 1700000000000001ull);
  EXPECT_EQ(g.transaction_length, 0x1234u);
}

TEST(DecodeGtidEvent, HighBitOfImmediateTimestampMeansOriginalFollows) {
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidEvent(Full80Body(true), false, &g).ok());
  EXPECT_EQ(g.immediate_commit_timestamp, 1700000000000001ull);
  EXPECT_EQ(g.original_commit_timestamp, 1600000000000000ull);
  EXPECT_EQ(g.transaction_length, 0x1234u);
}

TEST(DecodeGtidEvent, TruncationAtEveryLength) {
  for (bool with_original : {false, true}) {
    const std::string full = Full80Body(with_original);
    for (size_t len = 0; len <= full.size(); ++len) {
      GtidEvent g;
      g.gno = -5;  // sentinel: must be untouched on error
      const Status s = DecodeGtidEvent(std::string_view(full).substr(0, len), false, &g);
      SCOPED_TRACE("len=" + std::to_string(len) + " original=" + std::to_string(with_original));
      // Layout: prefix 25 | lt 1 | clock 16 (42) | ts 7 [+ original 7] | packed
      // length 3 | version 4 [+ original 4] | ticket 8.
      const size_t ts_end = with_original ? 56 : 49;
      const size_t len_end = ts_end + 3;
      const size_t ver_end = len_end + (with_original ? 8 : 4);
      bool truncated = len < 25 || (len > 25 && len < 42);   // mandatory or cut clock
      truncated |= with_original && len >= 49 && len < 56;   // flag promised original ts
      truncated |= len > ts_end && len < len_end;            // inside the packed length
      truncated |= with_original && len >= len_end + 4 && len < ver_end;  // promised version
      if (truncated) {
        EXPECT_TRUE(s.IsTruncated()) << s.ToString();
        EXPECT_EQ(g.gno, -5);
      } else {
        // A trailing optional field that does not fit is ignored, as MySQL does.
        EXPECT_TRUE(s.ok()) << s.ToString();
        EXPECT_EQ(g.gno, 42);
      }
      if (!s.ok()) {
        EXPECT_NE(s.message().find("GTID event: "), std::string_view::npos);
      }
    }
  }
}

TEST(DecodeGtidEvent, TruncationNamesTheField) {
  GtidEvent g;
  const Status s = DecodeGtidEvent(GtidPrefix(1, kSidA, 1).substr(0, 10), false, &g);
  EXPECT_TRUE(s.IsTruncated());
  EXPECT_EQ(s.message(), "GTID event: sid truncated");
  const Status s2 = DecodeGtidEvent(std::string_view(), true, &g);
  EXPECT_EQ(s2.message(), "ANONYMOUS_GTID event: flags truncated");
}

TEST(DecodeGtidEvent, GnoOutOfRangeIsCorruption) {
  GtidEvent g;
  EXPECT_TRUE(DecodeGtidEvent(GtidPrefix(1, kSidA, 0), false, &g).IsCorruption());
  EXPECT_TRUE(DecodeGtidEvent(GtidPrefix(1, kSidA, uint64_t(-1)), false, &g).IsCorruption());
  EXPECT_TRUE(DecodeGtidEvent(GtidPrefix(1, kSidA, std::numeric_limits<int64_t>::max()), false, &g)
                  .IsCorruption());
}

TEST(DecodeGtidEvent, AnonymousAcceptsGnoZeroAndPrintsEmpty) {
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidEvent(GtidPrefix(0, {}, 0), true, &g).ok());
  EXPECT_TRUE(g.anonymous);
  EXPECT_EQ(g.ToString(), "");
}

TEST(DecodeGtidEvent, UnknownLogicalClockTypeStopsDecoding) {
  const std::string body = GtidPrefix(1, kSidA, 5) + Bytes().U8(1).LE(2, 8).str();
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidEvent(body, false, &g).ok());
  EXPECT_FALSE(g.has_logical_clock);
  EXPECT_EQ(g.gno, 5);
}

TEST(DecodeGtidEvent, InvalidPackedTransactionLengthIsCorruption) {
  const std::string base = GtidPrefix(1, kSidA, 5) + Bytes().U8(2).LE(0, 8).LE(1, 8).LE(7, 7).str();
  GtidEvent g;
  EXPECT_TRUE(DecodeGtidEvent(base + "\xfb", false, &g).IsCorruption());
  EXPECT_TRUE(DecodeGtidEvent(base + "\xff", false, &g).IsCorruption());
  EXPECT_TRUE(DecodeGtidEvent(base + "\xfe\x01", false, &g).IsTruncated());
}

TEST(GtidEventToString, TaggedForm) {
  GtidEvent g;
  g.sid = kSidB;
  g.tag = "mytag";
  g.gno = 3;
  EXPECT_EQ(g.ToString(), std::string(kSidBText) + ":mytag:3");
}

// ======================= GTID_TAGGED_LOG_EVENT =======================

// Body of the GTID_TAGGED event in binlog_transaction_with_GTID_TAG.000001
// (MySQL 9.6.0), checksum removed.
const std::string kTaggedFixtureBody = Hex(
    "027800000002aaee25020804650222c503c502e1029cc10311035502dead03040c060a6d7974616708000a040c7f"
    "1cf3b814244a0610a10412430f0b");

TEST(DecodeGtidTaggedEvent, DecodesMySQL96Body) {
  ASSERT_EQ(kTaggedFixtureBody.size(), 60u);
  GtidEvent g;
  const Status s = DecodeGtidTaggedEvent(kTaggedFixtureBody, &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.sid, kSidB);
  EXPECT_EQ(g.tag, "mytag");
  EXPECT_EQ(g.gno, 3);
  EXPECT_EQ(g.flags, 0);  // row-only transaction
  EXPECT_TRUE(g.has_logical_clock);
  EXPECT_EQ(g.last_committed, 0);
  EXPECT_EQ(g.sequence_number, 1);
  EXPECT_EQ(g.immediate_commit_timestamp, 0x064a2414b8f31cull);
  EXPECT_EQ(g.original_commit_timestamp, g.immediate_commit_timestamp);
  EXPECT_EQ(g.transaction_length, 296u);
  EXPECT_EQ(g.ToString(), std::string(kSidBText) + ":mytag:3");
}

// Builds a message from (id, encoded data) pairs with a correct size field.
std::string TaggedMessage(const std::vector<std::pair<uint64_t, std::string>>& fields,
                          uint64_t last_non_ignorable = 0, uint64_t version = 1) {
  std::string payload;
  for (const auto& [id, data] : fields) payload += Bytes().Varlen(id).str() + data;
  // The size counts the whole message, size field included: find a fixpoint.
  const std::string ver = Bytes().Varlen(version).str();
  const std::string lni = Bytes().Varlen(last_non_ignorable).str();
  uint64_t size = ver.size() + 1 + lni.size() + payload.size();
  while (Bytes().Varlen(size).size() + ver.size() + lni.size() + payload.size() != size) ++size;
  return ver + Bytes().Varlen(size).str() + lni + payload;
}

std::string SidField(const std::array<uint8_t, 16>& sid) {
  Bytes b;
  for (uint8_t x : sid) b.Varlen(x);
  return b.str();
}

std::string Gno1() { return Bytes().SVarlen(1).str(); }

std::string TagField(std::string_view tag) { return Bytes().Varlen(tag.size()).Raw(tag).str(); }

TEST(DecodeGtidTaggedEvent, AllFieldsIncludingOriginalTimestampAndNegatives) {
  const std::string body = TaggedMessage({
      {0, Bytes().Varlen(1).str()},
      {1, SidField(kSidA)},
      {2, Bytes().SVarlen(123456789012345).str()},
      {3, TagField("Tag_01")},
      {4, Bytes().SVarlen(-1).str()},
      {5, Bytes().SVarlen(70000).str()},
      {6, Bytes().Varlen(1700000000000001ull).str()},
      {7, Bytes().Varlen(1600000000000000ull).str()},
      {8, Bytes().Varlen(std::numeric_limits<uint64_t>::max()).str()},
      {9, Bytes().Varlen(90600).str()},
      {10, Bytes().Varlen(80400).str()},
      {11, Bytes().Varlen(5).str()},
  });
  GtidEvent g;
  const Status s = DecodeGtidTaggedEvent(body, &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.sid, kSidA);
  EXPECT_EQ(g.gno, 123456789012345);
  EXPECT_EQ(g.tag, "tag_01");  // lower-cased like MySQL
  EXPECT_EQ(g.last_committed, -1);
  EXPECT_EQ(g.sequence_number, 70000);
  EXPECT_EQ(g.immediate_commit_timestamp, 1700000000000001ull);
  EXPECT_EQ(g.original_commit_timestamp, 1600000000000000ull);
  EXPECT_EQ(g.transaction_length, std::numeric_limits<uint64_t>::max());
}

TEST(DecodeGtidTaggedEvent, OptionalFieldsMayBeAbsent) {
  const std::string body = TaggedMessage({{1, SidField(kSidA)}, {2, Bytes().SVarlen(9).str()}});
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidTaggedEvent(body, &g).ok());
  EXPECT_EQ(g.gno, 9);
  EXPECT_EQ(g.tag, "");
  EXPECT_EQ(g.flags, 0);
  EXPECT_FALSE(g.has_logical_clock);
  EXPECT_EQ(g.ToString(), std::string(kSidAText) + ":9");
}

TEST(DecodeGtidTaggedEvent, SkipsIgnorableFieldsOfNewerServersAndBytesAfterMessage) {
  const std::string body = TaggedMessage({{1, SidField(kSidA)},
                                          {2, Bytes().SVarlen(9).str()},
                                          {12, Bytes().Varlen(77).str()},
                                          {13, TagField("future")}},
                                         /*last_non_ignorable=*/3);
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidTaggedEvent(body + "junk", &g).ok());
  EXPECT_EQ(g.gno, 9);
}

TEST(DecodeGtidTaggedEvent, UnknownNonIgnorableFieldIsNotSupported) {
  const std::string body =
      TaggedMessage({{1, SidField(kSidA)}, {2, Bytes().SVarlen(9).str()}, {12, "\x02"}}, 13);
  GtidEvent g;
  EXPECT_TRUE(DecodeGtidTaggedEvent(body, &g).IsNotSupported());
}

TEST(DecodeGtidTaggedEvent, OtherSerializationVersionIsNotSupported) {
  const std::string body = TaggedMessage({{1, SidField(kSidA)}, {2, Gno1()}}, 0, 2);
  GtidEvent g;
  EXPECT_TRUE(DecodeGtidTaggedEvent(body, &g).IsNotSupported());
}

// Corruption whose message mentions `what`, so that a test cannot pass for the
// wrong reason.
void ExpectCorruption(const Status& s, std::string_view what) {
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(what), std::string_view::npos) << s.ToString();
}

Status DecodeTagged(const std::string& body) {
  GtidEvent g;
  return DecodeGtidTaggedEvent(body, &g);
}

TEST(DecodeGtidTaggedEvent, MissingSidOrGnoIsCorruption) {
  ExpectCorruption(DecodeTagged(TaggedMessage({{2, Gno1()}})), "sid missing");
  ExpectCorruption(DecodeTagged(TaggedMessage({{1, SidField(kSidA)}})), "gno missing");
  ExpectCorruption(
      DecodeTagged(TaggedMessage({{1, SidField(kSidA)}, {2, Bytes().SVarlen(0).str()}})),
      "gno 0 out of range");
  ExpectCorruption(
      DecodeTagged(TaggedMessage({{1, SidField(kSidA)}, {2, Bytes().SVarlen(-7).str()}})),
      "gno -7 out of range");
}

TEST(DecodeGtidTaggedEvent, OutOfRangeValuesAreCorruption) {
  // sid bytes are uint8.
  std::string sid = SidField(kSidA);
  sid.replace(0, Bytes().Varlen(kSidA[0]).size(), Bytes().Varlen(256).str());
  ExpectCorruption(DecodeTagged(TaggedMessage({{1, sid}, {2, Gno1()}})), "sid value 256");
  // flags is uint8, server versions uint32.
  ExpectCorruption(
      DecodeTagged(TaggedMessage({{0, Bytes().Varlen(300).str()}, {1, SidField(kSidA)}, {2, Gno1()}})),
      "flags value 300");
  ExpectCorruption(DecodeTagged(TaggedMessage(
                       {{1, SidField(kSidA)}, {2, Gno1()}, {9, Bytes().Varlen(1ull << 32).str()}})),
                   "immediate_server_version");
}

TEST(DecodeGtidTaggedEvent, InvalidTagsAreCorruption) {
  for (std::string_view tag : {"1abc", "a-b", "with space", "x\x01", "_\xc3\xa9"}) {
    ExpectCorruption(
        DecodeTagged(TaggedMessage({{1, SidField(kSidA)}, {2, Gno1()}, {3, TagField(tag)}})),
        "tag has invalid characters");
  }
  ExpectCorruption(DecodeTagged(TaggedMessage(
                       {{1, SidField(kSidA)}, {2, Gno1()}, {3, TagField(std::string(33, 'a'))}})),
                   "tag length 33");
  GtidEvent g;
  const std::string max_tag = "_" + std::string(30, 'B') + "9";
  const Status s = DecodeGtidTaggedEvent(
      TaggedMessage({{1, SidField(kSidA)}, {2, Gno1()}, {3, TagField(max_tag)}}), &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.tag, "_" + std::string(30, 'b') + "9");
}

TEST(DecodeGtidTaggedEvent, MessageSizeMustFitTheBody) {
  GtidEvent g;
  // Size larger than the body.
  EXPECT_TRUE(DecodeGtidTaggedEvent(kTaggedFixtureBody.substr(0, 59), &g).IsTruncated());
  // Size smaller than the header that holds it.
  std::string small = kTaggedFixtureBody;
  small[1] = 0x02;  // size 1
  EXPECT_TRUE(DecodeGtidTaggedEvent(small, &g).IsCorruption());
}

TEST(DecodeGtidTaggedEvent, TruncationAtEveryLength) {
  for (size_t len = 0; len < kTaggedFixtureBody.size(); ++len) {
    GtidEvent g;
    g.gno = -5;
    const Status s = DecodeGtidTaggedEvent(std::string_view(kTaggedFixtureBody).substr(0, len), &g);
    EXPECT_TRUE(s.IsTruncated()) << len << " " << s.ToString();
    EXPECT_EQ(g.gno, -5);
  }
  // Same cut, but with the size field rewritten to match: a message that simply
  // ends early. Never crashes; either decodes what is there or reports it.
  for (size_t len = 3; len < kTaggedFixtureBody.size(); ++len) {
    std::string cut = kTaggedFixtureBody.substr(0, len);
    cut[1] = static_cast<char>(len << 1);
    GtidEvent g;
    const Status s = DecodeGtidTaggedEvent(cut, &g);
    EXPECT_TRUE(s.ok() || s.IsTruncated() || s.IsCorruption()) << len << " " << s.ToString();
    if (s.ok()) {
      EXPECT_EQ(g.gno, 3);
    }
  }
}

// ======================= PREVIOUS_GTIDS =======================

// An untagged entry: kSidA with two intervals, [1, 6) and [7, 10) (text 1-5:7-9).
std::string SidAEntryOfTwoIntervals() {
  return Bytes().Sid(kSidA).LE(2, 8).LE(1, 8).LE(6, 8).LE(7, 8).LE(10, 8).str();
}

TEST(DecodePreviousGtidsEvent, UntaggedSetAndText) {
  const std::string body = Bytes()
                               .LE(2, 8)
                               .Raw(SidAEntryOfTwoIntervals())
                               .Sid(kSidB)
                               .LE(1, 8)
                               .LE(3, 8)
                               .LE(4, 8)
                               .str();
  PreviousGtidsEvent p;
  ASSERT_TRUE(DecodePreviousGtidsEvent(body, &p).ok());
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(p.entries[0].sid, kSidA);
  ASSERT_EQ(p.entries[0].intervals.size(), 2u);
  EXPECT_EQ(p.entries[0].intervals[1].start, 7);
  EXPECT_EQ(p.entries[0].intervals[1].end, 10);
  EXPECT_EQ(p.ToString(), std::string(kSidAText) + ":1-5:7-9," + kSidBText + ":3");
}

std::string TaggedPrevGtids() {
  return Bytes()
      .U8(1)
      .LE(2, 6)
      .U8(1)
      .Sid(kSidB)
      .Varlen(0)
      .LE(1, 8)
      .LE(1, 8)
      .LE(14, 8)
      .Sid(kSidB)
      .Varlen(5)
      .Raw("mytag")
      .LE(1, 8)
      .LE(1, 8)
      .LE(3, 8)
      .str();
}

TEST(DecodePreviousGtidsEvent, TaggedSetAndText) {
  PreviousGtidsEvent p;
  const Status s = DecodePreviousGtidsEvent(TaggedPrevGtids(), &p);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(p.entries[0].tag, "");
  EXPECT_EQ(p.entries[1].tag, "mytag");
  EXPECT_EQ(p.ToString(), std::string(kSidBText) + ":1-13:mytag:1-2");
}

TEST(DecodePreviousGtidsEvent, TaggedEntryFirstForItsUuid) {
  PreviousGtidsEvent p;
  GtidSetEntry e;
  e.sid = kSidA;
  e.tag = "t";
  e.intervals = {{5, 6}};
  p.entries.push_back(e);
  EXPECT_EQ(p.ToString(), std::string(kSidAText) + ":t:5");
}

TEST(DecodePreviousGtidsEvent, EmptySet) {
  PreviousGtidsEvent p;
  p.entries.resize(3);
  ASSERT_TRUE(DecodePreviousGtidsEvent(Bytes().LE(0, 8).str(), &p).ok());
  EXPECT_TRUE(p.entries.empty());
  EXPECT_EQ(p.ToString(), "");
}

TEST(DecodePreviousGtidsEvent, AbsurdCountsAreRejectedBeforeAllocation) {
  PreviousGtidsEvent p;
  EXPECT_TRUE(DecodePreviousGtidsEvent(Bytes().LE(1ull << 40, 8).Sid(kSidA).LE(0, 8).str(), &p)
                  .IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(
                  Bytes().U8(1).LE(0xFFFFFFFFFFFFull, 6).U8(1).Sid(kSidA).U8(0).LE(0, 8).str(), &p)
                  .IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(
                  Bytes().LE(1, 8).Sid(kSidA).LE(0x7FFFFFFFFFFFFFFFull, 8).LE(1, 8).LE(2, 8).str(), &p)
                  .IsCorruption());
}

TEST(DecodePreviousGtidsEvent, TruncationAtEveryLength) {
  for (const std::string& full : {TaggedPrevGtids(), Bytes().LE(1, 8).Raw(SidAEntryOfTwoIntervals()).str()}) {
    for (size_t len = 0; len < full.size(); ++len) {
      PreviousGtidsEvent p;
      const Status s = DecodePreviousGtidsEvent(std::string_view(full).substr(0, len), &p);
      EXPECT_TRUE(s.IsTruncated() || s.IsCorruption()) << len << " " << s.ToString();
      EXPECT_TRUE(p.entries.empty());
    }
  }
}

TEST(DecodePreviousGtidsEvent, InvalidIntervalsAreCorruption) {
  PreviousGtidsEvent p;
  auto one = [](uint64_t start, uint64_t end) {
    return Bytes().LE(1, 8).Sid(kSidA).LE(1, 8).LE(start, 8).LE(end, 8).str();
  };
  EXPECT_TRUE(DecodePreviousGtidsEvent(one(0, 2), &p).IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(one(5, 5), &p).IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(one(5, 3), &p).IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(one(uint64_t(-3), 4), &p).IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(one(5, 6), &p).ok());
}

TEST(DecodePreviousGtidsEvent, UnknownFormatAndTrailingBytesAreCorruption) {
  PreviousGtidsEvent p;
  EXPECT_TRUE(DecodePreviousGtidsEvent(Bytes().U8(2).LE(0, 6).U8(2).str(), &p).IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(Bytes().U8(0).LE(0, 6).U8(1).str(), &p).IsCorruption());
  EXPECT_TRUE(DecodePreviousGtidsEvent(Bytes().LE(0, 8).U8(0).str(), &p).IsCorruption());
  std::string bad_tag = TaggedPrevGtids();
  bad_tag[8 + 16 + 1 + 8 + 16 + 16 + 16 + 1] = '-';  // first character of "mytag"
  EXPECT_TRUE(DecodePreviousGtidsEvent(bad_tag, &p).IsCorruption());
}

// ======================= MariaDB GTID / GTID_LIST =======================

TEST(DecodeMariaGtidEvent, StandaloneWithPostHeaderPadding) {
  const std::string body = Bytes().LE(1, 8).LE(0, 4).U8(1 | 32).LE(0, 6).str();
  MariaGtidEvent g;
  ASSERT_TRUE(DecodeMariaGtidEvent(body, 1, &g).ok());
  EXPECT_EQ(g.seq_no, 1u);
  EXPECT_EQ(g.domain_id, 0u);
  EXPECT_EQ(g.server_id, 1u);
  EXPECT_TRUE(g.standalone());
  EXPECT_TRUE(g.xa_xid.empty());
  EXPECT_EQ(g.ToString(), "0-1-1");
}

// The text is written in place; the largest numbers of each field take all of kTextMax.
TEST(MariaGtidEventText, FillsExactlyItsRoomAtTheLargestNumbers) {
  MariaGtidEvent g;
  g.domain_id = std::numeric_limits<uint32_t>::max();
  g.server_id = std::numeric_limits<uint32_t>::max();
  g.seq_no = std::numeric_limits<uint64_t>::max();
  char text[MariaGtidEvent::kTextMax + 1];
  text[MariaGtidEvent::kTextMax] = '#';  // must stay: nothing is written past the room
  const char* end = g.WriteText(text);
  EXPECT_EQ(std::string(static_cast<const char*>(text), end), "4294967295-4294967295-18446744073709551615");
  EXPECT_EQ(end - text, static_cast<std::ptrdiff_t>(MariaGtidEvent::kTextMax));
  EXPECT_EQ(text[MariaGtidEvent::kTextMax], '#');
  EXPECT_EQ(g.ToString(), "4294967295-4294967295-18446744073709551615");
  g = MariaGtidEvent{};
  EXPECT_EQ(std::string(text, g.WriteText(text)), "0-0-0");
  EXPECT_EQ(g.ToString(), "0-0-0");
}

TEST(DecodeMariaGtidEvent, GroupCommitId) {
  const std::string body = Bytes().LE(1000, 8).LE(2, 4).U8(2 | 4).LE(77, 8).str();
  MariaGtidEvent g;
  ASSERT_TRUE(DecodeMariaGtidEvent(body, 3, &g).ok());
  EXPECT_EQ(g.commit_id, 77u);
  EXPECT_FALSE(g.standalone());
  EXPECT_EQ(g.ToString(), "2-3-1000");
  for (size_t len = 0; len < body.size(); ++len) {
    EXPECT_TRUE(DecodeMariaGtidEvent(std::string_view(body).substr(0, len), 3, &g).IsTruncated()) << len;
  }
}

TEST(DecodeMariaGtidEvent, XaXidWithFlagsExtra) {
  // As in mariadb-10.11: flags 0x4c (PREPARED_XA), xid, then flags_extra 01 ff.
  const std::string body = Bytes().LE(30, 8).LE(0, 4).U8(0x4c).LE(1, 4).U8(8).U8(2)
                               .Raw("xa_cdc_1").Raw("bq").U8(1).U8(0xff).str();
  MariaGtidEvent g;
  ASSERT_TRUE(DecodeMariaGtidEvent(body, 1, &g).ok());
  EXPECT_EQ(g.xa_xid, "xa_cdc_1bq");
  const size_t xid_end = body.size() - 2;
  for (size_t len = 0; len < xid_end; ++len) {
    const Status s = DecodeMariaGtidEvent(std::string_view(body).substr(0, len), 1, &g);
    EXPECT_TRUE(s.IsTruncated()) << len << " " << s.ToString();
  }
}

TEST(DecodeMariaGtidEvent, OversizedXidPartsAreCorruption) {
  MariaGtidEvent g;
  const std::string body =
      Bytes().LE(30, 8).LE(0, 4).U8(128).LE(1, 4).U8(65).U8(0).Raw(std::string(65, 'x')).str();
  EXPECT_TRUE(DecodeMariaGtidEvent(body, 1, &g).IsCorruption());
}

TEST(DecodeMariaGtidListEvent, EntriesAndText) {
  const std::string body = Bytes()
                               .LE(2 | (1u << 28), 4)  // flag bits above the count are ignored
                               .LE(0, 4).LE(1, 4).LE(68, 8)
                               .LE(2, 4).LE(1, 4).LE(1000, 8)
                               .str();
  MariaGtidListEvent l;
  ASSERT_TRUE(DecodeMariaGtidListEvent(body, &l).ok());
  ASSERT_EQ(l.gtids.size(), 2u);
  EXPECT_EQ(l.gtids[1].domain_id, 2u);
  EXPECT_EQ(l.gtids[1].seq_no, 1000u);
  EXPECT_EQ(l.ToString(), "0-1-68,2-1-1000");
  for (size_t len = 0; len < body.size(); ++len) {
    const Status s = DecodeMariaGtidListEvent(std::string_view(body).substr(0, len), &l);
    EXPECT_TRUE(len < 4 ? s.IsTruncated() : s.IsCorruption()) << len << " " << s.ToString();
  }
}

TEST(DecodeMariaGtidListEvent, EmptyAndAbsurdCount) {
  MariaGtidListEvent l;
  ASSERT_TRUE(DecodeMariaGtidListEvent(Bytes().LE(0, 4).str(), &l).ok());
  EXPECT_EQ(l.ToString(), "");
  EXPECT_TRUE(DecodeMariaGtidListEvent(Bytes().LE(0x0FFFFFFF, 4).LE(0, 8).LE(0, 8).str(), &l).IsCorruption());
}

// ======================= XA_PREPARE =======================

TEST(DecodeXaPrepareEvent, GtridAndBqual) {
  const std::string body = Bytes().U8(1).LE(7, 4).LE(8, 4).LE(2, 4).Raw("xa_cdc_1").Raw("bq").str();
  XaPrepareEvent x;
  ASSERT_TRUE(DecodeXaPrepareEvent(body, &x).ok());
  EXPECT_TRUE(x.one_phase);
  EXPECT_EQ(x.format_id, 7);
  EXPECT_EQ(x.gtrid, "xa_cdc_1");
  EXPECT_EQ(x.bqual, "bq");
  for (size_t len = 0; len < body.size(); ++len) {
    EXPECT_TRUE(DecodeXaPrepareEvent(std::string_view(body).substr(0, len), &x).IsTruncated()) << len;
  }
}

TEST(DecodeXaPrepareEvent, OversizedLengthsAreCorruption) {
  XaPrepareEvent x;
  EXPECT_TRUE(DecodeXaPrepareEvent(Bytes().U8(0).LE(1, 4).LE(65, 4).LE(0, 4).str(), &x).IsCorruption());
  EXPECT_TRUE(
      DecodeXaPrepareEvent(Bytes().U8(0).LE(1, 4).LE(1, 4).LE(0xFFFFFFFF, 4).str(), &x).IsCorruption());
}

// ======================= HEARTBEAT_V2 =======================

std::string Heartbeat(std::string_view file, uint64_t pos) {
  const std::string packed_pos = Bytes().Packed(pos).str();
  return Bytes()
      .Packed(1).Packed(file.size()).Raw(file)
      .Packed(9).Packed(3).Raw("abc")  // unknown field: skipped
      .Packed(2).Packed(packed_pos.size()).Raw(packed_pos)
      .Packed(0)
      .str();
}

TEST(DecodeHeartbeatV2Event, FileAndPosition) {
  const std::string body = Heartbeat("binlog.000041", 123456789);
  HeartbeatEvent h;
  ASSERT_TRUE(DecodeHeartbeatV2Event(body, &h).ok());
  EXPECT_EQ(h.log_file, "binlog.000041");
  EXPECT_EQ(h.log_position, 123456789u);
}

TEST(DecodeHeartbeatV2Event, MissingEndMarkIsAccepted) {
  std::string body = Heartbeat("b.1", 4);
  body.pop_back();
  HeartbeatEvent h;
  ASSERT_TRUE(DecodeHeartbeatV2Event(body, &h).ok());
  EXPECT_EQ(h.log_position, 4u);
}

TEST(DecodeHeartbeatV2Event, TruncationAtEveryLength) {
  const std::string full = Heartbeat("binlog.000041", 123456789);
  for (size_t len = 0; len < full.size(); ++len) {
    HeartbeatEvent h;
    const Status s = DecodeHeartbeatV2Event(std::string_view(full).substr(0, len), &h);
    // A cut at a field boundary is a valid shorter heartbeat.
    EXPECT_TRUE(s.ok() || s.IsTruncated()) << len << " " << s.ToString();
  }
}

TEST(DecodeHeartbeatV2Event, BadFieldsAreRejected) {
  HeartbeatEvent h;
  // Position value longer than its packed integer.
  EXPECT_TRUE(DecodeHeartbeatV2Event(Bytes().Packed(2).Packed(2).U8(5).U8(0).Packed(0).str(), &h)
                  .IsCorruption());
  // Length past the end.
  EXPECT_TRUE(DecodeHeartbeatV2Event(Bytes().Packed(1).Packed(100).Raw("x").str(), &h).IsTruncated());
  EXPECT_TRUE(
      DecodeHeartbeatV2Event(Bytes().Packed(1).U8(0xFE).LE(~0ull, 8).Raw("x").str(), &h).IsTruncated());
  EXPECT_TRUE(DecodeHeartbeatV2Event(Bytes().U8(0xFB).str(), &h).IsCorruption());
}

// ======================= TRANSACTION_PAYLOAD header =======================

std::string PayloadBody(std::string_view payload, uint64_t uncompressed, int compression = 0) {
  return Bytes()
      .Packed(2).Packed(1).Packed(compression)
      .Packed(3).Packed(Bytes().Packed(uncompressed).size()).Packed(uncompressed)
      .Packed(1).Packed(Bytes().Packed(payload.size()).size()).Packed(payload.size())
      .Packed(0)
      .Raw(payload)
      .str();
}

TEST(DecodeTransactionPayloadHeader, FieldsAndPayloadView) {
  const std::string payload(451, 'p');
  const std::string body = PayloadBody(payload, 960);
  TransactionPayloadEvent t;
  ASSERT_TRUE(DecodeTransactionPayloadHeader(body, &t).ok());
  EXPECT_EQ(t.compression, 0);
  EXPECT_EQ(t.uncompressed_size, 960u);
  EXPECT_EQ(t.payload_size, 451u);
  EXPECT_EQ(t.payload, payload);
  EXPECT_EQ(t.payload.data(), body.data() + body.size() - 451);  // a view, not a copy
  EXPECT_EQ(body.substr(0, 14), Hex("0201000303fcc0030103fcc30100"));  // as MySQL 8.0.28 writes it
}

TEST(DecodeTransactionPayloadHeader, DefaultsAndUnknownFields) {
  const std::string body = Bytes().Packed(7).Packed(2).Raw("zz").Packed(0).Raw("data").str();
  TransactionPayloadEvent t;
  ASSERT_TRUE(DecodeTransactionPayloadHeader(body, &t).ok());
  EXPECT_EQ(t.compression, 255);
  EXPECT_EQ(t.payload_size, 4u);
  EXPECT_EQ(t.payload, "data");
}

TEST(DecodeTransactionPayloadHeader, TruncationAtEveryLength) {
  const std::string body = PayloadBody("0123456789", 100);
  for (size_t len = 0; len < body.size(); ++len) {
    TransactionPayloadEvent t;
    const Status s = DecodeTransactionPayloadHeader(std::string_view(body).substr(0, len), &t);
    EXPECT_TRUE(s.IsTruncated()) << len << " " << s.ToString();
  }
}

TEST(DecodeTransactionPayloadHeader, BadHeadersAreRejected) {
  TransactionPayloadEvent t;
  // Bytes after the declared payload.
  EXPECT_TRUE(DecodeTransactionPayloadHeader(PayloadBody("abc", 3) + "x", &t).IsCorruption());
  // Compression type beyond one byte.
  EXPECT_TRUE(DecodeTransactionPayloadHeader(
                  Bytes().Packed(2).Packed(3).Packed(256).Packed(0).str(), &t).IsCorruption());
  // Value longer than its packed integer.
  EXPECT_TRUE(DecodeTransactionPayloadHeader(
                  Bytes().Packed(3).Packed(2).U8(5).U8(5).Packed(0).str(), &t).IsCorruption());
  // NULL prefix where a type is expected.
  EXPECT_TRUE(DecodeTransactionPayloadHeader(Bytes().U8(0xFB).str(), &t).IsCorruption());
  // A field length far past the body.
  EXPECT_TRUE(DecodeTransactionPayloadHeader(
                  Bytes().Packed(1).U8(0xFE).LE(1ull << 62, 8).str(), &t).IsTruncated());
}

// ======================= fixture files =======================

TEST(GtidFixtures, TaggedGtidAndTaggedPreviousGtidsMySQL96) {
  CANAL_REQUIRE_FIXTURES();
  Fixture f;
  ASSERT_TRUE(LoadFixture("rust_mysql_common/binlog_transaction_with_GTID_TAG.000001", &f));
  const auto tagged = f.OfType(42);
  ASSERT_EQ(tagged.size(), 1u);
  EXPECT_EQ(tagged[0]->body, kTaggedFixtureBody);
  GtidEvent g;
  const Status s = DecodeGtidTaggedEvent(tagged[0]->body, &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(FormatUuid(g.sid), "55778904-0299-11f1-b1b8-4ef0c4956feb");
  EXPECT_EQ(g.tag, "mytag");
  EXPECT_EQ(g.gno, 3);

  const auto prev = f.OfType(35);
  ASSERT_EQ(prev.size(), 1u);
  PreviousGtidsEvent p;
  const Status ps = DecodePreviousGtidsEvent(prev[0]->body, &p);
  ASSERT_TRUE(ps.ok()) << ps.ToString();
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(p.entries[0].tag, "");
  EXPECT_EQ(p.entries[1].tag, "mytag");
  EXPECT_EQ(p.ToString(), "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-2");
}

TEST(GtidFixtures, UntaggedPreviousGtidsMySQL80) {
  CANAL_REQUIRE_FIXTURES();
  Fixture f;
  ASSERT_TRUE(LoadFixture("rust_mysql_common/binlog_transaction_previous_GTID_no_tag.000001", &f));
  const auto prev = f.OfType(35);
  ASSERT_EQ(prev.size(), 1u);
  PreviousGtidsEvent p;
  ASSERT_TRUE(DecodePreviousGtidsEvent(prev[0]->body, &p).ok());
  EXPECT_EQ(p.ToString(), "b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2");
}

TEST(GtidFixtures, GtidsOfMySQL57) {
  CANAL_REQUIRE_FIXTURES();
  Fixture f;
  ASSERT_TRUE(LoadFixture("mysql-cdc-rs/5.7/33_35_gtid_prev_gtid/log.bin", &f));
  const auto gtids = f.OfType(33);
  ASSERT_EQ(gtids.size(), 3u);
  for (size_t i = 0; i < gtids.size(); ++i) {
    GtidEvent g;
    ASSERT_TRUE(DecodeGtidEvent(gtids[i]->body, false, &g).ok());
    EXPECT_EQ(g.ToString(), std::string(kSidAText) + ":" + std::to_string(i + 1));
    EXPECT_TRUE(g.has_logical_clock);
    EXPECT_EQ(g.last_committed, static_cast<int64_t>(i));
    EXPECT_EQ(g.sequence_number, static_cast<int64_t>(i + 1));
    EXPECT_EQ(g.flags, i < 2 ? 1 : 0);  // the third transaction is row-only
  }
  PreviousGtidsEvent p;
  ASSERT_TRUE(DecodePreviousGtidsEvent(f.OfType(35).at(0)->body, &p).ok());
  EXPECT_EQ(p.ToString(), "");
}

TEST(GtidFixtures, AnonymousGtidWithCommitTimestampsMySQL80) {
  CANAL_REQUIRE_FIXTURES();
  Fixture f;
  ASSERT_TRUE(LoadFixture("mysql-binlog-connector-java/mysql-bin.compressed", &f));
  const auto anon = f.OfType(34);
  ASSERT_EQ(anon.size(), 1u);
  GtidEvent g;
  ASSERT_TRUE(DecodeGtidEvent(anon[0]->body, true, &g).ok());
  EXPECT_TRUE(g.anonymous);
  EXPECT_EQ(g.sequence_number, 1);
  EXPECT_EQ(g.immediate_commit_timestamp, 0x05d965eb018579ull);
  EXPECT_EQ(g.original_commit_timestamp, g.immediate_commit_timestamp);
  // The ANONYMOUS_GTID (79 bytes) plus the TRANSACTION_PAYLOAD (488 bytes).
  EXPECT_EQ(g.transaction_length, 567u);

  const auto payload = f.OfType(40);
  ASSERT_EQ(payload.size(), 1u);
  TransactionPayloadEvent t;
  ASSERT_TRUE(DecodeTransactionPayloadHeader(payload[0]->body, &t).ok());
  EXPECT_EQ(t.compression, 0);
  EXPECT_EQ(t.payload_size, 451u);
  EXPECT_EQ(t.uncompressed_size, 960u);
}

TEST(GtidFixtures, MariaDBGtidsAndXa) {
  CANAL_REQUIRE_FIXTURES();
  Fixture f;
  ASSERT_TRUE(LoadFixture("mariadb-10.11/mariadb-bin.000001", &f));
  const auto gtids = f.OfType(162);
  ASSERT_EQ(gtids.size(), 62u);
  std::vector<std::string> xa_xids;
  for (size_t i = 0; i < gtids.size(); ++i) {
    MariaGtidEvent g;
    const Status s = DecodeMariaGtidEvent(gtids[i]->body, gtids[i]->server_id, &g);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(g.ToString(), "0-1-" + std::to_string(i + 1));
    if (!g.xa_xid.empty()) xa_xids.emplace_back(g.xa_xid);
  }
  EXPECT_EQ(xa_xids, (std::vector<std::string>{"xa_cdc_1", "xa_cdc_1", "xa_cdc_2", "xa_cdc_2"}));

  MariaGtidListEvent l;
  ASSERT_TRUE(DecodeMariaGtidListEvent(f.OfType(163).at(0)->body, &l).ok());
  EXPECT_TRUE(l.gtids.empty());

  const auto xa = f.OfType(38);
  ASSERT_EQ(xa.size(), 2u);
  for (size_t i = 0; i < xa.size(); ++i) {
    XaPrepareEvent x;
    ASSERT_TRUE(DecodeXaPrepareEvent(xa[i]->body, &x).ok());
    EXPECT_FALSE(x.one_phase);
    EXPECT_EQ(x.format_id, 1);
    EXPECT_EQ(x.gtrid, "xa_cdc_" + std::to_string(i + 1));
    EXPECT_EQ(x.bqual, "");
  }
}

TEST(GtidFixtures, MariaDBSecondDomainAndGtidList) {
  CANAL_REQUIRE_FIXTURES();
  Fixture f;
  ASSERT_TRUE(LoadFixture("mariadb-10.11/mariadb-bin.000003", &f));
  MariaGtidListEvent l;
  ASSERT_TRUE(DecodeMariaGtidListEvent(f.OfType(163).at(0)->body, &l).ok());
  EXPECT_EQ(l.ToString(), "0-1-68");
  std::vector<std::string> seen;
  for (const FixtureEvent* e : f.OfType(162)) {
    MariaGtidEvent g;
    ASSERT_TRUE(DecodeMariaGtidEvent(e->body, e->server_id, &g).ok());
    seen.push_back(g.ToString());
  }
  ASSERT_EQ(seen.size(), 16u);
  EXPECT_EQ(seen[0], "0-1-69");
  EXPECT_NE(std::find(seen.begin(), seen.end(), "2-1-1000"), seen.end());
  EXPECT_EQ(seen.back(), "0-1-83");
}

// Every GTID-family event in every fixture binlog decodes.
TEST(GtidFixtures, EveryGtidFamilyEventInEveryFixtureDecodes) {
  CANAL_REQUIRE_FIXTURES();
  size_t decoded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(FixtureDir())) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    char magic[4] = {};
    if (!in.read(magic, 4) || std::string_view(magic, 4) != std::string_view("\xfe" "bin", 4)) {
      continue;
    }
    const std::string rel = std::filesystem::relative(entry.path(), FixtureDir()).string();
    // Pre-GA type numbering (types 20-22 mean other things there).
    if (rel.find("wl2325") != std::string::npos) continue;
    Fixture f;
    ASSERT_TRUE(LoadFixture(rel, &f));
    for (const FixtureEvent& e : f.events) {
      Status s;
      switch (e.type) {
        case 33: { GtidEvent g; s = DecodeGtidEvent(e.body, false, &g); break; }
        case 34: { GtidEvent g; s = DecodeGtidEvent(e.body, true, &g); break; }
        case 35: { PreviousGtidsEvent p; s = DecodePreviousGtidsEvent(e.body, &p); break; }
        case 38: { XaPrepareEvent x; s = DecodeXaPrepareEvent(e.body, &x); break; }
        case 40: { TransactionPayloadEvent t; s = DecodeTransactionPayloadHeader(e.body, &t); break; }
        case 42: { GtidEvent g; s = DecodeGtidTaggedEvent(e.body, &g); break; }
        case 162: { MariaGtidEvent g; s = DecodeMariaGtidEvent(e.body, e.server_id, &g); break; }
        case 163: { MariaGtidListEvent l; s = DecodeMariaGtidListEvent(e.body, &l); break; }
        default: continue;
      }
      EXPECT_TRUE(s.ok()) << rel << " @" << e.offset << " type " << int(e.type) << ": " << s.ToString();
      ++decoded;
    }
  }
  EXPECT_GT(decoded, 500u);
}

}  // namespace
}  // namespace canal::binlog
