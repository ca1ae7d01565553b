// ServerSuite: the base of integration suites that run the built canal-server
// against one MariaDB sandbox of their own (with helpers for SQL on it);
// ServerClientOptions, a client's options for such a server; and
// ConnectAndSubscribe, which opens a client while the server or destination
// starts.
//
//   class MySuite : public ServerSuite<canal::testing::TestPort("canal_wire")> {};   // the suite's sandbox port
//   TEST_F(MySuite, ...) { ... sandbox_->Sql(...) ... }
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "support/canal_install.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/sandbox_script.h"
#include "support/sandbox_suite.h"
#include "support/test_ports.h"

namespace canal::testing {

template <uint16_t SandboxPort>
class ServerSuite : public SandboxSuite<MariadbSandbox, &StartSuiteSandbox, SandboxPort> {
  using Base = SandboxSuite<MariadbSandbox, &StartSuiteSandbox, SandboxPort>;

 protected:
  void SetUp() override {
    Base::SetUp();
    if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
    ASSERT_TRUE(std::filesystem::exists(CanalInstall::ServerProgram()))
        << CanalInstall::ServerProgram() << " is missing: build the canal-server target first";
  }
  static constexpr uint16_t kSandboxPort = SandboxPort;
  using Base::sandbox_;

  // SQL on the sandbox as root; a failure (with the server's error) fails the test.
  static bool Sql(const std::string& sql) {
    const bool ok = sandbox_->Sql(sql);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }
  // instance.properties lines that start the destination at the primary's end as it is now.
  static std::string StartHere() { return StartAtPrimaryEnd(*sandbox_); }
  static bool CreateLoadTable(const std::string& table) { return Sql(LoadTableSql(table)); }
};

// A ServerSuite whose tests each run a real installed canal-server
// (bin/startup.sh) in <build>/test-sandboxes/<prefix>-<test name>.
template <uint16_t SandboxPort>
class InstalledServerSuite : public ServerSuite<SandboxPort> {
 protected:
  explicit InstalledServerSuite(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    ServerSuite<SandboxPort>::SetUp();
    if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
    install_ = std::make_unique<CanalInstall>(
        prefix_ + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name(), SandboxPort);
  }
  void TearDown() override { install_.reset(); }

  // bin/startup.sh, with its output and the server log on failure.
  ::testing::AssertionResult Startup() const {
    std::string out;
    const int rc = install_->Startup(&out);
    if (rc == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "startup.sh exit " << rc << ":\n" << out << "\n"
                                         << ReadAll(install_->server_log());
  }
  // bin/canal-admin.sh ARGS: its output (stdout and stderr), *rc its exit code.
  std::string Admin(const std::string& args, int* rc) const {
    return RunShell("bash " + ShellQuoted(install_->bin_dir() / "canal-admin.sh") + " " + args + " 2>&1", rc);
  }

  const std::string prefix_;
  std::unique_ptr<CanalInstall> install_;
};

// A client of `destination` on the canal-server at 127.0.0.1:`port`: 2 s to
// connect, up to 20 s for an answer (a busy server is slow, not gone).
inline client::ConnectorOptions ServerClientOptions(uint16_t port, const std::string& destination = "example") {
  client::ConnectorOptions o;
  o.address = "127.0.0.1:" + std::to_string(port);
  o.destination = destination;
  o.connect_timeout = std::chrono::seconds(2);
  o.read_timeout = std::chrono::seconds(20);
  return o;
}

// Connect() and Subscribe(filter), again every 100 ms until both succeed or
// `limit` passes (the server starting, its destination starting, or the
// server not yet noticing the previous connection of this client id end).
inline Status ConnectAndSubscribe(client::Connector& c, std::chrono::milliseconds limit,
                                  std::string_view filter = "") {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    Status s = c.Connect();
    if (s.ok()) s = c.Subscribe(filter);
    if (s.ok() || std::chrono::steady_clock::now() > deadline) return s;
    c.Disconnect();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace canal::testing
