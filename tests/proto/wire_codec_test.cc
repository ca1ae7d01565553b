// The hand-written wire primitives (canal/proto/wire.h) against protobuf's own
// encoder: varints at every length boundary, sign-extended int32, tags,
// length-delimited fields and the copy behind them; and the reader on good
// bytes and on every kind of malformed bytes.
#include "canal/proto/wire.h"

#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/packet.pb.h"

namespace canal::proto::wire {
namespace {

std::string ProtobufVarint(uint64_t v) {
  std::string s;
  {
    google::protobuf::io::StringOutputStream zs(&s);
    google::protobuf::io::CodedOutputStream cs(&zs);
    cs.WriteVarint64(v);
  }
  return s;
}

TEST(WireCodec, VarintsMatchProtobufAtEveryLengthBoundary) {
  std::vector<uint64_t> values = {0, 1, 127, 128, 16383, 16384, (1u << 21) - 1, 1u << 21, (1u << 28) - 1,
                                  1u << 28, uint64_t{1} << 35, uint64_t{1} << 63, ~uint64_t{0}};
  for (uint64_t v : values) {
    char buf[10];
    char* end = WriteVarint(v, buf);
    const std::string mine(buf, static_cast<size_t>(end - buf));
    EXPECT_EQ(mine, ProtobufVarint(v)) << v;
    EXPECT_EQ(VarintSize(v), mine.size()) << v;
    EXPECT_EQ(VarintSize(v), google::protobuf::io::CodedOutputStream::VarintSize64(v)) << v;
  }
}

TEST(WireCodec, NegativeInt32IsWrittenSignExtendedToTenBytesAsProtobufDoes) {
  entry::Column c;
  c.set_sqltype(-6);  // TINYINT
  std::string field;
  AppendVarintField(2, Int32Bits(-6), &field);
  EXPECT_EQ(field.size(), 11u);
  EXPECT_EQ(field, c.SerializeAsString());
}

TEST(WireCodec, NegativeInt64IsItsTwosComplement) {
  protocol::Messages m;
  m.set_batch_id(-1);
  std::string field;
  AppendVarintField(1, Int64Bits(-1), &field);
  EXPECT_EQ(field, m.SerializeAsString());
}

TEST(WireCodec, FieldsWithTagsLengthsAndBytes) {
  entry::Column c;
  c.set_name(std::string(300, 'n'));
  std::string field;
  AppendBytesField(3, std::string(300, 'n'), &field);
  EXPECT_EQ(field, c.SerializeAsString());
  EXPECT_EQ(DelimitedSize(300), field.size());
  EXPECT_EQ(Tag(12, kLengthDelimited), 98);
  EXPECT_EQ(Tag(1, kVarint), 8);
}

// WriteBytes picks its copy by size: every size around its boundaries, each
// byte in place and nothing written past the end.
TEST(WireCodec, WriteDelimitedCopiesEverySizeExactly) {
  for (size_t n = 0; n <= 70; ++n) {
    std::string value;
    for (size_t i = 0; i < n; ++i) value.push_back(static_cast<char>('a' + i % 26));
    std::string buf(DelimitedSize(n) + 8, '#');
    char* end = WriteDelimited(Tag(8, kLengthDelimited), value, buf.data());
    ASSERT_EQ(static_cast<size_t>(end - buf.data()), DelimitedSize(n)) << n;
    entry::Column c;
    c.set_value(value);
    // proto3 leaves an empty string out; the field itself is tag and length 0.
    const std::string want = n == 0 ? std::string("\x42\x00", 2) : c.SerializeAsString();
    EXPECT_EQ(buf.substr(0, DelimitedSize(n)), want) << n;
    EXPECT_EQ(buf.substr(DelimitedSize(n)), std::string(8, '#')) << "written past the field, size " << n;
  }
}

TEST(WireReader, ReadsVarintAndLengthDelimitedFieldsAsViews) {
  protocol::Messages m;
  m.set_batch_id(300);
  m.add_messages("first");
  m.add_messages("");
  const std::string bytes = m.SerializeAsString();
  WireReader r(bytes, 0);
  Field f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.number, 1u);
  EXPECT_EQ(f.wire_type, kVarint);
  EXPECT_EQ(f.varint, 300u);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.number, 2u);
  EXPECT_EQ(f.wire_type, kLengthDelimited);
  EXPECT_EQ(f.bytes, "first");
  EXPECT_EQ(f.bytes.data(), bytes.data() + 5) << "a view into the bytes (after 08 ac 02 12 05), not a copy";
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.bytes, "");
  EXPECT_FALSE(r.Next(&f));
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(r.pos(), bytes.size());
}

