// Observability acceptance: a real Prometheus (Debian's package) scrapes the
// real canal-server every second while a workload streams to an acking
// client, and its HTTP API reports the transactions and rows the test wrote
// and acked; the lag rises while nobody acks and falls once the client
// catches up; /status and /health follow the primary going away and back,
// and a GET still answers (empty) meanwhile.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/load_table.h"
#include "support/loopback_http.h"
#include "support/mariadb_sandbox.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using client::Connector;
using client::ConnectorOptions;
using client::Message;
using client::TimeUnit;
using nlohmann::json;

// This suite's ports (14100-14199).
constexpr uint16_t kSandboxPort = TestPort("observability", 1);
constexpr uint16_t kPromClientPort = TestPort("observability", 11);
constexpr uint16_t kPromMetricsPort = TestPort("observability", 21);
constexpr uint16_t kLagClientPort = TestPort("observability", 12);
constexpr uint16_t kLagMetricsPort = TestPort("observability", 22);
constexpr uint16_t kFailClientPort = TestPort("observability", 13);
constexpr uint16_t kFailMetricsPort = TestPort("observability", 23);
constexpr uint16_t kPrometheusPort = TestPort("observability", 31);
// The HA suite: its own MariaDB and ZooKeeper, two servers.
constexpr uint16_t kHaSandboxPort = TestPort("observability", 3);
constexpr uint16_t kHaZkPort = TestPort("observability", 41);
constexpr uint16_t kHaClientPorts[2] = {TestPort("observability", 15), TestPort("observability", 16)};
constexpr uint16_t kHaMetricsPorts[2] = {TestPort("observability", 25), TestPort("observability", 26)};
constexpr int kHaSessionTimeoutMs = 6000;
constexpr const char* kPrometheus = "/usr/bin/prometheus";

std::string UrlEncode(const std::string& s) {
  std::string out;
  char hex[4];
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// The value of `series` (the full "name{labels}" text) on a /metrics page.
std::optional<double> MetricValue(const std::string& page, const std::string& series) {
  const std::string prefix = series + " ";
  size_t at = page.find("\n" + prefix);
  if (at == std::string::npos) return std::nullopt;
  at += 1 + prefix.size();
  return std::strtod(page.c_str() + at, nullptr);
}

std::optional<double> ServerMetric(uint16_t metrics_port, const std::string& series) {
  const HttpReply r = HttpGet(metrics_port, "/metrics");
  if (r.status != 200) return std::nullopt;
  return MetricValue(r.body, series);
}

// ---- Prometheus --------------------------------------------------------------

// Debian's prometheus on loopback with its own config and data folder,
// scraping `target_port` every second. Stopped (SIGTERM, then SIGKILL) at
// destruction.
class PrometheusProcess {
 public:
  PrometheusProcess(uint16_t port, uint16_t target_port)
      : port_(port), dir_(fs::path(CANAL_BINARY_DIR) / "test-sandboxes" / ("prometheus-" + std::to_string(port))) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    fs::create_directories(dir_ / "data");
    WriteFile(dir_ / "prometheus.yml",
              "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n"
              "scrape_configs:\n  - job_name: canal\n    static_configs:\n      - targets: ['127.0.0.1:" +
                  std::to_string(target_port) + "']\n");
  }
  ~PrometheusProcess() { Stop(); }

  bool Start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string log = (dir_ / "prometheus.log").string();
      FILE* f = std::freopen(log.c_str(), "w", stdout);
      if (f != nullptr) ::dup2(::fileno(stdout), STDERR_FILENO);
      const std::string config = "--config.file=" + (dir_ / "prometheus.yml").string();
      const std::string data = "--storage.tsdb.path=" + (dir_ / "data").string();
      const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
      ::execl(kPrometheus, kPrometheus, config.c_str(), data.c_str(), listen.c_str(), "--log.level=warn",
              "--storage.tsdb.retention.time=1h", static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    if (pid_ < 0) return false;
    return WaitFor([&] { return HttpGet(port_, "/-/ready").status == 200; }, 60s);
  }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return;
      }
      std::this_thread::sleep_for(100ms);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

  // The value of an instant query with exactly one series; nullopt otherwise.
  std::optional<double> Query(const std::string& promql) const {
    const HttpReply r = HttpGet(port_, "/api/v1/query?query=" + UrlEncode(promql));
    if (r.status != 200) return std::nullopt;
    const json j = json::parse(r.body, nullptr, false);
    if (j.is_discarded() || j.value("status", "") != "success") return std::nullopt;
    const json& result = j["data"]["result"];
    if (!result.is_array() || result.size() != 1) return std::nullopt;
    return std::stod(result[0]["value"][1].get<std::string>());
  }
  std::string Log() const { return ReadAll(dir_ / "prometheus.log"); }

 private:
  const uint16_t port_;
  const fs::path dir_;
  pid_t pid_ = 0;
};

