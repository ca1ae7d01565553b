// Shared setup of the client SDK tests, so that each test states only what is
// particular to it: a Connector already subscribed to a scripted fake server,
// and the built programs (canal-cli, simple_client) run with their output
// collected.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/canal_connector.h"
#include "canal/client/connector.h"
#include "client/fake_canal_server.h"

extern char** environ;

namespace canal::client::test {

using fake::Col;
using fake::DdlEntry;
using fake::FakeCanalServer;
using fake::FakeSession;
using fake::Row;
using fake::RowEntry;
using fake::TransactionEntry;
namespace pb = canal::protocol;
namespace ce = canal::entry;

inline bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

inline std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Options for destination "example" as canal/canal, with timeouts short enough
// that a client waiting for an answer that never comes fails the test quickly.
inline ConnectorOptions OptionsFor(const FakeCanalServer& server) {
  ConnectorOptions o;
  o.address = server.address();
  o.destination = "example";
  o.username = "canal";
  o.password = "canal";
  o.read_timeout = std::chrono::milliseconds(3000);
  o.connect_timeout = std::chrono::milliseconds(3000);
  return o;
}

// A server script step: Canal's refusal of an ack out of order (batch 5 acked
// while 4 is the oldest) as the answer to the client's next ack, `*sent` set
// once it is on the wire, then an empty answer to the get that follows.
inline void RefuseTheAckOfBatch5(FakeSession& s, std::promise<void>* sent) {
  pb::ClientAck ack;
  s.Expect(pb::CLIENTACK, &ack);
  s.SendAck(400, "batchId:5 is not the firstly:4");
  sent->set_value();
  s.AnswerGet(-1, {});
}

// A fake server whose one connection logs in and subscribes, runs
// `after_subscribe`, then waits for the client to hang up (unless the script
// closed the connection itself); and a Connector that has connected and
// subscribed to it. Tests check `ready` before using `client`.
//
// Declare what the script records before this object, so that it outlives the
// server's thread.
struct SubscribedConnector {
  using AdjustOptions = std::function<void(ConnectorOptions&)>;

  explicit SubscribedConnector(FakeCanalServer::Script after_subscribe, const AdjustOptions& adjust = nullptr)
      : server([script = std::move(after_subscribe)](FakeSession& s) {
          if (!s.AcceptLoginAndSubscribe()) return;
          script(s);
          if (s.open()) s.WaitForClose();
        }),
        client(Options(server, adjust)) {
    ready = client.Connect();
    if (ready.ok()) ready = client.Subscribe();
  }

  // Hangs up and waits for the script to end, so what it recorded can be checked.
  void Finish() {
    client.Disconnect();
    server.Join();
  }

  FakeCanalServer server;
  Connector client;
  Status ready;

