// ZkSandbox: a throwaway standalone ZooKeeper for one test binary, driven
// through scripts/zk-sandbox.sh (start, stop, kill).
//
// Tests call Available() first and GTEST_SKIP with SkipReason() when java or
// Debian's zookeeper package is missing. Each test binary uses its own port
// and dir. The sandbox allows sessions from 1 s to 120 s, so tests can expire
// a session quickly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace canal::testing {

struct ZkSandboxOptions {
  uint16_t port = 0;  // required
  std::string dir;    // default: <build>/test-sandboxes/zk-<port>
};

class ZkSandbox {
 public:
  explicit ZkSandbox(ZkSandboxOptions options);
  ~ZkSandbox();  // stops the server (keeps the dir for post-mortems)

  static bool Available();
  static std::string SkipReason();

  // Start from an empty data dir (wipes an old one: every node and session
  // is gone). False with error() set on failure.
  bool StartFresh();
  bool Start();    // keep the data (nodes, and sessions until their timeout)
  bool Stop();     // SIGTERM and wait
  bool Restart();  // Stop + Start, same data
  bool Kill9();    // SIGKILL and wait

  uint16_t port() const { return options_.port; }
  const std::string& dir() const { return options_.dir; }
  // The connect string for ZkOptions::servers: "127.0.0.1:<port>".
  std::string servers() const { return "127.0.0.1:" + std::to_string(options_.port); }
  const std::string& error() const { return error_; }

 private:
  bool RunScript(const std::string& command);

  ZkSandboxOptions options_;
  std::string error_;
  bool started_ = false;
};

// For a suite's SetUpTestSuite: a sandbox on `port` started from an empty data
// dir (`dir` "" = the default), or nullptr with *error saying why. nullptr
// without an error when ZooKeeper is not installed (SetUp skips then).
std::unique_ptr<ZkSandbox> StartSuiteZk(uint16_t port, std::string* error, std::string dir = "");

// For SetUp: skips when ZooKeeper is missing, fails when the suite's sandbox
// did not start.
#define CANAL_REQUIRE_ZK(sandbox, setup_error)                   \
  do {                                                           \
    if (!::canal::testing::ZkSandbox::Available()) {             \
      GTEST_SKIP() << ::canal::testing::ZkSandbox::SkipReason(); \
    }                                                            \
    ASSERT_TRUE((sandbox) != nullptr) << (setup_error);          \
  } while (0)

}  // namespace canal::testing