TEST(WireReader, SkipsFixedWidthFields) {
  const std::string bytes = std::string("\x09", 1) + std::string(8, '\0') + std::string("\x15", 1) +
                            std::string(4, '\0') + std::string("\x08\x07", 2);
  WireReader r(bytes, 0);
  Field f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.wire_type, kFixed64);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.wire_type, kFixed32);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.varint, 7u);
  EXPECT_FALSE(r.Next(&f));
  EXPECT_FALSE(r.failed());
}

TEST(WireReader, TenByteVarintDropsTheBitsPast64AsProtobufDoes) {
  const std::string bytes = "\x08" + ProtobufVarint(~uint64_t{0});
  WireReader r(bytes, 0);
  Field f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.varint, ~uint64_t{0});
}

struct Malformed {
  const char* what;
  std::string bytes;
  const char* problem;
};

TEST(WireReader, MalformedBytesFailSayingWhatAndWhere) {
  const std::vector<Malformed> cases = {
      {"tag cut short", std::string("\x80", 1), "a tag's varint runs past the end"},
      {"varint cut short", std::string("\x08\xff", 2), "a varint runs past the end"},
      {"varint of 11 bytes", "\x08" + std::string(10, '\xff') + std::string("\x01", 1), "beyond 10 bytes"},
      {"length past the end", std::string("\x12\x05" "abc", 5), "longer than the bytes left (5 declared)"},
      {"length cut short", std::string("\x12\x80", 2), "a length's varint runs past the end"},
      {"fixed64 cut short", std::string("\x09\x00\x00", 3), "a 64-bit field runs past the end"},
      {"fixed32 cut short", std::string("\x0d\x00", 2), "a 32-bit field runs past the end"},
      {"group start", std::string("\x0b", 1), "a group"},
      {"group end", std::string("\x0c", 1), "a group"},
      {"wire type 6", std::string("\x0e", 1), "an invalid wire type"},
      {"wire type 7", std::string("\x0f", 1), "an invalid wire type"},
      {"field number 0", std::string("\x00\x01", 2), "field number 0"},
      {"tag above 32 bits", "\x80\x80\x80\x80\x80\x01" + std::string(), "a tag is above 32 bits"},
  };
  for (const Malformed& c : cases) {
    const std::string bytes = "\x08\x01" + c.bytes;  // one good field first: the problem is at byte 2
    WireReader r(bytes, 0);
    Field f;
    ASSERT_TRUE(r.Next(&f)) << c.what;
    EXPECT_FALSE(r.Next(&f)) << c.what;
    EXPECT_TRUE(r.failed()) << c.what;
    EXPECT_FALSE(r.Next(&f)) << c.what << ": a failed reader stays at the end";
    const Status s = r.Error("canal.test.Thing");
    EXPECT_TRUE(s.IsCorruption()) << c.what;
    EXPECT_NE(s.message().find("malformed canal.test.Thing: "), std::string_view::npos) << s.ToString();
    EXPECT_NE(s.message().find(c.problem), std::string_view::npos) << c.what << ": " << s.ToString();
    EXPECT_NE(s.message().find("at byte 2 of " + std::to_string(bytes.size())), std::string_view::npos)
        << c.what << ": " << s.ToString();
  }
}

}  // namespace
}  // namespace canal::proto::wire
