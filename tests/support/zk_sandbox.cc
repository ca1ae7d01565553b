#include "support/zk_sandbox.h"

#include <cstdlib>
#include <filesystem>
#include <utility>

namespace canal::testing {
namespace {

namespace fs = std::filesystem;

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

std::unique_ptr<ZkSandbox> StartSuiteZk(uint16_t port, std::string* error, std::string dir) {
  ZkSandboxOptions o;
  o.port = port;
  o.dir = std::move(dir);
  return StartSuiteSandboxOf<ZkSandbox>(std::move(o), "ZooKeeper sandbox", error);
}

}  // namespace canal::testing
