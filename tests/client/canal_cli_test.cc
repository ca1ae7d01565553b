// canal-cli (the built binary) against the scripted fake server: the JSON lines
// it prints, when it acks and when it rolls back, and its exit codes.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace canal::client::test {
namespace {

class CanalCli : public BuiltProgramTest {
 protected:
  CanalCli() : BuiltProgramTest("canal-cli") {}

  // Runs canal-cli on destination "example" of `server` to its end, then waits
  // for the server's script to end too. The scripts answer one request at a
  // time, as Canal's clients send them (--no-prefetch), unless `prefetch`.
  ProgramRun RunAgainst(FakeCanalServer& server, std::vector<std::string> args, bool prefetch = false) {
    args.insert(args.begin(), {"--address", server.address(), "--destination", "example"});
    if (!prefetch) args.push_back("--no-prefetch");
    ProgramRun r = Run(args);
    server.Join();
    return r;
  }

  // --count 1 against a batch of two rows: the batch is rolled back (*rb).
  // With prefetch the GET sent ahead is never answered, so a canal-cli that
  // waited for its reply would wait out the minute's get timeout.
  ProgramRun RunStoppingInsideABatch(bool prefetch, pb::ClientRollback* rb) {
    FakeCanalServer server([&](FakeSession& s) {
      s.AcceptLoginAndSubscribe();
      s.AnswerGet(9, {RowEntry("f.000001", 10, "d", "t", ce::DELETE, {Row({Col("id", "1")}, {})}),
                      RowEntry("f.000001", 20, "d", "t", ce::DELETE, {Row({Col("id", "2")}, {})})});
      pb::Get ahead;
      if (prefetch) s.Expect(pb::GET, &ahead);
      s.Expect(pb::CLIENTROLLBACK, rb);
      EXPECT_TRUE(s.WaitForClose());
    });
    return RunAgainst(server, {"--count", "1", "--json", "--timeout-ms", "60000"}, prefetch);
  }
};

TEST_F(CanalCli, JsonPrintsOneCanalBinlogShapedLinePerRowChangeAndAcksEachBatch) {
  pb::ClientAuth auth;
  pb::Sub sub;
  pb::Get get;
  pb::ClientAck ack1, ack2;
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe(&auth, &sub);
    s.AnswerGet(1,
                {TransactionEntry(ce::TRANSACTIONBEGIN, "mysql-bin.000001", 100, "12"),
                 RowEntry("mysql-bin.000001", 200, "shop", "orders", ce::INSERT,
                          {Row({}, {Col("id", "1", true), Col("note", "a \"quoted\"\ttab", true)}),
                           Row({}, {Col("id", "2", true), Col("note", nullptr, true)})}),
                 TransactionEntry(ce::TRANSACTIONEND, "mysql-bin.000001", 300, "77")},
                &get);
    s.Expect(pb::CLIENTACK, &ack1);
    s.AnswerGet(-1, {});  // an empty batch is neither printed nor acked
    s.AnswerGet(2, {DdlEntry("mysql-bin.000001", 400, "shop", "ALTER TABLE orders ADD c INT", 1'700'000'005'999),
                    RowEntry("mysql-bin.000001", 500, "shop", "orders", ce::UPDATE,
                             {Row({Col("id", "1"), Col("note", "x")}, {Col("id", "1"), Col("note", "y", true)})},
                             1'700'000'006'000, "0-1-42"),
                    TransactionEntry(ce::TRANSACTIONEND, "mysql-bin.000001", 600, "78")});
    s.Expect(pb::CLIENTACK, &ack2);
    EXPECT_TRUE(s.WaitForClose());
  });
  ProgramRun r = RunAgainst(server, {"--user", "canal", "--password", "canal", "--filter", "shop\\..*", "--batch", "50",
                                     "--count", "3", "--json", "--timeout-ms", "200", "--batch-wait"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0],
            R"({"file":"mysql-bin.000001","pos":200,"gtid":"","ts":1700000000,"db":"shop","table":"orders",)"
            R"("type":"INSERT","after":{"id":"1","note":"a \"quoted\"\ttab"}})");
  EXPECT_EQ(lines[1],
            R"({"file":"mysql-bin.000001","pos":200,"gtid":"","ts":1700000000,"db":"shop","table":"orders",)"
            R"("type":"INSERT","after":{"id":"2","note":null}})");
  EXPECT_EQ(lines[2], R"({"file":"mysql-bin.000001","pos":400,"gtid":"","ts":1700000005,"db":"shop",)"
                      R"("type":"DDL","sql":"ALTER TABLE orders ADD c INT"})");
  EXPECT_EQ(lines[3],
            R"({"file":"mysql-bin.000001","pos":500,"gtid":"0-1-42","ts":1700000006,"db":"shop","table":"orders",)"
            R"("type":"UPDATE","before":{"id":"1","note":"x"},"after":{"id":"1","note":"y"}})");
  EXPECT_EQ(auth.username(), "canal");
  EXPECT_EQ(auth.password(), "7de44690d8e53782cb61804a2455c284a3bbfb06");  // the doc's vector: seed 01..08
  EXPECT_EQ(sub.filter(), "shop\\..*");
  EXPECT_EQ(get.fetch_size(), 50);
  EXPECT_EQ(get.timeout(), 200);
  EXPECT_FALSE(get.low_latency()) << "with --batch-wait the Get is Canal's";
  EXPECT_EQ(ack1.batch_id(), 1);
  EXPECT_EQ(ack2.batch_id(), 2);
}

