// GtidStateTracker (parser/gtid_state.h): the GTID state a MariaDB stream delivered, as a
// shared base per transaction plus the transaction's own GTID, and GtidStateAt, which turns
// a cursor back into the state a resume on another server starts after.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "canal/parser/event_parser.h"
#include "canal/parser/gtid_state.h"

namespace canal::parser {
namespace {

binlog::GtidSet Set(const std::string& text) {
  binlog::GtidSet s;
  const Status st = binlog::GtidSet::Parse(text, &s);
  EXPECT_TRUE(st.ok()) << text << ": " << st.ToString();
  return s;
}

// The state after a transaction, as a cursor at its end says it.
std::string After(const std::shared_ptr<const std::string>& base, const std::string& gtid) {
  LogPosition p;
  p.gtid_set = base;
  p.gtid = gtid;
  binlog::GtidSet out;
  const Status s = GtidStateAt(p, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out.ToString();
}

TEST(GtidStateTracker, EachTransactionsBaseIsTheExactStateBeforeIt) {
  GtidStateTracker t;
  t.Start(Set("0-1-100"));
  for (uint64_t seq = 101; seq <= 200; ++seq) {
    const std::shared_ptr<const std::string> base = t.Base();
    ASSERT_NE(base, nullptr);
    // A cursor inside the transaction (after its BEGIN, after a rows event) names the state
    // before it; one at its end, the state after it.
    EXPECT_EQ(*base, "0-1-" + std::to_string(seq - 1));
    EXPECT_EQ(After(base, "0-1-" + std::to_string(seq)), "0-1-" + std::to_string(seq));
    EXPECT_EQ(t.Base(), base) << "asked again before it is delivered: the same text";
    t.Delivered(0, 1, seq);
  }
  EXPECT_EQ(t.state().ToString(), "0-1-200");
}

TEST(GtidStateTracker, ADomainSwitchCarriesTheOtherDomainsState) {
  GtidStateTracker t;
  t.Start(Set("0-1-10,1-2-5"));
  EXPECT_EQ(After(t.Base(), "0-1-11"), "0-1-11,1-2-5");
  t.Delivered(0, 1, 11);
  // Domain 1 next: its base must hold domain 0's 11, which the old base lacks.
  const std::shared_ptr<const std::string> base = t.Base();
  EXPECT_EQ(After(base, "1-2-6"), "0-1-11,1-2-6");
  t.Delivered(1, 2, 6);
  EXPECT_EQ(After(t.Base(), "1-2-7"), "0-1-11,1-2-7");
  // A domain the start did not know.
  t.Delivered(1, 2, 7);
  EXPECT_EQ(After(t.Base(), "5-3-1"), "0-1-11,1-2-7,5-3-1");
}

TEST(GtidStateTracker, InsideATransactionTheCursorNamesTheStateBeforeIt) {
  GtidStateTracker t;
  t.Start(Set("0-1-10"));
  t.Base();
  t.Delivered(0, 1, 11);
  // Transaction 0-1-12 is cut into pieces: its cursors need the exact state before it.
  LogPosition inside;
  inside.gtid_set = t.Base();
  inside.gtid = "0-1-12";
  inside.transaction_begin = 4711;
  binlog::GtidSet state;
  ASSERT_TRUE(GtidStateAt(inside, &state).ok());
  EXPECT_EQ(state.ToString(), "0-1-11");
  // Its end names the state after it, from the same base.
  EXPECT_EQ(After(inside.gtid_set, "0-1-12"), "0-1-12");
}

TEST(GtidStateTracker, UnknownUntilAStartOrAGtidListNamesIt) {
  GtidStateTracker t;
  EXPECT_FALSE(t.known());
  EXPECT_EQ(t.Base(), nullptr);
  t.Delivered(0, 1, 5);  // nothing to apply it to
  EXPECT_FALSE(t.known());
  // The GTID_LIST at the start of the next binlog file.
  t.OnGtidList(Set("0-1-7,3-9-2"));
  ASSERT_TRUE(t.known());
  EXPECT_EQ(After(t.Base(), "0-1-8"), "0-1-8,3-9-2");
}

// MySQL: the executed set, from a start or a file's PREVIOUS_GTIDS, grown by each transaction.
TEST(GtidStateTracker, MysqlStatesAreExecutedSetsGrownByEachTransaction) {
  constexpr const char* kA = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
  std::array<uint8_t, 16> sid{};
  ASSERT_TRUE(Set(std::string(kA) + ":1").sources().size() == 1);
  sid = Set(std::string(kA) + ":1").sources()[0].sid;
  GtidStateTracker t;
  t.DeliveredMysql(sid, "", 1);  // nothing to apply it to
  EXPECT_FALSE(t.known());
  t.OnGtidList(Set(std::string(kA) + ":1-5"));  // the file's PREVIOUS_GTIDS
  ASSERT_TRUE(t.known());
  EXPECT_EQ(*t.Base(), std::string(kA) + ":1-5");
  t.DeliveredMysql(sid, "", 6);
  t.DeliveredMysql(sid, "blue", 1);
  EXPECT_EQ(*t.Base(), std::string(kA) + ":1-6:blue:1");
  // A cursor at that transaction's end: the base with its own (tagged) GTID.
  LogPosition at;
  at.journal_name = "binlog.000002";
  at.position = 900;
  at.gtid_set = t.Base();
  at.gtid = std::string(kA) + ":blue:2";
  binlog::GtidSet state;
  ASSERT_TRUE(GtidStateAt(at, &state).ok());
  EXPECT_EQ(state.ToString(), std::string(kA) + ":1-6:blue:1-2");
  // Inside the transaction: the base alone.
  at.transaction_begin = 700;
  ASSERT_TRUE(GtidStateAt(at, &state).ok());
  EXPECT_EQ(state.ToString(), std::string(kA) + ":1-6:blue:1");
  // A server below gtid_mode=ON: nothing is tracked, whatever the binlog says.
  t.SetTracking(false);
  EXPECT_FALSE(t.known());
  t.OnGtidList(Set(std::string(kA) + ":1-9"));
  t.Start(Set(std::string(kA) + ":1-9"));
  EXPECT_FALSE(t.known());
  t.SetTracking(true);
  t.Start(Set(std::string(kA) + ":1-9"));
  EXPECT_TRUE(t.known());
}

TEST(GtidStateTracker, AGtidListKeepsDomainsOnlyTheStreamKnew) {
  GtidStateTracker t;
  t.Start(Set("0-1-10,2-4-3"));
  // A GTID start's fake list names only part of it.
  t.OnGtidList(Set("0-1-10"));
  EXPECT_EQ(t.state().ToString(), "0-1-10,2-4-3");
}

TEST(GtidStateAt, CursorsWithoutASetOrWithBadTextAreErrorsThatSaySo) {
  LogPosition p;
  p.gtid = "0-1-5";
  binlog::GtidSet out;
  EXPECT_EQ(GtidStateAt(p, &out).code(), Status::Code::kNotFound);
  p.gtid_set = std::make_shared<const std::string>("0-1-x");
  Status s = GtidStateAt(p, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("gtidSet"), std::string::npos) << s.ToString();
  p.gtid_set = std::make_shared<const std::string>("0-1-4");
  p.gtid = "3e11fa47-71ca-11e1-9e33-c80aa9429562:5";
  s = GtidStateAt(p, &out);
  EXPECT_FALSE(s.ok());
  // A boundary cursor without a GTID of its own (a GTID-less group) is its set.
  p.gtid.clear();
  ASSERT_TRUE(GtidStateAt(p, &out).ok());
  EXPECT_EQ(out.ToString(), "0-1-4");
}

TEST(ParseDivergedAction, TakesStopAndContinueOnly) {
  DivergedAction a = DivergedAction::kContinue;
  EXPECT_TRUE(ParseDivergedAction("stop", &a).ok());
  EXPECT_EQ(a, DivergedAction::kStop);
  EXPECT_TRUE(ParseDivergedAction("continue", &a).ok());
  EXPECT_EQ(a, DivergedAction::kContinue);
  const Status s = ParseDivergedAction("ignore", &a);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("canal.instance.failover.diverged"), std::string::npos);
}

}  // namespace
}  // namespace canal::parser