// ---- The suite -------------------------------------------------------------------

class Observability : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sandbox_ = StartSuiteSandbox(kSandboxPort, &setup_error_); }
  static void TearDownTestSuite() { sandbox_.reset(); }

  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    ASSERT_TRUE(fs::exists(CanalInstall::ServerProgram())) << CanalInstall::ServerProgram() << " is missing";
    install_ = std::make_unique<CanalInstall>(
        "observability-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()), kSandboxPort);
  }
  void TearDown() override { install_.reset(); }

  static bool Sql(const std::string& sql) {
    const bool ok = sandbox_->Sql(sql);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }

  // canal-server on `client_port` with metrics on `metrics_port`, starting
  // at the primary's end; `instance` lines are added to instance.properties.
  ::testing::AssertionResult StartServer(uint16_t client_port, uint16_t metrics_port,
                                         const std::string& instance = "") {
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        client_port, "canal.metrics.pull.port = " + std::to_string(metrics_port) + "\n"));
    install_->WriteInstance("example", StartAtPrimaryEnd(*sandbox_) + instance);
    std::string out;
    const int rc = install_->Startup(&out);
    if (rc != 0) {
      return ::testing::AssertionFailure() << "startup.sh exit " << rc << ":\n"
                                           << out << "\n"
                                           << ReadAll(install_->server_log());
    }
    if (!WaitFor([&] { return HttpGet(metrics_port, "/health").status == 200; }, 30s)) {
      return ::testing::AssertionFailure()
             << "the destination never streamed: " << HttpGet(metrics_port, "/status").body << "\n"
             << ReadAll(install_->server_log());
    }
    return ::testing::AssertionSuccess();
  }

  static ConnectorOptions ClientOptions(uint16_t port) {
    ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(port);
    o.destination = "example";
    o.connect_timeout = 2s;
    o.read_timeout = 20s;
    return o;
  }
  // Connects and subscribes, retrying while the server is not there yet.
  static Status Open(Connector& c) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    for (;;) {
      Status s = c.Connect();
      if (s.ok()) s = c.Subscribe();
      if (s.ok() || std::chrono::steady_clock::now() > deadline) return s;
      c.Disconnect();
      std::this_thread::sleep_for(50ms);
    }
  }

  // Gets and acks until `rows` rows have come; the rows received.
  static uint64_t Drain(Connector& c, uint64_t rows, std::chrono::seconds limit = 60s) {
    uint64_t got = 0;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (got < rows && std::chrono::steady_clock::now() < deadline) {
      Message m;
      Status s = c.GetWithoutAck(100, 200, TimeUnit::kMilliseconds, &m);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok()) break;
      if (m.batch_id() == -1) continue;
      s = ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData&) { ++got; });
      EXPECT_TRUE(s.ok()) << s.ToString();
      EXPECT_TRUE(c.Ack(m.batch_id()).ok());
    }
    return got;
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
  std::unique_ptr<CanalInstall> install_;
};

