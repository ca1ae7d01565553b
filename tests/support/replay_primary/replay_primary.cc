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
  replay::Shared& sh = *shared_;
  sh.options = options_;
  // `variables` spoke for these before they were options; it still does.
  const auto& vars = options_.variables;
  const auto var = [&vars](const char* name) { return vars.find(name); };
  sh.read_only = options_.read_only;
  if (auto it = var("read_only"); it != vars.end()) {
    sh.read_only = it->second == "1" || it->second == "ON" || it->second == "on" || it->second == "TRUE";
  }
  sh.gtid_executed = options_.gtid_executed;
  if (auto it = var("gtid_executed"); it != vars.end()) sh.gtid_executed = it->second;
  sh.gtid_purged = options_.gtid_purged;
  if (auto it = var("gtid_purged"); it != vars.end()) sh.gtid_purged = it->second;
  sh.replicating_from = options_.replicating_from;
}

ReplayPrimary::~ReplayPrimary() {
  Stop();
  release_port_.store(true);
  if (accept_thread_.joinable()) accept_thread_.join();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
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
  std::string sid, error;
  if (!replay::ParseUuid(options_.server_uuid, &sid)) {
    return Status::InvalidArgument("replay primary: server_uuid '" + options_.server_uuid + "' is not a UUID");
  }
  {
    std::lock_guard<std::mutex> lock(sh.mu);
    const std::pair<const char*, const std::string*> sets[] = {{"gtid_executed", &sh.gtid_executed},
                                                               {"gtid_purged", &sh.gtid_purged}};
    for (const auto& [name, text] : sets) {
      replay::GtidSet set;
      if (!replay::GtidSet::Parse(*text, &set, &error)) {
        return Status::InvalidArgument(std::string("replay primary: ") + name + ": " + error);
      }
    }
  }
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
  while (!release_port_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    // Under threads_mu_, as Stop sets `stop`: a client is either served and then cut off by
    // Stop, or turned away here, never served by a stopped primary.
    std::lock_guard<std::mutex> lock(threads_mu_);
    if (sh->stop.load()) {
      ::close(fd);  // stopped: a dead server's port, still ours
      continue;
    }
    {
      std::lock_guard<std::mutex> fds(sh->mu);
      sh->open_fds.push_back(fd);
    }
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
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    sh.stop.store(true);
  }
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

void ReplayPrimary::SetReadOnly(bool on) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->read_only = on;
}

void ReplayPrimary::SetReplicatingFrom(std::string host_port) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->replicating_from = std::move(host_port);
}

namespace {

Status SetGtidText(replay::Shared* sh, std::string* field, const char* name, std::string text) {
  replay::GtidSet set;
  std::string error;
  if (!replay::GtidSet::Parse(text, &set, &error)) {
    return Status::InvalidArgument(std::string("replay primary: ") + name + ": " + error);
  }
  std::lock_guard<std::mutex> lock(sh->mu);
  *field = std::move(text);
  return Status::OK();
}

}  // namespace

Status ReplayPrimary::SetGtidExecuted(std::string gtid_set) {
  return SetGtidText(shared_.get(), &shared_->gtid_executed, "gtid_executed", std::move(gtid_set));
}

Status ReplayPrimary::SetGtidPurged(std::string gtid_set) {
  return SetGtidText(shared_.get(), &shared_->gtid_purged, "gtid_purged", std::move(gtid_set));
}

}  // namespace canal::testing
