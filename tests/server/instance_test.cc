// Instance without a primary (nothing listens on port 1): start, status,
// filters, restart and stop; and ring ownership — a restart or an HA flip
// (Stop then Start) frees the last run's ring unless a session still holds
// it, and then it is freed with that holder.
#include "canal/server/instance.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/meta/memory_meta_manager.h"
#include "canal/store/ring_store.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;

InstanceConfig OfflineConfig() {
  InstanceConfig config;
  config.destination = "offline";
  config.properties_file = "/nowhere/instance.properties";
  config.parser.destination = "offline";
  config.parser.master.host = "127.0.0.1";
  config.parser.master.port = 1;  // nothing listens on port 1
  config.parser.master.user = "canal";
  config.parser.master.connect_timeout_ms = 200;
  config.parser.reconnect_initial_ms = 20;
  config.store.buffer_size = 64;
  EXPECT_TRUE(config.sink.CompileFilters("", "", "", "").ok());
  return config;
}

class InstanceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(meta_.Start().ok()); }
  void TearDown() override { EXPECT_TRUE(meta_.Stop().ok()); }

  std::shared_ptr<spdlog::logger> Logger() {
    return std::make_shared<spdlog::logger>("instance-test",
                                            std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
  }

  meta::MemoryMetaManager meta_;
  std::ostringstream log_;
};

TEST_F(InstanceTest, StartsServesAndStopsWithoutAPrimary) {
  InstanceOptions options;
  options.status_interval = 30ms;
  auto logger = Logger();
  Instance instance(OfflineConfig(), &meta_, logger, options);
  EXPECT_FALSE(instance.running());
  ASSERT_TRUE(instance.Start().ok());
  EXPECT_TRUE(instance.running());
  EXPECT_EQ(instance.name(), "offline");
  ASSERT_NE(instance.store(), nullptr);
  EXPECT_EQ(instance.store()->options().buffer_size, 64u);
  EXPECT_EQ(instance.meta(), &meta_);
  EXPECT_TRUE(instance.SetClientFilter("shop\\..*").ok());
  EXPECT_EQ(instance.status().client_filter, "shop\\..*");
  Status bad = instance.SetClientFilter("(");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(instance.status().client_filter, "shop\\..*");  // the one in force stays
  std::this_thread::sleep_for(150ms);
  const std::shared_ptr<store::RingStore> first_store = instance.store();  // as a waiting session holds it

  const auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE(instance.Restart().ok());
  EXPECT_TRUE(instance.running());
  EXPECT_NE(instance.store(), first_store);
  EXPECT_TRUE(first_store->stopped());  // still alive, stopped: a session holding it wakes
  instance.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 5s);
  EXPECT_FALSE(instance.running());
  EXPECT_TRUE(instance.store()->stopped());
  instance.Stop();  // idempotent

  logger->flush();
  const std::string log = log_.str();
  EXPECT_NE(log.find("[offline] status: "), std::string::npos) << log;
  EXPECT_NE(log.find("store 0/64 entries"), std::string::npos) << log;
  EXPECT_NE(log.find("[offline] starting: primary 127.0.0.1:1"), std::string::npos) << log;
}

TEST_F(InstanceTest, EachRestartFreesTheRingOfTheRunBefore) {
  Instance instance(OfflineConfig(), &meta_, Logger());
  ASSERT_TRUE(instance.Start().ok());
  std::vector<std::weak_ptr<store::RingStore>> rings;
  for (int i = 0; i < 20; ++i) {
    rings.push_back(instance.store());
    ASSERT_TRUE(instance.Restart().ok()) << "restart " << i;
    ASSERT_TRUE(instance.running());
    // Nobody else held it: gone with the restart, not kept until the instance goes.
    EXPECT_TRUE(rings.back().expired()) << "restart " << i;
    EXPECT_FALSE(instance.store()->stopped());
  }
  instance.Stop();
}

// What an HA flip does to the instance: the registry's deactivate stops it,
// the next activation starts it again.
TEST_F(InstanceTest, EachStopStartFlipFreesTheRingOfTheRunBefore) {
  Instance instance(OfflineConfig(), &meta_, Logger());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(instance.Start().ok()) << "flip " << i;
    std::weak_ptr<store::RingStore> ring = instance.store();
    instance.Stop();
    // Stopped, the instance still has its (stopped) ring for status and late sessions.
    if (const std::shared_ptr<store::RingStore> stopped = ring.lock()) {
      EXPECT_TRUE(stopped->stopped());
    } else {
      FAIL() << "flip " << i << ": the stopped instance lost its ring";
    }
    ASSERT_TRUE(instance.Start().ok());
    EXPECT_TRUE(ring.expired()) << "flip " << i;
    instance.Stop();
  }
}

TEST_F(InstanceTest, AHeldRingLivesOnStoppedUntilItsHolderLetsGo) {
  Instance instance(OfflineConfig(), &meta_, Logger());
  ASSERT_TRUE(instance.Start().ok());
  std::shared_ptr<store::RingStore> held = instance.store();
  std::weak_ptr<store::RingStore> watch = held;
  ASSERT_TRUE(instance.Restart().ok());
  ASSERT_TRUE(instance.Restart().ok());
  EXPECT_FALSE(watch.expired());
  EXPECT_TRUE(held->stopped());
  store::Batch batch;
  EXPECT_EQ(held->Get(1, 0ns, &batch).code(), Status::Code::kAborted);  // a waiting session wakes, and is told
  held.reset();
  EXPECT_TRUE(watch.expired());
  instance.Stop();
}

}  // namespace
}  // namespace canal::server
