// The client users file (canal/server/users_file.h): good files, every kind
// of bad one refused with its file:line, the password check, canal.user
// beside the file, and reloads (a bad change keeps the users in force and is
// reported once per change; a good one is applied and described without
// passwords); the canal.users.* keys of canal.properties.
#include "canal/server/users_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "canal/proto/password_scramble.h"
#include "canal/server/config.h"
#include "support/wait.h"

namespace canal::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kAliceHash = proto::StoredPasswordForm("alice-secret");
const std::string kBobHash = proto::StoredPasswordForm("bob-secret");

ClientUserTable MustParse(const std::string& text) {
  ClientUserTable t;
  Status s = ParseUsersFile(text, "users.txt", &t);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

TEST(UsersFileParse, GoodFileWithCommentsListsAndStars) {
  const ClientUserTable t = MustParse(
      "# who may read what\n"
      "\n"
      "alice  password=" + kAliceHash + "  destinations=orders,users  clients=1002,1001\n"
      "   bob\tpassword=" + kBobHash + " destinations=*   # every destination, any client id\r\n"
      "carol password=" + proto::StoredPasswordForm("c") + " destinations=users,users clients=*\n");
  ASSERT_EQ(t.size(), 3u);
  const ClientUser* alice = t.Find("alice");
  ASSERT_NE(alice, nullptr);
  EXPECT_EQ(alice->line, 3);
  EXPECT_EQ(alice->password_stored, kAliceHash);
  EXPECT_FALSE(alice->all_destinations);
  EXPECT_EQ(alice->destinations, (std::vector<std::string>{"orders", "users"}));
  EXPECT_TRUE(alice->MayRead("orders"));
  EXPECT_TRUE(alice->MayRead("users"));
  EXPECT_FALSE(alice->MayRead("payments"));
  EXPECT_FALSE(alice->MayRead("order"));
  EXPECT_FALSE(alice->all_clients);
  EXPECT_EQ(alice->clients, (std::vector<int16_t>{1001, 1002}));
  EXPECT_TRUE(alice->MayUseClient(1001));
  EXPECT_FALSE(alice->MayUseClient(1003));
  EXPECT_EQ(alice->DestinationsText(), "orders, users");
  EXPECT_EQ(alice->ClientsText(), "1001, 1002");

  const ClientUser* bob = t.Find("bob");
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(bob->line, 4);
  EXPECT_TRUE(bob->all_destinations);
  EXPECT_TRUE(bob->MayRead("anything"));
  EXPECT_TRUE(bob->all_clients);
  EXPECT_TRUE(bob->MayUseClient(-5));
  EXPECT_EQ(bob->DestinationsText(), "every destination");
  EXPECT_EQ(bob->ClientsText(), "any client id");

  const ClientUser* carol = t.Find("carol");
  ASSERT_NE(carol, nullptr);
  EXPECT_EQ(carol->destinations, (std::vector<std::string>{"users"}));
  EXPECT_TRUE(carol->all_clients);
  EXPECT_EQ(t.Find("dave"), nullptr);
}

TEST(UsersFileParse, HashesInUpperCaseAreTheSamePassword) {
  std::string upper = kAliceHash;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const ClientUserTable t = MustParse("alice password=" + upper + " destinations=a\n");
  ASSERT_NE(t.Find("alice"), nullptr);
  EXPECT_EQ(t.Find("alice")->password_stored, kAliceHash);
}

TEST(UsersFileParse, EmptyAndCommentOnlyFilesHaveNoUsers) {
  EXPECT_EQ(MustParse("").size(), 0u);
  EXPECT_EQ(MustParse("# nobody yet\n\n   \n").size(), 0u);
}

struct BadCase {
  const char* what;
  std::string text;
  int line;
  const char* message;  // a part of the message after "users.txt:<line>: "
};

TEST(UsersFileParse, BadFilesAreRefusedWithFileAndLine) {
  const std::string ok = "ok password=" + kBobHash + " destinations=a\n";
  const BadCase cases[] = {
      {"unknown key", ok + "alice password=" + kAliceHash + " destinations=a pasword=x\n", 2, "unknown key 'pasword'"},
      {"short hash", "alice password=abc destinations=a\n", 1, "not a stored password"},
      {"hash not hex", "alice password=" + std::string(40, 'g') + " destinations=a\n", 1, "not a stored password"},
      {"plain password", "alice password=secret destinations=a\n", 1, "openssl sha1"},
      {"duplicate user", ok + "\n# again\nok password=" + kAliceHash + " destinations=b\n", 4,
       "user ok is listed twice (first at line 1)"},
      {"empty destination list", "alice password=" + kAliceHash + " destinations=\n", 1, "empty destination list"},
      {"no destinations", ok + "alice password=" + kAliceHash + "\n", 2, "has no destinations="},
      {"no password", "alice destinations=a\n", 1, "has no password="},
      {"empty element", "alice password=" + kAliceHash + " destinations=a,,b\n", 1, "destination ''"},
      {"bad destination name", "alice password=" + kAliceHash + " destinations=a/b\n", 1, "destination 'a/b'"},
      {"star in a list", "alice password=" + kAliceHash + " destinations=a,*\n", 1, "* stands alone"},
      {"spaces around =", "alice password = " + kAliceHash + " destinations=a\n", 1, "no spaces around '='"},
      {"key first", "password=" + kAliceHash + " destinations=a\n", 1, "starts with the user name"},
      {"key twice", "alice password=" + kAliceHash + " destinations=a destinations=b\n", 1,
       "key 'destinations' is given twice"},
      {"client id too big", "alice password=" + kAliceHash + " destinations=a clients=40000\n", 1,
       "client id '40000'"},
      {"client id not a number", "alice password=" + kAliceHash + " destinations=a clients=1001,x\n", 1,
       "client id 'x'"},
      {"empty client list", "alice password=" + kAliceHash + " destinations=a clients=\n", 1, "empty client list"},
      {"odd bytes are escaped", "al\x01ice password=" + kAliceHash + " destinations=a\n", 1, "'al\\x01ice'"},
  };
  for (const BadCase& c : cases) {
    ClientUserTable t;
    Status s = ParseUsersFile(c.text, "users.txt", &t);
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.what;
    const std::string prefix = "users.txt:" + std::to_string(c.line) + ": ";
    EXPECT_EQ(std::string(s.message()).rfind(prefix, 0), 0u) << c.what << ": " << s.message();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s.message();
  }
}

TEST(UsersFilePassword, TheClientsScrambleMatchesTheStoredHashOnly) {
  // Canal's own example: canal.passwd for "canal".
  EXPECT_EQ(proto::StoredPasswordForm("canal"), "e3619321c1a937c46a0d8bd1dac39f93b27d4458");
  const ClientUserTable t = MustParse("alice password=" + kAliceHash + " destinations=a\n");
  const ClientUser& alice = *t.Find("alice");
  const std::string seed = "\x01\x02\x03\x04\x05\x06\x07\x08";
  EXPECT_TRUE(alice.PasswordMatches(seed, proto::ScramblePassword(seed, "alice-secret")));
  EXPECT_FALSE(alice.PasswordMatches(seed, proto::ScramblePassword(seed, "bob-secret")));
  EXPECT_FALSE(alice.PasswordMatches("other-seed", proto::ScramblePassword(seed, "alice-secret")));
  EXPECT_FALSE(alice.PasswordMatches(seed, ""));
  EXPECT_FALSE(alice.PasswordMatches(seed, "not hex"));
  ClientUser any;  // canal.user without canal.passwd
  EXPECT_TRUE(any.PasswordMatches(seed, ""));
}

TEST(UsersFileChanges, DescribesWhoChangedAndNeverAPassword) {
  const ClientUserTable before = MustParse("alice password=" + kAliceHash + " destinations=a\n" +
                                           "bob password=" + kBobHash + " destinations=*\n");
  const ClientUserTable after = MustParse("alice password=" + kBobHash + " destinations=a,b clients=7\n" +
                                          "carol password=" + kAliceHash + " destinations=c\n");
  const std::string d = DescribeUserChanges(before, after);
  EXPECT_EQ(d,
            "added carol (destinations: c; clients: any client id); removed bob; changed alice (password; "
            "destinations: a -> a, b; clients: any client id -> 7)");
  EXPECT_EQ(d.find(kAliceHash), std::string::npos);
  EXPECT_EQ(d.find(kBobHash), std::string::npos);
  EXPECT_EQ(DescribeUserChanges(before, before), "");
}

// ---- ClientUsers: start-up and reloads ------------------------------------

class ClientUsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("users_file_test_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    file_ = (dir_ / "users.txt").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Replaces the file as editors do (a new file renamed over it: a new inode).
  void Replace(const std::string& text) {
    const std::string tmp = file_ + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
    }
    fs::rename(tmp, file_);
  }
  ClientUsersOptions Options() const {
    ClientUsersOptions o;
    o.file = file_;
    o.settle = 0ms;
    return o;
  }
  std::shared_ptr<ClientUsers> MustCreate(ClientUsersOptions o) {
    std::shared_ptr<ClientUsers> users;
    Status s = ClientUsers::Create(std::move(o), nullptr, &users);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return users;
  }
  std::string Alice(const std::string& destinations = "a") const {
    return "alice password=" + kAliceHash + " destinations=" + destinations + "\n";
  }

  fs::path dir_;
  std::string file_;
};

