#include "support/rabbitmq_sandbox.h"

#include <filesystem>
#include <utility>

namespace canal::testing {

namespace {
constexpr const char* kServer = "/usr/lib/rabbitmq/bin/rabbitmq-server";
}

RabbitMqSandbox::RabbitMqSandbox(RabbitMqSandboxOptions options)
    : ScriptedSandbox("RabbitMqSandbox", "rabbitmq-sandbox.sh", "rabbitmq", options.port, std::move(options.dir)),
      extra_options_(std::move(options.extra_options)) {}

std::string RabbitMqSandbox::StartArguments() const {
  std::string args;
  for (const std::string& o : extra_options_) args += " --option " + ShellQuote(o);
  return args;
}

bool RabbitMqSandbox::Available() { return std::filesystem::exists(kServer); }

std::string RabbitMqSandbox::SkipReason() {
  return std::string("RabbitMQ is not installed: ") + kServer +
         " is missing (scripts/install-deps.sh installs rabbitmq-server)";
}

std::unique_ptr<RabbitMqSandbox> StartSuiteRabbitMq(uint16_t port, std::string* error, std::string dir) {
  RabbitMqSandboxOptions o;
  o.port = port;
  o.dir = std::move(dir);
  return StartSuiteRabbitMq(std::move(o), error);
}

std::unique_ptr<RabbitMqSandbox> StartSuiteRabbitMq(RabbitMqSandboxOptions options, std::string* error) {
  return StartSuiteSandboxOf<RabbitMqSandbox>(std::move(options), "RabbitMQ sandbox", error);
}

}  // namespace canal::testing
