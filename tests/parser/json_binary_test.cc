// AppendJsonText: MySQL binary JSON rendered as MySQL prints it.
//
// Fixtures: msmp's jsonb.terms (27 binary encodings captured from MySQL 8.0.34
// with their decoded values, in Erlang term syntax) and rust_mysql_common's
// json-opaque.binlog (MySQL 9.0.1 rows holding opaque DATE/DATETIME/TIME/
// DECIMAL/VARCHAR values inside JSON).

#include "canal/parser/binlog/json_binary.h"

#include <gtest/gtest.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fixtures.h"
#include "support/json_binary_builder.h"

namespace canal::binlog {
namespace {

namespace jb = ::canal::testing::jb;
using ::canal::testing::ReadFileToString;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

// Renders `binary`; on error returns "ERROR: <status>".
std::string Render(std::string_view binary) {
  std::string out;
  Status s = AppendJsonText(binary, &out);
  if (!s.ok()) return "ERROR: " + s.ToString();
  return out;
}

// ------------------------------------------------------------ scalars

TEST(JsonBinaryTest, EmptyColumnIsNull) { EXPECT_EQ(Render(""), "null"); }

TEST(JsonBinaryTest, LiteralsRender) {
  EXPECT_EQ(Render(jb::Null()), "null");
  EXPECT_EQ(Render(jb::True()), "true");
  EXPECT_EQ(Render(jb::False()), "false");
}

TEST(JsonBinaryTest, IntegersRenderWithTheirSignedness) {
  EXPECT_EQ(Render(jb::Int16(-1)), "-1");
  EXPECT_EQ(Render(jb::Int16(-32768)), "-32768");
  EXPECT_EQ(Render(jb::Uint16(65535)), "65535");
  EXPECT_EQ(Render(jb::Int32(-2147483647 - 1)), "-2147483648");
  EXPECT_EQ(Render(jb::Uint32(4294967295u)), "4294967295");
  EXPECT_EQ(Render(jb::Int64(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(Render(jb::Uint64(UINT64_MAX)), "18446744073709551615");
}

TEST(JsonBinaryTest, DoublesRenderLikeMysqlGcvt) {
  EXPECT_EQ(Render(jb::Double(3.14)), "3.14");
  EXPECT_EQ(Render(jb::Double(1.0)), "1.0");  // ".0" keeps integral doubles doubles
  EXPECT_EQ(Render(jb::Double(0.0)), "0.0");
  EXPECT_EQ(Render(jb::Double(-0.0)), "-0.0");
  EXPECT_EQ(Render(jb::Double(-2.5)), "-2.5");
  EXPECT_EQ(Render(jb::Double(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(Render(jb::Double(100000000000000.0)), "100000000000000.0");  // 1e14: fixed
  EXPECT_EQ(Render(jb::Double(1e15)), "1e15");                            // 16 digits: e-format
  EXPECT_EQ(Render(jb::Double(1234567890123456.7)), "1234567890123456.8");  // digits pass the point
  EXPECT_EQ(Render(jb::Double(0.0001)), "0.0001");
  EXPECT_EQ(Render(jb::Double(1e-15)), "0.000000000000001");
  EXPECT_EQ(Render(jb::Double(1e-16)), "1e-16");
  EXPECT_EQ(Render(jb::Double(-1.5e300)), "-1.5e300");
  EXPECT_EQ(Render(jb::Double(1.7976931348623157e308)), "1.7976931348623157e308");
  EXPECT_EQ(Render(jb::Double(5e-324)), "5e-324");
}

TEST(JsonBinaryTest, NonFiniteDoubleIsCorruption) {
  const std::string inf = jb::Double(std::numeric_limits<double>::infinity());
  EXPECT_EQ(Render(inf).rfind("ERROR: Corruption", 0), 0u);
  const std::string nan = jb::Double(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(Render(nan).rfind("ERROR: Corruption", 0), 0u);
}

TEST(JsonBinaryTest, StringsAreEscapedLikeMysql) {
  // Only '"', '\\' and control characters are escaped; '/' and UTF-8 pass through.
  EXPECT_EQ(Render(jb::Str("a\"b\\c\n\t\b\f\r/\x01\x1f\xc3\xa9")),
            "\"a\\\"b\\\\c\\n\\t\\b\\f\\r/\\u0001\\u001f\xc3\xa9\"");
  EXPECT_EQ(Render(jb::Str("")), "\"\"");
}

TEST(JsonBinaryTest, LongStringUsesMultiByteLength) {
  const std::string text(300, 'x');
  ASSERT_EQ(jb::Str(text).substr(1, 2), Bytes({0xac, 0x02}));
  EXPECT_EQ(Render(jb::Str(text)), "\"" + text + "\"");
}

// ------------------------------------------------------------ containers

TEST(JsonBinaryTest, ContainersUseMysqlSeparators) {
  const std::string doc =
      jb::Object({{"a", jb::Int16(1)}, {"b", jb::Array({jb::Int16(1), jb::Int16(2)})}});
  EXPECT_EQ(Render(doc), "{\"a\": 1, \"b\": [1, 2]}");
  EXPECT_EQ(Render(jb::Object({})), "{}");
  EXPECT_EQ(Render(jb::Array({})), "[]");
}

TEST(JsonBinaryTest, SmallContainersInlineOnlySixteenBitValues) {
  const std::string doc = jb::Array({jb::Null(), jb::True(), jb::Int16(-7), jb::Uint16(7),
                                     jb::Int32(100000), jb::Uint32(4000000000u),
                                     jb::Str("s"), jb::Double(0.5)});
  EXPECT_EQ(Render(doc), "[null, true, -7, 7, 100000, 4000000000, \"s\", 0.5]");
}

TEST(JsonBinaryTest, LargeContainersInlineThirtyTwoBitValues) {
  const std::string doc =
      jb::Object({{"i", jb::Int32(-100000)}, {"u", jb::Uint32(4000000000u)},
                  {"arr", jb::Array({jb::Int32(5), jb::Str("x")}, /*large=*/true)}},
                 /*large=*/true);
  ASSERT_EQ(doc[0], '\x01');
  EXPECT_EQ(Render(doc), "{\"i\": -100000, \"u\": 4000000000, \"arr\": [5, \"x\"]}");
}

TEST(JsonBinaryTest, MembersKeepStoredOrder) {
  // MySQL stores keys sorted by length then bytes; rendering keeps that order.
  const std::string doc = jb::Object({{"b", jb::Int16(1)}, {"aa", jb::Int16(2)}});
  EXPECT_EQ(Render(doc), "{\"b\": 1, \"aa\": 2}");
}

TEST(JsonBinaryTest, KeysAreEscaped) {
  EXPECT_EQ(Render(jb::Object({{"a\"\n", jb::Null()}})), "{\"a\\\"\\n\": null}");
}

TEST(JsonBinaryTest, NestingOfOneHundredLevelsIsAccepted) {
  std::string doc = jb::Int16(1);
  for (int i = 0; i < 100; ++i) doc = jb::Array({doc});
  EXPECT_EQ(Render(doc), std::string(100, '[') + "1" + std::string(100, ']'));
}

TEST(JsonBinaryTest, NestingDeeperThanOneHundredIsCorruption) {
  std::string doc = jb::Int16(1);
  for (int i = 0; i < 101; ++i) doc = jb::Array({doc});
  const std::string r = Render(doc);
  EXPECT_EQ(r.rfind("ERROR: Corruption", 0), 0u) << r;
  EXPECT_NE(r.find("deeper than 100"), std::string::npos) << r;
}

// ------------------------------------------------------------ opaque values

std::string Packed(int64_t v) { return jb::Le(static_cast<uint64_t>(v), 8); }
int64_t DateTimePacked(int y, int mo, int d, int h, int mi, int s, int us) {
  const int64_t ymd = ((int64_t(y) * 13 + mo) << 5) | d;
  const int64_t hms = (int64_t(h) << 12) | (mi << 6) | s;
  return (((ymd << 17) | hms) << 24) + us;
}
int64_t TimePacked(bool neg, int h, int mi, int s, int us) {
  const int64_t v = ((int64_t((h << 12) | (mi << 6) | s)) << 24) + us;
  return neg ? -v : v;
}

TEST(JsonBinaryTest, TemporalOpaquesRenderAsMysqlStrings) {
  EXPECT_EQ(Render(jb::Opaque(10, Packed(DateTimePacked(2012, 3, 18, 0, 0, 0, 0)))),
            "\"2012-03-18\"");
  EXPECT_EQ(Render(jb::Opaque(12, Packed(DateTimePacked(2012, 3, 18, 11, 30, 45, 0)))),
            "\"2012-03-18 11:30:45.000000\"");
  EXPECT_EQ(Render(jb::Opaque(7, Packed(DateTimePacked(1999, 12, 31, 23, 59, 59, 123456)))),
            "\"1999-12-31 23:59:59.123456\"");
  EXPECT_EQ(Render(jb::Opaque(11, Packed(TimePacked(false, 87, 31, 46, 654321)))),
            "\"87:31:46.654321\"");
  EXPECT_EQ(Render(jb::Opaque(11, Packed(TimePacked(true, 838, 59, 59, 0)))),
            "\"-838:59:59.000000\"");
  EXPECT_EQ(Render(jb::Opaque(11, Packed(TimePacked(true, 0, 0, 1, 500000)))),
            "\"-00:00:01.500000\"");
  EXPECT_EQ(Render(jb::Opaque(10, Packed(0))), "\"0000-00-00\"");
}

TEST(JsonBinaryTest, TemporalOpaqueOfWrongSizeIsCorruption) {
  const std::string r = Render(jb::Array({jb::Opaque(10, "1234567")}));
  EXPECT_EQ(r.rfind("ERROR: Corruption", 0), 0u) << r;
  EXPECT_NE(r.find("at byte 8"), std::string::npos) << r;  // the opaque value's data
  // Fraction above 999999 cannot come from MySQL.
  EXPECT_EQ(Render(jb::Opaque(11, Packed(1000000))).rfind("ERROR: Corruption", 0), 0u);
}

TEST(JsonBinaryTest, DecimalOpaquesRenderAsBareNumbers) {
  // precision, scale, then MySQL binary decimal.
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({6, 3, 0x80, 0x7b, 0x01, 0xc8}))), "123.456");
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({3, 2, 0x89, 0x00}))), "9.00");
  // DECIMAL(5,2) -1.50: bytes of +1.50 (0x80 0x01 0x32) inverted.
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({5, 2, 0x7f, 0xfe, 0xcd}))), "-1.50");
  // DECIMAL(2,2) 0.05: no integer digits, still printed with a leading zero.
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({2, 2, 0x85}))), "0.05");
  // DECIMAL(20,10) 1234567890.0123456789: a 1-digit group, then 9-digit groups.
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({20, 10, 0x81, 0x0d, 0xfb, 0x38, 0xd2, 0x00,
                                          0xbc, 0x61, 0x4e, 0x09}))),
            "1234567890.0123456789");
  EXPECT_EQ(Render(jb::Array({jb::Opaque(246, Bytes({3, 2, 0x89, 0x00}))})), "[9.00]");
}

