#include "support/zk_sandbox.h"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "support/mariadb_sandbox.h"  // RunShell

namespace canal::testing {
namespace {

namespace fs = std::filesystem;

// Single-quotes a word for /bin/sh (an embedded ' becomes '\'').
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

bool JavaPresent() {
  if (const char* home = std::getenv("JAVA_HOME"); home != nullptr && fs::exists(std::string(home) + "/bin/java")) {
    return true;
  }
  return fs::exists("/usr/bin/java") || fs::exists("/usr/local/bin/java");
}

}  // namespace

ZkSandbox::ZkSandbox(ZkSandboxOptions options) : options_(std::move(options)) {
  if (options_.dir.empty()) {
    options_.dir = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/zk-" + std::to_string(options_.port);
  }
}

ZkSandbox::~ZkSandbox() {
  if (started_) Stop();
}

bool ZkSandbox::Available() { return JavaPresent() && fs::exists("/usr/share/java/zookeeper.jar"); }

std::string ZkSandbox::SkipReason() {
  if (!JavaPresent()) return "java is not installed (apt-get install default-jre-headless zookeeper)";
  return "ZooKeeper is not installed: /usr/share/java/zookeeper.jar is missing (apt-get install zookeeper)";
}

bool ZkSandbox::RunScript(const std::string& command) {
  if (options_.port == 0) {
    error_ = "ZkSandbox: no port given";
    return false;
  }
  const std::string cmd = "bash " + ShellQuote(std::string(CANAL_SOURCE_DIR) + "/scripts/zk-sandbox.sh") + " " +
                          command + " --port " + std::to_string(options_.port) + " --dir " + ShellQuote(options_.dir);
  int rc = 0;
  const std::string out = RunShell(cmd, &rc);
  if (rc != 0) {
    error_ = "zk-sandbox.sh " + command + " (port " + std::to_string(options_.port) + ", dir " + options_.dir +
             ") failed with exit code " + std::to_string(rc) + ":\n" + out;
    return false;
  }
  error_.clear();
  return true;
}

bool ZkSandbox::StartFresh() {
  // stop --wipe only deletes a dir the script made; a foreign one fails here.
  if (fs::exists(options_.dir) && !RunScript("stop --wipe")) return false;
  return Start();
}

bool ZkSandbox::Start() {
  if (!RunScript("start")) return false;
  started_ = true;
  return true;
}

bool ZkSandbox::Stop() {
  const bool ok = RunScript("stop");
  if (ok) started_ = false;
  return ok;
}

bool ZkSandbox::Restart() { return Stop() && Start(); }

bool ZkSandbox::Kill9() {
  const bool ok = RunScript("kill");
  if (ok) started_ = false;
  return ok;
}

std::unique_ptr<ZkSandbox> StartSuiteZk(uint16_t port, std::string* error, std::string dir) {
  if (!ZkSandbox::Available()) return nullptr;
  ZkSandboxOptions o;
  o.port = port;
  o.dir = std::move(dir);
  auto sandbox = std::make_unique<ZkSandbox>(o);
  if (!sandbox->StartFresh()) {
    *error = "ZooKeeper sandbox on port " + std::to_string(port) + " did not start: " + sandbox->error();
    return nullptr;
  }
  return sandbox;
}

}  // namespace canal::testing
