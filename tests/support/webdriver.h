// WebDriver: a small client of chromedriver's W3C WebDriver HTTP JSON API,
// for tests that open a server's page in a real browser (headless Chromium):
//
//   ChromiumPaths paths;
//   if (std::string why = FindChromium(&paths); !why.empty()) GTEST_SKIP() << why;
//   std::unique_ptr<WebDriver> browser;
//   ASSERT_TRUE(WebDriver::Open(paths, TestPort("my_block", 3), log_file, &browser).ok());
//   browser->Navigate("http://127.0.0.1:" + port + "/status");
//   std::string button;
//   browser->Find("button[data-action='stop']", &button);
//   browser->Click(button);
//   browser->AcceptAlert();                     // a confirm() the click opened
//   browser->Text("#message", &text);           // textContent, through execute/sync
//   browser->Close();                           // session, chromedriver, no Chromium left
//
// chromedriver runs on 127.0.0.1:`port` (a port of the test's block), in a
// process group of its own; Chromium gets a fresh profile folder (removed at
// Close) and --headless=new --no-sandbox (CI runs as root). Close (and the
// destructor) deletes the session, stops chromedriver and waits until no
// Chromium of that profile runs, killing what is left and saying so. Every
// call returns a Status naming the command and WebDriver's error; none throws.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "canal/common/status.h"

namespace canal::testing {

struct ChromiumPaths {
  std::string chromium = "/usr/bin/chromium";
  std::string chromedriver = "/usr/bin/chromedriver";
};

// Fills *paths (CANAL_TEST_CHROMIUM and CANAL_TEST_CHROMEDRIVER override the
// Debian paths); "" when both are executable, else why not (for GTEST_SKIP).
std::string FindChromium(ChromiumPaths* paths);

class WebDriver {
 public:
  // Starts chromedriver (its output to `log_file`), waits until it is
  // ready and opens a session of headless Chromium.
  static Status Open(const ChromiumPaths& paths, uint16_t port, const std::string& log_file,
                     std::unique_ptr<WebDriver>* out);
  ~WebDriver();  // Close(), its error ignored
  WebDriver(const WebDriver&) = delete;
  WebDriver& operator=(const WebDriver&) = delete;

  // Deletes the session and stops chromedriver; an error when it had to
  // kill chromedriver or a Chromium of this session. Idempotent.
  Status Close();

  Status Navigate(const std::string& url);
  // The first element matching a CSS selector (NotFound when none).
  Status Find(const std::string& css, std::string* element);
  Status Click(const std::string& element);
  Status Clear(const std::string& element);
  Status SendKeys(const std::string& element, const std::string& text);
  // The open user prompt (alert, confirm): its text; accept or dismiss it.
  Status AlertText(std::string* text);
  Status AcceptAlert();
  Status DismissAlert();
  // execute/sync: `script` is a function body; `args` its arguments.
  Status Execute(const std::string& script, const nlohmann::json& args, nlohmann::json* result);
  // The textContent of the first element matching `css` ("" when none).
  Status Text(const std::string& css, std::string* text);
  // Polls Text(css) until it equals `want` or `limit` passes; *last gets the last text read.
  bool WaitForText(const std::string& css, const std::string& want, std::chrono::milliseconds limit,
                   std::string* last = nullptr);
  // ... until it contains `part`.
  bool WaitForTextContaining(const std::string& css, const std::string& part, std::chrono::milliseconds limit,
                             std::string* last = nullptr);

  // The pids of Chromium processes started for this session (found by its
  // profile folder on their command line).
  std::vector<pid_t> BrowserPids() const;
  const std::string& session() const { return session_; }

 private:
  WebDriver() = default;
  // One command: `method` on /session/<id>`path` (or `path` as is when
  // `global`); *value gets the reply's "value".
  Status Command(const std::string& method, const std::string& path, const nlohmann::json& body,
                 nlohmann::json* value, bool global = false);

  uint16_t port_ = 0;
  pid_t driver_pid_ = -1;
  std::string profile_dir_;
  std::string session_;
};

}  // namespace canal::testing