TEST(JsonBinaryTest, MalformedDecimalOpaqueIsCorruption) {
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({3, 2, 0x89}))).rfind("ERROR: Corruption", 0), 0u);
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({0, 0}))).rfind("ERROR: Corruption", 0), 0u);
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({66, 0}))).rfind("ERROR: Corruption", 0), 0u);
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({2}))).rfind("ERROR: Corruption", 0), 0u);
  // A 2-digit group holding 255 is not a decimal digit group.
  EXPECT_EQ(Render(jb::Opaque(246, Bytes({2, 0, 0xff}))).rfind("ERROR: Corruption", 0), 0u);
}

TEST(JsonBinaryTest, VarStringOpaqueRendersAsString) {
  EXPECT_EQ(Render(jb::Opaque(253, "hi\"")), "\"hi\\\"\"");
}

TEST(JsonBinaryTest, OtherOpaquesRenderAsBase64WithMysqlLineBreaks) {
  EXPECT_EQ(Render(jb::Opaque(15, "U")), "\"base64:type15:VQ==\"");
  EXPECT_EQ(Render(jb::Opaque(252, "")), "\"base64:type252:\"");
  // MySQL's base64 breaks lines after 76 characters (57 input bytes).
  const std::string data(58, 'a');
  std::string expected_b64;
  for (int i = 0; i < 19; ++i) expected_b64 += "YWFh";
  expected_b64 += "\\nYQ==";
  EXPECT_EQ(Render(jb::Opaque(252, data)), "\"base64:type252:" + expected_b64 + "\"");
}

