// Canal's ZooKeeper layout (coord/canal_layout.h): the one definition of the
// paths and running-node bodies the server, the client SDK and meta/ share,
// checked against the layout Canal's own server and clients use.
#include <gtest/gtest.h>

#include <string>

#include "canal/coord/canal_layout.h"

namespace canal::coord::layout {
namespace {

TEST(CanalLayout, PathsAreCanals) {
  EXPECT_EQ(ServerClusterPath("1.2.3.4:11111"), "/otter/canal/cluster/1.2.3.4:11111");
  EXPECT_EQ(DestinationPath("example"), "/otter/canal/destinations/example");
  EXPECT_EQ(DestinationClusterPath("example", "1.2.3.4:11111"),
            "/otter/canal/destinations/example/cluster/1.2.3.4:11111");
  EXPECT_EQ(ServerRunningPath("example"), "/otter/canal/destinations/example/running");
  EXPECT_EQ(ClientPath("example", "1001"), "/otter/canal/destinations/example/1001");
  EXPECT_EQ(ClientRunningPath("example", "1001"), "/otter/canal/destinations/example/1001/running");
  EXPECT_EQ(ClientCursorPath("example", "1001"), "/otter/canal/destinations/example/1001/cursor");
  EXPECT_EQ(ClientFilterPath("example", "1001"), "/otter/canal/destinations/example/1001/filter");
  EXPECT_EQ(SchemaHistoryPath("example"), "/otter/canal/destinations/example/schema_history");
}

TEST(CanalLayout, RunningBodiesAreCanalsJsonAndParseBack) {
  EXPECT_EQ(ServerRunningBody("10.0.0.1:11111"), R"({"active":true,"address":"10.0.0.1:11111"})");
  EXPECT_EQ(ClientRunningBody("host:42", "1001"), R"({"active":true,"address":"host:42","clientId":1001})");
  EXPECT_EQ(ClientRunningBody("host:42", "c-1"), R"({"active":true,"address":"host:42","clientId":"c-1"})");
  RunningNode n;
  ASSERT_TRUE(ParseRunningNode(R"({"active":true,"address":"10.0.0.1:11111","cid":1})", &n).ok());
  EXPECT_EQ(n.address, "10.0.0.1:11111");
  EXPECT_TRUE(n.active);
  ASSERT_TRUE(ParseRunningNode(R"({"active":false,"address":"h:1"})", &n).ok());
  EXPECT_FALSE(n.active);
  ASSERT_TRUE(ParseRunningNode(ClientRunningBody("host:42", "1001"), &n).ok());
  EXPECT_EQ(n.address, "host:42");
}

TEST(CanalLayout, RunningBodiesWithoutAnAddressAreRefused) {
  RunningNode n;
  n.address = "unchanged";
  for (const std::string& body : {std::string(""), std::string("not json"), std::string("[1,2]"),
                                 std::string(R"({"active":true})"), std::string(R"({"active":true,"address":7})"),
                                 std::string(R"({"active":true,"address":""})"),
                                 std::string(R"({"active":true,"address":"no-port"})"),
                                 std::string("{\"address\":\"a\0b", 14), std::string(300, '{')}) {
    const Status s = ParseRunningNode(body, &n);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << body;
    EXPECT_LE(s.message().size(), 400u) << "the body is quoted cut";
  }
  EXPECT_EQ(n.address, "unchanged");
}

}  // namespace
}  // namespace canal::coord::layout