// Prometheus scrapes canal-server every second; after a workload of 40
// transactions of 3 rows, all acked, its API answers the numbers written and
// acked, and a delay under a second.
TEST_F(Observability, PrometheusSeesTheTransactionsAndRowsWrittenAndAcked) {
  if (!fs::exists(kPrometheus)) {
    GTEST_SKIP() << kPrometheus << " is missing: install Debian's prometheus package (scripts/install-deps.sh)";
  }
  constexpr int kTxns = 40, kRowsPerTxn = 3;
  ASSERT_TRUE(
      Sql("DROP DATABASE IF EXISTS obs_db; CREATE DATABASE obs_db; "
          "CREATE TABLE obs_db.t (id INT PRIMARY KEY, v INT)"));
  ASSERT_TRUE(StartServer(kPromClientPort, kPromMetricsPort));
  PrometheusProcess prometheus(kPrometheusPort, kPromMetricsPort);
  ASSERT_TRUE(prometheus.Start()) << prometheus.Log();

  Connector c(ClientOptions(kPromClientPort));
  Status s = Open(c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string sql;
  for (int t = 0; t < kTxns; ++t) {
    sql += "BEGIN;";
    for (int r = 0; r < kRowsPerTxn; ++r) {
      const int id = t * kRowsPerTxn + r;
      sql += " INSERT INTO obs_db.t VALUES (" + std::to_string(id) + ", " + std::to_string(id * 7) + ");";
    }
    sql += " COMMIT;";
  }
  ASSERT_TRUE(Sql(sql));
  ASSERT_EQ(Drain(c, kTxns * kRowsPerTxn), static_cast<uint64_t>(kTxns * kRowsPerTxn));

  const std::string dest = "{destination=\"example\"}";
  const auto prom_equals = [&](const std::string& q, double want) {
    std::optional<double> last;
    const bool ok = WaitFor([&] { return (last = prometheus.Query(q)) && *last == want; }, 60s);
    EXPECT_TRUE(ok) << q << " = " << (last ? std::to_string(*last) : std::string("(no single series)")) << ", want "
                    << want << "\n"
                    << prometheus.Log();
    return ok;
  };
  prom_equals("up{job=\"canal\"}", 1);
  prom_equals("canal_instance_transactions" + dest, kTxns);
  prom_equals("canal_instance_ack_rows" + dest, kTxns * kRowsPerTxn);
  prom_equals("canal_instance_get_rows" + dest, kTxns * kRowsPerTxn);
  prom_equals("canal_instance_put_rows" + dest, kTxns * kRowsPerTxn);
  // Caught up: the delay Prometheus holds is under a second (the primary's
  // heartbeat says so within a heartbeat period).
  std::optional<double> delay;
  EXPECT_TRUE(
      WaitFor([&] { return (delay = prometheus.Query("canal_instance_traffic_delay" + dest)) && *delay < 1000; }, 60s))
      << "canal_instance_traffic_delay = " << (delay ? std::to_string(*delay) : std::string("(none)"));
  // The histogram and the labelled families parse as such.
  std::optional<double> gets;
  EXPECT_TRUE(WaitFor(
      [&] { return (gets = prometheus.Query("canal_instance_client_request_latency_count" + dest)) && *gets > 0; },
      30s));
  prom_equals("canal_instance_client_packets{destination=\"example\",packetType=\"SUBSCRIPTION\"}", 1);
  prom_equals("canal_instance_ha_role{destination=\"example\",role=\"active\"}", 1);
  std::optional<double> rss = prometheus.Query("canal_process_resident_memory_bytes");
  EXPECT_TRUE(rss && *rss > 0);
  std::printf("[ observability ] Prometheus: %d transactions, %d rows acked, delay %.0f ms, %.0f requests timed\n",
              kTxns, kTxns * kRowsPerTxn, delay.value_or(-1), gets.value_or(-1));
  c.Disconnect();
}

// Nobody acks while the primary writes: the ring fills, the parser waits, and
// the delay rises; once a client takes and acks everything it falls under a
// second.
TEST_F(Observability, LagRisesWithoutAcksAndFallsOnceTheClientCatchesUp) {
  ASSERT_TRUE(
      Sql("DROP DATABASE IF EXISTS lag_db; CREATE DATABASE lag_db; "
          "CREATE TABLE lag_db.t (id INT PRIMARY KEY, v INT)"));
  ASSERT_TRUE(StartServer(kLagClientPort, kLagMetricsPort,
                          "canal.instance.memory.buffer.size = 64\ncanal.instance.detecting.interval.time = 1\n"));
  const std::string delay_series = "canal_instance_traffic_delay{destination=\"example\"}";
  const std::string ack_delay_series = "canal_instance_ack_delay{destination=\"example\"}";

  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    while (!stop.load()) {
      const int id = written.load();
      if (!sandbox_->Sql("INSERT INTO lag_db.t VALUES (" + std::to_string(id) + ", 1)")) break;
      written.fetch_add(1);
      std::this_thread::sleep_for(20ms);
    }
  });
  std::optional<double> delay, ack_delay;
  const bool rose = WaitFor(
      [&] {
        delay = ServerMetric(kLagMetricsPort, delay_series);
        ack_delay = ServerMetric(kLagMetricsPort, ack_delay_series);
        return delay && *delay > 2000 && ack_delay && *ack_delay > 2000;
      },
      60s);
  stop.store(true);
  writer.join();
  ASSERT_TRUE(rose) << "traffic delay " << delay.value_or(-1) << ", ack delay " << ack_delay.value_or(-1) << " after "
                    << written.load() << " rows\n"
                    << HttpGet(kLagMetricsPort, "/status").body;
  std::printf("[ observability ] no acks: delay %.0f ms, ack delay %.0f ms after %d rows\n", *delay, *ack_delay,
              written.load());
  const std::optional<double> fill =
      ServerMetric(kLagMetricsPort, "canal_instance_store_fill_ratio{destination=\"example\"}");
  EXPECT_TRUE(fill && *fill > 0.9) << "the ring is full: " << fill.value_or(-1);

  Connector c(ClientOptions(kLagClientPort));
  Status s = Open(c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(Drain(c, static_cast<uint64_t>(written.load())), static_cast<uint64_t>(written.load()));
  const bool fell = WaitFor(
      [&] {
        delay = ServerMetric(kLagMetricsPort, delay_series);
        ack_delay = ServerMetric(kLagMetricsPort, ack_delay_series);
        return delay && *delay < 1000 && ack_delay && *ack_delay < 1000;
      },
      60s);
  EXPECT_TRUE(fell) << "traffic delay " << delay.value_or(-1) << ", ack delay " << ack_delay.value_or(-1) << "\n"
                    << HttpGet(kLagMetricsPort, "/status").body;
  std::printf("[ observability ] caught up: delay %.0f ms, ack delay %.0f ms\n", delay.value_or(-1),
              ack_delay.value_or(-1));
  c.Disconnect();
}

