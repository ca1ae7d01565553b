// The sessions' side of the metrics: requests, rows, errors and latencies
// counted per destination, the warning an empty batch carries while the
// destination is not streaming, and the metrics endpoint's config keys.
#include <unistd.h>

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "canal/server/client_stats.h"
#include "canal/server/config.h"
#include "canal/server/session_server.h"
#include "memory_destination.h"
#include "session_test_client.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using testing::MemoryDestination;
using testing::MemoryRegistry;
using testing::TestClient;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A session server on `destination`, counting into `book_`.
class SessionMetricsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (server_) server_->Stop();
  }
  void StartServer(std::shared_ptr<Destination> destination) {
    registry_.Add(std::move(destination));
    SessionServerOptions o;
    o.ip = "127.0.0.1";
    o.port = 0;
    o.client_stats = book_;
    auto log = std::make_shared<spdlog::logger>("metrics-test", std::make_shared<spdlog::sinks::null_sink_mt>());
    ASSERT_TRUE(SessionServer::Create(o, &registry_, log, &server_).ok());
    server_->Start();
  }
  // A client logged in and subscribed to "example" as 1001.
  std::unique_ptr<TestClient> Subscribed() {
    auto c = std::make_unique<TestClient>(server_->port());
    EXPECT_TRUE(c->Login("", ""));
    EXPECT_TRUE(c->Subscribe("example", "1001").has_value());
    return c;
  }

  MemoryRegistry registry_;
  std::shared_ptr<ClientStatsBook> book_ = std::make_shared<ClientStatsBook>();
  std::unique_ptr<SessionServer> server_;
};

// ---- session counters ------------------------------------------------------------

