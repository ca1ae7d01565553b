// GtidSet (parser/binlog/gtid_set.h): the one GTID set type, MySQL's sets and
// MariaDB's positions: parse, print, the dump's binary form both ways,
// contains and subtract (what following a failover asks), and bad input.
#include <gtest/gtest.h>

#include <string>

#include "canal/parser/binlog/gtid_set.h"

namespace canal::binlog {
namespace {

constexpr const char* kA = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
constexpr const char* kB = "00000000-0000-0000-0000-0000000000aa";

GtidSet Set(const std::string& text) {
  GtidSet s;
  const Status st = GtidSet::Parse(text, &s);
  EXPECT_TRUE(st.ok()) << text << ": " << st.ToString();
  return s;
}

TEST(GtidSet, MysqlSetsPrintInCanonicalForm) {
  EXPECT_EQ(Set("3E11FA47-71CA-11E1-9E33-C80AA9429562:7:1-5").ToString(), std::string(kA) + ":1-5:7");
  // Repeated uuids and overlapping or touching intervals merge; uuids keep their first place.
  EXPECT_EQ(Set(std::string(kA) + ":4-9,\n " + kB + ":3, 3e11fa4771ca11e19e33c80aa9429562:1-5:10").ToString(),
            std::string(kA) + ":1-10," + kB + ":3");
  EXPECT_TRUE(Set(std::string(kA) + ":1," + kB + ":2") == Set(std::string(kB) + ":2," + kA + ":1"));
  // Tags (MySQL 8.4): lower-cased, after the uuid's untagged intervals, sorted.
  EXPECT_EQ(Set(std::string(kA) + ":Zed:1-2:1-3," + kB + ":1," + kA + ":alpha:5").ToString(),
            std::string(kA) + ":alpha:5:zed:1-3," + kB + ":1");
  EXPECT_EQ(Set(std::string(kA) + ":1:t:2").ToString(), std::string(kA) + ":1:t:2");
  EXPECT_TRUE(Set("").empty());
  EXPECT_TRUE(Set("  \n").empty());
  EXPECT_EQ(Set("").ToString(), "");
}

TEST(GtidSet, MariadbPositionsPrintSortedByDomain) {
  const GtidSet p = Set("2-7-30, 0-1-100");
  EXPECT_EQ(p.flavor(), GtidSet::Flavor::kMariadb);
  EXPECT_EQ(p.ToString(), "0-1-100,2-7-30");
}

// AppendTo adds the text after what the buffer holds (its first domain without a comma), and
// a cleared buffer reused for another set holds that set's text alone.
TEST(GtidSet, AppendToAddsTheTextAfterWhatIsThere) {
  std::string text = "state ";
  Set("2-7-30, 0-1-100").AppendTo(&text);
  EXPECT_EQ(text, "state 0-1-100,2-7-30");
  text.clear();
  Set(std::string(kA) + ":1-5:7," + kB + ":3").AppendTo(&text);
  EXPECT_EQ(text, Set(std::string(kA) + ":1-5:7," + kB + ":3").ToString());
  text.clear();
  Set("0-1-5").AppendTo(&text);
  EXPECT_EQ(text, "0-1-5");
  text.clear();
  Set("").AppendTo(&text);
  EXPECT_EQ(text, "");
}

TEST(GtidSet, TheDumpsBinaryFormRoundTrips) {
  const GtidSet s = Set(std::string(kA) + ":1-5:7," + kB + ":3");
  std::string bytes;
  ASSERT_TRUE(s.EncodeForDump(&bytes).ok());
  EXPECT_EQ(bytes.size(), 8u + (16 + 8 + 2 * 16) + (16 + 8 + 16));
  GtidSet back;
  ASSERT_TRUE(GtidSet::DecodeFromDump(bytes, &back).ok());
  EXPECT_TRUE(back == s);
  EXPECT_EQ(back.ToString(), s.ToString());
  std::string empty;
  ASSERT_TRUE(GtidSet().EncodeForDump(&empty).ok());
  EXPECT_EQ(empty, std::string(8, '\0'));
}

TEST(GtidSet, ContainsAndSubtractOnMysqlSets) {
  const GtidSet shipped = Set(std::string(kA) + ":1-100," + kB + ":1-5");
  const GtidSet behind = Set(std::string(kA) + ":1-97:99," + kB + ":1-5");
  const GtidSet ahead = Set(std::string(kA) + ":1-200," + kB + ":1-9");
  EXPECT_TRUE(ahead.Contains(shipped));
  EXPECT_FALSE(behind.Contains(shipped));
  EXPECT_TRUE(shipped.Contains(behind));
  EXPECT_TRUE(shipped.Contains(GtidSet()));
  GtidSet lost;
  ASSERT_TRUE(shipped.Subtract(behind, &lost).ok());
  EXPECT_EQ(lost.ToString(), std::string(kA) + ":98:100");
  ASSERT_TRUE(shipped.Subtract(ahead, &lost).ok());
  EXPECT_TRUE(lost.empty());
  ASSERT_TRUE(shipped.Subtract(Set(std::string(kA) + ":50-60"), &lost).ok());
  EXPECT_EQ(lost.ToString(), std::string(kA) + ":1-49:61-100," + kB + ":1-5");
}

TEST(GtidSet, ContainsAndSubtractOnMariadbPositions) {
  const GtidSet shipped = Set("0-1-100,1-2-7");
  EXPECT_TRUE(Set("0-3-100,1-2-9").Contains(shipped));  // another server id, the same sequence: held
  EXPECT_FALSE(Set("0-1-99,1-2-9").Contains(shipped));
  EXPECT_FALSE(Set("0-1-100").Contains(shipped));       // domain 1 missing
  GtidSet lost;
  ASSERT_TRUE(shipped.Subtract(Set("0-1-99,1-2-7"), &lost).ok());
  EXPECT_EQ(lost.ToString(), "0-1-100");
}

TEST(GtidSet, AddingTransactionsGrowsTheSet) {
  GtidSet s;
  std::array<uint8_t, 16> sid{};
  sid[15] = 0xaa;
  for (int64_t g = 1; g <= 1000; ++g) ASSERT_TRUE(s.AddMysql(sid, "", g).ok());
  ASSERT_TRUE(s.AddMysql(sid, "", 1002).ok());
  EXPECT_EQ(s.ToString(), std::string(kB) + ":1-1000:1002");
  ASSERT_TRUE(s.AddMysql(sid, "", 1001).ok());
  EXPECT_EQ(s.ToString(), std::string(kB) + ":1-1002");
  GtidSet m;
  ASSERT_TRUE(m.AddMariadb(0, 1, 5).ok());
  ASSERT_TRUE(m.AddMariadb(0, 2, 6).ok());
  ASSERT_TRUE(m.AddMariadb(0, 1, 4).ok());  // older: the domain keeps its last
  EXPECT_EQ(m.ToString(), "0-2-6");
  ASSERT_TRUE(m.Add(Set("1-1-3")).ok());
  EXPECT_EQ(m.ToString(), "0-2-6,1-1-3");
}

TEST(GtidSet, FlavorsDoNotMix) {
  GtidSet mysql = Set(std::string(kA) + ":1");
  const GtidSet maria = Set("0-1-1");
  EXPECT_FALSE(mysql.Contains(maria));
  EXPECT_FALSE(maria.Contains(mysql));
  GtidSet out;
  EXPECT_EQ(mysql.Subtract(maria, &out).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(mysql.Add(maria).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(mysql.AddMariadb(0, 1, 2).code(), Status::Code::kInvalidArgument);
  std::string bytes;
  EXPECT_FALSE(maria.EncodeForDump(&bytes).ok());
}

TEST(GtidSet, TaggedSetsUseMysql84sTaggedDumpForm) {
  const GtidSet s = Set(std::string(kA) + ":1-5:Blue:3-4," + kB + ":7");
  std::string bytes;
  ASSERT_TRUE(s.EncodeForDump(&bytes).ok());
  // Count word: format 1 at both ends, three sources (A untagged, A "blue", B) between.
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 1);
  EXPECT_EQ(static_cast<uint8_t>(bytes[1]), 3);
  EXPECT_EQ(static_cast<uint8_t>(bytes[7]), 1);
  EXPECT_EQ(bytes.size(), 8u + (16 + 1 + 8 + 16) + (16 + 1 + 4 + 8 + 16) + (16 + 1 + 8 + 16));
  GtidSet back;
  ASSERT_TRUE(GtidSet::DecodeFromDump(bytes, &back).ok());
  EXPECT_TRUE(back == s);
  EXPECT_EQ(back.ToString(), s.ToString());
  // An untagged set keeps the form every server reads.
  ASSERT_TRUE(Set(std::string(kA) + ":1-5").EncodeForDump(&bytes).ok());
  EXPECT_EQ(static_cast<uint8_t>(bytes[7]), 0);
}

TEST(GtidSet, BadTaggedDumpFormsAreRefused) {
  auto le = [](uint64_t v) {
    std::string s;
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
    return s;
  };
  const uint64_t one_tagged = (uint64_t{1} << 56) | (uint64_t{1} << 8) | 1;
  const std::string sid(16, '\x11');
  GtidSet s;
  // A source count the bytes cannot hold.
  EXPECT_EQ(GtidSet::DecodeFromDump(le((uint64_t{1} << 56) | (uint64_t{1} << 40) | 1), &s).code(),
            Status::Code::kCorruption);
  // A tag longer than 32, an odd (multi-byte) length, a truncated tag, bad characters.
  EXPECT_EQ(GtidSet::DecodeFromDump(le(one_tagged) + sid + std::string(1, 66 << 1) + std::string(66, 'a') + le(0), &s)
                .code(),
            Status::Code::kCorruption);
  EXPECT_EQ(GtidSet::DecodeFromDump(le(one_tagged) + sid + "\x03" + le(0), &s).code(), Status::Code::kCorruption);
  EXPECT_EQ(GtidSet::DecodeFromDump(le(one_tagged) + sid + "\x40" + std::string(10, 'a'), &s).code(), Status::Code::kTruncated);
  EXPECT_EQ(GtidSet::DecodeFromDump(le(one_tagged) + sid + "\x04" "a-" + le(0), &s).code(), Status::Code::kCorruption);
  // An interval count past the end.
  EXPECT_EQ(GtidSet::DecodeFromDump(le(one_tagged) + sid + "\x02t" + le(1000), &s).code(),
            Status::Code::kCorruption);
  // A good one-source tagged set with no intervals decodes.
  EXPECT_TRUE(GtidSet::DecodeFromDump(le(one_tagged) + sid + "\x02t" + le(0), &s).ok());
}

TEST(GtidSet, BadTextIsRefusedNamingTheElement) {
  const std::string a = kA;
  const std::string bad[] = {
      a,                                  // uuid alone
      "3E11FA47-71CA-11E1-9E33:1-5",     // short uuid
      a + ":0-5", a + ":5-1", a + ":1-", a + ":1-5:", a + ":1-99999999999999999999",
      a + ":1-9223372036854775807",      // 2^63-1 is past the last gno
      a + ":1-5,,", a + ":1,", ",",
      a + ":9tag:1", a + ":" + std::string(33, 't') + ":1", a + ":tag",  // bad or lone tags
      "0-1", "0-1-x", "1-2-3,1-4-5",      // MariaDB: short, not a number, a domain twice
      "4294967296-1-1",
  };
  for (const std::string& text : bad) {
    GtidSet s;
    const Status st = GtidSet::Parse(text, &s);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(st.message().find("bad GTID set element"), std::string_view::npos) << text << ": " << st.ToString();
  }
}

TEST(GtidSet, BadBinaryIsRefusedWithoutAllocatingForIt) {
  GtidSet s;
  auto le = [](uint64_t v) {
    std::string out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
    return out;
  };
  EXPECT_FALSE(GtidSet::DecodeFromDump("", &s).ok());
  EXPECT_EQ(GtidSet::DecodeFromDump(le(uint64_t{1} << 60), &s).code(), Status::Code::kCorruption);
  const std::string sid(16, 'x');
  EXPECT_EQ(GtidSet::DecodeFromDump(le(1) + sid + le(uint64_t{1} << 59), &s).code(), Status::Code::kCorruption);
  EXPECT_EQ(GtidSet::DecodeFromDump(le(1) + sid + le(1) + le(5) + le(5), &s).code(), Status::Code::kCorruption);
  EXPECT_EQ(GtidSet::DecodeFromDump(le(1) + sid + le(1) + le(0) + le(5), &s).code(), Status::Code::kCorruption);
  EXPECT_EQ(GtidSet::DecodeFromDump(le(1) + sid + le(1) + le(1), &s).code(), Status::Code::kCorruption);
  EXPECT_EQ(GtidSet::DecodeFromDump("\x01\x00", &s).code(), Status::Code::kTruncated);
  EXPECT_EQ(GtidSet::DecodeFromDump(le(0) + "x", &s).code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace canal::binlog
