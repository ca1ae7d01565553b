#include "support/mariadb_sandbox.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

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

std::string FindClient() {
  for (const char* p : {"/usr/bin/mariadb", "/usr/bin/mysql"}) {
    if (fs::exists(p)) return p;
  }
  return "mariadb";
}

}  // namespace

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

MariadbSandbox::MariadbSandbox(SandboxOptions options) : options_(std::move(options)) {
  if (options_.dir.empty()) {
    options_.dir = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/mariadb-" + std::to_string(options_.port);
  }
}

MariadbSandbox::~MariadbSandbox() {
  if (started_) Stop();
}

bool MariadbSandbox::Available() {
  return (fs::exists("/usr/sbin/mariadbd") || fs::exists("/usr/bin/mariadbd")) &&
         (fs::exists("/usr/bin/mariadb") || fs::exists("/usr/bin/mysql"));
}

std::string MariadbSandbox::SkipReason() {
  return "mariadb-server is not installed (scripts/install-deps.sh installs it)";
}

std::string MariadbSandbox::ScriptCommand(const std::string& command, bool with_server_options) const {
  std::string cmd = "bash " + ShellQuote(std::string(CANAL_SOURCE_DIR) + "/scripts/mariadb-sandbox.sh") + " " +
                    command + " --port " + std::to_string(options_.port) + " --dir " + ShellQuote(options_.dir);
  if (with_server_options) {
    cmd += " --binlog-format " + ShellQuote(options_.binlog_format);
    cmd += " --row-metadata " + ShellQuote(options_.binlog_row_metadata);
    for (const auto& o : options_.extra_options) cmd += " --option " + ShellQuote(o);
  }
  return cmd;
}

bool MariadbSandbox::RunScript(const std::string& command, bool with_server_options) {
  if (options_.port == 0) {
    error_ = "MariadbSandbox: no port given";
    return false;
  }
  int rc = 0;
  std::string out = RunShell(ScriptCommand(command, with_server_options), &rc);
  if (rc != 0) {
    error_ = "mariadb-sandbox.sh " + command + " (port " + std::to_string(options_.port) + ", dir " + options_.dir +
             ") failed with exit code " + std::to_string(rc) + ":\n" + out;
    return false;
  }
  error_.clear();
  return true;
}

bool MariadbSandbox::StartFresh() {
  // stop --wipe only deletes a dir the script made; a foreign one fails here.
  if (fs::exists(options_.dir) && !RunScript("stop --wipe", false)) return false;
  return Start();
}

bool MariadbSandbox::Start() {
  if (!RunScript("start", true)) return false;
  started_ = true;
  return true;
}

bool MariadbSandbox::Stop() {
  const bool ok = RunScript("stop", false);
  if (ok) started_ = false;
  return ok;
}

bool MariadbSandbox::Restart() {
  if (!RunScript("restart", true)) return false;
  started_ = true;
  return true;
}

bool MariadbSandbox::Kill9() {
  const bool ok = RunScript("kill", false);
  if (ok) started_ = false;
  return ok;
}

std::string MariadbSandbox::ClientCommand() const {
  return ShellQuote(FindClient()) + " --no-defaults --socket=" + ShellQuote(socket()) +
         " -uroot --default-character-set=utf8mb4 --batch --skip-column-names";
}

bool MariadbSandbox::Sql(const std::string& sql, std::string* output) {
  // Through a temp file rather than -e: SQL may hold quotes and newlines.
  const std::string path = options_.dir + "/tmp-sql-" + std::to_string(::getpid()) + ".sql";
  {
    std::error_code ec;
    fs::create_directories(options_.dir, ec);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
      error_ = "cannot write " + path;
      return false;
    }
    const bool written = std::fwrite(sql.data(), 1, sql.size(), f) == sql.size();
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed) {
      error_ = "cannot write " + path;
      std::remove(path.c_str());
      return false;
    }
  }
  const bool ok = SqlFile(path, output);
  std::remove(path.c_str());
  return ok;
}

bool MariadbSandbox::SqlFile(const std::string& path, std::string* output) {
  int rc = 0;
  std::string out = RunShell(ClientCommand() + " < " + ShellQuote(path), &rc);
  if (output != nullptr) *output = out;
  if (rc != 0) {
    error_ = "SQL as root on " + socket() + " failed (exit code " + std::to_string(rc) + "):\n" + out;
    return false;
  }
  error_.clear();
  return true;
}

std::string MariadbSandbox::SqlValue(const std::string& sql) {
  std::string out;
  if (!Sql(sql, &out)) return "";
  const size_t eol = out.find('\n');
  std::string first = out.substr(0, eol);
  const size_t tab = first.find('\t');
  if (tab != std::string::npos) first.resize(tab);
  return first;
}

std::unique_ptr<MariadbSandbox> StartSuiteSandbox(uint16_t port, std::string* error, std::string dir) {
  if (!MariadbSandbox::Available()) return nullptr;
  SandboxOptions o;
  o.port = port;
  o.dir = std::move(dir);
  auto sandbox = std::make_unique<MariadbSandbox>(o);
  if (!sandbox->StartFresh()) {
    *error = "sandbox on port " + std::to_string(port) + " did not start: " + sandbox->error();
    return nullptr;
  }
  return sandbox;
}

}  // namespace canal::testing
