// ApplyJsonDiffs: MySQL PARTIAL_UPDATE_ROWS JSON diffs applied to the before
// image. Fixture: rust_mysql_common's json.binlog.000001 (MySQL 8.0.22), whose
// one PARTIAL_UPDATE_ROWS event raises $.age of six rows by one.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "canal/parser/binlog/json_binary.h"
#include "support/fixtures.h"
#include "support/json_binary_builder.h"

namespace canal::binlog {
namespace {

namespace jb = ::canal::testing::jb;
using ::canal::testing::ReadFileToString;

// One diff in MySQL's wire form: op, packed path length, path, and (unless
// REMOVE) packed value length and binary value.
std::string Packed(size_t n) {
  if (n < 251) return std::string(1, static_cast<char>(n));
  return "\xfc" + jb::Le(n, 2);
}
std::string Replace(std::string_view path, const std::string& value) {
  return std::string(1, '\0') + Packed(path.size()) + std::string(path) + Packed(value.size()) +
         value;
}
std::string Insert(std::string_view path, const std::string& value) {
  return "\x01" + Packed(path.size()) + std::string(path) + Packed(value.size()) + value;
}
std::string Remove(std::string_view path) {
  return "\x02" + Packed(path.size()) + std::string(path);
}

// After text, or "ERROR: <status>".
std::string ApplyOrError(const std::string& before, const std::string& diffs) {
  std::string after = "stale";
  Status s = ApplyJsonDiffs(before, diffs, &after);
  if (!s.ok()) return "ERROR: " + s.ToString();
  return after;
}

bool IsCorruption(const std::string& r) { return r.rfind("ERROR: Corruption", 0) == 0; }

// {"a": 1, "b": [10, 20, 30], "name": "x"}
std::string SampleDoc() {
  return jb::Object({{"a", jb::Int16(1)},
                     {"b", jb::Array({jb::Int16(10), jb::Int16(20), jb::Int16(30)})},
                     {"name", jb::Str("x")}});
}

// ------------------------------------------------------------ operations

TEST(JsonDiffTest, NoDiffsRendersTheBeforeDocument) {
  EXPECT_EQ(ApplyOrError(SampleDoc(), ""), "{\"a\": 1, \"b\": [10, 20, 30], \"name\": \"x\"}");
}

TEST(JsonDiffTest, ReplaceMemberAndElement) {
  EXPECT_EQ(ApplyOrError(SampleDoc(), Replace("$.a", jb::Str("new")) +
                                          Replace("$.b[1]", jb::Array({jb::True()}))),
            "{\"a\": \"new\", \"b\": [10, [true], 30], \"name\": \"x\"}");
}

TEST(JsonDiffTest, ReplaceWholeDocument) {
  EXPECT_EQ(ApplyOrError(SampleDoc(), Replace("$", jb::Int16(7))), "7");
}

TEST(JsonDiffTest, InsertMemberKeepsMysqlKeyOrder) {
  // Keys sort by length, then bytes: "c" goes before "name", "zz" after "a"/"b"/"c".
  EXPECT_EQ(ApplyOrError(SampleDoc(), Insert("$.zz", jb::Null()) + Insert("$.c", jb::Int16(3))),
            "{\"a\": 1, \"b\": [10, 20, 30], \"c\": 3, \"zz\": null, \"name\": \"x\"}");
}

TEST(JsonDiffTest, InsertIntoArrayAtIndexAndPastTheEnd) {
  EXPECT_EQ(ApplyOrError(SampleDoc(), Insert("$.b[0]", jb::Int16(5)) +
                                          Insert("$.b[99]", jb::Int16(99)) +
                                          Insert("$.b[last]", jb::Int16(42))),
            "{\"a\": 1, \"b\": [5, 10, 20, 30, 42, 99], \"name\": \"x\"}");
}

TEST(JsonDiffTest, RemoveMemberAndElements) {
  EXPECT_EQ(ApplyOrError(SampleDoc(), Remove("$.a") + Remove("$.b[0]") + Remove("$.b[last]")),
            "{\"b\": [20], \"name\": \"x\"}");
  EXPECT_EQ(ApplyOrError(SampleDoc(), Remove("$.b[last-2]")),
            "{\"a\": 1, \"b\": [20, 30], \"name\": \"x\"}");
}

TEST(JsonDiffTest, DiffsApplyInOrder) {
  // The second diff addresses the member the first one created.
  EXPECT_EQ(ApplyOrError(SampleDoc(), Insert("$.n", jb::Array({})) + Insert("$.n[0]", jb::Str("v")) +
                                          Replace("$.n[0]", jb::Double(1.5))),
            "{\"a\": 1, \"b\": [10, 20, 30], \"n\": [1.5], \"name\": \"x\"}");
}

TEST(JsonDiffTest, QuotedMemberNamesAreUnescaped) {
  // Stored in MySQL order: the 2-byte key before the 3-byte one.
  const std::string doc = jb::Object({{"\xc3\xa9", jb::Int16(2)}, {"a b", jb::Int16(1)}});
  EXPECT_EQ(ApplyOrError(doc, Replace("$.\"a b\"", jb::Int16(3)) +
                                  Replace("$.\"\\u00e9\"", jb::Int16(4)) +
                                  Insert("$.\"q\\\"\\n\"", jb::Int16(5))),
            "{\"\xc3\xa9\": 4, \"a b\": 3, \"q\\\"\\n\": 5}");
  // Surrogate pairs decode to one 4-byte UTF-8 character.
  EXPECT_EQ(ApplyOrError(jb::Object({}), Insert("$.\"\\ud83d\\ude00\"", jb::Null())),
            "{\"\xf0\x9f\x98\x80\": null}");
}

TEST(JsonDiffTest, NestedPathsAndSpacesAreFollowed) {
  const std::string doc =
      jb::Object({{"a", jb::Array({jb::Int16(0), jb::Object({{"b", jb::Int16(1)}})})}});
  EXPECT_EQ(ApplyOrError(doc, Replace("$.a[1].b", jb::Str("deep")) +
                                  Insert(" $ . a [ 1 ] . c", jb::Int16(2))),
            "{\"a\": [0, {\"b\": \"deep\", \"c\": 2}]}");
}

TEST(JsonDiffTest, LongPathsAndValuesUseMultiBytePackedLengths) {
  const std::string key(300, 'k');
  const std::string doc = jb::Object({{key, jb::Int16(1)}});
  const std::string diff = Replace("$." + key, jb::Int16(2));
  ASSERT_EQ(static_cast<uint8_t>(diff[1]), 0xfc);
  EXPECT_EQ(ApplyOrError(doc, diff), "{\"" + key + "\": 2}");
}

// ------------------------------------------------------------ bad diffs

TEST(JsonDiffTest, UnknownOperationIsCorruption) {
  std::string diff = Remove("$.a");
  diff[0] = 3;
  const std::string r = ApplyOrError(SampleDoc(), diff);
  EXPECT_TRUE(IsCorruption(r)) << r;
  EXPECT_NE(r.find("unknown operation 3"), std::string::npos) << r;
}

TEST(JsonDiffTest, PathsThatDoNotMatchTheDocumentAreCorruption) {
  const std::string doc = SampleDoc();
  for (const std::string& diff : {
           Replace("$.a.b", jb::Null()),       // into a scalar
           Insert("$.a.b", jb::Null()),        // into a scalar
           Remove("$.a[0]"),                   // array leg on a scalar
           Replace("$.missing", jb::Null()),   // absent member
           Replace("$.b[3]", jb::Null()),      // out of bounds
           Insert("$.a", jb::Null()),          // member already exists
           Insert("$.b.x", jb::Null()),        // member leg on an array
           Insert("$[0]", jb::Null()),         // array leg on an object
           Remove("$.missing"),                // absent member
           Remove("$.b[3]"),                   // out of bounds
           Remove("$.b[last-3]"),              // out of bounds from the end
           Remove("$"),                        // the root cannot go
           Insert("$", jb::Null()),            // nor be inserted
           Replace("$.x.y.z", jb::Null()),     // absent parent
       }) {
    const std::string r = ApplyOrError(doc, diff);
    EXPECT_TRUE(IsCorruption(r)) << r;
  }
}

TEST(JsonDiffTest, MalformedPathsAreCorruption) {
  for (const char* path : {"", "a.b", "$.", "$.*", "$[*]", "$**.a", "$[1 to 2]", "$[", "$[x]",
                           "$[1", "$.\"open", "$.\"\\x\"", "$.\"\\u12\"", "$.\"\\ud800\"",
                           "$[99999999999999999999999]", "$a", "$.a\"b\""}) {
    const std::string r = ApplyOrError(SampleDoc(), Replace(path, jb::Null()));
    EXPECT_TRUE(IsCorruption(r)) << "path '" << path << "': " << r;
  }
}

TEST(JsonDiffTest, MalformedValueIsCorruption) {
  EXPECT_TRUE(IsCorruption(ApplyOrError(SampleDoc(), Replace("$.a", ""))));
  EXPECT_TRUE(IsCorruption(ApplyOrError(SampleDoc(), Replace("$.a", "\x05\x01"))));
  EXPECT_TRUE(IsCorruption(ApplyOrError(SampleDoc(), Replace("$.a", "\x0d\x00"))));
}

TEST(JsonDiffTest, MalformedBeforeImageIsCorruption) {
  std::string doc = SampleDoc();
  doc[3] = 120;  // size beyond the value
  const std::string r = ApplyOrError(doc, "");
  EXPECT_TRUE(IsCorruption(r)) << r;
  EXPECT_NE(r.find("before image"), std::string::npos) << r;
}

TEST(JsonDiffTest, EmptyBeforeImageIsNull) {
  EXPECT_EQ(ApplyOrError("", ""), "null");
  EXPECT_TRUE(IsCorruption(ApplyOrError("", Replace("$.a", jb::Null()))));
  EXPECT_EQ(ApplyOrError("", Replace("$", jb::True())), "true");
}

TEST(JsonDiffTest, EveryTruncationIsAnErrorOrADiffBoundary) {
  const std::vector<std::string> parts = {Replace("$.a", jb::Str("value")),
                                          Insert("$.b[1]", jb::Int16(2)), Remove("$.name")};
  std::string diffs;
  std::vector<size_t> boundaries = {0};
  for (const std::string& p : parts) {
    diffs += p;
    boundaries.push_back(diffs.size());
  }
  ASSERT_EQ(ApplyOrError(SampleDoc(), diffs), "{\"a\": \"value\", \"b\": [10, 2, 20, 30]}");
  for (size_t len = 0; len < diffs.size(); ++len) {
    // Exact-size heap copy so ASan catches reads past the end.
    std::unique_ptr<char[]> exact(new char[len + 1]);
    std::memcpy(exact.get(), diffs.data(), len);
    std::string after;
    Status s = ApplyJsonDiffs(SampleDoc(), std::string_view(exact.get(), len), &after);
    const bool boundary =
        std::find(boundaries.begin(), boundaries.end(), len) != boundaries.end();
    EXPECT_EQ(s.ok(), boundary) << "length " << len << ": " << s.ToString();
    if (!s.ok()) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    }
  }
}

TEST(JsonDiffTest, RandomCorruptionNeverCrashes) {
  const std::string diffs = Replace("$.a", jb::Object({{"k", jb::Str("v")}})) +
                            Insert("$.b[1]", jb::Array({jb::Int16(2), jb::Null()})) +
                            Remove("$.\"name\"");
  const std::string doc = SampleDoc();
  std::mt19937 rng(7);
  size_t oks = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string d = diffs, b = doc;
    std::string& target = round % 2 ? d : b;
    for (int f = 0; f < 1 + round % 3; ++f) {
      target[rng() % target.size()] = static_cast<char>(rng() & 0xff);
    }
    std::unique_ptr<char[]> exact_d(new char[d.size()]), exact_b(new char[b.size()]);
    std::memcpy(exact_d.get(), d.data(), d.size());
    std::memcpy(exact_b.get(), b.data(), b.size());
    std::string after;
    if (ApplyJsonDiffs(std::string_view(exact_b.get(), b.size()),
                       std::string_view(exact_d.get(), d.size()), &after)
            .ok()) {
      ++oks;
    }
  }
  EXPECT_GT(oks, 0u);
}

