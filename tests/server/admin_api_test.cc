// The admin API's pieces without a transport: path parsing, the bearer
// token check (constant-time compare), the same-origin rule, the content
// type, canal.admin.* loading, and AdminApi::Handle against fake hooks —
// every refusal (403 without a configured token, 401, 405, 404, 415, 400)
// and a change that reaches the registry and is logged with who and what.
#include "canal/server/admin_api.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <gtest/gtest.h>

namespace canal::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kToken = "s3cr3t-t0ken-0123456789abcdef";

TEST(AdminPath, ParsesListOneAndActions) {
  EXPECT_EQ(ParseAdminPath("/status").kind, AdminRoute::Kind::kNone);
  EXPECT_EQ(ParseAdminPath("/apis").kind, AdminRoute::Kind::kNone);
  EXPECT_EQ(ParseAdminPath("/api").kind, AdminRoute::Kind::kUnknown);
  EXPECT_EQ(ParseAdminPath("/api/other").kind, AdminRoute::Kind::kUnknown);
  EXPECT_EQ(ParseAdminPath("/api/destinations").kind, AdminRoute::Kind::kList);
  EXPECT_EQ(ParseAdminPath("/api/destinations/").kind, AdminRoute::Kind::kList);
  AdminRoute one = ParseAdminPath("/api/destinations/example");
  EXPECT_EQ(one.kind, AdminRoute::Kind::kOne);
  EXPECT_EQ(one.destination, "example");
  for (auto [text, action] : {std::pair{"stop", OperatorAction::kStop}, std::pair{"start", OperatorAction::kStart},
                              std::pair{"restart", OperatorAction::kRestart}}) {
    AdminRoute r = ParseAdminPath(std::string("/api/destinations/ex.1/") + text);
    EXPECT_EQ(r.kind, AdminRoute::Kind::kAction) << text;
    EXPECT_EQ(r.destination, "ex.1");
    EXPECT_EQ(r.action, action);
  }
  EXPECT_EQ(ParseAdminPath("/api/destinations/example/explode").kind, AdminRoute::Kind::kUnknown);
  EXPECT_EQ(ParseAdminPath("/api/destinations/example/stop/more").kind, AdminRoute::Kind::kUnknown);
  EXPECT_EQ(ParseAdminPath("/api/destinations//stop").kind, AdminRoute::Kind::kUnknown);
  // Odd names are carried as sent; Handle refuses them (only valid names exist).
  EXPECT_EQ(ParseAdminPath("/api/destinations/..%2f\x01/stop").destination, "..%2f\x01");
}

TEST(AdminAuth, BearerTokenAndConstantTimeCompare) {
  EXPECT_TRUE(TokenEquals("abc", "abc"));
  EXPECT_FALSE(TokenEquals("abc", "abd"));
  EXPECT_FALSE(TokenEquals("abc", "abcd"));
  EXPECT_FALSE(TokenEquals("abc", ""));
  EXPECT_EQ(CheckBearer(kToken, std::string("Bearer ") + kToken), TokenCheck::kOk);
  EXPECT_EQ(CheckBearer(kToken, std::string("bearer   ") + kToken + " "), TokenCheck::kOk);
  EXPECT_EQ(CheckBearer(kToken, ""), TokenCheck::kMissing);
  EXPECT_EQ(CheckBearer(kToken, "   "), TokenCheck::kMissing);
  EXPECT_EQ(CheckBearer(kToken, "Bearer wrong"), TokenCheck::kWrong);
  EXPECT_EQ(CheckBearer(kToken, std::string("Basic ") + kToken), TokenCheck::kWrong);
  EXPECT_EQ(CheckBearer(kToken, std::string("Bearer") + kToken), TokenCheck::kWrong);
  EXPECT_EQ(CheckBearer(kToken, "Bearer "), TokenCheck::kWrong);
}

