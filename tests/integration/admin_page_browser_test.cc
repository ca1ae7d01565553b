// The admin page (docs/admin.md, "The page") in a real browser: headless
// Chromium, driven through chromedriver's WebDriver API, opens /status of a
// real canal-server (with an admin token) on a MariaDB sandbox, reads the
// destination's state, is refused with a wrong token (the page says so in
// words and the destination keeps running), then stops and starts the
// destination with the buttons, accepting each confirm(), while the test
// checks the server's own state through GET /api/destinations/example.
// Skipped, saying why, where Chromium or chromedriver is not installed.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/canal_install.h"
#include "support/loopback_http.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/webdriver.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr uint16_t kSandboxPort = TestPort("admin_page");
constexpr uint16_t kServerPort = TestPort("admin_page", 1);
constexpr uint16_t kMetricsPort = TestPort("admin_page", 2);
constexpr uint16_t kDriverPort = TestPort("admin_page", 3);
constexpr const char* kToken = "cGFnZS10ZXN0LXRva2VuLWZvci10aGUtYnJvd3Nlcg==";
constexpr const char* kWrongToken = "wrong-token-wrong-token";

// The row of the page's table for destination "example", and its parts.
constexpr const char* kStateCell = "tr[data-destination='example'] td.state";
std::string Button(const std::string& action) {
  return "tr[data-destination='example'] button[data-action='" + action + "']";
}

class AdminPageBrowser : public InstalledServerSuite<kSandboxPort> {
 protected:
  AdminPageBrowser() : InstalledServerSuite("admin-page") {}
  // No MariaDB sandbox where there is no browser to test with.
  static void SetUpTestSuite() {
    missing_ = FindChromium(&paths_);
    if (missing_.empty()) ServerSuite::SetUpTestSuite();
  }
  void SetUp() override {
    if (!missing_.empty()) GTEST_SKIP() << missing_;
    InstalledServerSuite::SetUp();
  }
  void TearDown() override {
    browser_.reset();  // before the server: no page polling a server that is gone
    InstalledServerSuite::TearDown();
  }

