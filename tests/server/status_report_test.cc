// The metrics and status side of the server: the report of a destination
// that is streaming, failing, standing by and fenced (as JSON, HTML, metrics
// and /health), the shipped dashboard's series, and the HTTP endpoint's
// answers to good and bad requests and its connection limit.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "canal/server/client_stats.h"
#include "canal/server/http_endpoint.h"
#include "canal/server/status_report.h"
#include "memory_destination.h"
#include "support/loopback_http.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::MemoryDestination;

constexpr int64_t kNow = 1'700'000'000'000;

// A destination whose status the test sets.
class ReportingDestination final : public ManagedDestination {
 public:
  explicit ReportingDestination(std::string name) : dest_(std::move(name)) {}
  Status Start() override { return Status::OK(); }
  void Stop() override {}
  const std::string& name() const override { return dest_.name(); }
  bool running() const override { return status_.running; }
  std::shared_ptr<store::RingStore> store() override { return dest_.store(); }
  meta::MetaManager* meta() override { return dest_.meta(); }
  Status SetClientFilter(std::string_view) override { return Status::OK(); }
  bool Report(InstanceStatus* out) const override {
    *out = status_;
    return true;
  }
  InstanceStatus status_;
  MemoryDestination dest_;
};

class FakeArbiter final : public DestinationArbiter {
 public:
  void Join(const std::string&, Handler) override {}
  void Leave(const std::string&) override {}
  bool IsActive(std::string_view d) const override { return active.contains(std::string(d)); }
  std::set<std::string> active;
};

InstanceStatus Streaming() {
  InstanceStatus s;
  s.running = true;
  s.primary = "127.0.0.1:3306";
  s.parser.state = "streaming";
  s.parser.position.journal_name = "mariadb-bin.000003";
  s.parser.position.position = 1407;
  s.parser.position.timestamp_ms = kNow - 20;
  s.parser.lag_ms = 20;
  s.parser.bytes = 123456;
  s.sink.transactions = 42;
  s.sink.rows = 84;
  s.store.put_sequence = 100;
  s.store.get_sequence = 90;
  s.store.ack_sequence = 80;
  s.store.held_bytes = 2000;
  s.store.put_bytes = 10000;
  s.store.ack_bytes = 8000;
  s.store.put_blocked_ns = 5'000'000;
  s.store_capacity = 16384;
  return s;
}

class StatusReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dest_ = std::make_shared<ReportingDestination>("example");
    dest_->status_ = Streaming();
    StatusSources sources;
    sources.destinations = [this] {
      std::vector<std::pair<std::string, std::shared_ptr<ManagedDestination>>> out;
      out.emplace_back("example", dest_);
      if (with_unconfigured_) out.emplace_back("broken", nullptr);
      return out;
    };
    sources.arbiter = ha_ ? &arbiter_ : nullptr;
    sources.ha_events = &ha_events_;
    sources.clients = &clients_;
    sources.server_address = "127.0.0.1:11111";
    sources.now_ms = [this] { return now_; };
    collector_ = std::make_unique<StatusCollector>(std::move(sources));
  }
  void UseHa() {
    ha_ = true;
    SetUp();
  }
  json StatusJson() { return json::parse(RenderStatusJson(collector_->Collect())); }
  std::string Metrics() { return RenderMetrics(collector_->Collect()); }
  bool Healthy(std::string* why) { return server::Healthy(collector_->Collect(), why); }

  std::shared_ptr<ReportingDestination> dest_;
  FakeArbiter arbiter_;
  HaEventLog ha_events_;
  ClientStatsBook clients_;
  bool ha_ = false;
  bool with_unconfigured_ = false;
  int64_t now_ = kNow;
  std::unique_ptr<StatusCollector> collector_;
};