TEST_F(ClientUsersTest, StartUpRefusesABadOrMissingFileNamingIt) {
  std::shared_ptr<ClientUsers> users;
  Status s = ClientUsers::Create(Options(), nullptr, &users);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(file_ + ":0: cannot be read"), std::string::npos) << s.ToString();

  Replace(Alice() + "bob password=nothex destinations=a\n");
  s = ClientUsers::Create(Options(), nullptr, &users);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(file_ + ":2: the password of user bob is not a stored password"), std::string::npos)
      << s.ToString();

  Replace(Alice() + "#" + std::string(kUsersFileMaxBytes, 'x') + "\n");
  s = ClientUsers::Create(Options(), nullptr, &users);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("larger than 1048576 bytes"), std::string::npos) << s.ToString();
}

TEST_F(ClientUsersTest, CanalUserIsOneMoreUserAllowedEverythingAndMayNotBeInTheFile) {
  Replace(Alice());
  ClientUsersOptions o = Options();
  o.legacy_user = "canal";
  o.legacy_password_stored = proto::StoredPasswordForm("canal");
  std::shared_ptr<ClientUsers> users = MustCreate(o);
  ASSERT_NE(users, nullptr);
  const std::shared_ptr<const ClientUserTable> t = users->Snapshot();
  ASSERT_EQ(t->size(), 2u);
  const ClientUser* canal = t->Find("canal");
  ASSERT_NE(canal, nullptr);
  EXPECT_TRUE(canal->all_destinations);
  EXPECT_TRUE(canal->all_clients);
  EXPECT_EQ(canal->line, 0);

  Replace("# the admin\n" + Alice() + "canal password=" + kBobHash + " destinations=a\n");
  std::shared_ptr<ClientUsers> refused;
  Status s = ClientUsers::Create(o, nullptr, &refused);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(file_ + ":3: user canal is canal.user in canal.properties too"), std::string::npos)
      << s.ToString();

  // The same name arriving by a reload is refused like any bad change.
  Replace(Alice() + "carol password=" + kBobHash + " destinations=a\n");
  std::string message;
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kApplied) << message;
  Replace(Alice() + "canal password=" + kBobHash + " destinations=a\n");
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kRefused);
  EXPECT_NE(message.find(file_ + ":2: user canal is canal.user"), std::string::npos) << message;
  EXPECT_TRUE(users->Snapshot()->Find("canal")->all_destinations);
}

