// Canal's topic and partition rules (MQMessageUtils): dynamic topics in both
// forms, partition counts per topic, hash modes, Java's String.hashCode.
#include "canal/mq/routing.h"

#include <gtest/gtest.h>

#include <climits>

namespace canal::mq {
namespace {

std::unique_ptr<Router> Make(RoutingConfig c) {
  if (c.topic.empty()) c.topic = "example";
  std::unique_ptr<Router> r;
  Status s = Router::Create(c, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r;
}

Status Refused(RoutingConfig c) {
  if (c.topic.empty()) c.topic = "example";
  std::unique_ptr<Router> r;
  return Router::Create(c, &r);
}

TEST(JavaHashTest, MatchesStringHashCode) {
  EXPECT_EQ(JavaStringHash(""), 0);
  EXPECT_EQ(JavaStringHash("a"), 97);
  EXPECT_EQ(JavaStringHash("abc"), 96354);
  EXPECT_EQ(JavaStringHash("hello"), 99162322);
  EXPECT_EQ(JavaStringHash("\xE4\xB8\xAD"), 0x4E2D);             // 中: one UTF-16 unit
  EXPECT_EQ(JavaStringHash("\xF0\x9F\x98\x80"), 0xD83D * 31 + 0xDE00);  // U+1F600: a surrogate pair
  EXPECT_EQ(JavaStringHash("\xFF"), 0xFFFD);                     // invalid byte: U+FFFD
  EXPECT_EQ(JavaStringHash("polygenelubricants"), INT32_MIN);
}

TEST(JavaHashTest, PartitionLikeCanal) {
  EXPECT_EQ(JavaPartition(7, 3), 1);
  EXPECT_EQ(JavaPartition(-7, 3), 1);
  EXPECT_EQ(JavaPartition(INT32_MIN, 3), 2);  // Math.abs(MIN) % 3 = -2, then abs
  EXPECT_EQ(JavaPartition(123, 1), 0);
}

TEST(RouterTest, DefaultTopicWithoutRules) {
  auto r = Make({});
  EXPECT_EQ(r->TopicFor("db", "t"), "example");
  EXPECT_EQ(r->PartitionsOf("example"), 1);
  EXPECT_EQ(r->HashModeFor("db", "t").kind, HashMode::Kind::kNone);
  EXPECT_FALSE(r->hashing());
}

TEST(RouterTest, DynamicTopicForms) {
  RoutingConfig c;
  c.dynamic_topic = "mytest1.user, topic2:mytest2\\..*; Shop ,orders_all:sales\\.orders.*";
  auto r = Make(c);
  EXPECT_EQ(r->TopicFor("mytest1", "user"), "mytest1.user");  // a bare db.table: its own name
  EXPECT_EQ(r->TopicFor("MyTest1", "User"), "mytest1.user");  // lowercased, matched case-insensitively
  EXPECT_EQ(r->TopicFor("mytest2", "anything"), "topic2");
  EXPECT_EQ(r->TopicFor("shop", "items"), "shop");  // a bare schema: the schema's topic
  EXPECT_EQ(r->TopicFor("sales", "orders_2024"), "orders_all");
  EXPECT_EQ(r->TopicFor("sales", "refunds"), "example");
  EXPECT_EQ(r->TopicFor("", "t"), "example");  // no schema: the default topic
  EXPECT_EQ(r->TopicFor("mytest1", "user"), "mytest1.user");  // again, from the cache
}

TEST(RouterTest, SchemaRegexMatchesOnlySchemas) {
  RoutingConfig c;
  c.dynamic_topic = "test.*";  // no "\." : a schema pattern
  auto r = Make(c);
  EXPECT_EQ(r->TopicFor("test1", "t"), "test1");
  EXPECT_EQ(r->TopicFor("other", "test1"), "example");
}

TEST(RouterTest, PartitionCountsPerTopic) {
  RoutingConfig c;
  c.partitions_num = 3;
  c.dynamic_topic_partition_num = "test.*:4,mycanal:6";
  auto r = Make(c);
  EXPECT_EQ(r->PartitionsOf("test_a"), 4);
  EXPECT_EQ(r->PartitionsOf("mycanal"), 6);
  EXPECT_EQ(r->PartitionsOf("other"), 3);
}

TEST(RouterTest, HashModes) {
  RoutingConfig c;
  c.partitions_num = 4;
  c.partition_hash = "shop.users:id^name,shop.orders:$pk$,log\\..*,.*\\..*:$PK$";
  auto r = Make(c);
  EXPECT_TRUE(r->hashing());
  const HashMode& users = r->HashModeFor("shop", "users");
  EXPECT_EQ(users.kind, HashMode::Kind::kColumns);
  EXPECT_EQ(users.columns, (std::vector<std::string>{"id", "name"}));
  EXPECT_EQ(r->HashModeFor("shop", "orders").kind, HashMode::Kind::kPrimaryKey);
  EXPECT_EQ(r->HashModeFor("log", "x").kind, HashMode::Kind::kTable);
  EXPECT_EQ(r->HashModeFor("any", "thing").kind, HashMode::Kind::kPrimaryKey);
}

TEST(RouterTest, BadSettingsAreRefusedWithTheKey) {
  RoutingConfig c;
  c.partitions_num = 0;
  EXPECT_NE(Refused(c).ToString().find("canal.mq.partitionsNum"), std::string::npos);
  c = {};
  c.dynamic_topic = "t:db\\.(x";
  Status s = Refused(c);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("canal.mq.dynamicTopic"), std::string::npos) << s.ToString();
  c = {};
  c.dynamic_topic = ":db\\..*";
  EXPECT_FALSE(Refused(c).ok());
  c = {};
  c.partition_hash = "db.t:^";
  EXPECT_NE(Refused(c).ToString().find("names no column"), std::string::npos);
  c = {};
  c.dynamic_topic_partition_num = "t:zero";
  EXPECT_NE(Refused(c).ToString().find("canal.mq.dynamicTopicPartitionNum"), std::string::npos);
  c = {};
  c.dynamic_topic_partition_num = "t:-2";
  EXPECT_FALSE(Refused(c).ok());
  c = {};
  c.dynamic_topic_partition_num = "noCount";
  EXPECT_FALSE(Refused(c).ok());
  c = {};
  c.partition = -1;
  EXPECT_FALSE(Refused(c).ok());
  std::unique_ptr<Router> r;
  RoutingConfig no_topic;
  EXPECT_NE(Router::Create(no_topic, &r).ToString().find("canal.mq.topic"), std::string::npos);
}

}  // namespace
}  // namespace canal::mq
