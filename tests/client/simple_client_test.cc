// examples/simple_client (the built binary) against the scripted fake server:
// Canal's example output, ack per batch, Ctrl-C ending with unsubscribe, and a
// refusal ending the program with a message and a non-zero status.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/fake_canal_server.h"

extern char** environ;

namespace canal::client {
namespace {

using fake::Col;
using fake::FakeCanalServer;
using fake::FakeSession;
using fake::Row;
using fake::RowEntry;
using fake::TransactionEntry;
namespace pb = canal::protocol;
namespace ce = canal::entry;

const std::string kExample = std::string(CANAL_BINARY_DIR) + "/bin/simple_client";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// simple_client with stdout and stderr in files.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    const std::string base = (std::filesystem::temp_directory_path() /
                              ("simple_client_test_" + std::to_string(::getpid()))).string();
    out_path_ = base + ".out";
    err_path_ = base + ".err";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<char*> argv;
    std::vector<std::string> all = {kExample};
    all.insert(all.end(), args.begin(), args.end());
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, kExample.c_str(), &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
    std::filesystem::remove(out_path_);
    std::filesystem::remove(err_path_);
  }
  void Interrupt() { ::kill(pid_, SIGINT); }
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string out() const { return ReadFile(out_path_); }
  std::string err() const { return ReadFile(err_path_); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string out_path_, err_path_;
};

class SimpleClient : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kExample)) GTEST_SKIP() << kExample << " is not built: ninja simple_client";
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
    s.AcceptLogin(&auth);
    s.AcceptSubscribe(&sub);
    s.Expect(pb::GET, &first_get);
    s.SendMessages(4, {TransactionEntry(ce::TRANSACTIONBEGIN, "mysql-bin.000001", 4, "33"),
                       RowEntry("mysql-bin.000001", 120, "shop", "orders", ce::INSERT,
                                {Row({}, {Col("id", "1", true), Col("note", nullptr, true)})}),
                       RowEntry("mysql-bin.000001", 180, "shop", "orders", ce::DELETE, {Row({Col("id", "1")}, {})}),
                       TransactionEntry(ce::TRANSACTIONEND, "mysql-bin.000001", 240, "55")});
    s.Expect(pb::CLIENTACK, &ack);
    batch_acked.set_value();
    // Empty batches until the client unsubscribes.
    for (int i = 0; i < 100; ++i) {
      pb::Packet p;
      if (!s.Read(&p)) break;
      if (p.type() == pb::GET) {
        s.SendMessages(-1, {});
      } else if (p.type() == pb::UNSUBSCRIPTION) {
        unsubscribed = true;
        s.SendAck();
        break;
      } else {
        ADD_FAILURE() << "unexpected " << pb::PacketType_Name(p.type());
        break;
      }
    }
    EXPECT_TRUE(s.WaitForClose());
  });
  Child child({server.address(), "example", "canal", "canal", "shop\\..*"});
  ASSERT_EQ(batch_acked.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  child.Interrupt();
  EXPECT_EQ(child.Wait(), 0) << child.err();
  server.Join();
  EXPECT_TRUE(unsubscribed);
  EXPECT_EQ(auth.password(), "7de44690d8e53782cb61804a2455c284a3bbfb06");
  EXPECT_EQ(sub.filter(), "shop\\..*");
  EXPECT_EQ(first_get.fetch_size(), 1000);
  EXPECT_EQ(first_get.timeout(), 1);
  EXPECT_EQ(first_get.unit(), 3);  // seconds
  EXPECT_EQ(ack.batch_id(), 4);
  const std::string out = child.out();
  EXPECT_NE(out.find(" BEGIN ----> Thread id: 33\n"), std::string::npos) << out;
  EXPECT_NE(out.find("================> binlog[mysql-bin.000001:120] , name[shop,orders] , eventType : INSERT\n"
                     "id : 1    update=true\n"
                     "note : NULL    update=true\n"
                     "================> binlog[mysql-bin.000001:180] , name[shop,orders] , eventType : DELETE\n"
                     "id : 1    update=false\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(" END ----> transaction id: 55\n"), std::string::npos) << out;
}

TEST_F(SimpleClient, RefusedAuthenticationExitsNonZeroWithTheServersText) {
  FakeCanalServer server([](FakeSession& s) {
    pb::ClientAuth auth;
    s.SendHandshake();
    s.Expect(pb::CLIENTAUTHENTICATION, &auth);
    s.SendAck(400, "auth failed for user:bob");
    s.WaitForClose();
  });
  Child child({server.address(), "example", "bob", "nope"});
  EXPECT_EQ(child.Wait(), 1);
  server.Join();
  EXPECT_NE(child.err().find("auth failed for user:bob"), std::string::npos) << child.err();
}

TEST_F(SimpleClient, RollsBackABatchItCannotProcessAndReconnectsAfterALostConnection) {
  pb::ClientRollback rb;
  std::promise<void> resubscribed;
  FakeCanalServer server({[&](FakeSession& s) {
                            s.AcceptLoginAndSubscribe();
                            pb::Get get;
                            s.Expect(pb::GET, &get);
                            // An entry whose RowChange bytes are malformed: printing fails.
                            ce::Entry bad;
                            bad.set_entrytype(ce::ROWDATA);
                            bad.set_storevalue(std::string("\x62\x7f", 2));
                            s.SendMessages(8, {bad.SerializeAsString()});
                            s.Expect(pb::CLIENTROLLBACK, &rb);
                            s.Close();  // then the connection drops
                          },
                          [&](FakeSession& s) {
                            s.AcceptLoginAndSubscribe();
                            resubscribed.set_value();
                            pb::Packet p;
                            while (s.Read(&p) && p.type() == pb::GET) s.SendMessages(-1, {});
                            if (p.type() == pb::UNSUBSCRIPTION) s.SendAck();
                            s.WaitForClose();
                          }});
  Child child({server.address(), "example"});
  ASSERT_EQ(resubscribed.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  child.Interrupt();
  EXPECT_EQ(child.Wait(), 0) << child.err();
  server.Join();
  EXPECT_EQ(rb.batch_id(), 8);
  EXPECT_NE(child.err().find("rolling it back"), std::string::npos) << child.err();
}

}  // namespace
}  // namespace canal::client