TEST(JsonDiffTest, ErrorClearsTheOutput) {
  std::string after = "stale";
  EXPECT_FALSE(ApplyJsonDiffs(SampleDoc(), Remove("$.zz"), &after).ok());
  EXPECT_TRUE(after.empty());
}

// ------------------------------------------------------------ binlog fixture


// Cursor over one rows event of table t(id INT, json_col JSON, name VARCHAR(100)
// utf8mb4 [2-byte length], age INT), enough to pull the JSON bytes out.
struct RowCursor {
  std::string_view b;
  size_t p = 0;
  bool ok = true;

  uint64_t Le(size_t n) {
    if (p + n > b.size()) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(b[p + i])) << (8 * i);
    p += n;
    return v;
  }
  std::string_view Take(size_t n) {
    if (p + n > b.size()) {
      ok = false;
      return {};
    }
    p += n;
    return b.substr(p - n, n);
  }
  // One image: null bitmap over the present columns, then their values (the
  // JSON column's bytes are binary JSON or, in a partial image, diffs).
  std::map<int, std::string_view> Image(uint8_t present) {
    std::map<int, std::string_view> cols;
    const uint8_t nulls = static_cast<uint8_t>(Le(1));
    int k = 0;
    for (int c = 0; c < 4 && ok; ++c) {
      if (!(present & (1 << c))) continue;
      if (nulls & (1 << k++)) continue;
      if (c == 0 || c == 3) cols[c] = Take(4);
      if (c == 1) cols[c] = Take(Le(4));
      if (c == 2) cols[c] = Take(Le(2));
    }
    return cols;
  }
};

