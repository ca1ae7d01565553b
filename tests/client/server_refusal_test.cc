// What the SDK decides on a server's refusal (client-sdk/server_refusal.h):
// by our server's codes (proto::WireError), and for Canal's own Java server,
// which sends 400 for everything, by its phrases: one test per phrase, and
// rewordings that change no decision.
#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/server_refusal.h"
#include "canal/proto/wire_error.h"

namespace canal::client {
namespace {

using proto::WireError;

Status Refusal(WireError code, std::string_view text) {
  return Status::Aborted(text).WithSubcode(proto::Code(code));
}

TEST(ServerRefusal, OurCodesForNotServedHere) {
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kNoSuchDestination, "any words")));
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kNotServing, "any words")));
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kNotSubscribed, "any words")));
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kSubscribedByAnother, "any words")));
  EXPECT_FALSE(NotServedHere(Refusal(WireError::kBadRequest, "invalid filter")));
  EXPECT_FALSE(NotServedHere(Refusal(WireError::kAuthFailed, "auth failed for user:x")));
  EXPECT_FALSE(NotServedHere(Refusal(WireError::kIdentityMissing, "destination or clientId is null")));
  EXPECT_FALSE(NotServedHere(Refusal(WireError::kAckNotApplied, "ack not applied")));
}

TEST(ServerRefusal, CanalJavaShouldStartFirst) {
  EXPECT_TRUE(CanalJavaServerSaysNotServedHere("destination:example should start first"));
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kBadRequest, "destination:example should start first")));
}

TEST(ServerRefusal, CanalJavaShouldSubscribeFirst) {
  EXPECT_TRUE(CanalJavaServerSaysNotServedHere("clientId:1001 should subscribe first"));
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kBadRequest, "clientId:1001 should subscribe first")));
}

TEST(ServerRefusal, CanalJavaOtherTextsAreNotAboutServing) {
  EXPECT_FALSE(CanalJavaServerSaysNotServedHere("rollback error, clientId:1001 batchId:9 is not exist , please check"));
  EXPECT_FALSE(CanalJavaServerSaysNotServedHere("batchId:5 is not the firstly:4"));
  EXPECT_FALSE(CanalJavaServerSaysNotServedHere("auth failed for user:canal"));
}

// The words of our server's messages decide nothing: the same text under
// another code, or other text under the same code, goes by the code.
TEST(ServerRefusal, ARewordedMessageChangesNoDecision) {
  const char* ours = "destination example is not active on canal server 127.0.0.1:11111 any more";
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kNotServing, ours)));
  EXPECT_TRUE(NotServedHere(Refusal(WireError::kNotServing, "gone elsewhere")));
  EXPECT_FALSE(NotServedHere(Refusal(WireError::kBadRequest, ours)));
  EXPECT_FALSE(NotServedHere(Status::IOError("should start first")));  // not a refusal at all
  EXPECT_FALSE(NotServedHere(Refusal(WireError::kAckNotApplied, "should start first")));
  EXPECT_EQ(ServerErrorCode(Refusal(WireError::kNotServing, "server error 400: x")), 503);
  EXPECT_EQ(ServerErrorCode(Status::Aborted("server error 503: text alone carries no code")), 0);
}

TEST(WireError, CodesAndNames) {
  EXPECT_EQ(proto::Code(WireError::kAckNotApplied), kErrorAckNotApplied);
  EXPECT_EQ(proto::WireErrorName(404), "no such destination");
  EXPECT_EQ(proto::WireErrorName(999), "unknown");
  EXPECT_FALSE(proto::MeansNotServedHere(400));
}

}  // namespace
}  // namespace canal::client
