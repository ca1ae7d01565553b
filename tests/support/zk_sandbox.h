// ZkSandbox: a throwaway standalone ZooKeeper for one test binary, driven
// through scripts/zk-sandbox.sh (start, stop, kill).
//
// Tests call Available() first and GTEST_SKIP with SkipReason() when java or
// Debian's zookeeper package is missing. Each test binary uses its own port
// and dir. The sandbox allows sessions from 1 s to 120 s, so tests can expire
// a session quickly.
//
// One ZooKeeper per test binary: ctest runs every test in a process of its
// own, so the binary's ZooKeeper is a ctest fixture (canal_zk_fixture in
// tests/CMakeLists.txt) started before its first test and stopped after its
// last, with the port in CANAL_TEST_ZK_SHARED_PORTS. StartSuiteZk then joins
// that server instead of starting one, leaves it running, and gives the test
// a chroot of its own (servers() ends in it), so no test sees another's
// nodes. Run directly, a binary starts one ZooKeeper per suite as before.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "canal/common/status.h"
#include "support/sandbox_script.h"

namespace canal::coord {
class ZkClient;
}

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

  // The connect string for ZkOptions::servers: "127.0.0.1:<port>", followed
  // by the test's chroot ("/canal-tests/<id>") when the server is shared.
  std::string servers() const { return "127.0.0.1:" + std::to_string(port()) + chroot_; }
  const std::string& chroot() const { return chroot_; }

  // Wipes every node (the chroot's too, made again here).
  bool StartFresh();

  // Joins the running shared server: starts it if a test stopped it, never
  // stops it, and makes `chroot` (a fresh path) this sandbox's root.
  bool JoinShared(const std::string& chroot);

 private:
  bool MakeChroot();

  std::string chroot_;
};

// Whether ctest runs this binary against a shared ZooKeeper on `port`
// (CANAL_TEST_ZK_SHARED_PORTS, a comma-separated list, names it).
bool ZkSharedByCtest(uint16_t port);

// For a suite's SetUpTestSuite: a sandbox on `port` started from an empty data
// dir (`dir` "" = the default), or the shared one joined (see above), or
// nullptr with *error saying why. nullptr without an error when ZooKeeper is
// not installed (SetUp skips then).
std::unique_ptr<ZkSandbox> StartSuiteZk(uint16_t port, std::string* error, std::string dir = "");

// For the SetUp of suites whose tests drive canal-servers through the sandbox (Ha, Fleet): a
// client of `zk` (*client) with a 30 s session, so that the test's own view outlives ZooKeeper's
// restarts, connected within 10 s, and Canal's layout (/otter) deleted, so that the test starts
// with no cursor, running or placement node of an earlier one. Needs canal_coord.
Status ConnectToEmptyLayout(const ZkSandbox& zk, std::unique_ptr<coord::ZkClient>* client);

// A ZooKeeper outage under a running test: stops `zk`, keeps it down until `down` after the
// stop (0: a plain restart), and starts it again; a stop or start that fails is a test failure.
struct ZkOutage {
  std::chrono::steady_clock::time_point stopped;  // when the stop began
  std::chrono::steady_clock::time_point started;  // when it was back
};
ZkOutage StopZkFor(ZkSandbox& zk, std::chrono::milliseconds down);

// For SetUp: skips when ZooKeeper is missing, fails when the suite's sandbox
// did not start.
#define CANAL_REQUIRE_ZK(sandbox, setup_error) \
  CANAL_REQUIRE_SANDBOX_OF(::canal::testing::ZkSandbox, sandbox, setup_error)

}  // namespace canal::testing
