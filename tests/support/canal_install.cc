#include "support/canal_install.h"

#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "support/mariadb_sandbox.h"

namespace canal::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

bool WaitForText(const fs::path& file, const std::string& text, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  do {
    if (ReadAll(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(100ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

std::string ShellQuoted(const fs::path& path) {
  std::string out = "'";
  for (char c : path.string()) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

// A live canal-server under `pid`, as bin/canal-common.sh checks it: after
// SIGKILL the server has been reparented, and a zombie waiting for its new
// parent to reap it is as good as gone; a reused pid is another program.
bool Alive(int pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string stat = ReadAll(proc + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return false;
  return ReadAll(proc + "/cmdline").find("canal-server") != std::string::npos;
}

}  // namespace

CanalInstall::CanalInstall(const std::string& name, uint16_t master_port)
    : root_(fs::path(CANAL_BINARY_DIR) / "test-sandboxes" / name), master_port_(master_port) {
  std::error_code ec;
  fs::remove_all(root_, ec);
  fs::create_directories(bin_dir());
  for (const char* script : {"startup.sh", "stop.sh", "canal-common.sh", "canal-admin.sh"}) {
    fs::copy_file(fs::path(CANAL_SOURCE_DIR) / "bin" / script, bin_dir() / script, ec);
  }
  fs::create_symlink(ServerProgram(), bin_dir() / "canal-server", ec);
}

CanalInstall::~CanalInstall() {
  if (!Running()) return;
  if (Stop() != 0) Kill9();
}

fs::path CanalInstall::ServerProgram() { return fs::path(CANAL_BINARY_DIR) / "bin" / "canal-server"; }

std::string CanalInstall::ServerProperties(uint16_t port, std::string_view extra) {
  return "canal.ip = 127.0.0.1\ncanal.port = " + std::to_string(port) +
         "\ncanal.destinations = example\ncanal.auto.scan = true\ncanal.auto.scan.interval = 1\n"
         // Off unless a test asks for it: tests run in parallel, and 11112 is one port.
         "canal.metrics.pull.port = 0\n" +
         std::string(extra);
}

void CanalInstall::WriteServerProperties(const std::string& text) const {
  WriteFile(conf_dir() / "canal.properties", text);
}

void CanalInstall::WriteInstance(const std::string& dest, const std::string& extra) const {
  WriteFile(conf_dir() / dest / "instance.properties",
            "canal.instance.master.address = 127.0.0.1:" + std::to_string(master_port_) +
                "\ncanal.instance.dbUsername = " + MariadbSandbox::kUser +
                "\ncanal.instance.dbPassword = " + MariadbSandbox::kPassword + "\n" + extra);
}

int CanalInstall::Startup(std::string* output) const {
  int rc = -1;
  std::string out = RunShell(ShellQuoted(bin_dir() / "startup.sh"), &rc);
  if (output != nullptr) *output = std::move(out);
  return rc;
}

int CanalInstall::Stop(std::string* output) const {
  int rc = -1;
  std::string out = RunShell(ShellQuoted(bin_dir() / "stop.sh"), &rc);
  if (output != nullptr) *output = std::move(out);
  return rc;
}

std::string CanalInstall::ServerCommand() const {
  return ShellQuoted(ServerProgram()) + " --conf " + ShellQuoted(conf_dir()) + " --logs " + ShellQuoted(logs_dir());
}

int CanalInstall::Pid() const {
  const std::string text = ReadAll(pid_file());
  return text.empty() ? 0 : std::atoi(text.c_str());
}

bool CanalInstall::Running() const { return Alive(Pid()); }

bool CanalInstall::Kill9() const {
  const int pid = Pid();
  if (!Alive(pid) || ::kill(pid, SIGKILL) != 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (Alive(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

bool CanalInstall::Freeze() const {
  const int pid = Pid();
  return Alive(pid) && ::kill(pid, SIGSTOP) == 0;
}

bool CanalInstall::Thaw() const {
  const int pid = Pid();
  return Alive(pid) && ::kill(pid, SIGCONT) == 0;
}

}  // namespace canal::testing
