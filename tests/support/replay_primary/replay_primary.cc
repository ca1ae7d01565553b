#include "support/replay_primary/replay_primary.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/replay_primary/replay_internal.h"

namespace canal::testing {

ReplayPrimary::ReplayPrimary(ReplayPrimaryOptions options)
    : options_(std::move(options)), shared_(std::make_shared<replay::Shared>()) {
  shared_->options = options_;
}

ReplayPrimary::~ReplayPrimary() {
  Stop();
  if (own_work_dir_) {
    std::error_code ignored;
    std::filesystem::remove_all(options_.work_dir, ignored);
  }
}

namespace {

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IOError("replay primary: cannot write '" + path + "'");
  return Status::OK();
}

}  // namespace

Status ReplayPrimary::Start() {
  replay::Shared& sh = *shared_;
  if (options_.account_plugin != "mysql_native_password" && options_.account_plugin != "caching_sha2_password") {
    return Status::InvalidArgument("replay primary: account_plugin '" + options_.account_plugin +
                                   "' is not mysql_native_password or caching_sha2_password");
  }
  if (options_.binlog_files.empty()) return Status::InvalidArgument("replay primary: no binlog files to serve");
  for (const std::string& path : options_.binlog_files) {
    replay::BinlogFile f;
    CANAL_RETURN_IF_ERROR(replay::LoadBinlogFile(path, &f));
    sh.files.push_back(std::move(f));
  }
  if (options_.sha2_cached) sh.sha2_cache.insert(options_.user);
  CANAL_RETURN_IF_ERROR(replay::MakeKeyMaterial(&sh.keys));

  if (options_.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/replay-primary-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::IOError("replay primary: mkdtemp " + pattern + ": " + std::strerror(errno));
    }
    options_.work_dir = pattern;
    own_work_dir_ = true;
  }
  cert_file_ = options_.work_dir + "/server-cert.pem";
  public_key_file_ = options_.work_dir + "/public_key.pem";
  CANAL_RETURN_IF_ERROR(WriteFile(cert_file_, sh.keys.cert_pem));
  CANAL_RETURN_IF_ERROR(WriteFile(public_key_file_, sh.keys.public_pem));

  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::IOError(std::string("replay primary: socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  for (uint32_t port = options_.port_first; port <= options_.port_last; ++port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(listen_fd_, 16) == 0) {
      port_ = static_cast<uint16_t>(port);
      break;
    }
  }
  if (port_ == 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    return Status::IOError("replay primary: no free port in " + std::to_string(options_.port_first) + "-" +
                           std::to_string(options_.port_last));
  }
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return Status::OK();
}

void ReplayPrimary::AcceptLoop() {
  replay::Shared* sh = shared_.get();
  while (!sh->stop.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    {
      std::lock_guard<std::mutex> lock(sh->mu);
      sh->open_fds.push_back(fd);
    }
    std::lock_guard<std::mutex> lock(threads_mu_);
    session_threads_.emplace_back([sh, fd] {
      replay::ServeClient(sh, fd);
      std::lock_guard<std::mutex> lock(sh->mu);
      std::erase(sh->open_fds, fd);
      ::close(fd);
    });
  }
}

void ReplayPrimary::Stop() {
  replay::Shared& sh = *shared_;
  sh.stop.store(true);
  if (accept_thread_.joinable()) accept_thread_.join();
  {
    // Unblocks sessions stuck in a write to a client that stopped reading.
    std::lock_guard<std::mutex> lock(sh.mu);
    for (int fd : sh.open_fds) ::shutdown(fd, SHUT_RDWR);
  }
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    threads.swap(session_threads_);
  }
  for (std::thread& t : threads) t.join();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

ReplayPrimaryStats ReplayPrimary::stats() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->stats;
}

void ReplayPrimary::ArmDropMidEvent(uint64_t nth_event) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->drop_at = static_cast<int64_t>(nth_event);
}

void ReplayPrimary::ArmCorruptChecksum(uint64_t nth_event) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->corrupt_at = static_cast<int64_t>(nth_event);
}

void ReplayPrimary::SetUnknownAuthPlugin(bool on) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->unknown_plugin = on;
}

void ReplayPrimary::SetBinlogPurged(bool on) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->purged = on;
}

void ReplayPrimary::FlushAuthCache() {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->sha2_cache.clear();
}

}  // namespace canal::testing
