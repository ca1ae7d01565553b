// SessionState: the lifecycle of a client connection as one value; the
// transitions the session and its channel may make, and only those.
#include "canal/server/session_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace canal::server {
namespace {

using P = SessionPhase;
const std::vector<P> kAll = {P::kAwaitingLogin, P::kServing,     P::kEnding,
                             P::kDraining,      P::kInputClosed, P::kClosed};

std::string Name(std::pair<P, P> t) {
  return std::string(SessionPhaseName(t.first)) + " -> " + SessionPhaseName(t.second);
}

TEST(SessionState, TheAllowedTransitionsAreExactlyTheseEleven) {
  std::set<std::string> listed;
  for (const auto& t : SessionState::Transitions()) listed.insert(Name(t));
  const std::set<std::string> expected = {
      "awaiting login -> serving",      "awaiting login -> ending", "awaiting login -> input closed",
      "awaiting login -> closed",       "serving -> ending",        "serving -> input closed",
      "serving -> closed",              "ending -> draining",       "ending -> closed",
      "draining -> closed",             "input closed -> closed",
  };
  EXPECT_EQ(listed, expected);
  // Allowed() agrees with the list for every pair, and staying is allowed.
  for (P from : kAll) {
    for (P to : kAll) {
      const bool in_list = listed.count(Name({from, to})) != 0;
      EXPECT_EQ(SessionState::Allowed(from, to), in_list || from == to) << Name({from, to});
    }
  }
}

TEST(SessionState, ClosedIsFinalAndNothingGoesBackToLogin) {
  for (P to : kAll) {
    if (to != P::kClosed) {
      EXPECT_FALSE(SessionState::Allowed(P::kClosed, to)) << SessionPhaseName(to);
    }
    if (to != P::kAwaitingLogin) {
      EXPECT_FALSE(SessionState::Allowed(to, P::kAwaitingLogin)) << SessionPhaseName(to);
    }
  }
  // Every phase can be closed (stop, timeouts, a failed write).
  for (P from : kAll) EXPECT_TRUE(SessionState::Allowed(from, P::kClosed)) << SessionPhaseName(from);
}

TEST(SessionState, ARefusedTransitionChangesNothing) {
  SessionState s;
  EXPECT_EQ(s.phase(), P::kAwaitingLogin);
  EXPECT_FALSE(s.To(P::kDraining)) << "draining comes only after an error Ack";
  EXPECT_EQ(s.phase(), P::kAwaitingLogin);
  EXPECT_FALSE(s.To(P::kServing)) << "only an accepted login serves";
  EXPECT_EQ(s.phase(), P::kAwaitingLogin);
  EXPECT_FALSE(s.logged_in());
}

TEST(SessionState, AnErrorAckEndsThroughDrainingToClosed) {
  SessionState s;
  s.LogIn();
  EXPECT_EQ(s.phase(), P::kServing);
  EXPECT_TRUE(s.logged_in());
  ASSERT_TRUE(s.To(P::kEnding));
  EXPECT_TRUE(s.ending());
  EXPECT_FALSE(s.input_over());
  EXPECT_FALSE(s.To(P::kInputClosed)) << "an ending session closes instead";
  ASSERT_TRUE(s.To(P::kDraining));
  EXPECT_TRUE(s.discarding_input());
  EXPECT_TRUE(s.ending());
  ASSERT_TRUE(s.To(P::kClosed));
  EXPECT_TRUE(s.closed());
  EXPECT_TRUE(s.input_over());
  EXPECT_FALSE(s.To(P::kServing));
}

TEST(SessionState, InputClosedKeepsTheLoginAndStillAppliesWhatArrived) {
  SessionState s;
  s.LogIn();
  ASSERT_TRUE(s.To(P::kInputClosed));
  EXPECT_TRUE(s.input_over());
  EXPECT_FALSE(s.closed()) << "requests already received are still applied";
  EXPECT_TRUE(s.logged_in());
  EXPECT_FALSE(s.To(P::kEnding)) << "no Ack can be read any more: the session closes instead";
  ASSERT_TRUE(s.To(P::kClosed));
}

TEST(SessionState, ALoginBehindAClosedInputIsStillALogin) {
  SessionState s;
  ASSERT_TRUE(s.To(P::kInputClosed));
  s.LogIn();
  EXPECT_TRUE(s.logged_in());
  EXPECT_EQ(s.phase(), P::kInputClosed);
}

}  // namespace
}  // namespace canal::server
