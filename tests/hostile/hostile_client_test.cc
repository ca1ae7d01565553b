// Hostile clients against the real canal-server: while a good
// client receives every row exactly once, other connections
//   - send 63 MiB CLIENTAUTHENTICATION frames (16 at a time, again and again),
//   - open 20,000 connections and leave them idle (the server runs with a
//     file descriptor limit of 4096, the test process with enough for all),
//   - read the handshake and go silent, drip one byte a second (slowloris),
//     or send garbage.
// After each flood: every row arrived once, the server's peak RSS is under
// 256 MiB, its log stayed small, and a new client can still log in.
// Sandbox ports 14401 (MariaDB) and 14402-14404 (canal-server).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/client_test_names.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

constexpr int kRows = 2000;               // written in 40 transactions during each flood
constexpr rlim_t kServerFds = 4096;       // the server's descriptor limit
constexpr rlim_t kTestFds = 65536;        // ours: 20,000 client sockets and more
constexpr size_t kPeakRssLimitKiB = 256u << 10;
constexpr uintmax_t kLogLimitBytes = 1u << 20;
constexpr char kPasswdStored[] = "E3619321C1A937C46A0D8BD1DAC39F93B27D4458";  // "canal"

// ---- raw sockets ------------------------------------------------------------

int ConnectRaw(uint16_t port, bool blocking) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | (blocking ? 0 : SOCK_NONBLOCK), 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads whatever comes within `wait`; false when the peer closed or reset.
bool ReadSome(int fd, std::chrono::milliseconds wait, std::string* got = nullptr) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return true;  // nothing yet: still open
  char buf[4096];
  const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n > 0 && got != nullptr) got->append(buf, static_cast<size_t>(n));
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

bool SendAll(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string FrameHeader(uint32_t n) {
  return {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n)};
}

// ---- the server process ---------------------------------------------------------

// "VmHWM" (peak) or "VmRSS" of /proc/<pid>/status, in KiB; 0 when unknown.
size_t StatusKiB(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoul(line.substr(field.size() + 1));
  }
  return 0;
}

