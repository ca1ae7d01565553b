// ParseSnapshotRequest: what bin/canal-admin.sh snapshot writes to conf/DEST/snapshot.request
// ({"tables": ["schema.table", ...], "where": "..."}). The file is written by whoever can write the
// conf folder, so every malformed shape is an InvalidArgument naming what is wrong, never a throw.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/server/snapshot_request.h"

namespace canal::server {
namespace {

struct Parsed {
  Status status;
  std::vector<std::string> tables;
  std::string where;
};

Parsed Parse(const std::string& text) {
  Parsed p;
  SnapshotRequest r;
  p.status = ParseSnapshotRequest(text, &r);
  p.tables = r.tables;
  p.where = r.where;
  return p;
}

bool Says(const Status& s, const std::string& what) {
  return !s.ok() && std::string(s.message()).find(what) != std::string::npos;
}

TEST(SnapshotRequest, TablesAndWhereAreRead) {
  const Parsed p = Parse(R"({"tables": ["shop.orders", "shop.customer"], "where": "id > 10"})");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.tables, (std::vector<std::string>{"shop.orders", "shop.customer"}));
  EXPECT_EQ(p.where, "id > 10");
  const Parsed q = Parse(R"({"tables": ["a.b"]})");
  ASSERT_TRUE(q.status.ok()) << q.status.ToString();
  EXPECT_TRUE(q.where.empty());
}

TEST(SnapshotRequest, MalformedJsonIsRefused) {
  for (const char* text : {"", "{", "not json", "{\"tables\": [\"a.b\"]", "\xff\xfe{}", "{\"tables\": [\"a.b\",]}"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(Says(Parse(text).status, "not a JSON object"));
  }
}

TEST(SnapshotRequest, OtherJsonThanAnObjectIsRefused) {
  for (const char* text : {"[]", "[\"a.b\"]", "\"a.b\"", "42", "null", "true"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(Says(Parse(text).status, "not a JSON object"));
  }
}

TEST(SnapshotRequest, TablesMustBeAListOfOneTo1000Names) {
  for (const char* text : {"{}", R"({"tables": []})", R"({"tables": "a.b"})", R"({"tables": {"a": "b"}})",
                           R"({"table": ["a.b"]})", R"({"tables": null})"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(Says(Parse(text).status, "\"tables\" must list 1 to 1000"));
  }
  std::string many = R"({"tables": [)";
  for (int i = 0; i < 1001; ++i) many += std::string(i ? "," : "") + "\"s.t" + std::to_string(i) + "\"";
  many += "]}";
  EXPECT_TRUE(Says(Parse(many).status, "\"tables\" must list 1 to 1000"));
}

TEST(SnapshotRequest, ANameOrWhereOfAnotherTypeIsRefused) {
  EXPECT_TRUE(Says(Parse(R"({"tables": ["a.b", 7]})").status, "not a string"));
  EXPECT_TRUE(Says(Parse(R"({"tables": [["a.b"]]})").status, "not a string"));
  EXPECT_TRUE(Says(Parse(R"({"tables": ["a.b"], "where": 1})").status, "\"where\" is not a string"));
  EXPECT_TRUE(Says(Parse(R"({"tables": ["a.b"], "where": ["id > 1"]})").status, "\"where\" is not a string"));
}

TEST(SnapshotRequest, MoreThan64KiBIsRefusedUnread) {
  std::string big = R"({"tables": ["a.b"], "where": ")" + std::string(kMaxSnapshotRequestBytes, 'x') + "\"}";
  EXPECT_TRUE(Says(Parse(big).status, "larger than 65536 bytes"));
}

TEST(SnapshotRequest, DeeplyNestedJsonIsRefusedNotACrash) {
  // A hostile file within the 64 KiB the instance reads: nesting deep enough to exhaust a naive
  // recursive parser's stack.
  const std::string deep = std::string(30000, '[') + std::string(30000, ']');
  EXPECT_FALSE(Parse(deep).status.ok());
  const std::string deep_object = "{\"tables\": " + std::string(30000, '[') + std::string(30000, ']') + "}";
  EXPECT_FALSE(Parse(deep_object).status.ok());
}

}  // namespace
}  // namespace canal::server
