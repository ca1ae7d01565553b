// The admin API's cluster routes (GET /api/cluster, POST /api/cluster/{drain,move}) over fake
// hooks: what reaches the placement, what is refused and how, and what is logged.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/server/admin_api.h"

namespace canal::server {
namespace {

using nlohmann::json;

constexpr const char* kToken = "cluster-t0ken-0123456789abcdef";

class AdminClusterTest : public ::testing::Test {
 protected:
  void Make(bool balanced) {
    log_stream_ = std::make_shared<std::ostringstream>();
    logger_ = std::make_shared<spdlog::logger>("admin-cluster-test",
                                               std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_stream_));
    AdminConfig config;
    config.token = kToken;
    AdminHooks hooks;
    hooks.report = [] { return ServerReport{}; };
    hooks.control = [](std::string_view, OperatorAction, std::string*) { return Status::OK(); };
    hooks.held = [](std::string_view) { return HeldState{}; };
    if (balanced) {
      hooks.cluster_view = [this](std::string* text) {
        if (!view_error_.ok()) return view_error_;
        *text = R"({"leader":"10.0.0.1:11111","assignment":{"a":"10.0.0.1:11111"}})";
        return Status::OK();
      };
      hooks.cluster_drain = [this](std::string_view server, bool drain) {
        calls_.push_back(std::string(drain ? "drain " : "undrain ") + std::string(server));
        return server == "10.0.0.9:11111" ? Status::NotFound("no server 10.0.0.9:11111 in the cluster")
                                          : Status::OK();
      };
      hooks.cluster_move = [this](std::string_view destination, std::string_view server) {
        calls_.push_back("move " + std::string(destination) + " " + std::string(server));
        return Status::OK();
      };
    }
    api_ = std::make_unique<AdminApi>(config, std::move(hooks), logger_);
  }
  HttpAnswer Call(std::string_view method, std::string_view target, std::string_view body = "",
                  bool with_token = true) {
    AdminRequest r;
    r.method = method;
    r.target = target;
    r.host = "127.0.0.1:11112";
    r.authorization = with_token ? std::string_view(bearer_) : std::string_view();
    r.body = body;
    r.content_type = body.empty() ? "" : "application/json";
    r.peer = "127.0.0.1:40000";
    return api_->Handle(r);
  }
  std::string Log() {
    logger_->flush();
    return log_stream_->str();
  }

  const std::string bearer_ = std::string("Bearer ") + kToken;
  std::shared_ptr<std::ostringstream> log_stream_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<AdminApi> api_;
  std::vector<std::string> calls_;
  Status view_error_;
};

TEST_F(AdminClusterTest, TheRoutesParse) {
  EXPECT_EQ(ParseAdminPath("/api/cluster").kind, AdminRoute::Kind::kCluster);
  EXPECT_EQ(ParseAdminPath("/api/cluster").operation, "");
  EXPECT_EQ(ParseAdminPath("/api/cluster/drain").operation, "drain");
  EXPECT_EQ(ParseAdminPath("/api/cluster/move").operation, "move");
  EXPECT_EQ(ParseAdminPath("/api/cluster/moves").kind, AdminRoute::Kind::kUnknown);
  EXPECT_EQ(ParseAdminPath("/api/cluster/drain/x").kind, AdminRoute::Kind::kUnknown);
}

TEST_F(AdminClusterTest, WithoutBalancedPlacementTheRoutesSaySoAndHowToTurnItOn) {
  Make(false);
  const HttpAnswer a = Call("GET", "/api/cluster");
  EXPECT_EQ(a.status, 404);
  EXPECT_NE(a.body.find("canal.cluster.placement = balanced"), std::string::npos) << a.body;
  EXPECT_EQ(Call("POST", "/api/cluster/drain", R"({"server":"10.0.0.1:11111"})").status, 404);
}

TEST_F(AdminClusterTest, TheViewIsReadWithoutATokenAndAZooKeeperFailureIs503) {
  Make(true);
  HttpAnswer a = Call("GET", "/api/cluster", "", /*with_token=*/false);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(json::parse(a.body)["leader"], "10.0.0.1:11111");
  view_error_ = Status::IOError("ZooKeeper 127.0.0.1:2181 not connected");
  a = Call("GET", "/api/cluster");
  EXPECT_EQ(a.status, 503);
  EXPECT_NE(a.body.find("not connected"), std::string::npos) << a.body;
  EXPECT_EQ(Call("POST", "/api/cluster").status, 405);
}

TEST_F(AdminClusterTest, DrainAndMoveReachThePlacementAndAreLogged) {
  Make(true);
  HttpAnswer a = Call("POST", "/api/cluster/drain", R"({"server":"10.0.0.2:11111"})");
  ASSERT_EQ(a.status, 200) << a.body;
  a = Call("POST", "/api/cluster/drain", R"({"server":"10.0.0.2:11111","drain":false})");
  ASSERT_EQ(a.status, 200) << a.body;
  a = Call("POST", "/api/cluster/move", R"({"destination":"orders","server":"10.0.0.3:11111"})");
  ASSERT_EQ(a.status, 200) << a.body;
  a = Call("POST", "/api/cluster/move", R"({"destination":"orders","server":""})");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(calls_, (std::vector<std::string>{"drain 10.0.0.2:11111", "undrain 10.0.0.2:11111",
                                              "move orders 10.0.0.3:11111", "move orders "}));
  EXPECT_NE(Log().find("admin: cluster drain of 10.0.0.2:11111 by 127.0.0.1:40000 (token ok)"), std::string::npos)
      << Log();
  EXPECT_NE(Log().find("pin of orders taken away"), std::string::npos) << Log();
}

TEST_F(AdminClusterTest, BadRequestsAreRefusedNamingWhatIsWrongAndReachNothing) {
  Make(true);
  // No token, wrong method, no body, wrong types, bad names, an unknown server.
  EXPECT_EQ(Call("POST", "/api/cluster/drain", R"({"server":"10.0.0.2:11111"})", false).status, 401);
  EXPECT_EQ(Call("GET", "/api/cluster/drain").status, 405);
  HttpAnswer a = Call("POST", "/api/cluster/drain");
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.find("\\\"server\\\""), std::string::npos) << a.body;
  EXPECT_EQ(Call("POST", "/api/cluster/drain", R"({"server":42})").status, 400);
  a = Call("POST", "/api/cluster/drain", R"({"server":"10.0.0.2:11111","drain":"yes"})");
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.find("true or false"), std::string::npos) << a.body;
  a = Call("POST", "/api/cluster/move", R"({"destination":"../etc","server":"10.0.0.3:11111"})");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(Call("POST", "/api/cluster/move", R"({"server":"10.0.0.3:11111"})").status, 400);
  EXPECT_EQ(Call("POST", "/api/cluster/move", "[1,2]").status, 400);
  EXPECT_TRUE(calls_.empty());
  a = Call("POST", "/api/cluster/drain", R"({"server":"10.0.0.9:11111"})");
  EXPECT_EQ(a.status, 404);
  EXPECT_NE(a.body.find("no server 10.0.0.9:11111"), std::string::npos) << a.body;
  EXPECT_NE(Log().find("refused"), std::string::npos) << Log();
}

}  // namespace
}  // namespace canal::server