// ------------------------------------------------------------ corruption

bool IsCorruptionAt(const std::string& rendered, size_t offset) {
  return rendered.rfind("ERROR: Corruption", 0) == 0 &&
         rendered.find("at byte " + std::to_string(offset)) != std::string::npos;
}

TEST(JsonBinaryTest, TruncatedScalarsAreCorruption) {
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x05, 0x01})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x07, 1, 2, 3})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0b, 1, 2, 3, 4, 5, 6, 7})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x04})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0c, 5, 'a', 'b'})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0c})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0f})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0f, 15, 3, 'a'})), 2));
}

TEST(JsonBinaryTest, BadVariableLengthsAreCorruption) {
  // More than five length bytes, and a length beyond 32 bits.
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0c, 0xff, 0xff, 0xff, 0xff, 0x7f})), 1));
  // Continuation bit on the last available byte.
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0c, 0x81})), 1));
}

TEST(JsonBinaryTest, UnknownTypesAndLiteralsAreCorruption) {
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x0d, 0})), 1));
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x04, 3})), 1));
  // Unknown type inside an array entry names the entry's value position.
  const std::string doc = Bytes({0x02, 1, 0, 7, 0, 0x10, 7, 0});
  EXPECT_EQ(Render(doc).rfind("ERROR: Corruption", 0), 0u);
}