// The primary stops: /status says why and since when, /health turns 503, a
// GET still answers (empty); the primary returns and all is well again.
TEST_F(Observability, StatusAndHealthFollowThePrimaryGoingAwayAndBack) {
  ASSERT_TRUE(StartServer(kFailClientPort, kFailMetricsPort, "canal.instance.detecting.interval.time = 1\n"));
  Connector c(ClientOptions(kFailClientPort));
  Status s = Open(c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  json status = json::parse(HttpGet(kFailMetricsPort, "/status").body);
  ASSERT_EQ(status["destinations"][0]["state"], "streaming") << status.dump(2);
  EXPECT_EQ(status["destinations"][0]["client"]["connected"], true);
  EXPECT_EQ(status["destinations"][0]["primary"], "127.0.0.1:" + std::to_string(kSandboxPort));

  ASSERT_TRUE(sandbox_->Stop()) << sandbox_->error();
  const bool failing = WaitFor(
      [&] {
        status = json::parse(HttpGet(kFailMetricsPort, "/status").body, nullptr, false);
        return !status.is_discarded() && status["destinations"][0]["state"] != "streaming" &&
               !status["destinations"][0]["last_error"].is_null();
      },
      30s);
  const HttpReply health = HttpGet(kFailMetricsPort, "/health");
  // Read while the primary is still down: once it is back the parser reconnects within a second.
  const std::string html = HttpGet(kFailMetricsPort, "/status.html").body;
  Message m;
  const Status get = c.GetWithoutAck(10, 100, TimeUnit::kMilliseconds, &m);
  const bool restarted = sandbox_->Start();
  ASSERT_TRUE(restarted) << sandbox_->error();
  ASSERT_TRUE(failing) << status.dump(2);
  const json& d = status["destinations"][0];
  std::printf("[ observability ] primary stopped: state %s, last error \"%s\"\n", d["state"].get<std::string>().c_str(),
              d["last_error"]["message"].get<std::string>().c_str());
  EXPECT_GT(d["last_error"]["time_ms"].get<int64_t>(), 0);
  EXPECT_EQ(status["healthy"], false);
  EXPECT_EQ(health.status, 503) << health.body;
  EXPECT_NE(health.body.find("example: "), std::string::npos) << health.body;
  EXPECT_TRUE(get.ok()) << "a GET still answers while the primary is away: " << get.ToString();
  EXPECT_EQ(m.batch_id(), -1);
  EXPECT_NE(m.server_warning().find("destination example is not streaming from its primary"), std::string::npos)
      << "the reason reaches the client: \"" << m.server_warning() << "\"";
  EXPECT_NE(html.find("<h2 class=\"bad\">example:"), std::string::npos) << html;

  EXPECT_TRUE(WaitFor([&] { return HttpGet(kFailMetricsPort, "/health").status == 200; }, 60s))
      << HttpGet(kFailMetricsPort, "/status").body;
  const std::optional<double> reconnects =
      ServerMetric(kFailMetricsPort, "canal_instance_upstream_reconnects{destination=\"example\"}");
  EXPECT_TRUE(reconnects && *reconnects >= 1) << reconnects.value_or(-1);
  c.Disconnect();
}

// ---- HA: roles and fencing on /metrics and /status ---------------------------

class ObservabilityHa : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = StartSuiteSandbox(kHaSandboxPort, &setup_error_);
    zk_ = StartSuiteZk(kHaZkPort, &zk_error_);
  }
  static void TearDownTestSuite() {
    zk_.reset();
    sandbox_.reset();
  }
  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    CANAL_REQUIRE_ZK(zk_, zk_error_);
    ASSERT_TRUE(fs::exists(CanalInstall::ServerProgram())) << CanalInstall::ServerProgram() << " is missing";
  }
  void TearDown() override {
    for (auto& install : installs_) {
      if (install) install->Thaw();
      install.reset();
    }
  }

  static std::string Role(uint16_t metrics_port) {
    const HttpReply r = HttpGet(metrics_port, "/status");
    const json j = json::parse(r.body, nullptr, false);
    if (j.is_discarded() || !j.contains("destinations") || j["destinations"].empty()) return "";
    return j["destinations"][0].value("role", "");
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::unique_ptr<ZkSandbox> zk_;
  static inline std::string setup_error_, zk_error_;
  std::unique_ptr<CanalInstall> installs_[2];
};

