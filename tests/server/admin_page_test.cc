// The admin page's server side (docs/admin.md, "The page"): the history ring
// behind the sparklines (rates from the row counter, its bound and order, a
// restart, a destination that goes away), the history in /status JSON, the
// page's markup and headers (a strict policy, nothing inline, no token), its
// script's rule (text only, never markup), and the endpoint sampling on its
// own.
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "canal/server/admin_page.h"
#include "canal/server/http_endpoint.h"
#include "canal/server/status_history.h"
#include "canal/server/status_report.h"
#include "support/loopback_http.h"
#include "support/wait.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr int64_t kT0 = 1'700'000'000'000;

DestinationReport Streaming(const std::string& name, uint64_t rows, int64_t lag_ms) {
  DestinationReport d;
  d.name = name;
  d.configured = true;
  d.role = "active";
  d.state = "streaming";
  d.has_status = true;
  d.status.running = true;
  d.status.parser.state = "streaming";
  d.status.sink.rows = rows;
  d.delay_ms = lag_ms;
  return d;
}

ServerReport At(int64_t now_ms, std::vector<DestinationReport> destinations) {
  ServerReport r;
  r.now_ms = now_ms;
  r.server_address = "127.0.0.1:11111";
  r.destinations = std::move(destinations);
  return r;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(StatusHistoryTest, RatesFromTheRowCounterAndTheLag) {
  StatusHistory h(10, 5s);
  h.Record(At(kT0, {Streaming("example", 1000, 20)}));
  h.Record(At(kT0 + 5000, {Streaming("example", 1500, 30)}));
  DestinationReport with_snapshot = Streaming("example", 1500, 0);
  with_snapshot.status.sink.snapshot_rows = 250;  // snapshot rows count too
  h.Record(At(kT0 + 10'000, {with_snapshot}));
  const std::vector<HistorySample> s = h.Samples("example");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].time_ms, kT0);
  EXPECT_FALSE(s[0].rows_per_second.has_value()) << "no rate before a second sample";
  EXPECT_EQ(s[0].lag_ms, 20);
  EXPECT_DOUBLE_EQ(*s[1].rows_per_second, 100.0);
  EXPECT_EQ(s[1].lag_ms, 30);
  EXPECT_DOUBLE_EQ(*s[2].rows_per_second, 50.0);
  EXPECT_EQ(s[2].lag_ms, 0);
  EXPECT_TRUE(h.Samples("other").empty());
}

TEST(StatusHistoryTest, BoundedOldestFirst) {
  StatusHistory h(3, 1s);
  for (int i = 0; i < 7; ++i) h.Record(At(kT0 + i * 1000, {Streaming("example", 10u * i, i)}));
  const std::vector<HistorySample> s = h.Samples("example");
  ASSERT_EQ(s.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(s[i].time_ms, kT0 + (4 + i) * 1000) << i;
    EXPECT_EQ(s[i].lag_ms, 4 + i);
    EXPECT_DOUBLE_EQ(*s[i].rows_per_second, 10.0);
  }
  EXPECT_EQ(h.capacity(), 3u);
  EXPECT_EQ(StatusHistory(0, 0ms).capacity(), 1u) << "never a ring of nothing";
}

TEST(StatusHistoryTest, RestartStandbyAndDestinationsThatGoAway) {
  StatusHistory h(10, 1s);
  h.Record(At(kT0, {Streaming("a", 5000, 0), Streaming("b", 0, 0)}));
  // a restarted (a new sink counts from 0): its 300 rows came in this second.
  DestinationReport standby;
  standby.name = "b";
  standby.configured = true;
  standby.role = "standby";
  standby.state = "standby";
  h.Record(At(kT0 + 1000, {Streaming("a", 300, 0), standby}));
  std::vector<HistorySample> a = h.Samples("a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_DOUBLE_EQ(*a[1].rows_per_second, 300.0);
  std::vector<HistorySample> b = h.Samples("b");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_FALSE(b[1].rows_per_second.has_value()) << "standby: nothing to say";
  EXPECT_FALSE(b[1].lag_ms.has_value());
  // b active again: its first sample has no rate (the counter is a new baseline).
  h.Record(At(kT0 + 2000, {Streaming("a", 300, 0), Streaming("b", 70, 0)}));
  EXPECT_FALSE(h.Samples("b")[2].rows_per_second.has_value());
  // b removed from the configuration: forgotten.
  h.Record(At(kT0 + 3000, {Streaming("a", 300, 0)}));
  EXPECT_TRUE(h.Samples("b").empty());
  EXPECT_EQ(h.Samples("a").size(), 4u);
  // A clock that did not move gives no rate rather than a division by zero.
  h.Record(At(kT0 + 3000, {Streaming("a", 400, 0)}));
  EXPECT_FALSE(h.Samples("a")[4].rows_per_second.has_value());
}

TEST(AdminPageTest, HistoryInStatusJson) {
  StatusHistory h(10, 5s);
  h.Record(At(kT0, {Streaming("example", 0, 12)}));
  h.Record(At(kT0 + 5000, {Streaming("example", 333, 7)}));
  const ServerReport report = At(kT0 + 5000, {Streaming("example", 333, 7)});
  const json j = json::parse(RenderStatusJson(report, &h));
  const json& history = j["destinations"][0]["history"];
  EXPECT_EQ(history["interval_ms"], 5000);
  EXPECT_EQ(history["time_ms"], json::array({kT0, kT0 + 5000}));
  EXPECT_EQ(history["rows_per_second"], json::parse("[null, 66.6]"));  // one decimal
  EXPECT_EQ(history["lag_ms"], json::array({12, 7}));
  // Without a history (tools that render a report themselves): as before.
  EXPECT_FALSE(json::parse(RenderStatusJson(report))["destinations"][0].contains("history"));
}

TEST(AdminPageTest, PageMarkupIsSelfContainedAndTextOnly) {
  DestinationReport d = Streaming("<b>x</b>", 0, 0);
  const std::string html = RenderStatusHtml(At(kT0, {d}));
  // The live section the script fills, and the details as before.
  for (const char* part : {"id=\"token\"", "type=\"password\"", "id=\"message\"", "id=\"destinations-body\"",
                           "id=\"healthy\"", "<script src=\"/status.js\" defer></script>",
                           "<link rel=\"stylesheet\" href=\"/status.css\">", "&lt;b&gt;x&lt;/b&gt;: streaming"}) {
    EXPECT_TRUE(Has(html, part)) << part << "\n" << html;
  }
  // Nothing inline (the policy would refuse it) and no token field value.
  EXPECT_FALSE(Has(html, "<style")) << html;
  EXPECT_FALSE(Has(html, "<script>"));
  EXPECT_FALSE(Has(html, " style=\""));
  EXPECT_FALSE(std::regex_search(html, std::regex(" on[a-z]+="))) << "no inline event handler";
  EXPECT_FALSE(Has(html, "value=\""));
  // The script puts the server's words in as text, never as markup, and
  // never evaluates strings.
  const std::string script(AdminPageScript());
  for (const char* banned : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                             "new Function", "localStorage", "http://", "https://"}) {
    if (std::string(banned) == "http://") {
      // The only URL is the SVG namespace.
      std::string rest = script;
      for (size_t at = rest.find(banned); at != std::string::npos; at = rest.find(banned, at + 1)) {
        EXPECT_TRUE(rest.compare(at, 26, "http://www.w3.org/2000/svg") == 0) << rest.substr(at, 40);
      }
      continue;
    }
    EXPECT_FALSE(Has(script, banned)) << banned;
  }
  EXPECT_TRUE(Has(script, "textContent"));
  EXPECT_TRUE(Has(script, "sessionStorage"));
  EXPECT_TRUE(Has(script, "window.confirm("));
  EXPECT_TRUE(Has(script, "'Authorization': 'Bearer ' + token"));
  EXPECT_TRUE(Has(script, "encodeURIComponent(name)"));
}

TEST(AdminPageTest, RoutesAndHeaders) {
  StatusCollector collector(StatusSources{});
  StatusHistory history(4, 1s);
  const auto header = [](const HttpAnswer& a, const std::string& name) {
    for (const auto& [k, v] : a.headers) {
      if (k == name) return v;
    }
    return std::string();
  };
  for (const char* page : {"/status.html", "/status.js", "/status.css"}) {
    const HttpAnswer a = Route("GET", page, "", &collector, &history);
    EXPECT_EQ(a.status, 200) << page;
    const std::string csp = header(a, "Content-Security-Policy");
    EXPECT_TRUE(csp.starts_with("default-src 'self'")) << page << ": " << csp;
    EXPECT_TRUE(Has(csp, "frame-ancestors 'none'")) << csp;
    EXPECT_FALSE(Has(csp, "unsafe")) << csp;
    EXPECT_EQ(header(a, "X-Frame-Options"), "DENY") << page;
  }
  const HttpAnswer browser = Route("GET", "/status", "text/html,application/xhtml+xml", &collector, &history);
  EXPECT_FALSE(header(browser, "Content-Security-Policy").empty());
  EXPECT_EQ(Route("GET", "/status.js", "", &collector).content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Route("GET", "/status.css", "", &collector).content_type, "text/css; charset=utf-8");
  EXPECT_EQ(Route("POST", "/status.js", "", &collector).status, 405);
  EXPECT_EQ(Route("GET", "/status", "", &collector, &history).content_type, "application/json");
}

// The endpoint samples on its own: /status JSON grows a history without
// anyone asking, up to its bound.
TEST(AdminPageTest, EndpointSamplesEveryInterval) {
  int64_t now = kT0;
  StatusSources sources;
  sources.destinations = [] {
    std::vector<std::pair<std::string, std::shared_ptr<ManagedDestination>>> out;
    out.emplace_back("broken", nullptr);  // known, not configured: samples without values
    return out;
  };
  std::mutex mu;
  sources.now_ms = [&] {
    std::lock_guard lock(mu);
    return now += 10;
  };
  StatusCollector collector(std::move(sources));
  HttpEndpointOptions o;
  o.ip = "127.0.0.1";
  o.port = 0;
  o.history_every = 5ms;
  o.history_samples = 3;
  auto log = std::make_shared<spdlog::logger>("page-test", std::make_shared<spdlog::sinks::null_sink_mt>());
  std::unique_ptr<HttpEndpoint> endpoint;
  ASSERT_TRUE(HttpEndpoint::Create(o, &collector, log, &endpoint).ok());
  endpoint->Start();
  json history;
  const bool full = canal::testing::WaitFor(
      [&] {
        const json j = json::parse(canal::testing::HttpGet(endpoint->port(), "/status").body, nullptr, false);
        if (!j.is_object()) return false;
        history = j["destinations"][0]["history"];
        return history.is_object() && history["time_ms"].size() == 3;
      },
      10s);
  EXPECT_TRUE(full) << history.dump();
  EXPECT_EQ(history["interval_ms"], 5);
  EXPECT_EQ(history["lag_ms"], json::parse("[null, null, null]"));
  // Still at most three after more intervals.
  const int64_t first = history["time_ms"][0];
  EXPECT_TRUE(canal::testing::WaitFor(
      [&] {
        const json j = json::parse(canal::testing::HttpGet(endpoint->port(), "/status").body, nullptr, false);
        return j.is_object() && j["destinations"][0]["history"]["time_ms"].size() == 3 &&
               j["destinations"][0]["history"]["time_ms"][0] > first;
      },
      10s));
  endpoint->Stop();
}

}  // namespace
}  // namespace canal::server
