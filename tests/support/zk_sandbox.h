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

#include "support/sandbox_script.h"

namespace canal::testing {

struct ZkSandboxOptions {
  uint16_t port = 0;  // required
  std::string dir;    // default: <build>/test-sandboxes/zk-<port>
};

// StartFresh wipes every node and session. Start keeps the data (nodes, and
// sessions until their timeout); Stop is SIGTERM and wait.
class ZkSandbox final : public ScriptedSandbox {
 public:
  explicit ZkSandbox(ZkSandboxOptions options);

  static bool Available();
  static std::string SkipReason();

  // The connect string for ZkOptions::servers: "127.0.0.1:<port>".
  std::string servers() const { return "127.0.0.1:" + std::to_string(port()); }
};

// For a suite's SetUpTestSuite: a sandbox on `port` started from an empty data
// dir (`dir` "" = the default), or nullptr with *error saying why. nullptr
// without an error when ZooKeeper is not installed (SetUp skips then).
std::unique_ptr<ZkSandbox> StartSuiteZk(uint16_t port, std::string* error, std::string dir = "");

// For SetUp: skips when ZooKeeper is missing, fails when the suite's sandbox
// did not start.
#define CANAL_REQUIRE_ZK(sandbox, setup_error) \
  CANAL_REQUIRE_SANDBOX_OF(::canal::testing::ZkSandbox, sandbox, setup_error)

}  // namespace canal::testing
