#include "support/zk_sandbox.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "canal/coord/zk_client.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kSharedPortsEnv = "CANAL_TEST_ZK_SHARED_PORTS";

bool JavaPresent() {
  if (const char* home = std::getenv("JAVA_HOME"); home != nullptr && fs::exists(std::string(home) + "/bin/java")) {
    return true;
  }
  return fs::exists("/usr/bin/java") || fs::exists("/usr/local/bin/java");
}

}  // namespace

ZkSandbox::ZkSandbox(ZkSandboxOptions options)
    : ScriptedSandbox("ZkSandbox", "zk-sandbox.sh", "zk", options.port, std::move(options.dir)) {}

bool ZkSandbox::Available() { return JavaPresent() && fs::exists("/usr/share/java/zookeeper.jar"); }

std::string ZkSandbox::SkipReason() {
  if (!JavaPresent()) return "java is not installed (apt-get install default-jre-headless zookeeper)";
  return "ZooKeeper is not installed: /usr/share/java/zookeeper.jar is missing (apt-get install zookeeper)";
}

bool ZkSandbox::StartFresh() { return ScriptedSandbox::StartFresh() && MakeChroot(); }

bool ZkSandbox::JoinShared(const std::string& chroot) {
  keep_running_ = true;
  chroot_ = chroot;
  return Start() && MakeChroot();
}

// The chroot must exist before a client uses it: made (with its parents) by a
// client on the real root.
bool ZkSandbox::MakeChroot() {
  if (chroot_.empty()) return true;
  coord::ZkOptions o;
  o.servers = "127.0.0.1:" + std::to_string(port());
  std::unique_ptr<coord::ZkClient> zk;
  Status s = coord::ZkClient::Create(o, &zk);
  if (s.ok()) s = zk->WaitConnected(20s);
  bool created = false;
  if (s.ok()) s = zk->CreateNode(chroot_, "", coord::ZkCreateMode::kPersistent, /*make_parents=*/true, &created);
  if (zk) zk->Close();
  if (!s.ok()) {
    error_ = "ZkSandbox: cannot make the chroot " + chroot_ + ": " + s.ToString();
    return false;
  }
  return true;
}

bool ZkSharedByCtest(uint16_t port) {
  const char* list = std::getenv(kSharedPortsEnv);
  if (list == nullptr) return false;
  const std::string want = std::to_string(port);
  std::string_view rest = list;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == want) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

std::unique_ptr<ZkSandbox> StartSuiteZk(uint16_t port, std::string* error, std::string dir) {
  ZkSandboxOptions o;
  o.port = port;
  o.dir = std::move(dir);
  if (!ZkSharedByCtest(port)) return StartSuiteSandboxOf<ZkSandbox>(std::move(o), "ZooKeeper sandbox", error);
  if (!ZkSandbox::Available()) return nullptr;
  auto sandbox = std::make_unique<ZkSandbox>(std::move(o));
  // One test per process under ctest: the pid and the clock make the path unique
  // even when ctest --repeat runs the same test again.
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  const std::string chroot = "/canal-tests/" + std::to_string(::getpid()) + "-" + std::to_string(now);
  if (!sandbox->JoinShared(chroot)) {
    *error = "the shared ZooKeeper sandbox on port " + std::to_string(port) + " (" + sandbox->error() +
             ") is not up: ctest starts it in the fixture test zk_start_" + std::to_string(port);
    return nullptr;
  }
  return sandbox;
}

Status ConnectToEmptyLayout(const ZkSandbox& zk, std::unique_ptr<coord::ZkClient>* client) {
  coord::ZkOptions o;
  o.servers = zk.servers();
  o.session_timeout_ms = 30'000;
  Status s = coord::ZkClient::Create(o, client);
  if (s.ok()) s = (*client)->WaitConnected(10s);
  if (s.ok()) s = (*client)->Delete("/otter", /*recursive=*/true);
  return s;
}

ZkOutage StopZkFor(ZkSandbox& zk, std::chrono::milliseconds down) {
  ZkOutage o;
  o.stopped = std::chrono::steady_clock::now();
  EXPECT_TRUE(zk.Stop()) << zk.error();
  std::this_thread::sleep_until(o.stopped + down);
  EXPECT_TRUE(zk.Start()) << zk.error();
  o.started = std::chrono::steady_clock::now();
  return o;
}

}  // namespace canal::testing