TEST(JsonBinaryTest, ContainerSizeBeyondValueIsCorruption) {
  std::string doc = jb::Array({jb::Str("abc")});
  doc[3] = static_cast<char>(doc.size());  // claims one byte more than exists
  EXPECT_TRUE(IsCorruptionAt(Render(doc), 1)) << Render(doc);
}

TEST(JsonBinaryTest, TooManyEntriesForSizeIsCorruption) {
  std::string doc = jb::Array({jb::Int16(1)});
  doc[1] = 3;  // three entries cannot fit in 7 bytes
  EXPECT_TRUE(IsCorruptionAt(Render(doc), 1)) << Render(doc);
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x02, 1, 0})), 1));  // header truncated
  EXPECT_TRUE(IsCorruptionAt(Render(Bytes({0x01, 1, 0, 0})), 1));
}

TEST(JsonBinaryTest, KeyOutsideObjectIsCorruption) {
  std::string doc = jb::Object({{"k", jb::Int16(1)}});
  // Key entry at bytes 5..8: offset 2 bytes, length 2 bytes.
  std::string bad_len = doc;
  bad_len[7] = 9;
  EXPECT_TRUE(IsCorruptionAt(Render(bad_len), 5)) << Render(bad_len);
  std::string into_header = doc;
  into_header[5] = 1;
  EXPECT_TRUE(IsCorruptionAt(Render(into_header), 5)) << Render(into_header);
}

TEST(JsonBinaryTest, ValueOffsetOutsideContainerIsCorruption) {
  std::string doc = jb::Array({jb::Str("abc")});
  // Value entry at byte 5: type 0x0c, offset at bytes 6..7.
  std::string past_end = doc;
  past_end[6] = 40;
  EXPECT_TRUE(IsCorruptionAt(Render(past_end), 5)) << Render(past_end);
  std::string into_header = doc;
  into_header[6] = 0;  // would make the container its own child
  EXPECT_TRUE(IsCorruptionAt(Render(into_header), 5)) << Render(into_header);
}

TEST(JsonBinaryTest, StringOverrunningItsContainerIsCorruption) {
  std::string doc = jb::Array({jb::Str("abc"), jb::Int16(1)});
  // The string data ("\x03abc") follows the header (4 + 2*3 = 10 bytes) at byte 11.
  ASSERT_EQ(doc[11], 3);
  doc[11] = 9;
  EXPECT_TRUE(IsCorruptionAt(Render(doc), 11)) << Render(doc);
}

