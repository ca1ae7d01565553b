// MirrorSuite: ServerSuite (the source MariaDB and the built canal-server) plus a second,
// plain MariaDB for support/table_mirror.h to rebuild tables in, started side by side once per
// suite; and FirstError, a worker thread's first error for the test's thread to print.
// Header-only: for test targets that link canal_test_mirror.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"

namespace canal::testing {

template <uint16_t SourcePort, uint16_t MirrorPort>
class MirrorSuite : public ServerSuite<SourcePort> {
  using Base = ServerSuite<SourcePort>;

 public:
  static MariadbSandbox& Source() { return *Base::sandbox_; }
  static MariadbSandbox& Mirror() { return *mirror_; }

 protected:
  static void SetUpTestSuite() {
    std::thread mirror([] { mirror_ = StartSuiteSandbox(MirrorPort, &mirror_error_); });
    Base::SetUpTestSuite();
    mirror.join();
  }
  static void TearDownTestSuite() {
    mirror_.reset();
    Base::TearDownTestSuite();
  }
  void SetUp() override {
    Base::SetUp();
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    CANAL_REQUIRE_SANDBOX(mirror_, mirror_error_);
  }

  // The same SQL on both servers.
  static void BothSql(const std::string& sql) {
    ASSERT_TRUE(Base::sandbox_->Sql(sql)) << Base::sandbox_->error();
    ASSERT_TRUE(mirror_->Sql(sql)) << mirror_->error();
  }

  static inline std::unique_ptr<MariadbSandbox> mirror_;
  static inline std::string mirror_error_;
};

// A thread's first error, for the main thread to print.
class FirstError {
 public:
  void Set(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (text_.empty()) text_ = text;
    failed_ = true;
  }
  std::string Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }
  bool failed() const { return failed_; }

 private:
  mutable std::mutex mu_;
  std::string text_;
  std::atomic<bool> failed_{false};
};

}  // namespace canal::testing
