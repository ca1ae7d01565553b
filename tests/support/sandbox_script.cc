#include "support/sandbox_script.h"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

namespace canal::testing {

std::string RunShell(const std::string& cmd, int* rc) {
  std::string out;
  // 2>&1: callers want the client's error text in failure messages.
  FILE* p = popen(("( " + cmd + " ) 2>&1").c_str(), "r");
  if (p == nullptr) {
    if (rc != nullptr) *rc = -1;
    return "popen failed for: " + cmd;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  if (rc != nullptr) *rc = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  return out;
}

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

ScriptedSandbox::ScriptedSandbox(std::string name, std::string script, std::string_view dir_prefix, uint16_t port,
                                 std::string dir)
    : name_(std::move(name)), script_(std::move(script)), port_(port), dir_(std::move(dir)) {
  if (dir_.empty()) {
    dir_ = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/" + std::string(dir_prefix) + "-" + std::to_string(port_);
  }
}

ScriptedSandbox::~ScriptedSandbox() {
  if (started_ && !keep_running_) Stop();
}

bool ScriptedSandbox::RunScript(const std::string& command, const std::string& arguments) {
  if (port_ == 0) {
    error_ = name_ + ": no port given";
    return false;
  }
  std::string cmd = "bash " + ShellQuote(std::string(CANAL_SOURCE_DIR) + "/scripts/" + script_) + " " + command +
                    " --port " + std::to_string(port_) + " --dir " + ShellQuote(dir_);
  if (!arguments.empty()) cmd += " " + arguments;
  int rc = 0;
  const std::string out = RunShell(cmd, &rc);
  if (rc != 0) {
    error_ = script_ + " " + command + " (port " + std::to_string(port_) + ", dir " + dir_ +
             ") failed with exit code " + std::to_string(rc) + ":\n" + out;
    return false;
  }
  error_.clear();
  return true;
}

bool ScriptedSandbox::StartFresh() {
  // stop --wipe only deletes a dir the script made; a foreign one fails here.
  if (std::filesystem::exists(dir_) && !RunScript("stop --wipe")) return false;
  return Start();
}

bool ScriptedSandbox::Start() {
  if (!RunScript("start", StartArguments())) return false;
  started_ = true;
  return true;
}

bool ScriptedSandbox::Stop() {
  const bool ok = RunScript("stop");
  if (ok) started_ = false;
  return ok;
}

bool ScriptedSandbox::Restart() { return Stop() && Start(); }

bool ScriptedSandbox::Kill9() {
  const bool ok = RunScript("kill");
  if (ok) started_ = false;
  return ok;
}

}  // namespace canal::testing