TEST(JsonBinaryTest, SharedSubValuesCannotBlowUpTheWalk) {
  // Every level is an array whose two entries point at the same child: a
  // 60-level chain would visit 2^60 values if the walker trusted it.
  std::string doc = jb::Int32(7);
  for (int i = 0; i < 60; ++i) {
    const std::string child = doc.substr(1);
    std::string arr = Bytes({0x02, 2, 0, 0, 0});
    const size_t header = 4 + 2 * 3;
    const size_t size = header + child.size();
    arr[3] = static_cast<char>(size & 0xff);
    arr[4] = static_cast<char>(size >> 8);
    for (int k = 0; k < 2; ++k) arr += std::string(1, doc[0]) + jb::Le(header, 2);
    arr += child;
    doc = arr;
    if (doc.size() > 60000) break;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string r = Render(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(r.rfind("ERROR: Corruption", 0), 0u) << r.substr(0, 200);
}

TEST(JsonBinaryTest, ErrorLeavesOutputAsItWas) {
  std::string out = "prefix";
  EXPECT_FALSE(AppendJsonText(Bytes({0x02, 2, 0, 12, 0, 0x05, 1, 0, 0x0c, 40, 0, 0}), &out).ok());
  EXPECT_EQ(out, "prefix");
  ASSERT_TRUE(AppendJsonText(jb::Int16(5), &out).ok());
  EXPECT_EQ(out, "prefix5");
}

// ------------------------------------------------------------ Erlang terms

// Parses the subset of Erlang term syntax used by msmp's .terms files into
// JSON: maps -> objects, lists and tuples -> arrays, binaries -> strings (raw
// bytes), integers, floats, and the atoms null/true/false.
class TermParser {
 public:
  explicit TermParser(std::string_view text) : s_(text) {}

  bool ParseAll(std::vector<nlohmann::json>* terms, std::string* error) {
    for (Skip(); i_ < s_.size(); Skip()) {
      nlohmann::json t;
      if (!Term(&t)) break;
      Skip();
      if (!Eat('.')) {
        error_ = "expected '.' after term";
        break;
      }
      terms->push_back(std::move(t));
    }
    *error = error_.empty() ? "" : error_ + " at " + std::to_string(i_);
    return error_.empty();
  }

 private:
  void Skip() {
    while (i_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[i_]))) {
        ++i_;
      } else if (s_[i_] == '%') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }
  bool Eat(char c) {
    Skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool EatStr(std::string_view t) {
    Skip();
    if (s_.substr(i_, t.size()) == t) {
      i_ += t.size();
      return true;
    }
    return false;
  }
  bool Fail(const char* what) {
    if (error_.empty()) error_ = what;
    return false;
  }

  // Comma-separated items up to `close`; `item` parses one.
  template <class F>
  bool Seq(std::string_view close, F item) {
    if (EatStr(close)) return true;
    do {
      if (!item()) return false;
    } while (Eat(','));
    return EatStr(close) || Fail("unterminated sequence");
  }

  bool Term(nlohmann::json* out) {
    Skip();
    if (i_ >= s_.size()) return Fail("unexpected end");
    if (EatStr("#{")) {
      *out = nlohmann::json::object();
      return Seq("}", [&] {
        nlohmann::json k, v;
        if (!Term(&k) || !EatStr("=>") || !Term(&v) || !k.is_string()) {
          return Fail("bad map entry");
        }
        (*out)[k.get<std::string>()] = std::move(v);
        return true;
      });
    }
    if (EatStr("<<")) {
      std::string bytes;
      if (!Seq(">>", [&] {
            Skip();
            if (i_ < s_.size() && s_[i_] == '"') {
              while (i_ < s_.size() && s_[i_] == '"') {
                std::string part;
                if (!Quoted(&part)) return false;
                bytes += part;
                Skip();
              }
              return true;
            }
            nlohmann::json n;
            if (!Number(&n) || !n.is_number_integer()) return Fail("bad binary segment");
            bytes.push_back(static_cast<char>(n.get<int64_t>() & 0xff));
            return true;
          })) {
        return false;
      }
      *out = std::move(bytes);
      return true;
    }
    if (Eat('[') || Eat('{')) {
      const char close = s_[i_ - 1] == '[' ? ']' : '}';
      *out = nlohmann::json::array();
      return Seq(std::string_view(close == ']' ? "]" : "}"), [&] {
        nlohmann::json v;
        if (!Term(&v)) return false;
        out->push_back(std::move(v));
        return true;
      });
    }
    if (std::islower(static_cast<unsigned char>(s_[i_]))) {
      const size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
        ++i_;
      }
      const std::string_view atom = s_.substr(start, i_ - start);
      if (atom == "null") *out = nullptr;
      else if (atom == "true") *out = true;
      else if (atom == "false") *out = false;
      else return Fail("unsupported atom");
      return true;
    }
    return Number(out);
  }

  bool Quoted(std::string* out) {
    ++i_;  // opening quote
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out->push_back(s_[i_++]);
    }
    if (i_ >= s_.size()) return Fail("unterminated string");
    ++i_;
    return true;
  }

  bool Number(nlohmann::json* out) {
    Skip();
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    std::string digits(s_.substr(start, i_ - start));
    bool is_float = false;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' ||
                              (s_[i_] == '.' && i_ + 1 < s_.size() &&
                               std::isdigit(static_cast<unsigned char>(s_[i_ + 1]))))) {
      if (s_[i_] == '.') is_float = true;
      if (s_[i_] != '_') digits.push_back(s_[i_]);
      ++i_;
    }
    if (digits.empty() || digits == "-") return Fail("expected a term");
    const char* b = digits.data();
    const char* e = b + digits.size();
    if (is_float) {
      double d;
      if (std::from_chars(b, e, d).ptr != e) return Fail("bad float");
      *out = d;
    } else if (digits[0] == '-') {
      int64_t v = 0;
      if (std::from_chars(b, e, v).ptr != e) return Fail("bad integer");
      *out = v;
    } else {
      uint64_t v = 0;
      if (std::from_chars(b, e, v).ptr != e) return Fail("bad integer");
      *out = v;
    }
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

