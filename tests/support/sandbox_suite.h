// SandboxSuite: the base of a suite whose tests share one sandbox (a MariaDB,
// a ZooKeeper): `Start(Port, &error, "")` makes it in SetUpTestSuite,
// TearDownTestSuite drops it, and SetUp requires it (skips where the server
// is not installed, fails where it did not start). ServerSuite
// (server_suite.h) and ZkSuite (zk_suite.h) build on it; a SetUp of their
// own calls this one first and returns when IsSkipped() || HasFatalFailure().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "support/sandbox_script.h"

namespace canal::testing {

template <typename Sandbox, std::unique_ptr<Sandbox> (*Start)(uint16_t, std::string*, std::string), uint16_t Port>
class SandboxSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sandbox_ = Start(Port, &setup_error_, ""); }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override { CANAL_REQUIRE_SANDBOX_OF(Sandbox, sandbox_, setup_error_); }

  static inline std::unique_ptr<Sandbox> sandbox_;
  static inline std::string setup_error_;
};

}  // namespace canal::testing