TEST(AdminAuth, SameOriginAndContentType) {
  EXPECT_TRUE(SameOrigin("http://127.0.0.1:11112", "127.0.0.1:11112"));
  EXPECT_TRUE(SameOrigin("HTTP://Canal.Example:11112", "canal.example:11112"));
  EXPECT_TRUE(SameOrigin("https://canal.example", "canal.example"));
  EXPECT_FALSE(SameOrigin("http://evil.example", "127.0.0.1:11112"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1:11113", "127.0.0.1:11112"));
  EXPECT_FALSE(SameOrigin("null", "127.0.0.1:11112"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1:11112", ""));
  EXPECT_TRUE(JsonContentType("application/json"));
  EXPECT_TRUE(JsonContentType("Application/JSON; charset=utf-8"));
  EXPECT_FALSE(JsonContentType("text/plain"));
  EXPECT_FALSE(JsonContentType("application/x-www-form-urlencoded"));
  EXPECT_FALSE(JsonContentType(""));
}

class AdminConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("canal_admin_config_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  Status Load(const std::string& properties, AdminConfig* out, std::vector<std::string>* warnings) {
    std::ofstream(root_ / "canal.properties") << properties;
    CanalConfig canal;
    Status s = LoadCanalConfig((root_ / "canal.properties").string(), {}, &canal,
                               [](const std::string&) { return std::optional<std::string>(); });
    if (!s.ok()) return s;
    return LoadAdminConfig(canal, out, warnings);
  }
  fs::path root_;
};

TEST_F(AdminConfigTest, TokenFromTheKeyOrAFileAndTheirMistakes) {
  AdminConfig c;
  std::vector<std::string> warnings;
  ASSERT_TRUE(Load("", &c, &warnings).ok());
  EXPECT_TRUE(c.token.empty());
  EXPECT_FALSE(c.read_requires_token);

  ASSERT_TRUE(Load(std::string("canal.admin.token = ") + kToken + "\n", &c, &warnings).ok());
  EXPECT_EQ(c.token, kToken);

  // A file relative to canal.properties' folder, first line, as base64 writes it.
  std::ofstream(root_ / "admin.token") << kToken << "\n";
  ::chmod((root_ / "admin.token").c_str(), 0600);
  ASSERT_TRUE(Load("canal.admin.tokenFile = admin.token\ncanal.admin.readRequiresToken = true\n", &c, &warnings).ok());
  EXPECT_EQ(c.token, kToken);
  EXPECT_TRUE(c.read_requires_token);
  EXPECT_TRUE(warnings.empty());
  ::chmod((root_ / "admin.token").c_str(), 0644);
  ASSERT_TRUE(Load("canal.admin.tokenFile = admin.token\n", &c, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("chmod 600"), std::string::npos);

  Status s = Load("canal.admin.tokenFile = missing.token\n", &c, &warnings);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("head -c 32 /dev/urandom | base64"), std::string::npos) << s.ToString();
  s = Load(std::string("canal.admin.token = ") + kToken + "\ncanal.admin.tokenFile = admin.token\n", &c, &warnings);
  EXPECT_NE(s.ToString().find("both set"), std::string::npos) << s.ToString();
  s = Load("canal.admin.token = short\n", &c, &warnings);
  EXPECT_NE(s.ToString().find("shorter than 16"), std::string::npos) << s.ToString();
  s = Load("canal.admin.readRequiresToken = true\n", &c, &warnings);
  EXPECT_NE(s.ToString().find("no admin token is set"), std::string::npos) << s.ToString();
  s = Load(std::string("canal.admin.token = ") + kToken + "\ncanal.admin.readRequiresToken = maybe\n", &c, &warnings);
  EXPECT_NE(s.ToString().find("not a boolean"), std::string::npos) << s.ToString();
}

// AdminApi over fake hooks: one destination "example" that Control stops and starts.
class AdminApiTest : public ::testing::Test {
 protected:
  void Make(std::string token, bool read_requires_token = false) {
    log_stream_ = std::make_shared<std::ostringstream>();
    logger_ = std::make_shared<spdlog::logger>("admin-test",
                                               std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_stream_));
    AdminConfig config;
    config.token = std::move(token);
    config.read_requires_token = read_requires_token;
    AdminHooks hooks;
    hooks.report = [this] {
      ServerReport r;
      r.server_address = "127.0.0.1:11111";
      DestinationReport d;
      d.name = "example";
      d.configured = true;
      d.role = "active";
      d.state = running_ ? "streaming" : "stopped";
      d.has_status = running_;
      d.status.parser.position.journal_name = "mysql-bin.000003";
      d.status.parser.position.position = 1234;
      d.delay_ms = 7;
      r.destinations.push_back(d);
      return r;
    };
    hooks.control = [this](std::string_view name, OperatorAction action, std::string* done) {
      if (name != "example") return Status::NotFound("no destination");
      ++controls_;
      running_ = action != OperatorAction::kStop;
      held_ = action == OperatorAction::kStop;
      *done = running_ ? "started" : "stopped";
      return Status::OK();
    };
    hooks.held = [this](std::string_view) {
      HeldState h;
      h.stopped_by_operator = held_;
      return h;
    };
    hooks.mode = "tcp";
    api_ = std::make_unique<AdminApi>(config, std::move(hooks), logger_);
  }
  HttpAnswer Call(std::string_view method, std::string_view target, std::string_view authorization = "",
                  std::string_view body = "", std::string_view content_type = "",
                  std::optional<std::string_view> origin = std::nullopt) {
    AdminRequest r;
    r.method = method;
    r.target = target;
    r.host = "127.0.0.1:11112";
    r.has_origin = origin.has_value();
    r.origin = origin.value_or("");
    r.authorization = authorization;
    r.body = body;
    r.content_type = content_type;
    r.peer = "127.0.0.1:40000";
    return api_->Handle(r);
  }
  std::string Log() {
    logger_->flush();
    return log_stream_->str();
  }
  static json Body(const HttpAnswer& a) { return json::parse(a.body); }
  static std::string Header(const HttpAnswer& a, const std::string& name) {
    for (const auto& [k, v] : a.headers) {
      if (k == name) return v;
    }
    return "";
  }

  const std::string bearer_ = std::string("Bearer ") + kToken;
  std::shared_ptr<std::ostringstream> log_stream_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<AdminApi> api_;
  bool running_ = true, held_ = false;
  int controls_ = 0;
};

TEST_F(AdminApiTest, ListsAndShowsWithoutATokenByDefault) {
  Make(kToken);
  HttpAnswer a = Call("GET", "/api/destinations");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.content_type, "application/json");
  const json list = Body(a);
  EXPECT_EQ(list["mode"], "tcp");
  ASSERT_EQ(list["destinations"].size(), 1u);
  const json& d = list["destinations"][0];
  EXPECT_EQ(d["name"], "example");
  EXPECT_EQ(d["state"], "running");
  EXPECT_EQ(d["detail"], "streaming");
  EXPECT_EQ(d["position"]["journal"], "mysql-bin.000003");
  EXPECT_EQ(d["position"]["offset"], 1234);
  EXPECT_EQ(d["lag_ms"], 7);
  EXPECT_EQ(d["clients"]["connected"], false);
  EXPECT_EQ(Call("GET", "/api/destinations/example").status, 200);
  const HttpAnswer missing = Call("GET", "/api/destinations/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(Body(missing)["error"].get<std::string>().find("'nope'"), std::string::npos);
}

TEST_F(AdminApiTest, ReadsNeedTheTokenWhenConfigured) {
  Make(kToken, /*read_requires_token=*/true);
  EXPECT_EQ(Call("GET", "/api/destinations").status, 401);
  EXPECT_EQ(Call("GET", "/api/destinations", bearer_).status, 200);
}

TEST_F(AdminApiTest, WithoutAConfiguredTokenEveryChangeIsRefusedNamingTheKey) {
  Make("");
  const HttpAnswer a = Call("POST", "/api/destinations/example/stop", bearer_);
  EXPECT_EQ(a.status, 403);
  EXPECT_NE(a.body.find("canal.admin.token"), std::string::npos) << a.body;
  EXPECT_EQ(controls_, 0);
}

TEST_F(AdminApiTest, RefusalsChangeNothing) {
  Make(kToken);
  HttpAnswer a = Call("POST", "/api/destinations/example/stop");
  EXPECT_EQ(a.status, 401);
  EXPECT_EQ(Header(a, "WWW-Authenticate"), "Bearer realm=\"canal-admin\"");
  EXPECT_EQ(Call("POST", "/api/destinations/example/stop", "Bearer not-the-token").status, 401);
  for (const char* method : {"GET", "PUT", "DELETE", "HEAD"}) {
    a = Call(method, "/api/destinations/example/stop", bearer_);
    EXPECT_EQ(a.status, 405) << method;
    EXPECT_EQ(Header(a, "Allow"), "POST");
  }
  a = Call("POST", "/api/destinations", bearer_);
  EXPECT_EQ(a.status, 405);
  EXPECT_EQ(Header(a, "Allow"), "GET, HEAD");
  EXPECT_EQ(Call("POST", "/api/destinations/example/stop", bearer_, "", "", "http://evil.example").status, 403);
  EXPECT_EQ(Call("POST", "/api/destinations/example/stop", bearer_, "", "", "null").status, 403);
  EXPECT_EQ(Call("POST", "/api/destinations/example/stop", bearer_, "stop=1", "application/x-www-form-urlencoded").status,
            415);
  EXPECT_EQ(Call("POST", "/api/destinations/example/stop", bearer_, "{not json", "application/json").status, 400);
  EXPECT_EQ(Call("POST", "/api/destinations/example/stop", bearer_, "[1]", "application/json").status, 400);
  EXPECT_EQ(Call("POST", "/api/destinations/example/explode", bearer_).status, 404);
  a = Call("POST", "/api/destinations/nope/stop", bearer_);
  EXPECT_EQ(a.status, 404);
  EXPECT_NE(a.body.find("'nope'"), std::string::npos) << a.body;
  EXPECT_EQ(controls_, 0);
  EXPECT_TRUE(running_);
}

TEST_F(AdminApiTest, OddCharactersAreEscapedInTheReplyAndTheLog) {
  Make(kToken);
  const std::string target = "/api/destinations/a\nFORGED \x1b[31m\xff\"/stop";
  const HttpAnswer a = Call("POST", target, bearer_);
  EXPECT_EQ(a.status, 404);
  EXPECT_NO_THROW(json::parse(a.body));
  const std::string log = Log();
  EXPECT_EQ(log.find("\nFORGED"), std::string::npos) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
  EXPECT_NE(log.find("a\\nFORGED \\x1b[31m\\xff"), std::string::npos) << log;
  // A long target is cut in the log.
  Call("GET", "/api/" + std::string(5000, 'x'));
  EXPECT_NE(Log().find("...(5005 bytes)"), std::string::npos);
}

TEST_F(AdminApiTest, AChangeActsAndIsLoggedWithWhoAndWhat) {
  Make(kToken);
  HttpAnswer a = Call("POST", "/api/destinations/example/stop", bearer_);
  ASSERT_EQ(a.status, 200) << a.body;
  json j = Body(a);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["action"], "stop");
  EXPECT_EQ(j["result"], "stopped");
  EXPECT_EQ(j["state"]["state"], "stopped");
  EXPECT_EQ(j["state"]["detail"], "stopped by an operator");
  EXPECT_NE(Log().find("admin: stop example by 127.0.0.1:40000 (token ok): stopped; state now stopped"),
            std::string::npos)
      << Log();
  // A JSON body is allowed (empty object); the state follows.
  a = Call("POST", "/api/destinations/example/start", bearer_, "{}", "application/json; charset=utf-8",
           "http://127.0.0.1:11112");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(Body(a)["state"]["state"], "running");
  EXPECT_EQ(controls_, 2);
}

}  // namespace
}  // namespace canal::server

