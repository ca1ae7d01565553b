// ScriptedSandbox: what MariadbSandbox and ZkSandbox share: a throwaway
// server for one test binary on its own port and dir, driven through a
// scripts/<name>-sandbox.sh that takes `COMMAND --port P --dir D`
// (start, stop [--wipe], kill, ...). Plus the shell helpers they use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace canal::testing {

// Runs a shell command, returning its combined output; *rc gets the exit code.
std::string RunShell(const std::string& cmd, int* rc);

// Single-quotes a word for /bin/sh (an embedded ' becomes '\'').
std::string ShellQuote(const std::string& s);

class ScriptedSandbox {
 public:
  virtual ~ScriptedSandbox();  // stops the server unless kept running (keeps the dir for post-mortems)
  ScriptedSandbox(const ScriptedSandbox&) = delete;
  ScriptedSandbox& operator=(const ScriptedSandbox&) = delete;

  // Start from an empty data dir (wipes an old one). False with error() set on failure.
  bool StartFresh();
  bool Start();            // keep the data dir
  bool Stop();             // clean shutdown, waited for
  virtual bool Restart();  // Stop + Start, same data
  bool Kill9();            // SIGKILL the server and wait (crash), for fault tests

  uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }

 protected:
  // `name` names the class in errors; `script` is a file under scripts/; an
  // empty `dir` becomes <build>/test-sandboxes/<dir_prefix>-<port>.
  ScriptedSandbox(std::string name, std::string script, std::string_view dir_prefix, uint16_t port,
                  std::string dir);

  // Arguments added to start (the script rewrites the server's settings on
  // each start); none by default.
  virtual std::string StartArguments() const { return ""; }
  // `bash scripts/<script> COMMAND --port P --dir D ARGUMENTS`; false with
  // error() holding the script's output on failure.
  bool RunScript(const std::string& command, const std::string& arguments = "");

  std::string error_;
  bool started_ = false;
  // Set for a server shared by many test processes: the destructor leaves it up.
  bool keep_running_ = false;

 private:
  const std::string name_;
  const std::string script_;
  const uint16_t port_;
  std::string dir_;
};

// For a suite's SetUpTestSuite: a `Sandbox` made from `options`, started from
// an empty data dir, or nullptr with *error saying why (`what` names it). nullptr
// without an error when the server is not installed (SetUp skips then).
template <typename Sandbox, typename Options>
std::unique_ptr<Sandbox> StartSuiteSandboxOf(Options options, std::string_view what, std::string* error) {
  if (!Sandbox::Available()) return nullptr;
  auto sandbox = std::make_unique<Sandbox>(std::move(options));
  if (!sandbox->StartFresh()) {
    *error = std::string(what) + " on port " + std::to_string(sandbox->port()) + " did not start: " + sandbox->error();
    return nullptr;
  }
  return sandbox;
}

// For SetUp: skips when `Sandbox`'s server is missing, fails when the suite's
// sandbox did not start.
#define CANAL_REQUIRE_SANDBOX_OF(Sandbox, sandbox, setup_error) \
  do {                                                          \
    if (!Sandbox::Available()) {                                \
      GTEST_SKIP() << Sandbox::SkipReason();                    \
    }                                                           \
    ASSERT_TRUE((sandbox) != nullptr) << (setup_error);         \
  } while (0)

}  // namespace canal::testing