TEST_F(CanalCli, StoppingInsideABatchRollsItBackSoNothingUnprintedIsLost) {
  pb::ClientRollback rb;
  ProgramRun r = RunStoppingInsideABatch(/*prefetch=*/false, &rb);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out;
  EXPECT_EQ(Lines(r.out)[0], R"({"file":"f.000001","pos":10,"gtid":"","ts":1700000000,"db":"d","table":"t",)"
                             R"("type":"DELETE","before":{"id":"1"}})");
  EXPECT_EQ(rb.batch_id(), 9);
}

// By default the next GET goes as soon as a batch arrives (ConnectorOptions::
// prefetch): the ack of a printed batch follows it, and every batch is printed
// once, in order.
TEST_F(CanalCli, ByDefaultTheNextGetGoesBeforeTheBatchIsPrintedAndAcked) {
  std::vector<int> order;  // the requests after the first GET: 0 GET, 1 ACK
  std::vector<int64_t> acks;
  static const char* const kIds[] = {"0", "1", "2", "3"};
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    s.AnswerGet(1, {RowEntry("f.000001", 10, "d", "t", ce::INSERT, {Row({}, {Col("id", "1", true)})})});
    for (int64_t next = 2; next <= 4; ++next) {
      // The GET sent ahead, then the ack of the batch before: answer once both are here.
      for (int i = 0; i < 2; ++i) {
        pb::Packet p;
        if (!s.Read(&p)) return;
        order.push_back(p.type() == pb::GET ? 0 : 1);
        pb::ClientAck ack;
        if (p.type() == pb::CLIENTACK && ack.ParseFromString(p.body())) acks.push_back(ack.batch_id());
      }
      if (next == 4) break;
      s.SendMessages(next, {RowEntry("f.000001", 10 * next, "d", "t", ce::INSERT,
                                     {Row({}, {Col("id", kIds[next], true)})})});
    }
    s.WaitForClose();
  });
  ProgramRun r = RunAgainst(server, {"--count", "3", "--json"}, /*prefetch=*/true);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_TRUE(Contains(lines[i], "\"after\":{\"id\":\"" + std::to_string(i + 1) + "\"}")) << lines[i];
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 0, 1, 0, 1})) << "each GET goes before the previous batch's ack";
  EXPECT_EQ(acks, (std::vector<int64_t>{1, 2, 3}));
}

// Stopping inside a batch with a GET sent ahead: the rollback goes at once and
// canal-cli exits without waiting for the server's answer to that GET.
TEST_F(CanalCli, StoppingInsideABatchWithAGetSentAheadRollsBackWithoutWaitingForIt) {
  pb::ClientRollback rb;
  ProgramRun r = RunStoppingInsideABatch(/*prefetch=*/true, &rb);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 1u) << r.out;
  EXPECT_EQ(rb.batch_id(), 9);
}

TEST_F(CanalCli, HumanFormLooksLikeCanalsExampleClient) {
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    s.AnswerGet(1, {RowEntry("mysql-bin.000002", 120, "shop", "orders", ce::UPDATE,
                             {Row({Col("id", "1"), Col("qty", "2")}, {Col("id", "1"), Col("qty", "3", true)})})});
    pb::ClientAck ack;
    s.Expect(pb::CLIENTACK, &ack);
    s.WaitForClose();
  });
  ProgramRun r = RunAgainst(server, {"--count", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "================> binlog[mysql-bin.000002:120] , name[shop,orders] , eventType : UPDATE\n"
            "-------> before\n"
            "id : 1    update=false\n"
            "qty : 2    update=false\n"
            "-------> after\n"
            "id : 1    update=false\n"
            "qty : 3    update=true\n");
}

