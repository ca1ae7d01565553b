// The admin API (docs/admin.md) against the real canal-server and a MariaDB
// sandbox: list, stop, start and restart through bin/canal-admin.sh and raw
// HTTP while a client reads (the stream resumes after the start and every
// row arrives), and every refusal: no token configured (403), a wrong token
// (401), a GET on a POST path (405), a foreign Origin (403), an unknown
// destination (404 naming it), a huge request (413, before the body is
// read), a path with odd characters (escaped in canal.log).
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/delivery_ledger.h"
#include "support/load_table.h"
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

constexpr uint16_t kSandboxPort = TestPort("admin");
constexpr uint16_t kStreamPort = TestPort("admin", 1);
constexpr uint16_t kRefusePort = TestPort("admin", 2);
constexpr uint16_t kStreamMetricsPort = TestPort("admin", 4);
constexpr uint16_t kRefuseMetricsPort = TestPort("admin", 5);
constexpr const char* kToken = "dGVzdC10b2tlbi1mb3ItdGhlLWFkbWluLWFwaQ==";

class AdminApiE2e : public InstalledServerSuite<kSandboxPort> {
 protected:
  AdminApiE2e() : InstalledServerSuite("admin") {}

  // A raw request to the metrics port (Connection: close).
  static HttpReply Request(uint16_t port, const std::string& method, const std::string& target,
                           const std::string& headers = "", const std::string& body = "") {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                      "\r\nConnection: close\r\n" + headers;
    if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return HttpExchange(port, req + "\r\n" + body);
  }
  static std::string Bearer(const std::string& token = kToken) { return "Authorization: Bearer " + token + "\r\n"; }
  // The state the API reports for `dest` ("" when it cannot be read).
  static std::string State(uint16_t port, const std::string& dest = "example") {
    const HttpReply r = HttpGet(port, "/api/destinations/" + dest);
    if (r.status != 200) return "";
    const json j = json::parse(r.body, nullptr, false);
    return j.is_object() ? j.value("state", std::string()) : std::string();
  }

};