int32_t Int32Of(std::string_view v) {
  return static_cast<int32_t>(uint8_t(v[0]) | uint8_t(v[1]) << 8 | uint8_t(v[2]) << 16 |
                              uint32_t(uint8_t(v[3])) << 24);
}

TEST(JsonDiffFixtureTest, PartialUpdateEventOfMysql8BinlogYieldsTheUpdatedDocuments) {
  std::string file;
  const std::string path =
      std::string(CANAL_SHARED_DIR) + "/fixtures/binlog/rust_mysql_common/json.binlog.000001";
  if (!ReadFileToString(path, &file).ok()) GTEST_SKIP() << "fixture not found: " << path;

  // Before documents: the after images of the preceding full UPDATE_ROWS_V2
  // (age 24->25, 32->33, 40->41 for ids 1..6).
  const std::vector<std::string> updates = ::canal::testing::EventBodiesOfType(file, 31);
  ASSERT_EQ(updates.size(), 1u);
  std::map<int32_t, std::string_view> before_docs;
  {
    RowCursor r{updates[0]};
    r.p = 8;
    r.p += r.Le(2) - 2;  // extra data
    ASSERT_EQ(r.Le(1), 4u);
    const auto before_cols = static_cast<uint8_t>(r.Le(1));
    const auto after_cols = static_cast<uint8_t>(r.Le(1));
    while (r.ok && r.p < r.b.size()) {
      r.Image(before_cols);
      auto after = r.Image(after_cols);
      ASSERT_TRUE(r.ok);
      before_docs[Int32Of(after[0])] = after[1];
    }
  }
  ASSERT_EQ(before_docs.size(), 6u);

  // PARTIAL_UPDATE_ROWS (39), with binlog_row_image=MINIMAL: before image holds
  // the id; the after image starts with value_options (1 = PARTIAL_JSON) and
  // the partial-column bitmap, then json_col as diffs ("$.age" REPLACE), name
  // and age.
  const std::vector<std::string> partials = ::canal::testing::EventBodiesOfType(file, 39);
  ASSERT_EQ(partials.size(), 1u);
  RowCursor r{partials[0]};
  r.p = 8;
  r.p += r.Le(2) - 2;
  ASSERT_EQ(r.Le(1), 4u);
  const auto before_cols = static_cast<uint8_t>(r.Le(1));
  const auto after_cols = static_cast<uint8_t>(r.Le(1));
  ASSERT_EQ(before_cols, 0x01);
  ASSERT_EQ(after_cols, 0x0e);

  // UPDATE t SET json_col = JSON_SET(json_col, '$.age', json_col->'$.age' + 1):
  // every document keeps its keys and gains one year.
  const std::map<int32_t, std::string> expected = {
      {1, "{\"age\": 26, \"data\": \"xxxxxxxxxx\", \"name\": \"Joe\"}"},
      {2, "{\"age\": 34, \"data\": \"yyyyyyyyyy\", \"name\": \"Sue\"}"},
      {3, "{\"age\": 42, \"data\": \"zzzzzzzzzz\", \"name\": \"Pete\"}"},
      {4, "{\"age\": 26, \"data\": \"xxxxxxxxxx\", \"name\": \"Joe\"}"},
      {5, "{\"age\": 34, \"data\": \"yyyyyyyyyy\", \"name\": \"Sue\"}"},
      {6, "{\"age\": 42, \"data\": \"zzzzzzzzzz\", \"name\": \"Pete\"}"},
  };
  int rows = 0;
  while (r.ok && r.p < r.b.size()) {
    const auto before = r.Image(before_cols);
    ASSERT_EQ(r.Le(1), 1u) << "value_options = PARTIAL_JSON";
    ASSERT_EQ(r.Le(1), 1u) << "json_col is a partial update";
    auto after = r.Image(after_cols);
    ASSERT_TRUE(r.ok);
    const int32_t id = Int32Of(before.at(0));
    ASSERT_TRUE(before_docs.count(id)) << id;

    std::string after_text;
    Status s = ApplyJsonDiffs(before_docs[id], after[1], &after_text);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(after_text, expected.at(id)) << "id " << id;
    // The generated column age = json_col->'$.age' agrees with the document.
    EXPECT_NE(after_text.find("\"age\": " + std::to_string(Int32Of(after.at(3))) + ","),
              std::string::npos);
    ++rows;
  }
  EXPECT_EQ(rows, 6);
}

}  // namespace
}  // namespace canal::binlog
