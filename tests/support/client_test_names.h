// The names the tests that drive canal-server through the client SDK use
// unqualified, declared once in canal::testing, where those tests live (a
// test's own namespace inside it sees them too).
#pragma once

#include <chrono>
#include <filesystem>

#include "canal/client/connector.h"
#include "canal/client/message.h"

namespace canal::testing {

namespace fs = std::filesystem;
namespace entry = canal::entry;
using namespace std::chrono_literals;
using client::Connector;
using client::ConnectorOptions;
using client::Message;
using client::TimeUnit;
using Clock = std::chrono::steady_clock;

}  // namespace canal::testing
