// What canal-server tells a client, end to end: with canal.ip
// empty (listening on every interface) its errors name the address the client
// connected to, not 0.0.0.0; a destination restarted by auto scan on a server
// without ZooKeeper says it was restarted and why, not the ZooKeeper wording.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kServerPort = TestPort("server_messages", 1);

class ServerMessages : public ServerSuite<TestPort("server_messages")> {};

TEST_F(ServerMessages, ErrorsNameTheConnectedAddressAndARestartSaysSoAndWhy) {
  CanalInstall install("server-messages", kSandboxPort);
  // "canal.ip =" after the test default: every interface (0.0.0.0).
  install.WriteServerProperties(CanalInstall::ServerProperties(kServerPort, "canal.ip =\n"));
  const std::string instance = StartAtPrimaryEnd(*sandbox_);
  install.WriteInstance("example", instance);
  std::string out;
  ASSERT_EQ(install.Startup(&out), 0) << out << ReadAll(install.server_log());
  const std::string here = "127.0.0.1:" + std::to_string(kServerPort);

  client::ConnectorOptions o;
  o.address = here;
  o.destination = "nosuch";
  o.read_timeout = 10s;
  client::Connector unknown(o);
  Status s = unknown.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = unknown.Subscribe();
  EXPECT_NE(std::string(s.message()).find("does not exist on canal server " + here), std::string::npos)
      << s.ToString();
  EXPECT_EQ(std::string(s.message()).find("0.0.0.0"), std::string::npos) << s.ToString();

  o.destination = "example";
  client::Connector c(o);
  s = ConnectAndSubscribe(c, 20s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  client::Message m;
  ASSERT_TRUE((s = c.GetWithoutAck(100, &m)).ok()) << s.ToString();

  // An edited instance.properties: auto scan (every second) restarts the destination.
  install.WriteInstance("example", instance + "# edited\n");
  // Until the new instance runs: its "started" line is the second one.
  auto starts = [&] {
    const std::string log = ReadAll(install.server_log());
    size_t n = 0;
    for (size_t at = log.find("destination example started"); at != std::string::npos;
         at = log.find("destination example started", at + 1)) {
      ++n;
    }
    return n;
  };
  for (const auto deadline = Clock::now() + 30s; starts() < 2 && Clock::now() < deadline;) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(starts(), 2u) << ReadAll(install.server_log());
  s = c.GetWithoutAck(100, &m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(client::ServerErrorCode(s), 503) << s.ToString();
  EXPECT_NE(std::string(s.message()).find("get: destination example was restarted on canal server " + here +
                                          " (instance.properties changed); subscribe again"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(std::string(s.message()).find("ZooKeeper"), std::string::npos) << s.ToString();

  // Subscribing again is served by the new instance.
  s = ConnectAndSubscribe(c, 20s);
  if (s.ok()) s = c.GetWithoutAck(100, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace canal::testing
