// canal-server in Kafka mode against brokers that cannot take its messages:
// SASL credentials the cluster does not accept, and a listener that accepts
// the connection and never answers. Each is an error in the destination's log
// within seconds, at the level it deserves: refused credentials stop the
// destination's publishing (the operator must fix them), a silent broker is
// retried (it may come back); nothing is acked; the destination holds still in bounded memory (the ring
// fills, the parser waits, nothing grows).
//
// librdkafka 2.0's mock cluster (rdkafka_mock.h) has no SASL at all: it
// neither checks credentials nor answers SaslHandshake, so it cannot refuse a
// password. What it can show is the path a refused login takes: a client set
// to SASL_PLAINTEXT fails its SASL step with RD_KAFKA_RESP_ERR__AUTHENTICATION
// ("SASL Handshake not supported by broker"), the code a real cluster's
// refusal ("Authentication failed: Invalid username or password") also has.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "mq/broker_faults.h"
#include "mq/kafka_mock.h"
#include "mq/mq_fixture.h"
#include "support/canal_install.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;
using canal::testing::CanalInstall;
using canal::testing::TestPort;

// The suite's MariaDB, its canal-servers and their metrics endpoint (one test at a time).
constexpr uint16_t kSandboxPort = TestPort("mq", 50);
constexpr uint16_t kSaslPort = TestPort("mq", 55);
constexpr uint16_t kSilentPort = TestPort("mq", 56);
constexpr uint16_t kMetricsPort = TestPort("mq", 58);

class KafkaBadBroker : public canal::testing::ServerSuite<kSandboxPort> {
 protected:
  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    install_ = std::make_unique<CanalInstall>("kafka-bad-" + name_, kSandboxPort);
  }
  void TearDown() override { install_.reset(); }

  // A server on `port` publishing schema `schema` (a load table) to topic `topic` of
  // `bootstraps`, with a small ring and the metrics endpoint on; `extra` adds to
  // canal.properties.
  ::testing::AssertionResult Start(uint16_t port, const std::string& bootstraps, const std::string& schema,
                                   const std::string& topic, const std::string& extra = "") {
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        port, "canal.serverMode = kafka\nkafka.bootstrap.servers = " + bootstraps +
                  "\ncanal.metrics.pull.port = " + std::to_string(kMetricsPort) + "\n" + extra));
    install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                           "canal.instance.filter.regex = " + schema + "\\\\..*\ncanal.mq.topic = " +
                                           topic + "\n" + testing::kSmallRing);
    return testing::StartServer(*install_);
  }

  bool WriteLoad(const std::string& table, int first, int last) {
    const std::string path = sandbox_->dir() + "/" + name_ + "-" + std::to_string(first) + ".sql";
    canal::testing::WriteLoadSql(path, table, first, last, 5);
    const bool ok = sandbox_->SqlFile(path);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }
  void ExpectHeldBack(const std::string& table) {
    ASSERT_TRUE(WriteLoad(table, 1, 400));
    testing::ExpectHeldBack(kMetricsPort, [&] { return WriteLoad(table, 401, 800); });
  }

  std::string Logs() const { return testing::ServerLogs(*install_); }

  std::string name_;
  std::unique_ptr<CanalInstall> install_;
};