size_t OpenFds(int pid) {
  std::error_code ec;
  size_t n = 0;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

class HostileClients : public ServerSuite<TestPort("hostile")> {
 protected:
  static void SetUpTestSuite() {
    ServerSuite::SetUpTestSuite();
    // Enough descriptors for 20,000 client sockets here (CI runs as root and
    // may raise the hard limit; elsewhere the test skips when it cannot).
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    if (r.rlim_max < kTestFds) {
      rlimit raised{kTestFds, kTestFds};
      if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
    }
    r.rlim_cur = std::min<rlim_t>(r.rlim_max, kTestFds);
    ::setrlimit(RLIMIT_NOFILE, &r);
    ::getrlimit(RLIMIT_NOFILE, &fds_);
  }

  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(sandbox_->Sql("CREATE DATABASE IF NOT EXISTS hostile; DROP TABLE IF EXISTS hostile.t; "
                              "CREATE TABLE hostile.t (id INT PRIMARY KEY, v VARCHAR(32))"))
        << sandbox_->error();
  }

  void TearDown() override {
    if (install_) {
      std::string out;
      install_->Stop(&out);
    }
  }

  // canal-server on `port` with a descriptor limit of kServerFds, no
  // connection count limits of its own (the descriptor cap applies) and a
  // 3 s login deadline.
  void StartServer(uint16_t port) {
    install_ = std::make_unique<CanalInstall>(
        std::string("hostile-") + ::testing::UnitTest::GetInstance()->current_test_info()->name(), kSandboxPort);
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        port, std::string("canal.user = canal\ncanal.passwd = ") + kPasswdStored +
                  "\ncanal.connections.login.timeout = 3000\ncanal.connections.max = 0\n"
                  "canal.connections.max.per.address = 0\n"));
    install_->WriteInstance("example", StartAtPrimaryEnd(*sandbox_) + "canal.instance.filter.regex = hostile\\\\.t\n");
    // The server inherits our soft limit: lowered around the start only.
    rlimit saved{};
    ::getrlimit(RLIMIT_NOFILE, &saved);
    rlimit server = saved;
    server.rlim_cur = std::min(saved.rlim_max, kServerFds);
    ::setrlimit(RLIMIT_NOFILE, &server);
    std::string out;
    const int rc = install_->Startup(&out);
    ::setrlimit(RLIMIT_NOFILE, &saved);
    ASSERT_EQ(rc, 0) << out << ReadAll(install_->server_log());
    port_ = port;
  }

  ConnectorOptions GoodOptions() const {
    ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(port_);
    o.destination = "example";
    o.username = "canal";
    o.password = "canal";
    o.read_timeout = 30s;
    return o;
  }

  // Runs `flood` (until it returns or `stop` is set) while kRows rows are
  // written and a good client, subscribed before the flood, receives them;
  // then checks every row came exactly once and the server held up.
  void RunWithFlood(const std::function<void(const std::atomic<bool>& stop)>& flood) {
    Connector good(GoodOptions());
    Status s = ConnectAndSubscribe(good, 30s);
    ASSERT_TRUE(s.ok()) << s.ToString() << ReadAll(install_->server_log());

    std::atomic<bool> stop{false};
    std::thread flooder([&] { flood(stop); });
    std::thread writer([&] {
      for (int tx = 0; tx < 40; ++tx) {
        std::string sql = "INSERT INTO hostile.t VALUES ";
        for (int i = 0; i < kRows / 40; ++i) {
          const int id = tx * (kRows / 40) + i + 1;
          sql += (i ? ",(" : "(") + std::to_string(id) + ",'row " + std::to_string(id) + "')";
        }
        EXPECT_TRUE(sandbox_->Sql(sql)) << sandbox_->error();
        std::this_thread::sleep_for(100ms);
      }
    });

    std::map<int, int> seen;
    const auto deadline = Clock::now() + 90s;
    while (static_cast<int>(seen.size()) < kRows && Clock::now() < deadline) {
      Message m;
      s = good.GetWithoutAck(500, 200, TimeUnit::kMilliseconds, &m);
      if (!s.ok()) break;
      if (m.batch_id() == -1) continue;
      s = ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
        ++seen[std::stoi(ColumnText(row, "id"))];
      });
      if (!s.ok()) break;
      s = good.Ack(m.batch_id());
      if (!s.ok()) break;
    }
    writer.join();
    stop = true;
    flooder.join();
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(static_cast<int>(seen.size()), kRows);
    for (const auto& [id, times] : seen) {
      if (times != 1) ADD_FAILURE() << "row " << id << " arrived " << times << " times";
    }
    good.Disconnect();
    CheckServerHeldUp();
  }

  // Still running, peak RSS and log size bounded, and a new client gets in.
  void CheckServerHeldUp() {
    const int pid = install_->Pid();
    ASSERT_TRUE(install_->Running()) << ReadAll(install_->server_log());
    const size_t peak = StatusKiB(pid, "VmHWM");
    const size_t rss = StatusKiB(pid, "VmRSS");
    std::printf("[ hostile ] %s: server peak RSS %.1f MiB, RSS now %.1f MiB, canal.log %ju bytes\n",
                ::testing::UnitTest::GetInstance()->current_test_info()->name(), peak / 1024.0, rss / 1024.0,
                static_cast<uintmax_t>(fs::file_size(install_->server_log())));
    EXPECT_LT(peak, kPeakRssLimitKiB);
    EXPECT_LT(fs::file_size(install_->server_log()), kLogLimitBytes);
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(install_->logs_dir())) {
      if (e.is_regular_file()) {
        EXPECT_LT(e.file_size(), kLogLimitBytes) << e.path();
      }
    }
    EXPECT_EQ(ReadAll(install_->server_log()).find("is gone"), std::string::npos);
    Connector again(GoodOptions());
    Status s = ConnectAndSubscribe(again, 30s);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  static inline rlimit fds_{};
  std::unique_ptr<CanalInstall> install_;
  uint16_t port_ = 0;
};

TEST_F(HostileClients, HugeAuthFramesFromSixteenConnectionsCostNothing) {
  StartServer(TestPort("hostile", 1));
  std::atomic<uint64_t> closed{0};
  RunWithFlood([&](const std::atomic<bool>& stop) {
    const std::string chunk(1u << 20, 'A');
    std::vector<std::thread> senders;
    for (int t = 0; t < 16; ++t) {
      senders.emplace_back([&] {
        while (!stop) {
          const int fd = ConnectRaw(port_, true);
          if (fd < 0) continue;
          std::string hello;
          ReadSome(fd, 2s, &hello);  // the handshake
          // A 63 MiB CLIENTAUTHENTICATION (as Packet bytes it would be): the
          // header, then as much of the body as the server takes.
          bool open = SendAll(fd, FrameHeader(63u << 20));
          for (int mib = 0; open && mib < 63 && !stop; ++mib) open = SendAll(fd, chunk);
          if (!open) ++closed;
          ::close(fd);
        }
      });
    }
    for (std::thread& t : senders) t.join();
  });
  EXPECT_GT(closed.load(), 16u);  // the server closed them, again and again
  EXPECT_TRUE(WaitForText(install_->server_log(), "allowed before login", 5s));
}

// Opens `n` non-blocking connections to `port` in a child process (its own
// descriptor table: two children hold 20,000 sockets where one process may
// not), which keeps them idle until `release` is closed and then exits with
// how many it opened / 100 as its status (fits in 0..255).
pid_t IdleConnectionsChild(uint16_t port, int n, const int (&release)[2]) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: system calls only (the parent has threads). Keep nothing but the
  // release pipe's read end: an inherited descriptor of another thread's
  // (the write end of the writer's popen, half set up at the fork) would keep
  // that pipe open until this child exits, and the writer would wait forever.
  // Only the parent may hold the release pipe's write end, for the same reason.
  const unsigned keep = static_cast<unsigned>(release[0]);
  if (keep > 3) ::close_range(3, keep - 1, 0);
  ::close_range(keep + 1, ~0u, 0);
  int opened = 0;
  for (int i = 0; i < n; ++i) opened += ConnectRaw(port, false) >= 0;
  char b;
  while (::read(release[0], &b, 1) < 0 && errno == EINTR) {
  }
  ::_exit(opened / 100);
}

