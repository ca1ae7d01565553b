// CanalInstall: a throwaway install of canal-server, laid out as an operator
// has it, for tests that drive the real daemon:
//
//   <root>/bin/   startup.sh, stop.sh, canal-common.sh (copies of the repo's)
//                 and canal-server (a symlink to the built program)
//   <root>/conf/  canal.properties, <dest>/instance.properties, <dest>/meta.dat
//   <root>/logs/  canal/canal.log, <dest>/<dest>.log
//
//   CanalInstall install("my-test", sandbox->port());   // wipes <build>/test-sandboxes/my-test
//   install.WriteServerProperties(CanalInstall::ServerProperties(13481));
//   install.WriteInstance("example", "canal.instance.filter.regex = shop\\\\..*\n");
//   ASSERT_EQ(install.Startup(&out), 0) << out;
//   ...
//   install.Kill9();            // a crash: cursors only as far as they were flushed
//   install.Stop(&out);         // bin/stop.sh
//
// The destructor leaves no server behind (stop.sh, then SIGKILL), and keeps
// the folder for post-mortems.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace canal::testing {

class CanalInstall {
 public:
  // Creates the layout under <build>/test-sandboxes/<name>, wiping an old one.
  // `master_port` is the MariaDB that WriteInstance points destinations at.
  CanalInstall(const std::string& name, uint16_t master_port);
  ~CanalInstall();
  CanalInstall(const CanalInstall&) = delete;
  CanalInstall& operator=(const CanalInstall&) = delete;

  // The built program (<build>/bin/canal-server); check it exists before use.
  static std::filesystem::path ServerProgram();

  // A canal.properties for tests: 127.0.0.1:`port` (0 = any free port),
  // destination "example", auto scan every second, the metrics endpoint off
  // (canal.metrics.pull.port = 0); `extra` lines are appended
  // (a later line for a key wins).
  static std::string ServerProperties(uint16_t port, std::string_view extra = "");

  // Writes conf/canal.properties as given.
  void WriteServerProperties(const std::string& text) const;
  // Writes conf/<dest>/instance.properties: the master address and the
  // sandbox's replication user on lines 1-3, then `extra`.
  void WriteInstance(const std::string& dest, const std::string& extra = "") const;

  // bin/startup.sh and bin/stop.sh: their exit code; *output gets what they printed.
  int Startup(std::string* output = nullptr) const;
  int Stop(std::string* output = nullptr) const;
  // SIGKILLs the pid in bin/canal.pid and waits until it is gone (the pid file
  // stays, as after a crash). False when no server was running or it outlived 10 s.
  bool Kill9() const;
  // A shell command running canal-server in the foreground on this install's
  // conf/ and logs/ (for exit codes and signals without the scripts).
  std::string ServerCommand() const;
  // The pid in bin/canal.pid, or 0.
  int Pid() const;
  // A canal-server runs under the pid in bin/canal.pid.
  bool Running() const;
  // SIGSTOP / SIGCONT of the pid in bin/canal.pid: the process stops running
  // but keeps its sockets, as in a long GC pause, a stalled VM or a network
  // partition (its peers' connections hang instead of closing). False when no
  // server runs. Thaw() a frozen server before Stop(): it cannot act on
  // SIGTERM while stopped.
  bool Freeze() const;
  bool Thaw() const;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path bin_dir() const { return root_ / "bin"; }
  std::filesystem::path conf_dir() const { return root_ / "conf"; }
  std::filesystem::path pid_file() const { return root_ / "bin" / "canal.pid"; }
  std::filesystem::path logs_dir() const { return root_ / "logs"; }
  std::filesystem::path server_log() const { return root_ / "logs" / "canal" / "canal.log"; }
  std::filesystem::path instance_log(const std::string& dest) const { return root_ / "logs" / dest / (dest + ".log"); }
  std::filesystem::path meta_file(const std::string& dest) const { return root_ / "conf" / dest / "meta.dat"; }
  uint16_t master_port() const { return master_port_; }

 private:
  std::filesystem::path root_;
  uint16_t master_port_;
};

// The whole file, or "" when it cannot be read.
std::string ReadAll(const std::filesystem::path& path);
// Creates the parent folders and replaces the file.
void WriteFile(const std::filesystem::path& path, const std::string& text);
// Polls `file` until it contains `text` or `limit` passes.
bool WaitForText(const std::filesystem::path& file, const std::string& text, std::chrono::milliseconds limit);
// `path` in single quotes for a shell command (paths here hold no quote).
std::string ShellQuoted(const std::filesystem::path& path);

}  // namespace canal::testing