bool Has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST_F(StatusReportTest, StreamingDestination) {
  std::shared_ptr<ClientStats> client = clients_.For("example");
  client->Subscribed("10.0.0.7:50123", "1001", kNow - 5000);
  client->Request(6, 300, false, 0, 1.5, kNow - 100);
  client->Got(10, kNow - 60'000);
  client->Acked(7, kNow - 60'000);

  const json j = StatusJson();
  ASSERT_EQ(j["destinations"].size(), 1u);
  const json& d = j["destinations"][0];
  EXPECT_EQ(d["name"], "example");
  EXPECT_EQ(d["state"], "streaming");
  EXPECT_EQ(d["role"], "active");
  EXPECT_EQ(d["streaming"], true);
  EXPECT_EQ(d["primary"], "127.0.0.1:3306");
  EXPECT_EQ(d["position_read"]["journal"], "mariadb-bin.000003");
  EXPECT_EQ(d["position_read"]["file_index"], 3);
  EXPECT_EQ(d["position_read"]["offset"], 1407);
  EXPECT_EQ(d["lag_ms"], 20);
  EXPECT_EQ(d["ring"]["entries"], 20);
  EXPECT_EQ(d["ring"]["not_fetched"], 10);
  EXPECT_EQ(d["ring"]["capacity"], 16384);
  EXPECT_EQ(d["client"]["connected"], true);
  EXPECT_EQ(d["client"]["address"], "10.0.0.7:50123");
  EXPECT_EQ(d["client"]["last_request_ms"], kNow - 100);
  EXPECT_TRUE(d["last_error"].is_null());
  EXPECT_EQ(j["healthy"], true);

  std::string why;
  EXPECT_TRUE(Healthy(&why)) << why;

  const std::string m = Metrics();
  EXPECT_TRUE(Has(m, "canal_instance{destination=\"example\",mode=\"spring\"} 1\n")) << m;
  EXPECT_TRUE(
      Has(m, "# TYPE canal_instance_transactions counter\ncanal_instance_transactions{destination=\"example\"} 42\n"));
  EXPECT_TRUE(
      Has(m, "# TYPE canal_instance_traffic_delay gauge\ncanal_instance_traffic_delay{destination=\"example\"} 20\n"));
  EXPECT_TRUE(Has(m, "canal_instance_received_binlog_bytes{destination=\"example\"} 123456\n"));
  EXPECT_TRUE(Has(m, "canal_instance_parser_mode{destination=\"example\",parallel=\"false\"} 1\n"));
  EXPECT_TRUE(Has(m, "canal_instance_publish_blocking_time{destination=\"example\"} 5\n"));
  EXPECT_TRUE(Has(m, "canal_instance_sink_blocking_time{destination=\"example\"} 5\n"));
  EXPECT_TRUE(Has(m, "canal_instance_store_produce_seq{destination=\"example\"} 100\n"));
  EXPECT_TRUE(Has(m, "canal_instance_store_consume_seq{destination=\"example\"} 80\n"));
  EXPECT_TRUE(Has(m, "canal_instance_store_produce_mem{destination=\"example\"} 10000\n"));
  EXPECT_TRUE(Has(m, "canal_instance_store_consume_mem{destination=\"example\"} 8000\n"));
  EXPECT_TRUE(Has(m, "canal_instance_put_rows{destination=\"example\"} 84\n"));
  EXPECT_TRUE(Has(m, "canal_instance_get_rows{destination=\"example\"} 10\n"));
  EXPECT_TRUE(Has(m, "canal_instance_ack_rows{destination=\"example\"} 7\n"));
  // Entries wait to be fetched and acked: the get and ack delays run from
  // the event time of the last entry taken / acked (a minute ago).
  EXPECT_TRUE(Has(m, "canal_instance_put_delay{destination=\"example\"} 20\n"));
  EXPECT_TRUE(Has(m, "canal_instance_get_delay{destination=\"example\"} 60000\n"));
  EXPECT_TRUE(Has(m, "canal_instance_ack_delay{destination=\"example\"} 60000\n"));
  EXPECT_TRUE(Has(m, "canal_instance_client_packets{destination=\"example\",packetType=\"GET\"} 1\n"));
  EXPECT_TRUE(Has(m, "canal_instance_client_packets{destination=\"example\",packetType=\"CLIENTACK\"} 0\n"));
  EXPECT_TRUE(Has(m, "canal_instance_client_bytes{destination=\"example\"} 300\n"));
  EXPECT_TRUE(Has(m, "canal_instance_client_request_error{destination=\"example\",errorCode=\"400\"} 0\n"));
  EXPECT_TRUE(Has(m, "canal_instance_client_request_latency_bucket{destination=\"example\",le=\"2.5\"} 1\n"));
  EXPECT_TRUE(Has(m, "canal_instance_client_request_latency_count{destination=\"example\"} 1\n"));
  EXPECT_TRUE(Has(m, "canal_instance_parser_state{destination=\"example\",state=\"streaming\"} 1\n"));
  EXPECT_TRUE(Has(m, "canal_instance_parser_state{destination=\"example\",state=\"failed\"} 0\n"));
  EXPECT_TRUE(Has(m, "canal_instance_upstream_connected{destination=\"example\"} 1\n"));
  EXPECT_TRUE(Has(m, "canal_instance_binlog_read_file_index{destination=\"example\"} 3\n"));
  EXPECT_TRUE(Has(m, "canal_instance_binlog_read_offset{destination=\"example\"} 1407\n"));
  EXPECT_TRUE(Has(m, "canal_instance_store_entries{destination=\"example\"} 20\n"));
  EXPECT_TRUE(Has(m, "canal_instance_ha_role{destination=\"example\",role=\"active\"} 1\n"));
  EXPECT_TRUE(Has(m, "# TYPE canal_process_cpu_seconds counter\n"));
  EXPECT_TRUE(Has(m, "# TYPE canal_instance_cursor_flush_latency histogram\n"));

  // Every line is a comment or a sample "name{labels} value".
  std::set<std::string> families;
  size_t start = 0;
  while (start < m.size()) {
    const size_t end = m.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "the page ends with a newline";
    const std::string line = m.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("# TYPE ")) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(families.insert(name).second) << "family twice: " << name;
      continue;
    }
    if (line.starts_with("# HELP ")) continue;
    EXPECT_TRUE(line.starts_with("canal_")) << line;
    EXPECT_NE(line.rfind(' '), std::string::npos) << line;
  }
}