TEST_F(SessionMetricsTest, RequestsRowsAndErrorsAreCounted) {
  auto dest = std::make_shared<MemoryDestination>("example");
  StartServer(dest);

  // Three entries of 2 rows each.
  for (uint64_t off = 4; off < 7; ++off) {
    store::EntryMeta m;
    m.kind = store::EntryKind::kTransactionEnd;
    m.safe_resume_point = true;
    m.rows = 2;
    m.position = MemoryDestination::Position(off);
    ASSERT_TRUE(dest->store()->Put(MemoryDestination::EntryBytes(off), m).ok());
  }
  std::unique_ptr<TestClient> client = Subscribed();
  TestClient& c = *client;
  c.SendGet("example", "1001", 10);
  TestClient::GetReply reply = c.ReadGetReply();
  ASSERT_TRUE(reply.is_messages);
  const int64_t batch = reply.messages.batch_id();
  protocol::ClientAck ack;
  ack.set_destination("example");
  ack.set_client_id("1001");
  ack.set_batch_id(batch);
  c.SendPacket(protocol::CLIENTACK, ack);
  c.SendGet("example", "1001", 10);  // nothing left: an empty batch
  ASSERT_TRUE(c.ReadGetReply().is_messages);
  ack.set_batch_id(batch + 100);  // unknown batch: error 400, the session ends
  c.SendPacket(protocol::CLIENTACK, ack);
  std::optional<protocol::Ack> err = c.ReadAck();
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->error_code(), 400);

  std::shared_ptr<const ClientStats> stats = book_->Find("example");
  ASSERT_NE(stats, nullptr);
  // The error answer is recorded once it is written.
  for (int i = 0; i < 100 && stats->errors(0) == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(stats->packets(protocol::SUBSCRIPTION), 1u);
  EXPECT_EQ(stats->packets(protocol::GET), 1u);
  EXPECT_EQ(stats->empty_batches(), 1u);
  EXPECT_EQ(stats->packets(protocol::CLIENTACK), 2u);
  EXPECT_EQ(stats->errors(0), 1u);  // 400
  EXPECT_EQ(stats->get_rows(), 6u);
  EXPECT_EQ(stats->ack_rows(), 6u);
  EXPECT_EQ(stats->ack_exec_ms(), MemoryDestination::Position(6).timestamp_ms);
  EXPECT_GT(stats->bytes(), 0u);
  EXPECT_EQ(stats->latency().count, 5u);
  EXPECT_GE(stats->flush_latency().count, 1u) << "the ack was made durable before the next answer";
  EXPECT_EQ(stats->connection().client_id, "1001");
  c.Close();
  for (int i = 0; i < 100 && stats->connection().connected; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(stats->connection().connected);
}

// A destination that is not streaming says so with every empty batch, in a
// field Canal's clients skip; a batch with entries carries nothing.
class FailingDestination final : public MemoryDestination {
 public:
  using MemoryDestination::MemoryDestination;
  std::string Warning() const override {
    std::lock_guard lock(mu);
    return warning;
  }
  void Set(std::string w) {
    std::lock_guard lock(mu);
    warning = std::move(w);
  }
  mutable std::mutex mu;
  std::string warning;  // guarded by mu
};

TEST_F(SessionMetricsTest, EmptyBatchesCarryTheDestinationsWarning) {
  auto dest = std::make_shared<FailingDestination>("example");
  const std::string warning = "destination example is not streaming from its primary 127.0.0.1:3306: reconnecting";
  dest->Set(warning);
  StartServer(dest);
  std::unique_ptr<TestClient> client = Subscribed();
  TestClient& c = *client;
  c.SendGet("example", "1001", 10);
  TestClient::GetReply reply = c.ReadGetReply();
  ASSERT_TRUE(reply.is_messages);
  EXPECT_EQ(reply.messages.batch_id(), -1);
  EXPECT_EQ(reply.messages.messages_size(), 0);
  EXPECT_EQ(reply.messages.server_warning(), warning);
  // Entries: no warning (the client has data to work on).
  ASSERT_TRUE(dest->PutEntry(4).ok());
  c.SendGet("example", "1001", 10);
  reply = c.ReadGetReply();
  ASSERT_TRUE(reply.is_messages);
  EXPECT_EQ(reply.messages.messages_size(), 1);
  EXPECT_EQ(reply.messages.server_warning(), "");
  // Streaming again: empty batches are plain again.
  dest->Set("");
  c.SendGet("example", "1001", 10);
  reply = c.ReadGetReply();
  ASSERT_TRUE(reply.is_messages);
  EXPECT_EQ(reply.messages.messages_size(), 0);
  EXPECT_EQ(reply.messages.server_warning(), "");
}

// ---- configuration -----------------------------------------------------------------

class MetricsConfigTest : public ::testing::Test {
 protected:
  Status Load(const std::string& text, CanalConfig* config) {
    const auto dir =
        std::filesystem::path(::testing::TempDir()) / ("canal_metrics_config_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "canal.properties").string();
    std::ofstream(file, std::ios::trunc) << text;
    return LoadCanalConfig(file, {}, config, [](const std::string&) { return std::optional<std::string>(); });
  }
};

TEST_F(MetricsConfigTest, DefaultsAndValues) {
  CanalConfig c;
  ASSERT_TRUE(Load("canal.ip = 127.0.0.1\n", &c).ok());
  EXPECT_EQ(c.metrics_port, 11112);
  EXPECT_EQ(c.metrics_ip, "127.0.0.1") << "defaults to canal.ip";
  EXPECT_EQ(c.metrics_max_connections, 16);
  ASSERT_TRUE(
      Load("canal.metrics.pull.port = 0\ncanal.metrics.pull.ip = ::1\ncanal.metrics.pull.max.connections = 3\n", &c)
          .ok());
  EXPECT_EQ(c.metrics_port, 0);
  EXPECT_EQ(c.metrics_ip, "::1");
  EXPECT_EQ(c.metrics_max_connections, 3);
}

TEST_F(MetricsConfigTest, BadValuesNameTheKey) {
  CanalConfig c;
  for (const char* text :
       {"canal.metrics.pull.port = 70000\n", "canal.metrics.pull.port = http\n", "canal.metrics.pull.port = -1\n",
        "canal.metrics.pull.ip = example.com\n", "canal.metrics.pull.max.connections = 0\n"}) {
    Status s = Load(text, &c);
    ASSERT_FALSE(s.ok()) << text;
    const std::string key(text, std::string_view(text).find(' '));
    EXPECT_TRUE(Has(s.ToString(), key)) << s.ToString();
  }
}

}  // namespace
}  // namespace canal::server
