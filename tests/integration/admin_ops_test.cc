// The admin API's operations (docs/admin.md) against a real canal-server and
// MariaDB: a cursor reset's dry run, checked against what the client then
// receives (the count comes from the primary's SHOW BINLOG EVENTS, the rows
// from the stream); by position, time and GTID; an instance.properties
// change that takes effect and a bad one that changes nothing; the log tail;
// a snapshot; and hostile requests (no token, traversal, bad JSON, guessing).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/loopback_http.h"
#include "support/sandbox_script.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using client::Connector;
using client::Message;
using client::TimeUnit;
using nlohmann::json;

constexpr uint16_t kSandboxPort = TestPort("admin_ops");
constexpr uint16_t kCursorPort = TestPort("admin_ops", 1);
constexpr uint16_t kConfigPort = TestPort("admin_ops", 2);
constexpr uint16_t kHostilePort = TestPort("admin_ops", 3);
constexpr uint16_t kCursorMetrics = TestPort("admin_ops", 8);
constexpr uint16_t kConfigMetrics = TestPort("admin_ops", 9);
constexpr uint16_t kHostileMetrics = TestPort("admin_ops", 10);
constexpr const char* kToken = "YWRtaW4tb3BzLXRlc3QtdG9rZW4tMDEyMzQ1Njc4OQ==";

// Rows by id as one client receives them, reconnecting whenever the
// destination goes away (stop, restart).
class Reader {
 public:
  Reader(uint16_t port, std::string table) : port_(port), table_(std::move(table)) {}
  ~Reader() { Stop(); }
  void Start() {
    stop_ = false;
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int64_t Count(int64_t id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = seen_.find(id);
    return it == seen_.end() ? 0 : it->second;
  }
  int64_t Total() const {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t n = 0;
    for (const auto& [id, c] : seen_) n += c;
    return n;
  }
  // Ids seen in [first, last], and how often in all.
  std::pair<int64_t, int64_t> Range(int64_t first, int64_t last) const {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t distinct = 0, all = 0;
    for (const auto& [id, c] : seen_) {
      if (id < first || id > last) continue;
      ++distinct;
      all += c;
    }
    return {distinct, all};
  }

 private:
  void Run() {
    Connector c(ServerClientOptions(port_));
    bool open = false;
    while (!stop_) {
      if (!open) {
        c.Disconnect();
        open = ConnectAndSubscribe(c, 2s).ok();
        continue;
      }
      Message m;
      if (!c.GetWithoutAck(256, 100, TimeUnit::kMilliseconds, &m).ok()) {
        open = false;
        continue;
      }
      if (m.batch_id() == -1) continue;
      ForEachRow(m, [&](const entry::Header& h, entry::EventType, const entry::RowData& row) {
        if (h.schemaname() + "." + h.tablename() != table_) return;
        std::lock_guard<std::mutex> lock(mu_);
        ++seen_[std::stoll(ColumnText(row, "id"))];
      }).PermitUncheckedError();
      if (!c.Ack(m.batch_id()).ok()) open = false;
    }
    c.Disconnect();
  }

  const uint16_t port_;
  const std::string table_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<int64_t, int64_t> seen_;
};

class AdminOpsE2e : public InstalledServerSuite<kSandboxPort> {
 protected:
  AdminOpsE2e() : InstalledServerSuite("admin-ops") {}

  ::testing::AssertionResult Startup(uint16_t port, uint16_t metrics, const std::string& instance) const {
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        port, "canal.metrics.pull.port = " + std::to_string(metrics) + "\ncanal.admin.token = " + kToken + "\n"));
    install_->WriteInstance("example", instance);
    return InstalledServerSuite::Startup();
  }
  static HttpReply Call(uint16_t port, const std::string& method, const std::string& target, const std::string& body = "",
                        const std::string& token = kToken, std::string* raw = nullptr) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                      "\r\nConnection: close\r\n";
    if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
    if (!body.empty()) req += "Content-Type: application/json\r\n";
    if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return HttpExchange(port, req + "\r\n" + body, raw);
  }
  static std::string State(uint16_t metrics) {
    const HttpReply r = HttpGet(metrics, "/api/destinations/example");
    const json j = json::parse(r.body, nullptr, false);
    return j.is_object() ? j.value("state", std::string()) : std::string();
  }
  // The last line of a query's output, split at tabs.
  static std::vector<std::string> LastRow(const std::string& sql) {
    std::string out;
    EXPECT_TRUE(sandbox_->Sql(sql, &out)) << sandbox_->error();
    std::istringstream in(out);
    std::string line, last;
    while (std::getline(in, line)) {
      if (!line.empty()) last = line;
    }
    std::vector<std::string> fields;
    std::istringstream row(last);
    std::string f;
    while (std::getline(row, f, '\t')) fields.push_back(f);
    return fields;
  }
  // Ids first..last, one transaction each.
  static bool Insert(const std::string& table, int first, int last) {
    std::string sql;
    for (int i = first; i <= last; ++i) sql += "INSERT INTO " + table + " VALUES (" + std::to_string(i) + ", 0);\n";
    return sandbox_->Sql(sql);
  }
};

