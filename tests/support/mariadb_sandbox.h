// MariadbSandbox: a throwaway MariaDB for one test binary, driven through
// scripts/mariadb-sandbox.sh (start, stop, restart), plus SQL as root over the
// socket through the `mariadb` command-line client.
//
// Tests call Available() first and GTEST_SKIP with SkipReason() when Debian's
// mariadb-server is not installed. Each test binary uses its own port and dir.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace canal::testing {

struct SandboxOptions {
  uint16_t port = 0;        // required
  std::string dir;          // default: <build>/test-sandboxes/mariadb-<port>
  std::string binlog_format = "ROW";          // ROW / MIXED / STATEMENT
  std::string binlog_row_metadata = "FULL";   // FULL / MINIMAL
  std::vector<std::string> extra_options;     // more my.cnf lines ("max_allowed_packet=64M")
};

class MariadbSandbox {
 public:
  explicit MariadbSandbox(SandboxOptions options);
  ~MariadbSandbox();  // stops the server (keeps the dir for post-mortems)

  static bool Available();
  static std::string SkipReason();

  // Start from an empty data dir (wipes an old one). False with error() set on failure.
  bool StartFresh();
  bool Start();    // keep the data dir
  bool Stop();     // clean shutdown
  bool Restart();  // Stop + Start, same data and binlogs
  bool Kill9();    // SIGKILL the server (crash), for fault tests

  // Runs SQL as root through the socket; false with error() = client output on failure.
  bool Sql(const std::string& sql, std::string* output = nullptr);
  bool SqlFile(const std::string& path, std::string* output = nullptr);
  // First column of the first row of a query, or "" (batch mode, no headers).
  std::string SqlValue(const std::string& sql);

  uint16_t port() const { return options_.port; }
  const std::string& dir() const { return options_.dir; }
  std::string binlog_dir() const { return options_.dir + "/binlog"; }
  std::string socket() const { return options_.dir + "/mariadbd.sock"; }
  const std::string& error() const { return error_; }
  // Replication user the script creates.
  static constexpr const char* kUser = "canal";
  static constexpr const char* kPassword = "canal";

 private:
  // `bash scripts/mariadb-sandbox.sh COMMAND --port --dir`, plus the server
  // options (my.cnf is rewritten on each start) when with_server_options.
  std::string ScriptCommand(const std::string& command, bool with_server_options) const;
  bool RunScript(const std::string& command, bool with_server_options);
  std::string ClientCommand() const;  // the mariadb client as root over the socket

  SandboxOptions options_;
  std::string error_;
  bool started_ = false;
};

// For a suite's SetUpTestSuite: a sandbox on `port` started from an empty data
// dir (`dir` "" = the default), or nullptr with *error saying why. nullptr
// without an error when mariadb-server is not installed (SetUp skips then).
std::unique_ptr<MariadbSandbox> StartSuiteSandbox(uint16_t port, std::string* error, std::string dir = "");

// For SetUp: skips when mariadb-server is missing, fails when the suite's
// sandbox did not start.
#define CANAL_REQUIRE_SANDBOX(sandbox, setup_error)                                                   \
  do {                                                                                                \
    if (!::canal::testing::MariadbSandbox::Available()) {                                             \
      GTEST_SKIP() << ::canal::testing::MariadbSandbox::SkipReason();                                 \
    }                                                                                                 \
    ASSERT_TRUE((sandbox) != nullptr) << (setup_error);                                               \
  } while (0)

// Runs a shell command, returning its combined output; *rc gets the exit code.
std::string RunShell(const std::string& cmd, int* rc);

}  // namespace canal::testing
