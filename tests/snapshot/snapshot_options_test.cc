#include "canal/snapshot/snapshot_options.h"

#include <gtest/gtest.h>

#include <string>

namespace canal::snapshot {
namespace {

TEST(SnapshotModeTest, ParsesEveryModeByName) {
  for (SnapshotMode m : {SnapshotMode::kNever, SnapshotMode::kInitial, SnapshotMode::kInitialOnly,
                         SnapshotMode::kWhenNeeded}) {
    SnapshotMode parsed = SnapshotMode::kNever;
    ASSERT_TRUE(ParseSnapshotMode(SnapshotModeName(m), &parsed).ok()) << SnapshotModeName(m);
    EXPECT_EQ(parsed, m);
  }
  SnapshotMode parsed = SnapshotMode::kNever;
  ASSERT_TRUE(ParseSnapshotMode("INITIAL", &parsed).ok());
  EXPECT_EQ(parsed, SnapshotMode::kInitial);
}

TEST(SnapshotModeTest, RefusesAnUnknownModeNamingTheKeyAndTheChoices) {
  SnapshotMode parsed = SnapshotMode::kInitial;
  Status s = ParseSnapshotMode("schema_only", &parsed);
  ASSERT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("canal.instance.snapshot.mode=schema_only"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("never, initial, initial_only or when_needed"), std::string_view::npos);
  EXPECT_EQ(parsed, SnapshotMode::kInitial) << "left untouched";
  EXPECT_FALSE(ParseSnapshotMode("", &parsed).ok());
  EXPECT_FALSE(ParseSnapshotMode("initial ", &parsed).ok());
}

TEST(SnapshotModeTest, BoundsALongValueInTheMessage) {
  SnapshotMode parsed;
  Status s = ParseSnapshotMode(std::string(10000, 'x'), &parsed);
  ASSERT_FALSE(s.ok());
  EXPECT_LT(s.message().size(), 300u);
}

TEST(SnapshotOptionsTest, DefaultsAreValidAndNever) {
  SnapshotOptions o;
  EXPECT_EQ(o.mode, SnapshotMode::kNever);
  EXPECT_TRUE(o.Validate().ok());
}

struct Bad {
  const char* key;
  SnapshotOptions options;
};

TEST(SnapshotOptionsTest, RefusesEachSettingOutOfBoundsByName) {
  auto with = [](auto set) {
    SnapshotOptions o;
    set(o);
    return o;
  };
  const Bad cases[] = {
      {"canal.instance.snapshot.threads=0", with([](SnapshotOptions& o) { o.threads = 0; })},
      {"canal.instance.snapshot.threads=65", with([](SnapshotOptions& o) { o.threads = 65; })},
      {"canal.instance.snapshot.chunk.rows=0", with([](SnapshotOptions& o) { o.chunk_rows = 0; })},
      {"canal.instance.snapshot.chunk.rows=1000000000000",
       with([](SnapshotOptions& o) { o.chunk_rows = 1'000'000'000'000; })},
      {"canal.instance.snapshot.chunk.bytes=1024", with([](SnapshotOptions& o) { o.chunk_bytes = 1024; })},
      {"canal.instance.snapshot.chunk.bytes=1099511627776",
       with([](SnapshotOptions& o) { o.chunk_bytes = uint64_t{1} << 40; })},
      {"canal.instance.snapshot.window.keys=0", with([](SnapshotOptions& o) { o.window_keys = 0; })},
  };
  for (const Bad& c : cases) {
    Status s = c.options.Validate();
    ASSERT_EQ(s.code(), Status::Code::kInvalidArgument) << c.key;
    EXPECT_NE(s.message().find(c.key), std::string_view::npos) << s.ToString();
    EXPECT_NE(s.message().find("it must be"), std::string_view::npos) << s.ToString();
  }
}

TEST(SnapshotOptionsTest, AcceptsTheBoundsThemselves) {
  SnapshotOptions o;
  o.threads = SnapshotOptions::kMaxThreads;
  o.chunk_rows = SnapshotOptions::kMaxChunkRows;
  o.chunk_bytes = SnapshotOptions::kMinChunkBytes;
  o.window_keys = SnapshotOptions::kMaxWindowKeys;
  EXPECT_TRUE(o.Validate().ok());
  o.threads = 1;
  o.chunk_rows = 1;
  o.chunk_bytes = SnapshotOptions::kMaxChunkBytes;
  o.window_keys = 1;
  EXPECT_TRUE(o.Validate().ok());
}

}  // namespace
}  // namespace canal::snapshot
