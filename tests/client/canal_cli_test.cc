// canal-cli (the built binary) against the scripted fake server: the JSON lines
// it prints, when it acks and when it rolls back, and its exit codes.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "client/fake_canal_server.h"

namespace canal::client {
namespace {

using fake::Col;
using fake::DdlEntry;
using fake::FakeCanalServer;
using fake::FakeSession;
using fake::Row;
using fake::RowEntry;
using fake::TransactionEntry;
namespace pb = canal::protocol;
namespace ce = canal::entry;

const std::string kCli = std::string(CANAL_BINARY_DIR) + "/bin/canal-cli";

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CliRun RunCli(const std::string& args) {
  CliRun r;
  const std::string err_path =
      (std::filesystem::temp_directory_path() / ("canal_cli_test_" + std::to_string(::getpid()) + ".err")).string();
  const std::string cmd = kCli + " " + args + " 2>" + err_path;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_path);
  return r;
}

class CanalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kCli)) GTEST_SKIP() << kCli << " is not built: ninja canal-cli";
  }
};

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(CanalCli, JsonPrintsOneCanalBinlogShapedLinePerRowChangeAndAcksEachBatch) {
  pb::ClientAuth auth;
  pb::Sub sub;
  pb::Get get;
  pb::ClientAck ack1, ack2;
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLogin(&auth);
    s.AcceptSubscribe(&sub);
    s.Expect(pb::GET, &get);
    s.SendMessages(1, {TransactionEntry(ce::TRANSACTIONBEGIN, "mysql-bin.000001", 100, "12"),
                       RowEntry("mysql-bin.000001", 200, "shop", "orders", ce::INSERT,
                                {Row({}, {Col("id", "1", true), Col("note", "a \"quoted\"\ttab", true)}),
                                 Row({}, {Col("id", "2", true), Col("note", nullptr, true)})}),
                       TransactionEntry(ce::TRANSACTIONEND, "mysql-bin.000001", 300, "77")});
    s.Expect(pb::CLIENTACK, &ack1);
    pb::Get get2;
    s.Expect(pb::GET, &get2);
    s.SendMessages(-1, {});  // an empty batch is neither printed nor acked
    s.Expect(pb::GET, &get2);
    s.SendMessages(2, {DdlEntry("mysql-bin.000001", 400, "shop", "ALTER TABLE orders ADD c INT", 1'700'000'005'999),
                       RowEntry("mysql-bin.000001", 500, "shop", "orders", ce::UPDATE,
                                {Row({Col("id", "1"), Col("note", "x")}, {Col("id", "1"), Col("note", "y", true)})},
                                1'700'000'006'000, "0-1-42"),
                       TransactionEntry(ce::TRANSACTIONEND, "mysql-bin.000001", 600, "78")});
    s.Expect(pb::CLIENTACK, &ack2);
    EXPECT_TRUE(s.WaitForClose());
  });
  CliRun r = RunCli("--address " + server.address() +
                    " --destination example --user canal --password canal --filter 'shop\\..*' --batch 50"
                    " --count 3 --json --timeout-ms 200");
  server.Join();
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
  EXPECT_EQ(ack1.batch_id(), 1);
  EXPECT_EQ(ack2.batch_id(), 2);
}

TEST_F(CanalCli, StoppingInsideABatchRollsItBackSoNothingUnprintedIsLost) {
  pb::ClientRollback rb;
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.SendMessages(9, {RowEntry("f.000001", 10, "d", "t", ce::DELETE, {Row({Col("id", "1")}, {})}),
                       RowEntry("f.000001", 20, "d", "t", ce::DELETE, {Row({Col("id", "2")}, {})})});
    s.Expect(pb::CLIENTROLLBACK, &rb);
    EXPECT_TRUE(s.WaitForClose());
  });
  CliRun r = RunCli("--address " + server.address() + " --destination example --count 1 --json");
  server.Join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out;
  EXPECT_EQ(Lines(r.out)[0], R"({"file":"f.000001","pos":10,"gtid":"","ts":1700000000,"db":"d","table":"t",)"
                             R"("type":"DELETE","before":{"id":"1"}})");
  EXPECT_EQ(rb.batch_id(), 9);
}

TEST_F(CanalCli, HumanFormLooksLikeCanalsExampleClient) {
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.SendMessages(1, {RowEntry("mysql-bin.000002", 120, "shop", "orders", ce::UPDATE,
                                {Row({Col("id", "1"), Col("qty", "2")}, {Col("id", "1"), Col("qty", "3", true)})})});
    pb::ClientAck ack;
    s.Expect(pb::CLIENTACK, &ack);
    s.WaitForClose();
  });
  CliRun r = RunCli("--address " + server.address() + " --destination example --count 1");
  server.Join();
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

TEST_F(CanalCli, RefusedAuthenticationExitsThreeWithTheServersText) {
  FakeCanalServer server([](FakeSession& s) {
    pb::ClientAuth auth;
    s.SendHandshake();
    s.Expect(pb::CLIENTAUTHENTICATION, &auth);
    s.SendAck(400, "something goes wrong with channel");
    s.WaitForClose();
  });
  CliRun r = RunCli("--address " + server.address() + " --destination example --user u --password wrong");
  server.Join();
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("something goes wrong with channel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("server error 400"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CanalCli, LostConnectionExitsTwo) {
  FakeCanalServer server([](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.Close();
  });
  CliRun r = RunCli("--address " + server.address() + " --destination example");
  server.Join();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(server.address()), std::string::npos) << r.err;
}

TEST_F(CanalCli, MalformedEntryExitsFourAndRollsTheBatchBack) {
  pb::ClientRollback rb;
  FakeCanalServer server([&](FakeSession& s) {
    s.AcceptLoginAndSubscribe();
    pb::Get get;
    s.Expect(pb::GET, &get);
    s.SendMessages(3, {std::string("\x0a\x7f", 2)});
    s.Expect(pb::CLIENTROLLBACK, &rb);
    s.WaitForClose();
  });
  CliRun r = RunCli("--address " + server.address() + " --destination example --json");
  server.Join();
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(rb.batch_id(), 3);
}

TEST_F(CanalCli, BadCommandLineExitsOne) {
  EXPECT_EQ(RunCli("--destination example").exit_code, 1);               // no --address
  EXPECT_EQ(RunCli("--address 127.0.0.1:1 --destination d --batch 0").exit_code, 1);
  EXPECT_EQ(RunCli("--address 127.0.0.1:1 --destination d --count -1").exit_code, 1);
  EXPECT_EQ(RunCli("--address nohostport --destination d").exit_code, 1);
  EXPECT_EQ(RunCli("--help").exit_code, 0);
}

}  // namespace
}  // namespace canal::client
