// The placement nodes' paths and JSON (coord/placement_layout.h): round trips,
// and every kind of bad body refused with a message naming the path.
#include "canal/coord/placement_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace canal::coord::layout {
namespace {

// Every refusal: InvalidArgument, the path named, the body quoted cut short.
void ExpectRefused(const Status& s, const std::string& path, const std::string& body) {
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << body;
  EXPECT_NE(s.message().find(path), std::string_view::npos) << s.ToString();
  EXPECT_LE(s.message().size(), path.size() + 600) << "the body is quoted cut";
}

// Bodies no parser may accept (nor crash on).
std::vector<std::string> Garbage() {
  return {"",
          "not json",
          "[1,2]",
          "null",
          "42",
          "\"a string\"",
          "{",
          "{\"address\":\"a:1\"",  // cut short
          std::string(300, '['),
          std::string(100000, '{'),
          std::string("{\"address\":\"a\0b:1\"}", 19),
          "\xff\xfe\x00\x01",
          "{\"a\":" + std::string(5000, '[') + std::string(5000, ']') + "}"};
}

TEST(PlacementLayout, PathsLiveUnderOurOwnFolder) {
  EXPECT_EQ(PlacementServersPath(), "/otter/canal/placement/servers");
  EXPECT_EQ(PlacementServerPath("10.0.0.1:11111"), "/otter/canal/placement/servers/10.0.0.1:11111");
  EXPECT_EQ(PlacementLeaderPath(), "/otter/canal/placement/leader");
  EXPECT_EQ(PlacementAssignmentPath(), "/otter/canal/placement/assignment");
  EXPECT_EQ(PlacementDrainsPath(), "/otter/canal/placement/drain");
  EXPECT_EQ(PlacementDrainPath("10.0.0.1:11111"), "/otter/canal/placement/drain/10.0.0.1:11111");
  EXPECT_EQ(PlacementPinsPath(), "/otter/canal/placement/pins");
  EXPECT_EQ(PlacementPinPath("example"), "/otter/canal/placement/pins/example");
  EXPECT_EQ(PlacementWeightsPath(), "/otter/canal/placement/weights");
  EXPECT_EQ(PlacementWeightPath("example"), "/otter/canal/placement/weights/example");
}

TEST(PlacementLayout, NodeNamesAndAddresses) {
  EXPECT_TRUE(ValidNodeName("example"));
  EXPECT_TRUE(ValidAddress("10.0.0.1:11111"));
  EXPECT_TRUE(ValidAddress("[::1]:11111"));
  using sv = std::string_view;
  for (sv bad : {sv(""), sv("."), sv(".."), sv("a/b"), sv("a\0b", 3)}) {
    EXPECT_FALSE(ValidNodeName(bad));
  }
  EXPECT_FALSE(ValidNodeName(std::string(256, 'x')));
  for (std::string_view bad : {"", "no-port", "a/b:1", "a b:1", "a:1\n", ":1", "h:", "h:123456", "h:1x",
                               "{\"a\":1}", "h\"q:1"}) EXPECT_FALSE(ValidAddress(bad)) << bad;
}

TEST(PlacementLayout, ServerNodeRoundTrips) {
  ServerNode n{"10.0.0.1:11111", 7, {"b", "a"}, true, {{"a", 1234.5}, {"b", 0}}};
  const std::string body = ServerNodeBody(n);
  EXPECT_EQ(body, R"({"address":"10.0.0.1:11111","cap":7,"destinations":["a","b"],"draining":true,)"
                  R"("load":{"a":1234.5,"b":0.0}})");
  ServerNode back;
  ASSERT_TRUE(ParseServerNode("/p", body, &back).ok());
  EXPECT_EQ(back, n);
  // Only the address is required; unknown keys (a newer server's) are ignored.
  ASSERT_TRUE(ParseServerNode("/p", R"({"address":"h:1","future":{"x":[1]}})", &back).ok());
  EXPECT_EQ(back, (ServerNode{"h:1", 0, {}, false, {}}));
  // Duplicates in the list collapse.
  ASSERT_TRUE(ParseServerNode("/p", R"({"address":"h:1","destinations":["x","x"]})", &back).ok());
  EXPECT_EQ(back.destinations, (std::set<std::string>{"x"}));
}

TEST(PlacementLayout, ServerNodeBodyLeavesOutRatesJsonCannotHold) {
  ServerNode n{"h:1", 0, {}, false,
               {{"nan", std::numeric_limits<double>::quiet_NaN()},
                {"inf", std::numeric_limits<double>::infinity()},
                {"neg", -1},
                {"ok", 5}}};
  ServerNode back;
  ASSERT_TRUE(ParseServerNode("/p", ServerNodeBody(n), &back).ok());
  EXPECT_EQ(back.load, (std::map<std::string, double>{{"ok", 5}}));
  // Bytes that are not UTF-8 are replaced, never a throw.
  n.destinations = {"bad\xff"};
  EXPECT_NE(ServerNodeBody(n).find("destinations"), std::string::npos);
}

TEST(PlacementLayout, MalformedServerNodesAreRefused) {
  const std::string path = "/otter/canal/placement/servers/h:1";
  std::vector<std::string> bodies = Garbage();
  for (const char* b : {
           R"({})",
           R"({"address":7})",
           R"({"address":""})",
           R"({"address":"no-port"})",
           R"({"address":"a/b:1"})",
           R"({"address":"h:1","cap":-1})",
           R"({"address":"h:1","cap":1.5})",
           R"({"address":"h:1","cap":1e30})",
           R"({"address":"h:1","cap":4294967296})",
           R"({"address":"h:1","cap":18446744073709551616})",
           R"({"address":"h:1","cap":"3"})",
           R"({"address":"h:1","cap":null})",
           R"({"address":"h:1","destinations":"a"})",
           R"({"address":"h:1","destinations":[1]})",
           R"({"address":"h:1","destinations":[""]})",
           R"({"address":"h:1","destinations":["a/b"]})",
           R"({"address":"h:1","destinations":[[]]})",
           R"({"address":"h:1","draining":"yes"})",
           R"({"address":"h:1","draining":1})",
           R"({"address":"h:1","load":[]})",
           R"({"address":"h:1","load":{"a":-1}})",
           R"({"address":"h:1","load":{"a":"5"}})",
           R"({"address":"h:1","load":{"a":null}})",
           R"({"address":"h:1","load":{"a":1e999}})",
           R"({"address":"h:1","load":{"":1}})",
       }) {
    bodies.emplace_back(b);
  }
  bodies.push_back(R"({"address":"h:1","destinations":[")" + std::string(1000, 'x') + R"("]})");
  for (const std::string& body : bodies) {
    ServerNode n{"unchanged:1"};
    ExpectRefused(ParseServerNode(path, body, &n), path, body);
    EXPECT_EQ(n.address, "unchanged:1") << body;
  }
}

TEST(PlacementLayout, ServerNodeEdgesThatAreFine) {
  ServerNode n;
  ASSERT_TRUE(ParseServerNode("/p", R"({"address":"h:1","cap":4294967295,"load":{"a":1e300}})", &n).ok());
  EXPECT_EQ(n.cap, 4294967295u);
  EXPECT_EQ(n.load["a"], 1e300);
  ASSERT_TRUE(ParseServerNode("/p", R"(  {"address":"h:1","cap":0}  )", &n).ok());
}

TEST(PlacementLayout, LeaderRoundTripsAndBadOnesAreRefused) {
  EXPECT_EQ(LeaderBody("10.0.0.1:11111"), R"({"address":"10.0.0.1:11111"})");
  std::string a;
  ASSERT_TRUE(ParseLeader("/l", LeaderBody("10.0.0.1:11111"), &a).ok());
  EXPECT_EQ(a, "10.0.0.1:11111");
  std::vector<std::string> bodies = Garbage();
  for (const char* b : {R"({})", R"({"address":1})", R"({"address":"x"})", R"({"address":["h:1"]})"}) {
    bodies.emplace_back(b);
  }
  for (const std::string& body : bodies) {
    a = "unchanged";
    ExpectRefused(ParseLeader("/otter/canal/placement/leader", body, &a), "/otter/canal/placement/leader", body);
    EXPECT_EQ(a, "unchanged");
  }
}

TEST(PlacementLayout, AssignmentRoundTrips) {
  Assignment a{42, "10.0.0.1:11111", {{"d1", "10.0.0.1:11111"}, {"d2", "10.0.0.2:11111"}}, {{"d3", "why \"quoted\""}}};
  const std::string body = AssignmentBody(a);
  EXPECT_EQ(body, R"({"generation":42,"leader":"10.0.0.1:11111","assignment":{"d1":"10.0.0.1:11111",)"
                  R"("d2":"10.0.0.2:11111"},"unassigned":{"d3":"why \"quoted\""}})");
  Assignment back;
  ASSERT_TRUE(ParseAssignment("/a", body, &back).ok());
  EXPECT_EQ(back, a);
  // The largest generation, and an empty one without "leader" or "unassigned".
  ASSERT_TRUE(ParseAssignment("/a", R"({"generation":9223372036854775807,"assignment":{}})", &back).ok());
  EXPECT_EQ(back.generation, 9223372036854775807u);
  EXPECT_TRUE(back.assignment.empty());
}