struct TermCase {
  nlohmann::json expected;
  std::string binary;  // without the length prefix
};

std::string SharedPath(const char* relative) { return std::string(CANAL_SHARED_DIR) + "/" + relative; }

// Loads jsonb.terms; returns false (with a reason) when the fixture is absent.
bool LoadTermCases(std::vector<TermCase>* cases, std::string* why) {
  std::string text;
  const std::string path = SharedPath("fixtures/binlog/msmp/terms/jsonb.terms");
  if (!ReadFileToString(path, &text).ok()) {
    *why = "fixture not found: " + path;
    return false;
  }
  std::vector<nlohmann::json> terms;
  std::string error;
  if (!TermParser(text).ParseAll(&terms, &error)) {
    ADD_FAILURE() << "cannot parse " << path << ": " << error;
  }
  for (const nlohmann::json& t : terms) {
    if (!t.is_array() || t.size() != 3 || !t[1].is_string() || !t[2].is_number_unsigned()) {
      ADD_FAILURE() << "unexpected term shape: " << t.dump().substr(0, 100);
      continue;
    }
    const std::string bytes = t[1].get<std::string>();
    const size_t prefix = t[2].get<size_t>();
    if (bytes.size() < prefix) {
      ADD_FAILURE() << "term shorter than its length prefix";
      continue;
    }
    uint64_t declared = 0;
    for (size_t i = 0; i < prefix; ++i) declared |= uint64_t(uint8_t(bytes[i])) << (8 * i);
    EXPECT_EQ(declared, bytes.size() - prefix) << t[0].dump().substr(0, 100);
    cases->push_back({t[0], bytes.substr(prefix)});
  }
  return true;
}

TEST(JsonBinaryFixtureTest, MsmpJsonbTermsRenderToTheirDecodedValues) {
  std::vector<TermCase> cases;
  std::string why;
  if (!LoadTermCases(&cases, &why)) GTEST_SKIP() << why;
  ASSERT_EQ(cases.size(), 27u);
  for (const TermCase& c : cases) {
    std::string text;
    Status s = AppendJsonText(c.binary, &text);
    ASSERT_TRUE(s.ok()) << s.ToString() << " for " << c.expected.dump().substr(0, 100);
    nlohmann::json parsed;
    ASSERT_NO_THROW(parsed = nlohmann::json::parse(text)) << text.substr(0, 200);
    EXPECT_EQ(parsed, c.expected) << "rendered " << text.substr(0, 200);
  }
}

TEST(JsonBinaryFixtureTest, MsmpJsonbTermsMatchMysqlTextExactly) {
  std::vector<TermCase> cases;
  std::string why;
  if (!LoadTermCases(&cases, &why)) GTEST_SKIP() << why;
  ASSERT_EQ(cases.size(), 27u);
  // Spot-check the exact MySQL spelling of a few documents.
  std::vector<std::string> texts;
  for (const TermCase& c : cases) texts.push_back(Render(c.binary));
  EXPECT_EQ(texts[0], "{\"a\": 2}");
  EXPECT_EQ(texts[1], "[1, 2]");
  EXPECT_EQ(texts[2], "{\"a\": \"b\", \"c\": \"d\", \"ab\": \"abc\", \"bc\": [\"x\", \"y\"]}");
  EXPECT_EQ(texts[3], "[\"here\", [\"I\", \"am\"], \"!!!\"]");
  EXPECT_EQ(texts[19], "3.14");
  EXPECT_EQ(texts[23], "[\"abc\", 10, null, true, false]");
  EXPECT_EQ(texts[24], "{\"k1\": \"value\", \"k2\": 10}");
}