// A client reads and acks the whole time; the destination is stopped, rows
// are written while it is down, it is started, more rows, a restart, more
// rows: the client sees the stream resume each time and nothing is lost.
TEST_F(AdminApiE2e, EveryVerbWhileAClientReadsAndNothingIsLost) {
  constexpr int kTxnsPerPart = 100, kRowsPerTxn = 10, kParts = 3;
  const std::string table = "admin_db.t";
  ASSERT_TRUE(CreateLoadTable(table));
  install_->WriteServerProperties(CanalInstall::ServerProperties(
      kStreamPort, "canal.metrics.pull.port = " + std::to_string(kStreamMetricsPort) + "\ncanal.admin.token = " + kToken +
                       "\n"));
  install_->WriteInstance("example", StartHere());
  ASSERT_TRUE(Startup());

  // The reader: on any error (the destination stopping) it reconnects and
  // subscribes again until the destination is back.
  DeliveryLedger ledger(kTxnsPerPart * kParts, kRowsPerTxn);
  std::mutex ledger_mu;
  std::atomic<bool> stop_reader{false};
  std::atomic<int> reconnects{0};
  std::thread reader([&] {
    Connector c(ServerClientOptions(kStreamPort));
    bool open = false;
    while (!stop_reader) {
      if (!open) {
        c.Disconnect();
        open = ConnectAndSubscribe(c, 2s).ok();
        if (!open) continue;
        std::lock_guard<std::mutex> lock(ledger_mu);
        ledger.Reconnected();
      }
      Message m;
      if (!c.GetWithoutAck(64, 100, TimeUnit::kMilliseconds, &m).ok()) {
        open = false;
        ++reconnects;
        continue;
      }
      if (m.batch_id() == -1) continue;
      std::vector<int64_t> rows;
      {
        std::lock_guard<std::mutex> lock(ledger_mu);
        AppendLoadRows(m, ledger, &rows).PermitUncheckedError();
        ledger.Received(rows);
      }
      if (!c.Ack(m.batch_id()).ok()) open = false;
    }
  });
  const auto distinct = [&] {
    std::lock_guard<std::mutex> lock(ledger_mu);
    return ledger.distinct();
  };
  const auto write_part = [&](int part) {
    const std::string sql = sandbox_->dir() + "/admin-part" + std::to_string(part) + ".sql";
    WriteLoadSql(sql, table, part * kTxnsPerPart + 1, (part + 1) * kTxnsPerPart, kRowsPerTxn);
    return sandbox_->SqlFile(sql);
  };

  ASSERT_TRUE(WaitFor([&] { return State(kStreamMetricsPort) == "running"; }, 30s)) << ReadAll(install_->server_log());
  int rc = 0;
  std::string out = Admin("list", &rc);
  EXPECT_EQ(rc, 0) << out;
  const json list = json::parse(out, nullptr, false);
  ASSERT_TRUE(list.is_object()) << out;
  EXPECT_EQ(list["mode"], "tcp");
  ASSERT_EQ(list["destinations"].size(), 1u) << out;
  EXPECT_EQ(list["destinations"][0]["name"], "example");
  EXPECT_EQ(list["destinations"][0]["state"], "running");
  EXPECT_TRUE(list["destinations"][0]["position"].is_object()) << out;

  ASSERT_TRUE(write_part(0)) << sandbox_->error();
  ASSERT_TRUE(WaitFor([&] { return distinct() == int64_t{kTxnsPerPart} * kRowsPerTxn; }, 60s)) << distinct();
  ASSERT_TRUE(WaitFor([&] {
    const HttpReply r = HttpGet(kStreamMetricsPort, "/api/destinations/example");
    return r.body.find("\"connected\":true") != std::string::npos;
  }, 10s));

  // Stop: the API says so, the log says who and what, and nothing reaches the client.
  out = Admin("stop example", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("stop example: stopped; state now stopped"), std::string::npos) << out;
  EXPECT_EQ(State(kStreamMetricsPort), "stopped");
  EXPECT_TRUE(WaitForText(install_->server_log(), "admin: stop example by 127.0.0.1:", 5s))
      << ReadAll(install_->server_log());
  EXPECT_NE(ReadAll(install_->server_log()).find("(token ok): stopped; state now stopped"), std::string::npos);
  ASSERT_TRUE(write_part(1)) << sandbox_->error();
  // Still stopped after the next scans (auto scan every second).
  std::this_thread::sleep_for(1500ms);  // a check that something does NOT happen: two scan periods
  EXPECT_EQ(State(kStreamMetricsPort), "stopped");
  EXPECT_EQ(distinct(), int64_t{kTxnsPerPart} * kRowsPerTxn);
  out = Admin("stop example", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("already stopped"), std::string::npos) << out;

  // Start: the stream resumes from the acked cursor with the rows written meanwhile.
  out = Admin("start example", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("start example: started"), std::string::npos) << out;
  ASSERT_TRUE(WaitFor([&] { return distinct() == int64_t{2} * kTxnsPerPart * kRowsPerTxn; }, 60s)) << distinct();
  EXPECT_GE(reconnects.load(), 1);

  // Restart through raw HTTP with a JSON body; then the last part.
  const HttpReply restarted = Request(kStreamMetricsPort, "POST", "/api/destinations/example/restart",
                                      Bearer() + "Content-Type: application/json\r\n", "{}");
  ASSERT_EQ(restarted.status, 200) << restarted.body;
  const json r = json::parse(restarted.body, nullptr, false);
  EXPECT_EQ(r["result"], "restarted") << restarted.body;
  EXPECT_EQ(r["ok"], true);
  ASSERT_TRUE(write_part(2)) << sandbox_->error();
  ASSERT_TRUE(WaitFor([&] { return distinct() == int64_t{kParts} * kTxnsPerPart * kRowsPerTxn; }, 60s)) << distinct();
  stop_reader = true;
  reader.join();

  std::lock_guard<std::mutex> lock(ledger_mu);
  EXPECT_TRUE(ledger.complete());
  EXPECT_EQ(ledger.foreign(), 0);
  // A batch taken but not acked when the destination stopped comes again; nothing else.
  std::printf("[ admin ] %lld rows, %lld duplicates, %d reconnects\n", static_cast<long long>(ledger.distinct()),
              static_cast<long long>(ledger.duplicates()), reconnects.load());
  EXPECT_NE(ReadAll(install_->server_log()).find("admin: restart example by 127.0.0.1:"), std::string::npos);
}