TEST_F(HostileClients, TwentyThousandIdleConnectionsNeitherStopTheServerNorExhaustIt) {
  if (fds_.rlim_cur < 10'100) GTEST_SKIP() << "needs 10100 file descriptors per process, has " << fds_.rlim_cur;
  StartServer(TestPort("hostile", 2));
  std::atomic<size_t> opened{0};
  std::atomic<size_t> peak_fds{0};
  RunWithFlood([&](const std::atomic<bool>& stop) {
    int release[2];
    ASSERT_EQ(::pipe2(release, O_CLOEXEC), 0);  // (no other child of ours inherits it)
    std::vector<pid_t> children;
    for (int c = 0; c < 2; ++c) children.push_back(IdleConnectionsChild(port_, 10'000, release));
    ::close(release[0]);
    // Left idle until the rows are through (the login deadline ends those the server took).
    while (!stop) {
      peak_fds = std::max(peak_fds.load(), OpenFds(install_->Pid()));
      std::this_thread::sleep_for(100ms);
    }
    ::close(release[1]);
    for (pid_t child : children) {
      int status = 0;
      if (child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status)) {
        opened += static_cast<size_t>(WEXITSTATUS(status)) * 100;
      }
    }
  });
  std::printf("[ hostile ] %zu connections opened; the server held at most %zu descriptors (limit %ju)\n",
              opened.load(), peak_fds.load(), static_cast<uintmax_t>(kServerFds));
  EXPECT_GE(opened.load(), 15'000u);
  EXPECT_LE(peak_fds.load(), kServerFds);
  const std::string log = ReadAll(install_->server_log());
  EXPECT_NE(log.find("refusing the connection"), std::string::npos);
  EXPECT_EQ(log.find("Too many open files"), std::string::npos);
  // Thousands refused and closed at the deadline: a few lines each way.
  size_t refusals = 0;
  for (size_t at = log.find("refusing the connection"); at != std::string::npos;
       at = log.find("refusing the connection", at + 1)) {
    ++refusals;
  }
  EXPECT_LE(refusals, 40u);
}

TEST_F(HostileClients, SilentSlowAndGarbageConnectionsAreClosedAndCostNothing) {
  StartServer(TestPort("hostile", 3));
  std::atomic<int> silent_closed{0}, slow_closed{0}, garbage_closed{0};
  constexpr int kSilent = 200, kSlow = 30, kGarbage = 200;
  RunWithFlood([&](const std::atomic<bool>& stop) {
    std::vector<int> silent, slow;
    for (int i = 0; i < kSilent; ++i) silent.push_back(ConnectRaw(port_, true));
    for (int i = 0; i < kSlow; ++i) slow.push_back(ConnectRaw(port_, true));
    std::thread garbage([&] {
      uint32_t x = 12345;
      for (int i = 0; i < kGarbage && !stop; ++i) {
        const int fd = ConnectRaw(port_, true);
        if (fd < 0) continue;
        std::string junk(512, '\0');
        for (char& c : junk) c = static_cast<char>((x = x * 1103515245 + 12345) >> 16);
        junk.replace(0, 4, FrameHeader(508));  // a frame under the limit holding junk
        SendAll(fd, junk);
        const auto until = Clock::now() + 5s;
        while (Clock::now() < until && ReadSome(fd, 100ms)) {
        }
        if (Clock::now() < until) ++garbage_closed;
        ::close(fd);
      }
    });
    // Slowloris: one byte a second on every slow connection, until each is closed.
    const auto until = Clock::now() + 15s;
    std::vector<bool> slow_open(kSlow, true), silent_open(kSilent, true);
    while (Clock::now() < until && (slow_closed < kSlow || silent_closed < kSilent)) {
      for (int i = 0; i < kSlow; ++i) {
        if (slow_open[i] && (!SendAll(slow[i], "x") || !ReadSome(slow[i], 0ms))) {
          slow_open[i] = false;
          ++slow_closed;
        }
      }
      for (int i = 0; i < kSilent; ++i) {
        if (silent_open[i] && !ReadSome(silent[i], 0ms)) {
          silent_open[i] = false;
          ++silent_closed;
        }
      }
      std::this_thread::sleep_for(1s);
    }
    garbage.join();
    for (int fd : silent) ::close(fd);
    for (int fd : slow) ::close(fd);
  });
  EXPECT_EQ(silent_closed.load(), kSilent);
  EXPECT_EQ(slow_closed.load(), kSlow);
  EXPECT_EQ(garbage_closed.load(), kGarbage);
  EXPECT_TRUE(WaitForText(install_->server_log(), "canal.connections.login.timeout", 5s));
}

}  // namespace
}  // namespace canal::testing