// kafka.security.protocol = SASL_PLAINTEXT with a user and password, against a cluster whose
// listener has no SASL (the mock's: see the top). librdkafka's SASL failure is an ERROR line in
// the destination's log within a second, naming the broker; the first change's topic check
// sees it (librdkafka's error callback) and stops the destination's publishing with an ERROR
// naming the keys to fix, as a real cluster's refusal of the password would (credentials only
// the operator can fix: RabbitMQ's refused login and a wrong replication password stop too).
// Nothing reaches the topic, nothing is acked, and the password appears nowhere in the logs.
TEST_F(KafkaBadBroker, SaslTheClusterDoesNotAcceptStopsTheDestinationWithinSecondsNamingTheFix) {
  testing::KafkaMock mock(1);
  ASSERT_TRUE(mock.ok()) << mock.error();
  ASSERT_TRUE(mock.CreateTopic("mq_sasl", 1));
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql("mq_ksasl.t")));
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(Start(kSaslPort, mock.bootstraps(), "mq_ksasl", "mq_sasl",
                    "kafka.security.protocol = SASL_PLAINTEXT\nkafka.sasl.mechanism = PLAIN\n"
                    "kafka.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required "
                    "username=\"canal\" password=\"sasl-secret-42\";\n"));
  const std::string says = "Failed to initialize SASL authentication";
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find(says) != std::string::npos; }, 30s)) << Logs();
  const double seconds = canal::testing::SecondsSince(started);
  const std::string line = testing::LineWith(Logs(), says);
  std::printf("[ figures ] Kafka SASL refused: %.2f s after startup.sh: %s\n", seconds, line.c_str());
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(line.find(" error "), std::string::npos) << line;
  EXPECT_NE(line.find("[example] librdkafka FAIL: "), std::string::npos) << line;
  EXPECT_NE(line.find("sasl_plaintext://127.0.0.1:"), std::string::npos) << line;

  // A change to publish: its topic check finds the login refused, and the destination stops
  // naming the keys to fix.
  ASSERT_TRUE(WriteLoad("mq_ksasl.t", 1, 1));
  const auto written = std::chrono::steady_clock::now();
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find("MQ publishing stopped") != std::string::npos; }, 30s))
      << Logs();
  const double stop_seconds = canal::testing::SecondsSince(written);
  const std::string stopped = testing::LineWith(Logs(), "MQ publishing stopped");
  std::printf("[ figures ] Kafka SASL refused: stopped %.2f s after the write: %s\n", stop_seconds, stopped.c_str());
  EXPECT_LT(stop_seconds, 5.0);
  EXPECT_NE(stopped.find(" error "), std::string::npos) << stopped;
  EXPECT_NE(stopped.find("asking for topic mq_sasl (mq_ksasl.t at mariadb-bin."), std::string::npos) << stopped;
  EXPECT_NE(stopped.find("the cluster refused the SASL login (sasl_plaintext://127.0.0.1:"), std::string::npos)
      << stopped;
  EXPECT_NE(stopped.find("check kafka.security.protocol, kafka.sasl.mechanism and kafka.sasl.jaas.config"),
            std::string::npos)
      << stopped;

  ASSERT_NO_FATAL_FAILURE(ExpectHeldBack("mq_ksasl.t"));
  EXPECT_EQ(Logs().find("sasl-secret-42"), std::string::npos) << "the password is in the log";
  EXPECT_EQ(testing::CountRecords(mock.ReadAll("mq_sasl", 1, 1s, [](const auto&) { return false; })), 0u);
  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(install_->Stop(), 0);
  std::printf("[ figures ] Kafka SASL refused: stop took %.2f s\n", canal::testing::SecondsSince(stopping));
  EXPECT_EQ(testing::ClientCursor(install_->meta_file("example")), "");
}

// kafka.bootstrap.servers is a listener that accepts the connection and never answers. The
// topic check of the first change waits its 10 s for the cluster's answer, then the batch is
// retried with a WARN naming the broker and the change, for as long as it takes. librdkafka
// says the same in its own lines (its ApiVersion request timed out). Nothing is acked; the ring
// fills, the parser waits, nothing grows; the connections do not pile up.
TEST_F(KafkaBadBroker, ABrokerThatNeverAnswersIsAWarningWithinSecondsAndRetried) {
  testing::SilentBroker silent;
  ASSERT_TRUE(silent.ok());
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql("mq_ksil.t")));
  ASSERT_TRUE(Start(kSilentPort, silent.address(), "mq_ksil", "mq_silent"));
  EXPECT_TRUE(canal::testing::WaitFor([&] { return silent.accepted() >= 1; }, 10s));
  ASSERT_TRUE(WriteLoad("mq_ksil.t", 1, 1));
  const auto written = std::chrono::steady_clock::now();
  const std::string says = "not confirmed by kafka " + silent.address();
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find(says) != std::string::npos; }, 30s)) << Logs();
  const double seconds = canal::testing::SecondsSince(written);
  const std::string line = testing::LineWith(Logs(), says);
  std::printf("[ figures ] Kafka silent broker: warned %.2f s after the write: %s\n", seconds, line.c_str());
  EXPECT_LT(seconds, 15.0);
  EXPECT_NE(line.find(" warning "), std::string::npos) << line;
  EXPECT_NE(line.find("asking for topic mq_silent (mq_ksil.t at mariadb-bin."), std::string::npos) << line;
  EXPECT_NE(line.find("no broker answered within 10 s"), std::string::npos) << line;
  EXPECT_NE(line.find("retrying in"), std::string::npos) << line;
  // librdkafka's own account, escaped and prefixed.
  const std::string lib = testing::LineWith(Logs(), "ApiVersionRequest failed");
  EXPECT_NE(lib.find("[example] librdkafka FAIL: "), std::string::npos) << Logs();
  EXPECT_NE(lib.find("Timed out"), std::string::npos) << lib;

  ASSERT_NO_FATAL_FAILURE(ExpectHeldBack("mq_ksil.t"));
  EXPECT_LE(silent.open_connections(), 2) << silent.accepted() << " accepted";
  EXPECT_EQ(Logs().find("MQ publishing stopped"), std::string::npos) << "a silent broker is retried";
  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(install_->Stop(), 0);
  std::printf("[ figures ] Kafka silent broker: %d connections, %llu bytes read, stop took %.2f s\n",
              silent.accepted(), static_cast<unsigned long long>(silent.bytes_read()),
              canal::testing::SecondsSince(stopping));
  EXPECT_EQ(testing::ClientCursor(install_->meta_file("example")), "");
}

}  // namespace
}  // namespace canal::mq
