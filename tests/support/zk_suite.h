// ZkSuite: the base of test suites that run against their binary's live
// ZooKeeper sandbox (support/zk_sandbox.h): joined or started once per suite,
// skipped where ZooKeeper is not installed, and started again before each
// test (one that stopped it and failed half-way must not break the next);
// and connected ZkClients on it. Only for binaries that link canal_coord.
//
//   class MySuite : public ZkSuite<canal::testing::TestPort("zk_coord")> {};   // the binary's ZooKeeper port
//   TEST_F(MySuite, ...) { auto zk = Connect(); ... }
//
// A SetUp of its own calls ZkSuite::SetUp() first and returns when
// IsSkipped() || HasFatalFailure().
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "canal/coord/zk_client.h"
#include "support/sandbox_suite.h"
#include "support/test_ports.h"
#include "support/zk_sandbox.h"

namespace canal::testing {

template <uint16_t ZkPort>
class ZkSuite : public SandboxSuite<ZkSandbox, &StartSuiteZk, ZkPort> {
  using Base = SandboxSuite<ZkSandbox, &StartSuiteZk, ZkPort>;

 protected:
  using Base::sandbox_;
  void SetUp() override {
    Base::SetUp();
    if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
    ASSERT_TRUE(sandbox_->Start()) << sandbox_->error();
  }

  // Options for a client of the sandbox (its chroot, when shared, included).
  static coord::ZkOptions Options(int session_ms = 6000, int op_ms = 5000) {
    coord::ZkOptions o;
    o.servers = sandbox_->servers();
    o.session_timeout_ms = session_ms;
    o.operation_timeout_ms = op_ms;
    return o;
  }

  // A client connected within 10 s; nullptr and a test failure otherwise.
  static std::unique_ptr<coord::ZkClient> Connect(coord::ZkOptions o) {
    std::unique_ptr<coord::ZkClient> c;
    Status s = coord::ZkClient::Create(std::move(o), &c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return nullptr;
    s = c->WaitConnected(std::chrono::seconds(10));
    EXPECT_TRUE(s.ok()) << s.ToString();
    return c;
  }
  static std::unique_ptr<coord::ZkClient> Connect() { return Connect(Options()); }
};

}  // namespace canal::testing
