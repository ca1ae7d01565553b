// SessionFixture: the set-up the session-server tests share. In-memory
// destinations in a registry (registry_, or the test's own through
// registry()), a logger whose lines the test reads (sink_), and a
// SessionServer on 127.0.0.1, port 0, started by StartSessionServer from
// options the test tunes (LoopbackOptions() for the common ones); TearDown
// stops it. A test's fixture derives from it and starts the server in its
// SetUp or in each test. Also: clients logged in and subscribed, a client's
// meta identity, a polling wait, and the names of the test doubles (which
// these tests use unqualified) as members.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "canal/server/session_server.h"
#include "capture_sink.h"
#include "memory_destination.h"
#include "session_test_client.h"
#include "support/wait.h"

namespace canal::server::testing {

class SessionFixture : public ::testing::Test {
 protected:
  using CaptureSink = testing::CaptureSink;
  using MemoryDestination = testing::MemoryDestination;
  using MemoryRegistry = testing::MemoryRegistry;
  using TestClient = testing::TestClient;

  void TearDown() override {
    if (server_) server_->Stop();
  }

  // Loopback, port 0 (the kernel's choice: server_->port()), two I/O threads.
  static SessionServerOptions LoopbackOptions() {
    SessionServerOptions o;
    o.ip = "127.0.0.1";
    o.port = 0;
    o.io_threads = 2;
    return o;
  }

  // The registry the server serves: registry_ unless the test brings its own.
  virtual DestinationRegistry* registry() { return &registry_; }

  void StartSessionServer(const SessionServerOptions& o) {
    ASSERT_TRUE(SessionServer::Create(o, registry(), logger_, &server_).ok());
    server_->Start();
  }

  // A client logged in as `user` and subscribed to `destination` as
  // `client_id`; a refused login or subscription is a test failure.
  std::unique_ptr<TestClient> SubscribedClient(const std::string& destination, const std::string& client_id,
                                               const std::string& user = "canal",
                                               const std::string& password = "canal") {
    auto c = std::make_unique<TestClient>(server_->port());
    EXPECT_TRUE(c->Login(user, password));
    std::optional<protocol::Ack> ack = c->Subscribe(destination, client_id);
    EXPECT_TRUE(ack && ack->error_code() == 0) << (ack ? ack->error_message() : "no reply");
    return c;
  }

  // A client logged in as `user` and subscribed to `destination` as
  // `client_id`, trying again every 10 ms while the last holder's session
  // still has the destination (a takeover); nullptr and a test failure when
  // it never lets go.
  std::unique_ptr<TestClient> SubscribedWhenReleased(const std::string& destination, const std::string& client_id,
                                                     const std::string& user = "canal",
                                                     const std::string& password = "canal") {
    for (int i = 0; i < 200; ++i) {
      auto c = std::make_unique<TestClient>(server_->port());
      if (!c->Login(user, password)) continue;
      std::optional<protocol::Ack> ack = c->Subscribe(destination, client_id);
      if (ack && ack->error_code() == 0) return c;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "the destination was never released";
    return nullptr;
  }

  static meta::ClientIdentity IdentityOf(const std::string& destination, int16_t client_id) {
    meta::ClientIdentity id;
    id.destination = destination;
    id.client_id = client_id;
    return id;
  }

  // Polls `done` every 5 ms until it holds or `timeout` passes; its last answer.
  static bool WaitUntil(const std::function<bool()>& done,
                        std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return canal::testing::WaitFor(done, timeout, std::chrono::milliseconds(5));
  }

  MemoryRegistry registry_;
  std::shared_ptr<CaptureSink> sink_ = std::make_shared<CaptureSink>();
  std::shared_ptr<spdlog::logger> logger_ = std::make_shared<spdlog::logger>("session-test", sink_);
  std::unique_ptr<SessionServer> server_;
};

}  // namespace canal::server::testing