TEST_F(ClientUsersTest, AGoodChangeIsAppliedAndABadOneKeepsTheUsersInForce) {
  Replace(Alice() + "bob password=" + kBobHash + " destinations=b\n");
  std::shared_ptr<ClientUsers> users = MustCreate(Options());
  ASSERT_NE(users, nullptr);
  const uint64_t g0 = users->generation();
  std::string message;
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kUnchanged);
  EXPECT_EQ(users->generation(), g0);

  // Good: alice gains b, bob is removed.
  Replace(Alice("a,b"));
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kApplied);
  EXPECT_EQ(message, "removed bob; changed alice (destinations: a -> a, b)");
  EXPECT_GT(users->generation(), g0);
  const uint64_t g1 = users->generation();
  EXPECT_TRUE(users->Snapshot()->Find("alice")->MayRead("b"));
  EXPECT_EQ(users->Snapshot()->Find("bob"), nullptr);

  // Bad: refused once, naming the line; the users stay; not again until the file changes.
  Replace(Alice("a,b") + "bob password=" + kBobHash + " destinations=b colour=red\n");
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kRefused);
  EXPECT_NE(message.find(file_ + ":2: unknown key 'colour'"), std::string::npos) << message;
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kUnchanged);
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kUnchanged);
  EXPECT_EQ(users->generation(), g1);
  EXPECT_EQ(users->Snapshot()->size(), 1u);
  EXPECT_TRUE(users->Snapshot()->Find("alice")->MayRead("b"));

  // Still bad, but changed: reported again.
  Replace(Alice("a,b") + "bob password=" + kBobHash + "\n");
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kRefused);
  EXPECT_NE(message.find(file_ + ":2: user bob has no destinations="), std::string::npos) << message;

  // Gone: refused (the users stay), and back: applied.
  fs::remove(file_);
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kRefused);
  EXPECT_NE(message.find("cannot be read"), std::string::npos) << message;
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kUnchanged);
  EXPECT_EQ(users->Snapshot()->size(), 1u);
  Replace(Alice("a,b") + "bob password=" + kBobHash + " destinations=b\n");
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kApplied);
  EXPECT_EQ(message, "added bob (destinations: b; clients: any client id)");

  // A change that changes no user (a comment): nothing to apply.
  const uint64_t g2 = users->generation();
  Replace("# edited\n" + Alice("a,b") + "bob password=" + kBobHash + " destinations=b\n");
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kSame);
  EXPECT_EQ(users->generation(), g2);
}

