// Client users (canal.users.file, docs/configuration.md "Client users")
// against the real canal-server and a MariaDB sandbox, read with the SDK's
// Connector: a user limited to one destination reads it and gets a clear
// permission error for another; a wrong password is refused; a change of
// the file (a destination added to a user, a user removed, a bad edit) is
// applied without a restart, reaching sessions already logged in; a bad file
// stops the start naming its line; canal.user / canal.passwd alone still work.
#include <chrono>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "canal/proto/password_scramble.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/sandbox_script.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using client::Connector;
using client::ConnectorOptions;
using client::Message;
using client::TimeUnit;

constexpr uint16_t kSandboxPort = TestPort("client_users");
constexpr uint16_t kUsersPort = TestPort("client_users", 1);
constexpr uint16_t kLegacyPort = TestPort("client_users", 2);
constexpr uint16_t kBadFilePort = TestPort("client_users", 3);
constexpr int32_t kForbidden = 403;  // proto::WireError::kAuthFailed

std::string UserLine(const std::string& name, const std::string& destinations) {
  return name + " password=" + proto::StoredPasswordForm(name + "-pw") + " destinations=" + destinations + "\n";
}

class ClientUsersE2e : public InstalledServerSuite<kSandboxPort> {
 protected:
  ClientUsersE2e() : InstalledServerSuite("client-users") {}

  // Replaces conf/users.txt as editors do (a new file renamed over the old).
  void WriteUsers(const std::string& text) const {
    const auto path = install_->conf_dir() / "users.txt";
    WriteFile(path.string() + ".new", text);
    std::filesystem::rename(path.string() + ".new", path);
  }
  static ConnectorOptions As(uint16_t port, const std::string& destination, const std::string& user,
                             const std::string& password, const std::string& client_id = "1001") {
    ConnectorOptions o = ServerClientOptions(port, destination);
    o.username = user;
    o.password = password;
    o.client_id = client_id;
    return o;
  }
  // Reads (and acks) until a row whose column v is `value` arrives or `limit` passes.
  static bool ReadsValue(Connector& c, const std::string& value, std::chrono::milliseconds limit = 30s) {
    return WaitFor(
        [&] {
          Message m;
          if (!c.GetWithoutAck(100, 200, TimeUnit::kMilliseconds, &m).ok()) return false;
          if (m.batch_id() == -1) return false;
          bool found = false;
          ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
            found = found || ColumnText(row, "v") == value;
          }).PermitUncheckedError();
          c.Ack(m.batch_id()).PermitUncheckedError();
          return found;
        },
        limit, 1ms);
  }
  static bool Insert(const std::string& value) {
    return Sql("INSERT INTO users_db.t (v) VALUES ('" + value + "')");
  }
  std::string Log() const { return ReadAll(install_->server_log()); }

};