TEST(PlacementLayout, MalformedAssignmentsAreRefused) {
  const std::string path = "/otter/canal/placement/assignment";
  std::vector<std::string> bodies = Garbage();
  for (const char* b : {
           R"({"assignment":{}})",
           R"({"generation":-1,"assignment":{}})",
           R"({"generation":1.5,"assignment":{}})",
           R"({"generation":"1","assignment":{}})",
           R"({"generation":9223372036854775808,"assignment":{}})",
           R"({"generation":18446744073709551616,"assignment":{}})",
           R"({"generation":1e400,"assignment":{}})",
           R"({"generation":1})",
           R"({"generation":1,"assignment":[]})",
           R"({"generation":1,"assignment":{"d":1}})",
           R"({"generation":1,"assignment":{"d":"no-port"}})",
           R"({"generation":1,"assignment":{"a/b":"h:1"}})",
           R"({"generation":1,"assignment":{"":"h:1"}})",
           R"({"generation":1,"leader":5,"assignment":{}})",
           R"({"generation":1,"assignment":{},"unassigned":[]})",
           R"({"generation":1,"assignment":{},"unassigned":{"d":1}})",
       }) {
    bodies.emplace_back(b);
  }
  for (const std::string& body : bodies) {
    Assignment a{7};
    ExpectRefused(ParseAssignment(path, body, &a), path, body);
    EXPECT_EQ(a.generation, 7u) << body;
  }
}