// The server's warning on empty batches (Messages.server_warning, ours):
// printed once when it appears, and a line when it clears; the rows still come.
TEST_F(CanalCli, WarnsOnceWhenTheServerReportsTheDestinationFailing) {
  const std::string warning =
      "destination example is not streaming from its primary 127.0.0.1:3306: reconnecting (last error: IOError: "
      "connect: Connection refused)";
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    pb::Messages m;
    m.set_batch_id(-1);
    m.set_server_warning(warning);
    for (int i = 0; i < 3; ++i) {
      pb::Get get;
      s.Expect(pb::GET, &get);
      s.SendPacket(pb::MESSAGES, m.SerializeAsString());
    }
    s.AnswerGet(1, {RowEntry("mysql-bin.000002", 120, "shop", "orders", ce::INSERT, {Row({}, {Col("id", "1", true)})})});
    pb::ClientAck ack;
    s.Expect(pb::CLIENTACK, &ack);
    s.WaitForClose();
  });
  ProgramRun r = RunAgainst(server, {"--count", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "canal-cli: warning: " + warning + "\n")) << r.err;
  EXPECT_EQ(r.err.find("warning:"), r.err.rfind("warning:")) << "once, not per empty batch: " << r.err;
  EXPECT_TRUE(Contains(r.err, "canal-cli: the server reports the destination streaming again\n")) << r.err;
  EXPECT_TRUE(Contains(r.out, "shop,orders")) << r.out;
}

TEST_F(CanalCli, RefusedAuthenticationExitsThreeWithTheServersText) {
  FakeCanalServer server([](FakeSession& s) {
    s.RefuseLogin(400, "something goes wrong with channel");
    s.WaitForClose();
  });
  ProgramRun r = RunAgainst(server, {"--user", "u", "--password", "wrong"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(Contains(r.err, "something goes wrong with channel")) << r.err;
  EXPECT_TRUE(Contains(r.err, "server error 400")) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CanalCli, LostConnectionExitsTwo) {
  FakeCanalServer server([](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.Close();
  });
  ProgramRun r = RunAgainst(server, {});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, server.address())) << r.err;
}

TEST_F(CanalCli, MalformedEntryExitsFourAndRollsTheBatchBack) {
  pb::ClientRollback rb;
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    s.AnswerGet(3, {std::string("\x0a\x7f", 2)});
    s.Expect(pb::CLIENTROLLBACK, &rb);
    s.WaitForClose();
  });
  ProgramRun r = RunAgainst(server, {"--json"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(rb.batch_id(), 3);
}

// Error 409 (our server: the ack was not applied, the batch comes again):
// canal-cli says so, reconnects and prints the batch again; --low-latency
// asks every get for the low-latency rule.
TEST_F(CanalCli, AnAckNotAppliedReconnectsAndPrintsTheBatchAgain) {
  pb::Get first_get, second_get;
  pb::ClientAck refused, applied;
  const std::string row = RowEntry("f.000001", 10, "d", "t", ce::INSERT, {Row({}, {Col("id", "1", true)})});
  FakeCanalServer server(std::vector<FakeCanalServer::Script>{
      [&](FakeSession& s) {
        s.AcceptLoginAndSubscribe();
        s.AnswerGet(1, {row}, &first_get);
        s.Expect(pb::CLIENTACK, &refused);
        pb::Get get;
        s.Expect(pb::GET, &get);  // the ack's failure answers the next request
        s.SendAck(409, "ack: destination example is not active on canal server 127.0.0.1:1 any more (test)");
        s.WaitForClose();
      },
      [&](FakeSession& s) {
        s.AcceptLoginAndSubscribe();
        s.AnswerGet(1, {row}, &second_get);
        s.Expect(pb::CLIENTACK, &applied);
        s.WaitForClose();
      }});
  ProgramRun r = RunAgainst(server, {"--count", "2", "--json"});  // low latency by default
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 2u) << r.out;  // the same row, printed again
  EXPECT_TRUE(Contains(r.err, "server error 409")) << r.err;
  EXPECT_TRUE(Contains(r.err, "reconnecting")) << r.err;
  EXPECT_TRUE(first_get.low_latency()) << "canal-cli's gets are low-latency unless --batch-wait";
  EXPECT_TRUE(second_get.low_latency()) << "and stay so after a reconnect";
  EXPECT_EQ(refused.batch_id(), 1);
  EXPECT_EQ(applied.batch_id(), 1);
}

TEST_F(CanalCli, BadCommandLineExitsOne) {
  EXPECT_EQ(Run({"--destination", "example"}).exit_code, 1);  // no --address
  EXPECT_EQ(Run({"--address", "127.0.0.1:1", "--destination", "d", "--batch", "0"}).exit_code, 1);
  EXPECT_EQ(Run({"--address", "127.0.0.1:1", "--destination", "d", "--count", "-1"}).exit_code, 1);
  EXPECT_EQ(Run({"--address", "nohostport", "--destination", "d"}).exit_code, 1);
  EXPECT_EQ(Run({"--help"}).exit_code, 0);
}

}  // namespace
}  // namespace canal::client::test