TEST_F(ClientUsersE2e, EachUserReadsWhatItMayAndFileChangesApplyWithoutARestart) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS users_db"));
  ASSERT_TRUE(Sql("CREATE TABLE IF NOT EXISTS users_db.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40))"));
  install_->WriteInstance("dest_a", StartHere());
  install_->WriteInstance("dest_b", StartHere());
  WriteUsers("# test users\n" + UserLine("bob", "dest_a") + UserLine("eve", "*"));
  install_->WriteServerProperties(CanalInstall::ServerProperties(
      kUsersPort, "canal.destinations = dest_a,dest_b\ncanal.users.file = users.txt\n"
                  "canal.users.reload.interval = 100\n"));
  ASSERT_TRUE(Startup());

  // bob reads dest_a.
  Connector bob_a(As(kUsersPort, "dest_a", "bob", "bob-pw"));
  ASSERT_TRUE(ConnectAndSubscribe(bob_a, 30s).ok()) << Log();
  ASSERT_TRUE(Insert("first"));
  EXPECT_TRUE(ReadsValue(bob_a, "first"));

  // ... and is told, clearly, that dest_b is not his.
  Connector bob_b(As(kUsersPort, "dest_b", "bob", "bob-pw"));
  ASSERT_TRUE(bob_b.Connect().ok());
  Status s = bob_b.Subscribe();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.subcode(), kForbidden) << s.ToString();
  EXPECT_NE(s.message().find("user bob may not read destination dest_b; it may read: dest_a"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(WaitForText(install_->server_log(), "user bob may not read destination dest_b", 5s));

  // A wrong password, an unknown user: refused at login.
  Connector wrong(As(kUsersPort, "dest_a", "bob", "eve-pw"));
  s = wrong.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.subcode(), kForbidden) << s.ToString();
  EXPECT_NE(s.message().find("auth failed for user:bob"), std::string::npos) << s.ToString();
  Connector nobody(As(kUsersPort, "dest_a", "mallory", "mallory-pw"));
  s = nobody.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.subcode(), kForbidden) << s.ToString();

  // eve (every destination) holds dest_b.
  Connector eve(As(kUsersPort, "dest_b", "eve", "eve-pw"));
  ASSERT_TRUE(ConnectAndSubscribe(eve, 30s).ok()) << Log();
  ASSERT_TRUE(Insert("second"));
  EXPECT_TRUE(ReadsValue(eve, "second"));

  // The change: bob may read dest_b too; eve is removed. No restart.
  WriteUsers(UserLine("bob", "dest_a,dest_b"));
  ASSERT_TRUE(WaitForText(install_->server_log(), "removed eve; changed bob (destinations: dest_a -> dest_a, dest_b)",
                          10s))
      << Log();
  // eve's session, logged in before the change, is ended at its next request.
  Message m;
  s = eve.GetWithoutAck(100, 100, TimeUnit::kMilliseconds, &m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.subcode(), kForbidden) << s.ToString();
  EXPECT_NE(s.message().find("user eve was removed"), std::string::npos) << s.ToString();
  s = eve.Connect();
  EXPECT_EQ(s.subcode(), kForbidden) << s.ToString();
  // bob reads dest_b now (once eve's session has let it go), and still dest_a.
  Connector bob_b2(As(kUsersPort, "dest_b", "bob", "bob-pw"));  // eve's client id: its cursor
  ASSERT_TRUE(ConnectAndSubscribe(bob_b2, 10s).ok()) << Log();
  ASSERT_TRUE(Insert("third"));
  EXPECT_TRUE(ReadsValue(bob_b2, "third"));
  EXPECT_TRUE(ReadsValue(bob_a, "third"));

  // A bad edit: refused once with file and line, the users in force stay.
  const std::string users_path = (install_->conf_dir() / "users.txt").string();
  WriteUsers(UserLine("bob", "dest_a,dest_b") + "carol password=12345 destinations=dest_a\n");
  ASSERT_TRUE(WaitForText(install_->server_log(), users_path + ":2: the password of user carol is not a stored", 10s))
      << Log();
  const std::string log = Log();
  EXPECT_NE(log.find("error [", log.find("removed eve")), std::string::npos) << log;
  Connector bob_again(As(kUsersPort, "dest_a", "bob", "bob-pw", "1003"));
  EXPECT_TRUE(bob_again.Connect().ok());
  // Never a password in the log.
  EXPECT_EQ(log.find(proto::StoredPasswordForm("bob-pw")), std::string::npos);
  EXPECT_EQ(log.find("bob-pw"), std::string::npos);

  std::string out;
  EXPECT_EQ(install_->Stop(&out), 0) << out;
  // Logged once for that one bad version of the file (checked every 100 ms meanwhile).
  const std::string final_log = Log();
  size_t count = 0;
  for (size_t at = final_log.find(users_path + ":2: the password of user carol"); at != std::string::npos;
       at = final_log.find(users_path + ":2: the password of user carol", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << final_log;
}

TEST_F(ClientUsersE2e, CanalUserAndPasswdAloneStillWork) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS users_db"));
  ASSERT_TRUE(Sql("CREATE TABLE IF NOT EXISTS users_db.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40))"));
  install_->WriteInstance("example", StartHere());
  install_->WriteServerProperties(CanalInstall::ServerProperties(
      kLegacyPort, "canal.user = canal\ncanal.passwd = " + proto::StoredPasswordForm("canal") + "\n"));
  ASSERT_TRUE(Startup());
  Connector c(As(kLegacyPort, "example", "canal", "canal"));
  ASSERT_TRUE(ConnectAndSubscribe(c, 30s).ok()) << Log();
  ASSERT_TRUE(Insert("legacy"));
  EXPECT_TRUE(ReadsValue(c, "legacy"));
  Connector wrong(As(kLegacyPort, "example", "canal", "not-canal"));
  Status s = wrong.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.subcode(), kForbidden) << s.ToString();
  EXPECT_NE(s.message().find("auth failed for user:canal"), std::string::npos) << s.ToString();
}

TEST_F(ClientUsersE2e, ABadUsersFileStopsTheStartNamingItsLine) {
  install_->WriteInstance("example", StartHere());
  const std::string props = CanalInstall::ServerProperties(
      kBadFilePort, "canal.user = canal\ncanal.passwd = " + proto::StoredPasswordForm("canal") +
                        "\ncanal.users.file = users.txt\n");
  install_->WriteServerProperties(props);
  const std::string users_path = (install_->conf_dir() / "users.txt").string();
  struct Case {
    std::string text;
    std::string message;
  } cases[] = {
      {"", users_path + ":0: cannot be read"},  // (not written: missing)
      {UserLine("bob", "example") + "bob password=" + proto::StoredPasswordForm("x") + " destinations=example\n",
       users_path + ":2: user bob is listed twice (first at line 1)"},
      {"# ok\n" + UserLine("bob", "example") + "alice password=" + proto::StoredPasswordForm("x") +
           " destinations=example colour=red\n",
       users_path + ":3: unknown key 'colour'"},
      {UserLine("canal", "example"), users_path + ":1: user canal is canal.user in canal.properties too"},
  };
  bool first = true;
  for (const Case& c : cases) {
    if (!first) WriteUsers(c.text);
    first = false;
    int rc = -1;
    const std::string out = RunShell(install_->ServerCommand(), &rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find(c.message), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace canal::testing