  // The state GET /api/destinations/example reports ("" when it cannot be read).
  static std::string ServerState() {
    const HttpReply r = HttpGet(kMetricsPort, "/api/destinations/example");
    if (r.status != 200) return "";
    const json j = json::parse(r.body, nullptr, false);
    return j.is_object() ? j.value("state", std::string()) : std::string();
  }
  std::string BrowserLog() const { return (install_->logs_dir() / "chromedriver.log").string(); }
  // Clicks `action` on the example row and accepts the confirm() it opens
  // (whose text names the destination).
  ::testing::AssertionResult ClickAndConfirm(const std::string& action) {
    std::string button, prompt;
    Status s = browser_->Find(Button(action), &button);
    if (s.ok()) s = browser_->Click(button);
    if (s.ok()) s = browser_->AlertText(&prompt);
    if (s.ok() && prompt.find("\"example\"") == std::string::npos) {
      return ::testing::AssertionFailure() << "the confirm() does not name the destination: " << prompt;
    }
    if (s.ok()) s = browser_->AcceptAlert();
    if (s.ok()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << action << ": " << s.ToString();
  }
  ::testing::AssertionResult TypeToken(const std::string& token) {
    std::string field;
    Status s = browser_->Find("#token", &field);
    if (s.ok()) s = browser_->Clear(field);
    if (s.ok()) s = browser_->SendKeys(field, token);
    if (s.ok()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << s.ToString();
  }
  json Eval(const std::string& script, const json& args = json::array()) {
    json v;
    const Status s = browser_->Execute(script, args, &v);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return v;
  }

  static inline ChromiumPaths paths_;
  static inline std::string missing_;
  std::unique_ptr<WebDriver> browser_;
};

TEST_F(AdminPageBrowser, StopAndStartADestinationFromThePage) {
  const auto began = std::chrono::steady_clock::now();
  install_->WriteServerProperties(CanalInstall::ServerProperties(
      kServerPort,
      "canal.metrics.pull.port = " + std::to_string(kMetricsPort) + "\ncanal.admin.token = " + kToken + "\n"));
  install_->WriteInstance("example", StartHere());
  std::string out;
  ASSERT_EQ(install_->Startup(&out), 0) << out << ReadAll(install_->server_log());
  ASSERT_TRUE(WaitFor([] { return ServerState() == "running"; }, 30s)) << ReadAll(install_->server_log());

  // What the server sends: the page (no token in it, a strict policy), its script.
  std::string raw;
  const HttpReply page = HttpExchange(
      kMetricsPort, "GET /status HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/html,application/xhtml+xml\r\n\r\n", &raw);
  ASSERT_EQ(page.status, 200) << raw;
  EXPECT_NE(raw.find("Content-Security-Policy: default-src 'self'"), std::string::npos) << raw;
  EXPECT_EQ(raw.find(kToken), std::string::npos);
  EXPECT_EQ(HttpGet(kMetricsPort, "/status.js").status, 200);

  const Status opened = WebDriver::Open(paths_, kDriverPort, BrowserLog(), &browser_);
  ASSERT_TRUE(opened.ok()) << opened.ToString() << "\n" << ReadAll(BrowserLog());
  const std::string url = "http://127.0.0.1:" + std::to_string(kMetricsPort) + "/status";
  ASSERT_TRUE(browser_->Navigate(url).ok());
  std::string text;
  ASSERT_TRUE(browser_->WaitForText(kStateCell, "running", 15s, &text))
      << "the page's state cell: \"" << text << "\"; " << Eval("return document.body.innerText;");
  // The style came from this port too (the policy allows nothing else).
  EXPECT_NE(Eval("return getComputedStyle(document.body).fontFamily;").get<std::string>().find("sans-serif"),
            std::string::npos);
  // Position, lag and client are filled; both sparklines are drawn from the
  // server's history (sampled when the endpoint started).
  EXPECT_NE(Eval("return document.querySelector(\"tr[data-destination='example'] td.position\").textContent;")
                .get<std::string>()
                .find(':'),
            std::string::npos);
  EXPECT_EQ(Eval("return document.querySelectorAll(\"tr[data-destination='example'] svg.spark\").length;"), 2);
  EXPECT_GE(std::stoi(Eval("return document.querySelector(\"tr[data-destination='example'] td.lag-history "
                           "svg\").getAttribute('data-samples');")
                          .get<std::string>()),
            1);

  // 1. A wrong token: the API's refusal is on the page, in words; nothing changes.
  ASSERT_TRUE(TypeToken(kWrongToken));
  ASSERT_TRUE(ClickAndConfirm("stop"));
  ASSERT_TRUE(browser_->WaitForTextContaining("#message", "401", 10s, &text)) << text;
  EXPECT_NE(text.find("stop example refused: 401 the admin token was refused: wrong admin token"), std::string::npos)
      << text;
  EXPECT_EQ(ServerState(), "running");
  ASSERT_TRUE(browser_->Text(kStateCell, &text).ok());
  EXPECT_EQ(text, "running");

  // 2. Dismissing the confirm() sends nothing.
  ASSERT_TRUE(TypeToken(kToken));
  std::string stop;
  ASSERT_TRUE(browser_->Find(Button("stop"), &stop).ok());
  ASSERT_TRUE(browser_->Click(stop).ok());
  ASSERT_TRUE(browser_->DismissAlert().ok());
  ASSERT_TRUE(browser_->WaitForTextContaining("#message", "cancelled", 5s, &text)) << text;
  EXPECT_EQ(ServerState(), "running");

  // 3. The right token: stop. The page and the server agree.
  ASSERT_TRUE(ClickAndConfirm("stop"));
  ASSERT_TRUE(browser_->WaitForText(kStateCell, "stopped", 15s, &text)) << text;
  EXPECT_EQ(ServerState(), "stopped");
  ASSERT_TRUE(browser_->WaitForTextContaining("#message", "stop example: stopped; state now stopped", 5s, &text))
      << text;
  // The token lives in the tab's sessionStorage, not in the page's markup.
  EXPECT_EQ(Eval("return sessionStorage.getItem('canal.admin.token');"), kToken);
  EXPECT_EQ(Eval("return document.documentElement.outerHTML.includes(arguments[0]);", json::array({kToken})), false);

  // 4. A reload keeps the token (same tab) and shows the destination still stopped.
  ASSERT_TRUE(browser_->Navigate(url).ok());
  ASSERT_TRUE(browser_->WaitForText(kStateCell, "stopped", 15s, &text)) << text;
  EXPECT_EQ(Eval("return document.getElementById('token').value;"), kToken);

  // 5. Start: running again, on the page and on the server.
  ASSERT_TRUE(ClickAndConfirm("start"));
  ASSERT_TRUE(browser_->WaitForText(kStateCell, "running", 30s, &text)) << text;
  EXPECT_EQ(ServerState(), "running");
  ASSERT_TRUE(browser_->WaitForTextContaining("#message", "start example: started", 5s, &text)) << text;
  EXPECT_TRUE(WaitForText(install_->server_log(), "admin: start example by 127.0.0.1:", 5s));

  // The session ends and no Chromium of it is left running.
  const Status closed = browser_->Close();
  EXPECT_TRUE(closed.ok()) << closed.ToString();
  std::printf("[ admin page ] browser test took %.1f s\n", SecondsSince(began));
}

}  // namespace
}  // namespace canal::testing