namespace canal::server {
namespace {

TEST(AdminPath, ParsesOperations) {
  for (const char* op : {"cursor", "config", "log", "snapshot"}) {
    const AdminRoute r = ParseAdminPath(std::string("/api/destinations/example/") + op);
    EXPECT_EQ(r.kind, AdminRoute::Kind::kOperation) << op;
    EXPECT_EQ(r.operation, op);
    EXPECT_EQ(r.destination, "example");
  }
  EXPECT_EQ(ParseAdminPath("/api/destinations/example/cursors").kind, AdminRoute::Kind::kUnknown);
  EXPECT_EQ(ParseAdminPath("/api/destinations/example/log/x").kind, AdminRoute::Kind::kUnknown);
}

TEST(AdminAuthThrottle, ShutsOutAnAddressAfterTooManyFailuresForAWindow) {
  using Clock = AuthThrottle::Clock;
  AuthThrottle t(3, std::chrono::seconds(60), /*max_addresses=*/4);
  const Clock::time_point t0 = Clock::now();
  int64_t retry = 0;
  EXPECT_FALSE(t.Blocked("10.0.0.1", t0, &retry));
  t.Failed("10.0.0.1", t0);
  t.Failed("10.0.0.1", t0 + std::chrono::seconds(1));
  EXPECT_FALSE(t.Blocked("10.0.0.1", t0 + std::chrono::seconds(1), &retry));
  t.Failed("10.0.0.1", t0 + std::chrono::seconds(2));
  EXPECT_TRUE(t.Blocked("10.0.0.1", t0 + std::chrono::seconds(2), &retry));
  EXPECT_EQ(retry, 60);
  EXPECT_FALSE(t.Blocked("10.0.0.2", t0 + std::chrono::seconds(2), &retry)) << "others are not shut out";
  EXPECT_TRUE(t.Blocked("10.0.0.1", t0 + std::chrono::seconds(61), &retry));
  EXPECT_FALSE(t.Blocked("10.0.0.1", t0 + std::chrono::seconds(63), &retry));
  // Failures spread wider than the window never add up.
  AuthThrottle slow(3, std::chrono::seconds(10));
  for (int i = 0; i < 10; ++i) slow.Failed("10.0.0.3", t0 + std::chrono::seconds(i * 6));
  EXPECT_FALSE(slow.Blocked("10.0.0.3", t0 + std::chrono::seconds(54), &retry));
  // A success forgets the failures.
  AuthThrottle ok(2, std::chrono::seconds(10));
  ok.Failed("a", t0);
  ok.Succeeded("a");
  ok.Failed("a", t0);
  EXPECT_FALSE(ok.Blocked("a", t0, &retry));
  // Bounded at four addresses: a flood of others evicts the oldest entries and
  // the throttle still works for a new one.
  for (int i = 0; i < 1000; ++i) t.Failed("192.168.0." + std::to_string(i), t0 + std::chrono::seconds(2));
  for (int i = 0; i < 3; ++i) t.Failed("10.9.9.9", t0 + std::chrono::seconds(3));
  EXPECT_TRUE(t.Blocked("10.9.9.9", t0 + std::chrono::seconds(3), &retry));
}

TEST_F(AdminApiTest, OperationsNeedTheTokenEvenToReadAndAnswer503WithoutThem) {
  Make(kToken);
  EXPECT_EQ(Call("GET", "/api/destinations/example/config").status, 401) << "a config holds passwords";
  EXPECT_EQ(Call("GET", "/api/destinations/example/log").status, 401);
  EXPECT_EQ(Call("GET", "/api/destinations/example/cursor", bearer_).status, 405);
  EXPECT_EQ(Call("DELETE", "/api/destinations/example/config", bearer_).status, 405);
  const HttpAnswer a = Call("GET", "/api/destinations/example/config", bearer_);
  EXPECT_EQ(a.status, 503) << a.body;
  EXPECT_EQ(Call("GET", "/api/destinations/..%2f/log", bearer_).status, 404);
}

TEST_F(AdminApiTest, GuessingTheTokenIsAnswered429ForAWhile) {
  Make(kToken);
  for (size_t i = 0; i < AdminApi::kAuthFailuresAllowed; ++i) {
    EXPECT_EQ(Call("POST", "/api/destinations/example/stop", "Bearer wrong-token-number-" + std::to_string(i)).status,
              401);
  }
  const HttpAnswer a = Call("POST", "/api/destinations/example/stop", bearer_);
  EXPECT_EQ(a.status, 429) << a.body;
  EXPECT_EQ(Header(a, "Retry-After"), "60");
  EXPECT_EQ(controls_, 0);
}

}  // namespace
}  // namespace canal::server