// Random byte flips and truncations over every fixture case must only ever
// produce a value or an error (run under ASan/UBSan to catch stray reads).
TEST(JsonBinaryFixtureTest, CorruptedTermsNeverCrash) {
  std::vector<TermCase> cases;
  std::string why;
  if (!LoadTermCases(&cases, &why)) GTEST_SKIP() << why;
  std::mt19937 rng(20241129);
  size_t errors = 0, oks = 0;
  for (const TermCase& c : cases) {
    const int rounds = c.binary.size() > 4096 ? 60 : 600;
    for (int r = 0; r < rounds; ++r) {
      std::string bytes = c.binary;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        const size_t at = rng() % bytes.size();
        bytes[at] = static_cast<char>(rng() % 2 ? rng() & 0xff : bytes[at] ^ (1 << (rng() % 8)));
      }
      // Copy into an exact-size heap buffer so ASan sees any overrun.
      std::unique_ptr<char[]> exact(new char[bytes.size()]);
      std::memcpy(exact.get(), bytes.data(), bytes.size());
      std::string out;
      (AppendJsonText(std::string_view(exact.get(), bytes.size()), &out).ok() ? oks : errors)++;
    }
    for (size_t len = 0; len < c.binary.size() && len < 300; ++len) {
      std::unique_ptr<char[]> exact(new char[len + 1]);
      std::memcpy(exact.get(), c.binary.data(), len);
      std::string out;
      (AppendJsonText(std::string_view(exact.get(), len), &out).ok() ? oks : errors)++;
    }
  }
  EXPECT_GT(errors, 0u);
  EXPECT_GT(oks, 0u);
}

// ------------------------------------------------------------ binlog fixture


TEST(JsonBinaryFixtureTest, OpaqueValuesInMysql9BinlogRenderLikeMysql) {
  std::string file;
  const std::string path = SharedPath("fixtures/binlog/rust_mysql_common/json-opaque.binlog");
  if (!ReadFileToString(path, &file).ok()) GTEST_SKIP() << "fixture not found: " << path;
  // One WRITE_ROWS_V2 per row of `test (a json)`. Body: table id (6), flags (2),
  // extra-data length (2, counts itself), column count (1), columns-present
  // bitmap (1), then the row: null bitmap (1), 4-byte length, binary JSON.
  const std::vector<std::string> bodies = ::canal::testing::EventBodiesOfType(file, 30);
  ASSERT_EQ(bodies.size(), 8u);
  // Upstream lists these values with decimals quoted ({"d":"123.456"}); MySQL
  // itself prints JSON decimals as bare numbers, as here.
  const std::vector<std::string> expected = {
      "{\"a\": \"base64:type15:VQ==\"}",
      "{\"b\": \"2012-03-18\"}",
      "{\"c\": \"2012-03-18 11:30:45.000000\"}",
      "{\"c\": \"87:31:46.654321\"}",
      "{\"d\": 123.456}",
      "{\"e\": 9.00}",
      "{\"e\": [0, 1, true, false]}",
      "{\"e\": null}",
  };
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string& b = bodies[i];
    const size_t extra = uint8_t(b[8]) | uint8_t(b[9]) << 8;
    size_t p = 8 + extra;
    ASSERT_EQ(b[p], 1) << "column count";
    p += 3;  // column count, columns bitmap, null bitmap
    ASSERT_LE(p + 4, b.size());
    const uint32_t len = uint8_t(b[p]) | uint8_t(b[p + 1]) << 8 | uint8_t(b[p + 2]) << 16 |
                         uint32_t(uint8_t(b[p + 3])) << 24;
    ASSERT_EQ(p + 4 + len, b.size());
    EXPECT_EQ(Render(std::string_view(b).substr(p + 4, len)), expected[i]) << "row " << i;
  }
}

}  // namespace
}  // namespace canal::binlog
