// examples/simple_client (the built binary) against the scripted fake server:
// Canal's example output, ack per batch, Ctrl-C ending with unsubscribe, and a
// refusal ending the program with a message and a non-zero status.
#include <chrono>
#include <future>
#include <string>

#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace canal::client::test {
namespace {

class SimpleClient : public BuiltProgramTest {
 protected:
  SimpleClient() : BuiltProgramTest("simple_client") {}

  // Ctrl-C once the server's script has reached `point`; the program must then
  // exit 0. Waits for the script to end.
  static void InterruptAt(std::future<void> point, BuiltProgram& child, FakeCanalServer& server) {
    ASSERT_EQ(point.wait_for(std::chrono::seconds(10)), std::future_status::ready) << child.err();
    child.Interrupt();
    EXPECT_EQ(child.Wait(), 0) << child.err();
    server.Join();
  }
};

TEST_F(SimpleClient, PrintsLikeCanalsExampleAcksAndUnsubscribesOnCtrlC) {
  pb::ClientAuth auth;
  pb::Sub sub;
  pb::ClientAck ack;
  pb::Get first_get;
  bool unsubscribed = false;
  std::promise<void> batch_acked;
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe(&auth, &sub);
    s.AnswerGet(4,
                {TransactionEntry(ce::TRANSACTIONBEGIN, "mysql-bin.000001", 4, "33"),
                 RowEntry("mysql-bin.000001", 120, "shop", "orders", ce::INSERT,
                          {Row({}, {Col("id", "1", true), Col("note", nullptr, true)})}),
                 RowEntry("mysql-bin.000001", 180, "shop", "orders", ce::DELETE, {Row({Col("id", "1")}, {})}),
                 TransactionEntry(ce::TRANSACTIONEND, "mysql-bin.000001", 240, "55")},
                &first_get);
    s.Expect(pb::CLIENTACK, &ack);
    batch_acked.set_value();
    unsubscribed = s.AnswerGetsWithEmptyBatchesUntilUnsubscribe();
    EXPECT_TRUE(s.WaitForClose());
  });
  BuiltProgram child = Start({server.address(), "example", "canal", "canal", "shop\\..*"});
  ASSERT_NO_FATAL_FAILURE(InterruptAt(batch_acked.get_future(), child, server));
  EXPECT_TRUE(unsubscribed);
  EXPECT_EQ(auth.password(), "7de44690d8e53782cb61804a2455c284a3bbfb06");
  EXPECT_EQ(sub.filter(), "shop\\..*");
  EXPECT_EQ(first_get.fetch_size(), 1000);
  EXPECT_EQ(first_get.timeout(), 1);
  EXPECT_EQ(first_get.unit(), 3);  // seconds
  EXPECT_EQ(ack.batch_id(), 4);
  const std::string out = child.out();
  EXPECT_TRUE(Contains(out, " BEGIN ----> Thread id: 33\n")) << out;
  EXPECT_TRUE(Contains(out,
                       "================> binlog[mysql-bin.000001:120] , name[shop,orders] , eventType : INSERT\n"
                       "id : 1    update=true\n"
                       "note : NULL    update=true\n"
                       "================> binlog[mysql-bin.000001:180] , name[shop,orders] , eventType : DELETE\n"
                       "id : 1    update=false\n"))
      << out;
  EXPECT_TRUE(Contains(out, " END ----> transaction id: 55\n")) << out;
}

TEST_F(SimpleClient, RefusedAuthenticationExitsNonZeroWithTheServersText) {
  FakeCanalServer server([](FakeSession& s) {
    s.RefuseLogin(400, "auth failed for user:bob");
    s.WaitForClose();
  });
  const ProgramRun r = Run({server.address(), "example", "bob", "nope"});
  server.Join();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "auth failed for user:bob")) << r.err;
}

TEST_F(SimpleClient, RollsBackABatchItCannotProcessAndReconnectsAfterALostConnection) {
  pb::ClientRollback rb;
  std::promise<void> resubscribed;
  FakeCanalServer server({[&](FakeSession& s) {
                            s.AcceptLoginAndSubscribe();
                            // An entry whose RowChange bytes are malformed: printing fails.
                            ce::Entry bad;
                            bad.set_entrytype(ce::ROWDATA);
                            bad.set_storevalue(std::string("\x62\x7f", 2));
                            s.AnswerGet(8, {bad.SerializeAsString()});
                            s.Expect(pb::CLIENTROLLBACK, &rb);
                            s.Close();  // then the connection drops
                          },
                          [&](FakeSession& s) {
                            s.AcceptLoginAndSubscribe();
                            resubscribed.set_value();
                            s.AnswerGetsWithEmptyBatchesUntilUnsubscribe();
                            s.WaitForClose();
                          }});
  BuiltProgram child = Start({server.address(), "example"});
  ASSERT_NO_FATAL_FAILURE(InterruptAt(resubscribed.get_future(), child, server));
  EXPECT_EQ(rb.batch_id(), 8);
  EXPECT_TRUE(Contains(child.err(), "rolling it back")) << child.err();
}

}  // namespace
}  // namespace canal::client::test