 private:
  static ConnectorOptions Options(const FakeCanalServer& server, const AdjustOptions& adjust) {
    ConnectorOptions o = OptionsFor(server);
    if (adjust) adjust(o);
    return o;
  }
};

inline std::string BuiltProgramPath(const std::string& name) { return std::string(CANAL_BINARY_DIR) + "/bin/" + name; }

// A program of this build, started on construction with its stdout and stderr
// going to temporary files; killed on destruction if still running.
class BuiltProgram {
 public:
  BuiltProgram(const std::string& name, const std::vector<std::string>& args) {
    static std::atomic<int> started{0};
    const std::string base = (std::filesystem::temp_directory_path() /
                              (name + "_test_" + std::to_string(::getpid()) + "_" + std::to_string(started++)))
                                 .string();
    out_path_ = base + ".out";
    err_path_ = base + ".err";
    const std::string path = BuiltProgramPath(name);
    std::vector<std::string> all = {path};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (posix_spawn(&pid_, path.c_str(), &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    EXPECT_GT(pid_, 0) << "cannot start " << path;
  }
  ~BuiltProgram() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
    std::filesystem::remove(out_path_);
    std::filesystem::remove(err_path_);
  }
  BuiltProgram(const BuiltProgram&) = delete;
  BuiltProgram& operator=(const BuiltProgram&) = delete;

  void Interrupt() {
    if (pid_ > 0 && !reaped_) ::kill(pid_, SIGINT);
  }
  // The exit code; -1 when the program did not start or was killed by a signal.
  int Wait() {
    if (pid_ <= 0) return -1;
    if (!reaped_) {
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }
  std::string out() const { return ReadFile(out_path_); }
  std::string err() const { return ReadFile(err_path_); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
};

struct ProgramRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Tests of one built program; skipped when it has not been built.
class BuiltProgramTest : public ::testing::Test {
 protected:
  explicit BuiltProgramTest(std::string name) : name_(std::move(name)) {}

  void SetUp() override {
    if (!std::filesystem::exists(BuiltProgramPath(name_))) {
      GTEST_SKIP() << BuiltProgramPath(name_) << " is not built: ninja " << name_;
    }
  }

  // Starts the program in the background.
  BuiltProgram Start(const std::vector<std::string>& args) const { return BuiltProgram(name_, args); }

  // Runs the program to its end.
  ProgramRun Run(const std::vector<std::string>& args) const {
    BuiltProgram p(name_, args);
    ProgramRun r;
    r.exit_code = p.Wait();
    r.out = p.out();
    r.err = p.err();
    return r;
  }

 private:
  std::string name_;
};

// One session written against the common interface (canal_connector.h), run
// on a Connector and on a ClusterConnector alike: connect, subscribe with
// `filter`, a get that waits 2 s and acks, then a get without timeout that
// does not ack.
struct InterfaceSession {
  pb::Sub sub;
  pb::Get get_with_wait;
  pb::ClientAck ack;
  pb::Get get_at_once;

  // The server side; records what the client sent.
  void Serve(FakeSession& s) {
    if (!s.AcceptLoginAndSubscribe(nullptr, &sub)) return;
    if (!s.AnswerGet(5, {RowEntry("mysql-bin.000002", 4, "shop", "orders", ce::INSERT, {Row({}, {Col("id", "7")})})},
                     &get_with_wait)) {
      return;
    }
    if (!s.Expect(pb::CLIENTACK, &ack) || !s.AnswerGet(-1, {}, &get_at_once)) return;
    s.WaitForClose();
  }

  static Status Run(CanalConnector& c, std::string_view filter, Message* acked, Message* empty) {
    CANAL_RETURN_IF_ERROR(c.Connect());
    CANAL_RETURN_IF_ERROR(c.Subscribe(filter));
    CANAL_RETURN_IF_ERROR(c.Get(20, 2, TimeUnit::kSeconds, acked));
    CANAL_RETURN_IF_ERROR(c.GetWithoutAck(30, empty));
    c.Disconnect();
    return c.connected() ? Status::Aborted("still connected after Disconnect()") : Status::OK();
  }

  void ExpectRecorded(std::string_view filter, const Message& acked, const Message& empty) const {
    EXPECT_EQ(sub.filter(), filter);
    EXPECT_EQ(acked.batch_id(), 5);
    EXPECT_EQ(acked.raw_entry_count(), 1u);
    EXPECT_EQ(get_with_wait.fetch_size(), 20);
    EXPECT_EQ(get_with_wait.timeout(), 2);
    EXPECT_EQ(get_with_wait.unit(), static_cast<int>(TimeUnit::kSeconds));
    EXPECT_EQ(ack.batch_id(), 5) << "Get acks the batch it returns";
    EXPECT_EQ(empty.batch_id(), -1);
    EXPECT_EQ(get_at_once.fetch_size(), 30);
    EXPECT_EQ(get_at_once.timeout(), -1) << "the form without timeout sends none";
  }
};

}  // namespace canal::client::test
