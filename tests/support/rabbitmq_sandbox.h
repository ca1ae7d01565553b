// RabbitMqSandbox: a throwaway RabbitMQ broker for one test binary, driven
// through scripts/rabbitmq-sandbox.sh (start, stop, kill). It takes its port
// N and N+1..N+9 (epmd, Erlang distribution, CLI tools), all on loopback.
//
// Tests call Available() first and GTEST_SKIP with SkipReason() when Debian's
// rabbitmq-server is missing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/sandbox_script.h"

namespace canal::testing {

struct RabbitMqSandboxOptions {
  uint16_t port = 0;  // required: the AMQP port; N+1..N+9 are taken too
  std::string dir;    // default: <build>/test-sandboxes/rabbitmq-<port>
  std::vector<std::string> extra_options;  // more rabbitmq.conf lines ("max_message_size = 1048576")
};

// StartFresh wipes queues and messages; Start keeps them (durable queues and
// persistent messages survive a Stop). User guest / guest, virtual host /.
class RabbitMqSandbox final : public ScriptedSandbox {
 public:
  explicit RabbitMqSandbox(RabbitMqSandboxOptions options);

  static bool Available();
  static std::string SkipReason();

 protected:
  std::string StartArguments() const override;  // the extra rabbitmq.conf lines

 private:
  const std::vector<std::string> extra_options_;
};

// For a suite's SetUpTestSuite; see StartSuiteSandboxOf.
std::unique_ptr<RabbitMqSandbox> StartSuiteRabbitMq(uint16_t port, std::string* error, std::string dir = "");
std::unique_ptr<RabbitMqSandbox> StartSuiteRabbitMq(RabbitMqSandboxOptions options, std::string* error);

#define CANAL_REQUIRE_RABBITMQ(sandbox, setup_error) \
  CANAL_REQUIRE_SANDBOX_OF(::canal::testing::RabbitMqSandbox, sandbox, setup_error)

}  // namespace canal::testing
