#include "support/mariadb_sandbox.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

namespace canal::testing {
namespace {

namespace fs = std::filesystem;

std::string FindClient() {
  for (const char* p : {"/usr/bin/mariadb", "/usr/bin/mysql"}) {
    if (fs::exists(p)) return p;
  }
  return "mariadb";
}

}  // namespace

MariadbSandbox::MariadbSandbox(SandboxOptions options)
    : ScriptedSandbox("MariadbSandbox", "mariadb-sandbox.sh", "mariadb", options.port, options.dir),
      options_(std::move(options)) {}

bool MariadbSandbox::Available() {
  return (fs::exists("/usr/sbin/mariadbd") || fs::exists("/usr/bin/mariadbd")) &&
         (fs::exists("/usr/bin/mariadb") || fs::exists("/usr/bin/mysql"));
}

std::string MariadbSandbox::SkipReason() {
  return "mariadb-server is not installed (scripts/install-deps.sh installs it)";
}

std::string MariadbSandbox::StartArguments() const {
  std::string args = "--binlog-format " + ShellQuote(options_.binlog_format);
  args += " --row-metadata " + ShellQuote(options_.binlog_row_metadata);
  for (const auto& o : options_.extra_options) args += " --option " + ShellQuote(o);
  return args;
}

bool MariadbSandbox::Restart() {
  if (!RunScript("restart", StartArguments())) return false;
  started_ = true;
  return true;
}

std::string MariadbSandbox::ClientCommand() const {
  return ShellQuote(FindClient()) + " --no-defaults --socket=" + ShellQuote(socket()) +
         " -uroot --default-character-set=utf8mb4 --batch --skip-column-names";
}

bool MariadbSandbox::Sql(const std::string& sql, std::string* output) {
  // Through a temp file rather than -e: SQL may hold quotes and newlines.
  const std::string path = dir() + "/tmp-sql-" + std::to_string(::getpid()) + ".sql";
  {
    std::error_code ec;
    fs::create_directories(dir(), ec);
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
  SandboxOptions o;
  o.port = port;
  o.dir = std::move(dir);
  return StartSuiteSandboxOf<MariadbSandbox>(std::move(o), "sandbox", error);
}

std::unique_ptr<MariadbSandbox> StartMinimalSuiteSandbox(uint16_t port, std::string* error) {
  SandboxOptions o;
  o.port = port;
  o.binlog_row_metadata = "MINIMAL";
  return StartSuiteSandboxOf<MariadbSandbox>(std::move(o), "MINIMAL sandbox", error);
}

}  // namespace canal::testing