// The shipped dashboard and alert rules use only series the server exports.
TEST_F(StatusReportTest, DashboardAndAlertsUseExportedSeries) {
  const std::string page = Metrics();
  for (const char* file : {"conf/metrics/canal-dashboard.json", "conf/metrics/canal-alerts.yml"}) {
    std::ifstream in(std::string(CANAL_SOURCE_DIR) + "/" + file);
    ASSERT_TRUE(in.good()) << file;
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::set<std::string> names;
    for (size_t at = text.find("canal_"); at != std::string::npos; at = text.find("canal_", at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) continue;
      size_t end = at;
      while (end < text.size() && (std::islower(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      std::string name = text.substr(at, end - at);
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name.ends_with(suffix) && !Has(page, "# TYPE " + name + " ")) name.resize(name.size() - strlen(suffix));
      }
      names.insert(name);
    }
    EXPECT_GT(names.size(), 5u) << file;
    for (const std::string& name : names) {
      EXPECT_TRUE(Has(page, "# TYPE " + name + " ")) << file << " uses " << name << ", which is not exported";
    }
  }
}

// Canal's series names the parser's mode: here, whether the binlog is read ahead on a thread
// of its own (canal.instance.parser.parallel).
TEST_F(StatusReportTest, ParserModeSaysWhetherTheBinlogIsReadAhead) {
  dest_->status_.parser.parallel = true;
  const std::string m = Metrics();
  EXPECT_TRUE(Has(m, "canal_instance_parser_mode{destination=\"example\",parallel=\"true\"} 1\n")) << m;
  EXPECT_FALSE(Has(m, "parallel=\"false\"")) << m;
}

TEST_F(StatusReportTest, FailingDestinationKeepsItsReasonAndDelayGrows) {
  ASSERT_EQ(StatusJson()["destinations"][0]["state"], "streaming");  // seen streaming at kNow
  // The primary stops: the parser reconnects and remembers why.
  InstanceStatus& s = dest_->status_;
  s.parser.state = "reconnecting";
  s.parser.lag_ms = 0;  // the last heartbeat said caught up
  s.parser.reconnects = 3;
  s.parser.last_error = "IOError: 127.0.0.1:3306: connect: Connection refused";
  s.parser.last_error_ms = kNow + 1000;
  s.parser.errors["connection"] = 3;
  now_ = kNow + 30'000;

  const json j = StatusJson();
  const json& d = j["destinations"][0];
  EXPECT_EQ(d["state"], "reconnecting");
  EXPECT_EQ(d["streaming"], false);
  EXPECT_EQ(d["last_error"]["message"], "IOError: 127.0.0.1:3306: connect: Connection refused");
  EXPECT_EQ(d["last_error"]["time_ms"], kNow + 1000);
  EXPECT_EQ(d["last_error"]["age_ms"], 29'000);
  EXPECT_EQ(d["reconnects"], 3);
  EXPECT_EQ(d["lag_ms"], 30'000) << "delay runs from when the destination was last seen streaming";
  EXPECT_EQ(j["healthy"], false);

  std::string why;
  EXPECT_FALSE(Healthy(&why));
  EXPECT_TRUE(Has(why, "example: reconnecting (IOError: 127.0.0.1:3306: connect: Connection refused)")) << why;

  const std::string m = Metrics();
  EXPECT_TRUE(Has(m, "canal_instance_traffic_delay{destination=\"example\"} 30000\n"));
  EXPECT_TRUE(Has(m, "canal_instance_upstream_connected{destination=\"example\"} 0\n"));
  EXPECT_TRUE(Has(m, "canal_instance_upstream_errors{destination=\"example\",kind=\"connection\"} 3\n"));
  EXPECT_TRUE(Has(m, "canal_instance_upstream_reconnects{destination=\"example\"} 3\n"));
  EXPECT_TRUE(Has(m, "canal_instance_parser_state{destination=\"example\",state=\"reconnecting\"} 1\n"));

  const std::string html = RenderStatusHtml(collector_->Collect());
  EXPECT_TRUE(Has(html, "example: reconnecting")) << html;
  EXPECT_TRUE(Has(html, "Connection refused"));
  EXPECT_TRUE(Has(html, "not healthy"));

  // A parser that gave up is failed, and says so.
  s.parser.state = "failed";
  EXPECT_EQ(StatusJson()["destinations"][0]["state"], "failed");
  // An instance that stopped is stopped, whatever its parser said last.
  s.running = false;
  EXPECT_EQ(StatusJson()["destinations"][0]["state"], "stopped");
}

TEST_F(StatusReportTest, StandbyDestinationIsHealthyAndExportsOnlyItsRole) {
  UseHa();  // the arbiter holds nothing active
  const json j = StatusJson();
  const json& d = j["destinations"][0];
  EXPECT_EQ(d["role"], "standby");
  EXPECT_EQ(d["state"], "standby");
  EXPECT_FALSE(d.contains("position_read"));
  EXPECT_EQ(j["server"]["ha"], true);
  std::string why;
  EXPECT_TRUE(Healthy(&why)) << "another server serves it: " << why;
  const std::string m = Metrics();
  EXPECT_TRUE(Has(m, "canal_instance_ha_role{destination=\"example\",role=\"standby\"} 1\n")) << m;
  EXPECT_TRUE(Has(m, "canal_instance_ha_role{destination=\"example\",role=\"active\"} 0\n"));
  EXPECT_FALSE(Has(m, "canal_instance{")) << "Canal exports only instances running here";
  EXPECT_FALSE(Has(m, "canal_instance_transactions{"));

  arbiter_.active.insert("example");
  EXPECT_EQ(StatusJson()["destinations"][0]["role"], "active");
  EXPECT_TRUE(Has(Metrics(), "canal_instance_transactions{destination=\"example\"} 42\n"));
}

TEST_F(StatusReportTest, FencedDestination) {
  UseHa();
  arbiter_.active.insert("example");
  ASSERT_EQ(StatusJson()["destinations"][0]["role"], "active");
  // The lease runs out: the monitor deactivates it with a "fenced:" reason.
  arbiter_.active.clear();
  ha_events_.OnDeactivated("example", "fenced: no ZooKeeper answer for 3100 ms (lease 3000 ms)");
  const json j = StatusJson();
  const json& d = j["destinations"][0];
  EXPECT_EQ(d["role"], "fenced");
  EXPECT_EQ(d["state"], "fenced");
  EXPECT_EQ(d["ha"]["fencing_events"], 1);
  EXPECT_EQ(d["ha"]["last_deactivation"]["reason"], "fenced: no ZooKeeper answer for 3100 ms (lease 3000 ms)");
  const std::string m = Metrics();
  EXPECT_TRUE(Has(m, "canal_instance_ha_role{destination=\"example\",role=\"fenced\"} 1\n")) << m;
  EXPECT_TRUE(Has(m, "canal_instance_ha_fencing_events{destination=\"example\"} 1\n"));
  // Active again after a new lease; the count stays.
  arbiter_.active.insert("example");
  EXPECT_EQ(StatusJson()["destinations"][0]["role"], "active");
  // A plain hand-over is not a fence.
  arbiter_.active.clear();
  ha_events_.OnDeactivated("example", "another server is active for it");
  EXPECT_EQ(StatusJson()["destinations"][0]["role"], "standby");
  EXPECT_TRUE(Has(Metrics(), "canal_instance_ha_fencing_events{destination=\"example\"} 1\n"));
}

TEST_F(StatusReportTest, RefusedConfigurationIsUnhealthy) {
  with_unconfigured_ = true;
  std::string why;
  EXPECT_FALSE(Healthy(&why));
  EXPECT_TRUE(Has(why, "broken: not configured")) << why;
  EXPECT_EQ(StatusJson()["destinations"][1]["state"], "not configured");
}

TEST_F(StatusReportTest, TextFromOutsideIsEscaped) {
  dest_->status_.parser.state = "failed";
  dest_->status_.parser.last_error = "bad \"quote\" <script>alert(1)</script>\n\xff\xfe";
  dest_->status_.parser.errors["a\"b\\c\nd"] = 1;
  const std::string html = RenderStatusHtml(collector_->Collect());
  EXPECT_FALSE(Has(html, "<script>"));
  EXPECT_TRUE(Has(html, "&lt;script&gt;"));
  const json j = StatusJson();  // parses despite the invalid UTF-8
  EXPECT_TRUE(Has(j["destinations"][0]["last_error"]["message"].get<std::string>(), "<script>"));
  EXPECT_TRUE(Has(Metrics(), "canal_instance_upstream_errors{destination=\"example\",kind=\"a\\\"b\\\\c\\nd\"} 1\n"));
}

TEST(BinlogFileIndexTest, Numbers) {
  EXPECT_EQ(BinlogFileIndex("mysql-bin.000012"), 12u);
  EXPECT_EQ(BinlogFileIndex("mariadb-bin.1"), 1u);
  EXPECT_EQ(BinlogFileIndex(""), 0u);
  EXPECT_EQ(BinlogFileIndex("nodot"), 0u);
  EXPECT_EQ(BinlogFileIndex("x.00a"), 0u);
  EXPECT_EQ(BinlogFileIndex("x."), 0u);
}

// ---- routes and HTTP ---------------------------------------------------------

class HttpTest : public StatusReportTest {
 protected:
  void StartEndpoint(size_t max_connections = 4, std::chrono::milliseconds idle_timeout = 5s) {
    HttpEndpointOptions o;
    o.ip = "127.0.0.1";
    o.port = 0;
    o.max_connections = max_connections;
    o.idle_timeout = idle_timeout;
    auto log = std::make_shared<spdlog::logger>("http-test", std::make_shared<spdlog::sinks::null_sink_mt>());
    ASSERT_TRUE(HttpEndpoint::Create(o, collector_.get(), log, &endpoint_).ok());
    endpoint_->Start();
  }
  void TearDown() override {
    if (endpoint_) endpoint_->Stop();
  }

  int Connect() { return canal::testing::ConnectLoopback(endpoint_->port()); }
  static void Send(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }
  static std::string ReadAll(int fd) { return canal::testing::ReadUntilClosed(fd); }
  std::string Exchange(std::string_view request) {
    const int fd = Connect();
    if (fd < 0) return "";
    Send(fd, request);
    std::string reply = ReadAll(fd);
    ::close(fd);
    return reply;
  }
  static std::string Get(std::string_view path, std::string_view extra = "") {
    return "GET " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n" + std::string(extra) + "Connection: close\r\n\r\n";
  }

  std::unique_ptr<HttpEndpoint> endpoint_;
};

TEST_F(HttpTest, RoutesWithoutATransport) {
  EXPECT_EQ(Route("GET", "/metrics", "", collector_.get()).content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(Route("GET", "/metrics?x=1", "", collector_.get()).status, 200);
  EXPECT_EQ(Route("GET", "/status", "", collector_.get()).content_type, "application/json");
  EXPECT_EQ(Route("GET", "/status", "text/html,application/xhtml+xml", collector_.get()).content_type,
            "text/html; charset=utf-8");
  EXPECT_EQ(Route("GET", "/status.html", "", collector_.get()).content_type, "text/html; charset=utf-8");
  EXPECT_EQ(Route("GET", "/health", "", collector_.get()).status, 200);
  EXPECT_EQ(Route("HEAD", "/health", "", collector_.get()).status, 200);
  EXPECT_EQ(Route("GET", "/nope", "", collector_.get()).status, 404);
  EXPECT_EQ(Route("GET", "", "", collector_.get()).status, 404);
  EXPECT_EQ(Route("GET", "/../../etc/passwd", "", collector_.get()).status, 404);
  const HttpAnswer post = Route("POST", "/metrics", "", collector_.get());
  EXPECT_EQ(post.status, 405);
  EXPECT_TRUE(post.allow_header);
  dest_->status_.parser.state = "reconnecting";
  const HttpAnswer sick = Route("GET", "/health", "", collector_.get());
  EXPECT_EQ(sick.status, 503);
  EXPECT_TRUE(Has(sick.body, "example: reconnecting"));
}

TEST_F(HttpTest, ServesGoodRequestsAndRefusesBadOnes) {
  StartEndpoint();
  std::string r = Exchange(Get("/metrics"));
  EXPECT_TRUE(r.starts_with("HTTP/1.1 200 OK\r\n")) << r;
  EXPECT_TRUE(Has(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_TRUE(Has(r, "canal_instance_transactions{destination=\"example\"} 42\n"));
  r = Exchange(Get("/status"));
  ASSERT_TRUE(r.starts_with("HTTP/1.1 200 OK\r\n")) << r;
  EXPECT_EQ(json::parse(r.substr(r.find("\r\n\r\n") + 4))["destinations"][0]["state"], "streaming");
  EXPECT_TRUE(Exchange(Get("/status.html")).starts_with("HTTP/1.1 200 OK\r\n"));
  EXPECT_TRUE(Exchange(Get("/health")).starts_with("HTTP/1.1 200 OK\r\n"));
  EXPECT_TRUE(Exchange(Get("/missing")).starts_with("HTTP/1.1 404 Not Found\r\n"));
  const std::string del = Exchange("DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(del.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << del;
  EXPECT_TRUE(Has(del, "Allow: GET, HEAD\r\n"));
  // HEAD: the headers of GET, no body.
  const std::string head = Exchange("HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK\r\n")) << head;
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "");
  // Bad requests: garbage, a body, headers beyond the limit, a binary frame.
  EXPECT_TRUE(Exchange("this is not http\r\n\r\n").starts_with("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_TRUE(Exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
                  .starts_with("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_TRUE(Exchange("GET /metrics HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n")
                  .starts_with("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_TRUE(Exchange(std::string("\0\0\0\x10garbage-frame!!!", 20)).starts_with("HTTP/1.1 400 Bad Request\r\n"));
  // A client that closes mid-request.
  {
    const int fd = Connect();
    Send(fd, "GET /met");
    ::close(fd);
  }
  // Keep-alive: two requests on one connection; and the endpoint still serves.
  const std::string two =
      Exchange("GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  size_t count = 0;
  for (size_t at = two.find("HTTP/1.1 200 OK"); at != std::string::npos; at = two.find("HTTP/1.1 200 OK", at + 1))
    ++count;
  EXPECT_EQ(count, 2u) << two;
}

// A request that trickles in (slowloris) cannot hold a connection: the whole
// request must arrive within the idle timeout, however often a byte comes.
TEST_F(HttpTest, ASlowRequestIsCutAtTheIdleTimeoutHoweverOftenABytesArrives) {
  StartEndpoint(4, 300ms);
  const int fd = Connect();
  ASSERT_GE(fd, 0);
  const auto start = std::chrono::steady_clock::now();
  Send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ");
  bool cut = false;
  while (std::chrono::steady_clock::now() - start < 5s) {
    if (::send(fd, "a", 1, MSG_NOSIGNAL) != 1) {
      cut = true;
      break;
    }
    std::this_thread::sleep_for(20ms);  // the client's pace, not a wait for the server
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ::close(fd);
  EXPECT_TRUE(cut) << "the server kept reading a request that never ends";
  EXPECT_LT(elapsed, 3s);
  // And it serves others meanwhile and after.
  EXPECT_TRUE(Exchange(Get("/health")).starts_with("HTTP/1.1 200 OK\r\n"));
}

TEST_F(HttpTest, ConnectionLimit) {
  StartEndpoint(/*max_connections=*/2);
  const int a = Connect();
  const int b = Connect();
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  std::this_thread::sleep_for(200ms);  // both accepted and waiting for a request
  const std::string third = Exchange(Get("/metrics"));
  EXPECT_TRUE(third.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << third;
  ::close(a);
  ::close(b);
  // Their slots come back.
  std::string r;
  for (int i = 0; i < 50 && !r.starts_with("HTTP/1.1 200"); ++i) {
    std::this_thread::sleep_for(50ms);
    r = Exchange(Get("/health"));
  }
  EXPECT_TRUE(r.starts_with("HTTP/1.1 200 OK\r\n")) << r;
}

TEST_F(HttpTest, PortTakenIsAnErrorNamingTheKey) {
  StartEndpoint();
  HttpEndpointOptions o;
  o.ip = "127.0.0.1";
  o.port = endpoint_->port();
  std::unique_ptr<HttpEndpoint> other;
  Status s = HttpEndpoint::Create(o, collector_.get(), nullptr, &other);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.ToString(), "canal.metrics.pull.port")) << s.ToString();
  EXPECT_TRUE(Has(s.ToString(), "127.0.0.1:" + std::to_string(o.port))) << s.ToString();
  o.ip = "not-an-ip";
  s = HttpEndpoint::Create(o, collector_.get(), nullptr, &other);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.ToString(), "\"not-an-ip\" is not an IP address")) << s.ToString();
  EXPECT_TRUE(Has(s.ToString(), "canal.metrics.pull.ip")) << s.ToString();
  o.ip = "127.0.0.1";
  o.port = 0;
  o.max_connections = 0;
  EXPECT_FALSE(HttpEndpoint::Create(o, collector_.get(), nullptr, &other).ok());
}

}  // namespace
}  // namespace canal::server

namespace canal::server {
namespace {

TEST(StatusClusterTest, ABalancedClustersViewIsInTheJsonAndThePageEscaped) {
  ServerReport report;
  report.server_address = "10.0.0.1:11111";
  ClusterReport c;
  c.leader = true;
  c.generation = 7;
  c.leader_address = "10.0.0.1:11111";
  c.assignment = {{"a", "10.0.0.1:11111"}, {"b", "10.0.0.2:11111"}};
  c.unassigned = {{"<x>", "every server that can run it is at its cap"}};
  c.assigned_here = {"a"};
  report.cluster = c;
  const nlohmann::json j = nlohmann::json::parse(RenderStatusJson(report));
  EXPECT_EQ(j["cluster"]["placement"], "balanced");
  EXPECT_EQ(j["cluster"]["generation"], 7);
  EXPECT_EQ(j["cluster"]["is_leader"], true);
  EXPECT_EQ(j["cluster"]["assignment"]["b"], "10.0.0.2:11111");
  EXPECT_EQ(j["cluster"]["assigned_here"], nlohmann::json::array({"a"}));
  EXPECT_EQ(j["cluster"]["unassigned"]["<x>"], "every server that can run it is at its cap");
  const std::string html = RenderStatusHtml(report);
  EXPECT_NE(html.find("<h2>Cluster</h2>"), std::string::npos);
  EXPECT_NE(html.find("10.0.0.1:11111 (this server)"), std::string::npos);
  EXPECT_NE(html.find("generation 7, 2 destination(s) placed"), std::string::npos);
  EXPECT_NE(html.find("unassigned &lt;x&gt;"), std::string::npos) << html;
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  // Without placement: no cluster part at all.
  report.cluster.reset();
  EXPECT_FALSE(nlohmann::json::parse(RenderStatusJson(report)).contains("cluster"));
  EXPECT_EQ(RenderStatusHtml(report).find("Cluster"), std::string::npos);
}

}  // namespace
}  // namespace canal::server