TEST_F(ClientUsersTest, AnInPlaceRewriteIsSeenToo) {
  Replace(Alice());
  std::shared_ptr<ClientUsers> users = MustCreate(Options());
  ASSERT_NE(users, nullptr);
  {
    std::ofstream out(file_, std::ios::binary | std::ios::trunc);  // same inode, other size
    out << Alice("a,b,c");
  }
  std::string message;
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kApplied);
  EXPECT_TRUE(users->Snapshot()->Find("alice")->MayRead("c"));
}

TEST_F(ClientUsersTest, AFileStillBeingWrittenIsReadOnceItSettles) {
  Replace(Alice());
  ClientUsersOptions o = Options();
  o.settle = 1h;
  std::shared_ptr<ClientUsers> users = MustCreate(o);
  ASSERT_NE(users, nullptr);
  Replace(Alice("a,b"));
  std::string message;
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kUnchanged);
  EXPECT_FALSE(users->Snapshot()->Find("alice")->MayRead("b"));
  fs::last_write_time(file_, fs::file_time_type::clock::now() - 2h);  // written two hours ago
  EXPECT_EQ(users->CheckNow(&message), ClientUsers::Check::kApplied);
  EXPECT_TRUE(users->Snapshot()->Find("alice")->MayRead("b"));
}

TEST_F(ClientUsersTest, TheWatcherAppliesAChangeWithinItsInterval) {
  Replace(Alice());
  ClientUsersOptions o = Options();
  o.check_interval = 50ms;
  std::shared_ptr<ClientUsers> users = MustCreate(o);
  ASSERT_NE(users, nullptr);
  users->Start();
  const uint64_t g0 = users->generation();
  Replace(Alice("a,b"));
  EXPECT_TRUE(canal::testing::WaitFor([&] { return users->generation() != g0; }, 10s));
  EXPECT_TRUE(users->Snapshot()->Find("alice")->MayRead("b"));
  users->Stop();
}

// ---- canal.properties keys ----------------------------------------------------

class UsersConfigTest : public ClientUsersTest {
 protected:
  Status Load(const std::string& text, CanalConfig* config) {
    const std::string path = (dir_ / "canal.properties").string();
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << text;
    }
    return LoadCanalConfig(path, {}, config, [](const std::string&) { return std::optional<std::string>(); });
  }
};

TEST_F(UsersConfigTest, KeysDefaultsAndRelativePaths) {
  CanalConfig c;
  ASSERT_TRUE(Load("", &c).ok());
  EXPECT_EQ(c.users_file, "");
  EXPECT_EQ(c.users_reload_interval_ms, 1000);
  ASSERT_TRUE(Load("canal.users.file = users.txt\ncanal.users.reload.interval = 250\n", &c).ok());
  EXPECT_EQ(c.users_file, file_);
  EXPECT_EQ(c.users_reload_interval_ms, 250);
  ASSERT_TRUE(Load("canal.users.file = /etc/canal/users\n", &c).ok());
  EXPECT_EQ(c.users_file, "/etc/canal/users");

  Status s = Load("canal.users.reload.interval = 10\n", &c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("canal.users.reload.interval = '10'"), std::string::npos) << s.ToString();
  s = Load("canal.passwd = " + kAliceHash + "\ncanal.users.file = users.txt\n", &c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("canal.passwd is set without canal.user"), std::string::npos) << s.ToString();
  EXPECT_TRUE(Load("canal.user = canal\ncanal.passwd = " + kAliceHash + "\ncanal.users.file = users.txt\n", &c).ok());
}

}  // namespace
}  // namespace canal::server