TEST(PlacementLayout, PinsAreAnAddress) {
  std::string a;
  ASSERT_TRUE(ParsePin("/p", " 10.0.0.1:11111\n", &a).ok());
  EXPECT_EQ(a, "10.0.0.1:11111");
  for (const std::string& body : {std::string(""), std::string("   "), std::string("no-port"),
                                  std::string("a b:1"), std::string("{\"address\":\"h:1\"}"),
                                  std::string(1000, ':'), std::string("h:1\0x", 5)}) {
    a = "unchanged";
    ExpectRefused(ParsePin("/otter/canal/placement/pins/d", body, &a), "/otter/canal/placement/pins/d", body);
    EXPECT_EQ(a, "unchanged");
  }
}

TEST(PlacementLayout, WeightsAreFinitePositiveNumbers) {
  double w = 0;
  ASSERT_TRUE(ParseWeight("/w", "2.5", &w).ok());
  EXPECT_EQ(w, 2.5);
  ASSERT_TRUE(ParseWeight("/w", " 3\n", &w).ok());
  EXPECT_EQ(w, 3.0);
  ASSERT_TRUE(ParseWeight("/w", "1e6", &w).ok());
  ASSERT_TRUE(ParseWeight("/w", "1e-300", &w).ok());
  for (const std::string& body : {std::string(""), std::string("0"), std::string("-1"), std::string("nan"),
                                  std::string("inf"), std::string("1e400"), std::string("1e7"), std::string("abc"),
                                  std::string("2x"), std::string("+2"), std::string("0x10"), std::string("1 2"),
                                  std::string("\"2\""), std::string(100000, '9'), std::string("2\0", 2)}) {
    w = 99;
    ExpectRefused(ParseWeight("/otter/canal/placement/weights/d", body, &w), "/otter/canal/placement/weights/d",
                  body);
    EXPECT_EQ(w, 99) << body;
  }
}

TEST(PlacementLayout, QuotesAreCutAndControlBytesHidden) {
  const std::string body = "{\"address\":\"\x01\x02\x1b[31m" + std::string(1000, 'x');
  ServerNode n;
  const Status s = ParseServerNode("/p", body, &n);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().find('\x1b'), std::string_view::npos);
  EXPECT_NE(s.message().find("..."), std::string_view::npos);
  EXPECT_LT(s.message().size(), 500u);
}

TEST(PlacementLayout, HintsRoundTripAndBadOnesAreRefused) {
  ServerNode n{"10.0.0.1:11111", 0, {"a", "b"}, false, {}, {}};
  n.hints["a"] = DestinationHints{4.0, {"10.0.0.2:11111"}, {"10.0.0.3:11111", "10.0.0.4:11111"}};
  const std::string body = ServerNodeBody(n);
  EXPECT_NE(body.find(R"("hints":{"a":{"weight":4.0,"preferred":["10.0.0.2:11111"],)"), std::string::npos) << body;
  ServerNode back;
  ASSERT_TRUE(ParseServerNode("/p", body, &back).ok());
  EXPECT_EQ(back, n);
  // No hints: no "hints" key at all (an older server's node stays as it was).
  n.hints.clear();
  EXPECT_EQ(ServerNodeBody(n).find("hints"), std::string::npos);
  for (const char* bad : {R"({"address":"h:1","hints":[]})", R"({"address":"h:1","hints":{"a":1}})",
                          R"({"address":"h:1","hints":{"a/b":{}}})", R"({"address":"h:1","hints":{"a":{"weight":0}}})",
                          R"({"address":"h:1","hints":{"a":{"weight":-1}}})",
                          R"({"address":"h:1","hints":{"a":{"weight":1e7}}})",
                          R"({"address":"h:1","hints":{"a":{"weight":"4"}}})",
                          R"({"address":"h:1","hints":{"a":{"preferred":"h:2"}}})",
                          R"({"address":"h:1","hints":{"a":{"excluded":["no-port"]}}})",
                          R"({"address":"h:1","hints":{"a":{"excluded":[7]}}})"}) {
    const Status st = ParseServerNode("/placement/servers/h:1", bad, &back);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(st.ToString().find("/placement/servers/h:1"), std::string::npos) << st.ToString();
  }
  ASSERT_TRUE(ParseServerNode("/p", R"({"address":"h:1","hints":{"a":{}}})", &back).ok());
  EXPECT_EQ(back.hints.at("a"), DestinationHints{});
}

}  // namespace
}  // namespace canal::coord::layout