TEST_F(AdminApiE2e, RefusalsAreClearBoundedAndLogged) {
  install_->WriteInstance("example", StartHere());
  const std::string base = CanalInstall::ServerProperties(
      kRefusePort, "canal.metrics.pull.port = " + std::to_string(kRefuseMetricsPort) + "\n");
  // 1. No token configured: reads work, every change is 403 naming the key.
  install_->WriteServerProperties(base);
  ASSERT_TRUE(Startup());
  ASSERT_TRUE(WaitFor([&] { return !State(kRefuseMetricsPort).empty(); }, 30s));
  HttpReply r = Request(kRefuseMetricsPort, "POST", "/api/destinations/example/stop", Bearer());
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body.find("canal.admin.token"), std::string::npos) << r.body;
  int rc = 0;
  std::string out = Admin("stop example", &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("no admin token"), std::string::npos) << out;
  std::string stopped;
  ASSERT_EQ(install_->Stop(&stopped), 0) << stopped;
  out = Admin("list", &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("canal-server is not running here"), std::string::npos) << out;

  // 2. A token in a file (chmod 600).
  WriteFile(install_->conf_dir() / "admin.token", std::string(kToken) + "\n");
  ::chmod((install_->conf_dir() / "admin.token").c_str(), 0600);
  install_->WriteServerProperties(base + "canal.admin.tokenFile = admin.token\n");
  ASSERT_TRUE(Startup());
  ASSERT_TRUE(WaitFor([&] { return State(kRefuseMetricsPort) == "running"; }, 30s));
  const std::string path = "/api/destinations/example/stop";
  EXPECT_EQ(Request(kRefuseMetricsPort, "POST", path).status, 401);
  r = Request(kRefuseMetricsPort, "POST", path, Bearer("wrong-token-wrong-token"));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_NE(r.body.find("wrong admin token"), std::string::npos) << r.body;
  for (const char* method : {"GET", "PUT", "DELETE"}) {
    EXPECT_EQ(Request(kRefuseMetricsPort, method, path, Bearer()).status, 405) << method;
  }
  EXPECT_EQ(Request(kRefuseMetricsPort, "POST", path, Bearer() + "Origin: http://evil.example\r\n").status, 403);
  EXPECT_EQ(Request(kRefuseMetricsPort, "POST", path, Bearer() + "Content-Type: text/plain\r\n", "stop").status, 415);
  r = Request(kRefuseMetricsPort, "POST", "/api/destinations/nosuch/stop", Bearer());
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("'nosuch'"), std::string::npos) << r.body;
  // A gigabyte announced: 413 before any of it is read.
  std::string raw;
  r = HttpExchange(kRefuseMetricsPort,
                   "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + Bearer() +
                       "Content-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n{",
                   &raw);
  EXPECT_EQ(r.status, 413) << raw;
  // Headers past the bound: refused too.
  EXPECT_EQ(Request(kRefuseMetricsPort, "GET", "/api/destinations", "X-Big: " + std::string(20000, 'a') + "\r\n").status,
            400);
  // Odd characters in the path: refused, and escaped in the log.
  r = Request(kRefuseMetricsPort, "POST", "/api/destinations/x%0aFORGED\"\xff/stop", Bearer());
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_TRUE(WaitForText(install_->server_log(), "x%0aFORGED\\\"\\xff", 5s)) << ReadAll(install_->server_log());
  EXPECT_EQ(ReadAll(install_->server_log()).find('\xff'), std::string::npos);
  // The script with a wrong token: refused, clearly.
  out = RunShell("CANAL_ADMIN_TOKEN=wrong-token-wrong-token bash " +
                     ShellQuoted(install_->bin_dir() / "canal-admin.sh") + " stop example 2>&1",
                 &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("the admin token was refused"), std::string::npos) << out;
  out = Admin("stop nosuch", &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("no destination 'nosuch'"), std::string::npos) << out;
  // Nothing was changed by any of it; the endpoint still serves.
  EXPECT_EQ(State(kRefuseMetricsPort), "running");
  EXPECT_EQ(ReadAll(install_->server_log()).find("(token ok)"), std::string::npos);
  EXPECT_EQ(HttpGet(kRefuseMetricsPort, "/health").status, 200);
}

}  // namespace
}  // namespace canal::testing
