#include "canal/store/ring_store_options.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "canal/store/ring_store.h"

namespace canal::store {
namespace {

bool Mentions(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

TEST(RingStoreOptionsTest, DefaultsAreCanals) {
  RingStoreOptions o;
  EXPECT_EQ(o.buffer_size, 16384u);
  EXPECT_EQ(o.buffer_memunit, 1024u);
  EXPECT_EQ(o.batch_mode, BatchMode::kMemSize);
  EXPECT_FALSE(o.ddl_isolation);
  EXPECT_EQ(o.ByteBound(), 16384u * 1024u);
  EXPECT_TRUE(o.Validate().ok());
}

TEST(RingStoreOptionsTest, SizeThatIsNotAPowerOfTwoIsRejectedNamingKeyAndValue) {
  RingStoreOptions o;
  o.buffer_size = 1000;
  Status s = o.Validate();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "canal.instance.memory.buffer.size")) << s.ToString();
  EXPECT_TRUE(Mentions(s, "1000")) << s.ToString();
  EXPECT_TRUE(Mentions(s, "power of two")) << s.ToString();
}

TEST(RingStoreOptionsTest, ZeroSizeIsRejected) {
  RingStoreOptions o;
  o.buffer_size = 0;
  EXPECT_EQ(o.Validate().code(), Status::Code::kInvalidArgument);
}

TEST(RingStoreOptionsTest, PowersOfTwoFromOneAreAccepted) {
  RingStoreOptions o;
  for (uint32_t size : {1u, 2u, 4u, 1024u, 1u << 24}) {
    o.buffer_size = size;
    EXPECT_TRUE(o.Validate().ok()) << size;
  }
}

TEST(RingStoreOptionsTest, HugeSizeIsRejected) {
  RingStoreOptions o;
  o.buffer_size = 1u << 25;
  Status s = o.Validate();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "canal.instance.memory.buffer.size")) << s.ToString();
}

TEST(RingStoreOptionsTest, ZeroMemunitIsRejectedNamingKey) {
  RingStoreOptions o;
  o.buffer_memunit = 0;
  Status s = o.Validate();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "canal.instance.memory.buffer.memunit")) << s.ToString();
}

TEST(RingStoreOptionsTest, CreateRefusesInvalidOptions) {
  RingStoreOptions o;
  o.buffer_size = 3;
  std::unique_ptr<RingStore> store;
  Status s = RingStore::Create(o, &store);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "canal.instance.memory.buffer.size")) << s.ToString();
  EXPECT_EQ(store, nullptr);
}

TEST(RingStoreOptionsTest, PropertiesSetEveryStoreKey) {
  RingStoreOptions o;
  EXPECT_TRUE(o.SetFromProperty("canal.instance.memory.buffer.size", "1024").ok());
  EXPECT_TRUE(o.SetFromProperty("canal.instance.memory.buffer.memunit", " 512 ").ok());
  EXPECT_TRUE(o.SetFromProperty("canal.instance.memory.batch.mode", "ITEMSIZE").ok());
  EXPECT_TRUE(o.SetFromProperty("canal.instance.get.ddl.isolation", "true").ok());
  EXPECT_EQ(o.buffer_size, 1024u);
  EXPECT_EQ(o.buffer_memunit, 512u);
  EXPECT_EQ(o.batch_mode, BatchMode::kItemSize);
  EXPECT_TRUE(o.ddl_isolation);
  EXPECT_TRUE(o.SetFromProperty("canal.instance.memory.batch.mode", "memsize").ok());
  EXPECT_EQ(o.batch_mode, BatchMode::kMemSize);
  EXPECT_TRUE(o.SetFromProperty("canal.instance.get.ddl.isolation", "FALSE").ok());
  EXPECT_FALSE(o.ddl_isolation);
}

TEST(RingStoreOptionsTest, BadPropertyValuesAreRejectedAndLeaveOptionsUnchanged) {
  const struct {
    const char* key;
    const char* value;
  } cases[] = {
      {"canal.instance.memory.buffer.size", "1000"},
      {"canal.instance.memory.buffer.size", "abc"},
      {"canal.instance.memory.buffer.size", "-16"},
      {"canal.instance.memory.buffer.size", "16384x"},
      {"canal.instance.memory.buffer.size", ""},
      {"canal.instance.memory.buffer.size", "99999999999"},
      {"canal.instance.memory.buffer.memunit", "0"},
      {"canal.instance.memory.buffer.memunit", "1.5"},
      {"canal.instance.memory.batch.mode", "BYTES"},
      {"canal.instance.get.ddl.isolation", "yes"},
  };
  for (const auto& c : cases) {
    RingStoreOptions o;
    Status s = o.SetFromProperty(c.key, c.value);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.key << "=" << c.value;
    EXPECT_TRUE(Mentions(s, c.key)) << s.ToString();
    EXPECT_TRUE(Mentions(s, std::string("'") + c.value + "'")) << s.ToString();
    RingStoreOptions defaults;
    EXPECT_EQ(o.buffer_size, defaults.buffer_size);
    EXPECT_EQ(o.buffer_memunit, defaults.buffer_memunit);
    EXPECT_EQ(o.batch_mode, defaults.batch_mode);
    EXPECT_EQ(o.ddl_isolation, defaults.ddl_isolation);
  }
}

TEST(RingStoreOptionsTest, OtherKeysAreNotFound) {
  RingStoreOptions o;
  EXPECT_TRUE(o.SetFromProperty("canal.instance.filter.regex", ".*\\..*").IsNotFound());
}

TEST(RingStoreOptionsTest, BatchModeNamesAreCanals) {
  EXPECT_EQ(BatchModeName(BatchMode::kMemSize), "MEMSIZE");
  EXPECT_EQ(BatchModeName(BatchMode::kItemSize), "ITEMSIZE");
}

}  // namespace
}  // namespace canal::store