// Moves back (repeat) and forward (skip) by position, and locates the same
// point by time and by GTID: each dry run's count is what the client gets.
TEST_F(AdminOpsE2e, ACursorResetsDryRunMatchesWhatTheClientThenReceives) {
  const std::string table = "admin_ops.t";
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS admin_ops; DROP TABLE IF EXISTS admin_ops.t; "
                  "CREATE TABLE admin_ops.t (id INT PRIMARY KEY, v INT)"));
  ASSERT_TRUE(Startup(kCursorPort, kCursorMetrics, StartHere()));
  ASSERT_TRUE(WaitFor([&] { return State(kCursorMetrics) == "running"; }, 30s)) << ReadAll(install_->server_log());
  Reader reader(kCursorPort, table);
  reader.Start();

  ASSERT_TRUE(Insert(table, 1, 20));
  ASSERT_TRUE(WaitFor([&] { return reader.Range(1, 20).first == 20; }, 30s));
  // The point before part B, by position, time and GTID.
  const std::vector<std::string> before = LastRow("SHOW MASTER STATUS");
  ASSERT_GE(before.size(), 2u);
  const std::string gtid_before = LastRow("SELECT @@global.gtid_binlog_pos").at(0);
  const int64_t second = std::stoll(LastRow("SELECT UNIX_TIMESTAMP()").at(0));
  ASSERT_TRUE(WaitFor([&] { return std::stoll(LastRow("SELECT UNIX_TIMESTAMP()").at(0)) > second; }, 5s));
  ASSERT_TRUE(Insert(table, 101, 130));
  ASSERT_TRUE(WaitFor([&] { return reader.Range(101, 130).first == 30; }, 30s));
  // Acks reach the cursor: the destination's acked position passes part B.
  ASSERT_TRUE(WaitFor([&] {
    const json j = json::parse(HttpGet(kCursorMetrics, "/api/destinations/example").body, nullptr, false);
    return j.is_object() && j["acked"].is_object() && j["acked"]["offset"].get<uint64_t>() >
                                                          static_cast<uint64_t>(std::stoull(before[1]));
  }, 20s));

  const std::string by_position =
      "{\"journal\":\"" + before[0] + "\",\"offset\":" + before[1] + ",\"dryRun\":true}";
  HttpReply r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor", by_position);
  ASSERT_EQ(r.status, 200) << r.body;
  json dry = json::parse(r.body);
  ASSERT_EQ(dry["clients"].size(), 1u) << r.body;
  EXPECT_EQ(dry["applied"], false);
  EXPECT_EQ(dry["clients"][0]["effect"], "repeat") << r.body;
  EXPECT_EQ(dry["clients"][0]["transactions"], 30) << r.body;
  EXPECT_EQ(dry["clients"][0]["tables"]["admin_ops.t"], 30) << r.body;
  EXPECT_EQ(dry["clients"][0]["complete"], true) << r.body;
  EXPECT_EQ(dry["target"]["journal"], before[0]);
  EXPECT_EQ(std::to_string(dry["target"]["offset"].get<uint64_t>()), before[1]);
  EXPECT_EQ(reader.Range(101, 130).second, 30) << "a dry run changes nothing";

  // The same point by time and by GTID.
  r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor",
           "{\"timestamp_ms\":" + std::to_string((second + 1) * 1000) + ",\"dryRun\":true}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["target"], dry["target"]) << r.body;
  EXPECT_EQ(json::parse(r.body)["clients"][0]["transactions"], 30) << r.body;
  r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor",
           "{\"gtid\":\"" + gtid_before + "\",\"dryRun\":true}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["target"], dry["target"]) << r.body;

  // Applied through the script: part B comes again, exactly once more, nothing else.
  int rc = 0;
  std::string out = Admin("cursor example --position " + before[0] + ":" + before[1], &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"applied\": true"), std::string::npos) << out;
  ASSERT_TRUE(WaitFor([&] { return reader.Range(101, 130).second == 60; }, 30s)) << reader.Range(101, 130).second;
  EXPECT_EQ(reader.Range(1, 20).second, 20) << "rows before the target were repeated";
  EXPECT_TRUE(WaitForText(install_->server_log(), "admin: cursor of example moved to", 5s));

  // Forward: part C is written while the client is away; the reset skips it.
  reader.Stop();
  ASSERT_TRUE(Insert(table, 201, 225));
  const std::vector<std::string> after_c = LastRow("SHOW MASTER STATUS");
  r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor",
           "{\"journal\":\"" + after_c[0] + "\",\"offset\":" + after_c[1] + ",\"dryRun\":true}");
  ASSERT_EQ(r.status, 200) << r.body;
  dry = json::parse(r.body);
  EXPECT_EQ(dry["clients"][0]["effect"], "skip") << r.body;
  EXPECT_EQ(dry["clients"][0]["transactions"], 25) << r.body;
  r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor",
           "{\"journal\":\"" + after_c[0] + "\",\"offset\":" + after_c[1] + ",\"client_id\":1001}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["applied"], true) << r.body;
  ASSERT_TRUE(Insert(table, 301, 310));
  reader.Start();
  ASSERT_TRUE(WaitFor([&] { return reader.Range(301, 310).first == 10; }, 30s));
  EXPECT_EQ(reader.Range(201, 225).first, 0) << "skipped rows arrived";
  reader.Stop();

  // Refusals name the problem.
  r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor", "{\"journal\":\"nope.000001\",\"offset\":4}");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("has no binlog nope.000001"), std::string::npos) << r.body;
  r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor", "{\"gtid\":\"0-1-1\",\"timestamp_ms\":5}");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("exactly one of"), std::string::npos) << r.body;
  r = Call(kCursorMetrics, "POST", "/api/destinations/example/cursor", "{\"journal\":\"" + before[0] +
                                                                            "\",\"offset\":4,\"client_id\":77}");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(State(kCursorMetrics), "running");
}

