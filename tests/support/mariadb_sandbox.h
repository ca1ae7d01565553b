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

#include "support/sandbox_script.h"  // also RunShell, which tests including this use

namespace canal::testing {

struct SandboxOptions {
  uint16_t port = 0;        // required
  std::string dir;          // default: <build>/test-sandboxes/mariadb-<port>
  std::string binlog_format = "ROW";          // ROW / MIXED / STATEMENT
  std::string binlog_row_metadata = "FULL";   // FULL / MINIMAL
  std::vector<std::string> extra_options;     // more my.cnf lines ("max_allowed_packet=64M")
};

class MariadbSandbox final : public ScriptedSandbox {
 public:
  explicit MariadbSandbox(SandboxOptions options);

  static bool Available();
  static std::string SkipReason();

  // StartFresh, Start, Stop, Kill9: see sandbox_script.h. Start and Restart
  // write the server options into my.cnf.
  bool Restart() override;  // Stop + Start, same data and binlogs

  // Runs SQL as root through the socket; false with error() = client output on failure.
  bool Sql(const std::string& sql, std::string* output = nullptr);
  bool SqlFile(const std::string& path, std::string* output = nullptr);
  // First column of the first row of a query, or "" (batch mode, no headers).
  std::string SqlValue(const std::string& sql);

  std::string binlog_dir() const { return dir() + "/binlog"; }
  std::string socket() const { return dir() + "/mariadbd.sock"; }
  // Replication user the script creates.
  static constexpr const char* kUser = "canal";
  static constexpr const char* kPassword = "canal";

 protected:
  std::string StartArguments() const override;  // the server options

 private:
  std::string ClientCommand() const;  // the mariadb client as root over the socket

  const SandboxOptions options_;
};

// For a suite's SetUpTestSuite: a sandbox on `port` started from an empty data
// dir (`dir` "" = the default), or nullptr with *error saying why. nullptr
// without an error when mariadb-server is not installed (SetUp skips then).
std::unique_ptr<MariadbSandbox> StartSuiteSandbox(uint16_t port, std::string* error, std::string dir = "");
// The same with binlog_row_metadata=MINIMAL: the binlog names no columns,
// which the schema history (or information_schema) must then do.
std::unique_ptr<MariadbSandbox> StartMinimalSuiteSandbox(uint16_t port, std::string* error);

// For SetUp: skips when mariadb-server is missing, fails when the suite's
// sandbox did not start.
#define CANAL_REQUIRE_SANDBOX(sandbox, setup_error) \
  CANAL_REQUIRE_SANDBOX_OF(::canal::testing::MariadbSandbox, sandbox, setup_error)

}  // namespace canal::testing