// Two servers share the destination: the first is active and streaming, the
// second stands by (healthy: it is not supposed to serve). The active one is
// frozen past its ZooKeeper session: the standby takes over, and the old one,
// resumed, reports the destination fenced and counts the fence.
TEST_F(ObservabilityHa, ActiveStandbyAndFencedRolesAreReported) {
  const std::string start = StartAtPrimaryEnd(*sandbox_);
  for (int i = 0; i < 2; ++i) {
    installs_[i] = std::make_unique<CanalInstall>("observability-ha-" + std::string(1, "ab"[i]), kHaSandboxPort);
    installs_[i]->WriteServerProperties(CanalInstall::ServerProperties(
        kHaClientPorts[i], "canal.zkServers = " + zk_->servers() +
                               "\ncanal.zookeeper.session.timeout = " + std::to_string(kHaSessionTimeoutMs) +
                               "\ncanal.metrics.pull.port = " + std::to_string(kHaMetricsPorts[i]) + "\n"));
    installs_[i]->WriteInstance("example", start);
  }
  std::string out;
  ASSERT_EQ(installs_[0]->Startup(&out), 0) << out;
  ASSERT_TRUE(WaitFor(
      [&] { return HttpGet(kHaMetricsPorts[0], "/health").status == 200 && Role(kHaMetricsPorts[0]) == "active"; },
      30s))
      << HttpGet(kHaMetricsPorts[0], "/status").body << ReadAll(installs_[0]->server_log());
  ASSERT_EQ(installs_[1]->Startup(&out), 0) << out;
  ASSERT_TRUE(WaitFor([&] { return Role(kHaMetricsPorts[1]) == "standby"; }, 30s))
      << HttpGet(kHaMetricsPorts[1], "/status").body;
  EXPECT_EQ(HttpGet(kHaMetricsPorts[1], "/health").status, 200) << "standing by is healthy";
  EXPECT_EQ(ServerMetric(kHaMetricsPorts[1], "canal_instance_ha_role{destination=\"example\",role=\"standby\"}"), 1);
  EXPECT_EQ(ServerMetric(kHaMetricsPorts[0], "canal_instance_ha_role{destination=\"example\",role=\"active\"}"), 1);
  EXPECT_EQ(ServerMetric(kHaMetricsPorts[1], "canal_instance_transactions{destination=\"example\"}"), std::nullopt)
      << "a standby exports no instance series";

  const auto frozen_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(installs_[0]->Freeze());
  EXPECT_TRUE(WaitFor([&] { return Role(kHaMetricsPorts[1]) == "active"; }, 30s))
      << HttpGet(kHaMetricsPorts[1], "/status").body;
  std::this_thread::sleep_until(frozen_at + std::chrono::milliseconds(kHaSessionTimeoutMs) + 3s);
  ASSERT_TRUE(installs_[0]->Thaw());
  std::string role;
  EXPECT_TRUE(WaitFor([&] { return (role = Role(kHaMetricsPorts[0])) == "fenced"; }, 30s))
      << role << "\n"
      << HttpGet(kHaMetricsPorts[0], "/status").body;
  const std::optional<double> fences =
      ServerMetric(kHaMetricsPorts[0], "canal_instance_ha_fencing_events{destination=\"example\"}");
  EXPECT_TRUE(fences && *fences >= 1) << fences.value_or(-1);
  const json j = json::parse(HttpGet(kHaMetricsPorts[0], "/status").body, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  const std::string reason = j["destinations"][0]["ha"]["last_deactivation"].value("reason", "");
  EXPECT_TRUE(reason.starts_with("fenced: ")) << reason;
  std::printf("[ observability ] HA: standby took over; the resumed server reports \"%s\"\n", reason.c_str());
  EXPECT_TRUE(WaitFor([&] { return HttpGet(kHaMetricsPorts[1], "/health").status == 200; }, 30s))
      << HttpGet(kHaMetricsPorts[1], "/status").body;
}

}  // namespace
}  // namespace canal::testing