// A filter change through the API shows in the next rows; a bad file is
// refused with the parser's message and changes nothing.
TEST_F(AdminOpsE2e, AConfigChangeTakesEffectAndABadOneChangesNothing) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS admin_cfg; DROP TABLE IF EXISTS admin_cfg.a; DROP TABLE IF EXISTS "
                  "admin_cfg.b; CREATE TABLE admin_cfg.a (id INT PRIMARY KEY, v INT); CREATE TABLE admin_cfg.b (id "
                  "INT PRIMARY KEY, v INT)"));
  ASSERT_TRUE(Startup(kConfigPort, kConfigMetrics, StartHere() + "canal.instance.filter.regex = admin_cfg\\\\.a\n"));
  ASSERT_TRUE(WaitFor([&] { return State(kConfigMetrics) == "running"; }, 30s)) << ReadAll(install_->server_log());
  Reader a(kConfigPort, "admin_cfg.a");
  a.Start();
  ASSERT_TRUE(Insert("admin_cfg.a", 1, 5));
  ASSERT_TRUE(WaitFor([&] { return a.Range(1, 5).first == 5; }, 30s));
  a.Stop();

  HttpReply r = Call(kConfigMetrics, "GET", "/api/destinations/example/config");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string old_text = json::parse(r.body)["text"];
  EXPECT_NE(old_text.find("admin_cfg\\\\.a"), std::string::npos) << old_text;
  EXPECT_EQ(Call(kConfigMetrics, "GET", "/api/destinations/example/config", "", "").status, 401)
      << "a config holds the database password: reading it needs the token";

  // A bad value: 400 with the parser's words; the file and the stream unchanged.
  std::string bad = old_text + "canal.instance.parser.invalid.position.action = sideways\n";
  r = Call(kConfigMetrics, "POST", "/api/destinations/example/config", json{{"text", bad}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("canal.instance.parser.invalid.position.action"), std::string::npos) << r.body;
  EXPECT_EQ(ReadAll(install_->conf_dir() / "example" / "instance.properties"), old_text);
  EXPECT_EQ(State(kConfigMetrics), "running");

  // A dry run of a good one writes nothing.
  const std::string wider = old_text + "canal.instance.filter.regex = admin_cfg\\\\..*\n";
  r = Call(kConfigMetrics, "POST", "/api/destinations/example/config", json{{"text", wider}, {"dryRun", true}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(ReadAll(install_->conf_dir() / "example" / "instance.properties"), old_text);

  // Applied through the script: rows of b now arrive.
  const std::filesystem::path file = install_->root() / "wider.properties";
  WriteFile(file, wider);
  int rc = 0;
  const std::string out = Admin("config example --set " + ShellQuoted(file), &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("written and applied"), std::string::npos) << out;
  EXPECT_EQ(ReadAll(install_->conf_dir() / "example" / "instance.properties"), wider);
  ASSERT_TRUE(WaitFor([&] { return State(kConfigMetrics) == "running"; }, 30s));
  Reader b(kConfigPort, "admin_cfg.b");
  b.Start();
  ASSERT_TRUE(Insert("admin_cfg.b", 1, 7));
  ASSERT_TRUE(WaitFor([&] { return b.Range(1, 7).first == 7; }, 30s)) << ReadAll(install_->instance_log("example"));
  b.Stop();
}

TEST_F(AdminOpsE2e, LogTailSnapshotAndHostileRequests) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS admin_h; DROP TABLE IF EXISTS admin_h.t; "
                  "CREATE TABLE admin_h.t (id INT PRIMARY KEY, v INT); INSERT INTO admin_h.t VALUES (1,1),(2,2)"));
  ASSERT_TRUE(Startup(kHostilePort, kHostileMetrics, StartHere() + "canal.instance.filter.regex = admin_h\\\\..*\n"));
  ASSERT_TRUE(WaitFor([&] { return State(kHostileMetrics) == "running"; }, 30s)) << ReadAll(install_->server_log());

  // The log tail: the last lines, bounded, by the script too.
  HttpReply r = Call(kHostileMetrics, "GET", "/api/destinations/example/log?lines=3");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string tail = json::parse(r.body)["text"];
  EXPECT_EQ(std::count(tail.begin(), tail.end(), '\n'), 3) << tail;
  int rc = 0;
  std::string out = Admin("log example --lines 50", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("starting"), std::string::npos) << out;
  EXPECT_EQ(Call(kHostileMetrics, "GET", "/api/destinations/example/log?lines=x").status, 400);

  // A snapshot through the API: accepted with an id; a table outside the filter refused by name.
  r = Call(kHostileMetrics, "POST", "/api/destinations/example/snapshot", "{\"tables\":[\"admin_h.t\"]}");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body, nullptr, false).contains("snapshot")) << r.body;
  r = Call(kHostileMetrics, "POST", "/api/destinations/example/snapshot", "{\"tables\":[\"mysql.user\"]}");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("mysql.user"), std::string::npos) << r.body;

  // Traversal: a name is never a path.
  for (const char* target : {"/api/destinations/../log", "/api/destinations/..%2F..%2Fetc%2Fpasswd/log",
                             "/api/destinations/%2e%2e/log", "/api/destinations/canal/log"}) {
    r = Call(kHostileMetrics, "GET", target);
    EXPECT_EQ(r.status, 404) << target << ": " << r.body;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << target;
  }
  // Malformed JSON, wrong types, the wrong method.
  EXPECT_EQ(Call(kHostileMetrics, "POST", "/api/destinations/example/cursor", "{\"journal\":").status, 400);
  EXPECT_EQ(Call(kHostileMetrics, "POST", "/api/destinations/example/cursor", "[1,2]").status, 400);
  EXPECT_EQ(Call(kHostileMetrics, "POST", "/api/destinations/example/cursor", "{\"offset\":-1}").status, 400);
  EXPECT_EQ(Call(kHostileMetrics, "POST", "/api/destinations/example/config", "{\"text\":5}").status, 400);
  EXPECT_EQ(Call(kHostileMetrics, "GET", "/api/destinations/example/cursor").status, 405);
  EXPECT_EQ(Call(kHostileMetrics, "POST", "/api/destinations/example/cursor", "{\"gtid\":\"0-1-1\"}", "").status, 401);

  // Guessing the token: after ten wrong ones, 429 even for the right one, for a while.
  int refused = 0;
  for (int i = 0; i < 12; ++i) {
    const int status = Call(kHostileMetrics, "POST", "/api/destinations/example/stop", "", "guess-" + std::to_string(i)).status;
    if (status == 429) ++refused;
  }
  EXPECT_GE(refused, 2);
  std::string raw;
  r = Call(kHostileMetrics, "POST", "/api/destinations/example/stop", "", kToken, &raw);
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_NE(raw.find("Retry-After:"), std::string::npos) << raw;
  EXPECT_EQ(State(kHostileMetrics), "running");
  // Logged, but not once per request.
  const std::string log = ReadAll(install_->server_log());
  size_t lines = 0;
  for (size_t at = log.find("429 too many requests"); at != std::string::npos; at = log.find("429 too many requests", at + 1)) ++lines;
  EXPECT_GE(lines, 1u);
  EXPECT_LE(lines, 10u);
}

}  // namespace
}  // namespace canal::testing
