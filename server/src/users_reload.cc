// ClientUsers (users_file.h): the table in force and its reloads.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "canal/server/users_file.h"

namespace canal::server {

ClientUsers::ClientUsers(ClientUsersOptions options, std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)), log_(std::move(logger)) {}

ClientUsers::~ClientUsers() { Stop(); }

Status ClientUsers::Create(ClientUsersOptions options, std::shared_ptr<spdlog::logger> logger,
                           std::shared_ptr<ClientUsers>* out) {
  std::shared_ptr<ClientUsers> users(new ClientUsers(std::move(options), std::move(logger)));
  // The stamp before the read: a change during the read is read again.
  users->seen_ = users->StatFile();
  CANAL_RETURN_IF_ERROR(users->Load(&users->table_));
  *out = std::move(users);
  return Status::OK();
}

ClientUsers::Stamp ClientUsers::StatFile() const {
  Stamp stamp;
  struct stat st {};
  if (options_.file.empty() || ::stat(options_.file.c_str(), &st) != 0) return stamp;
  stamp.exists = true;
  stamp.dev = static_cast<uint64_t>(st.st_dev);
  stamp.ino = static_cast<uint64_t>(st.st_ino);
  stamp.size = static_cast<uint64_t>(st.st_size);
  stamp.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  stamp.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
  return stamp;
}

Status ClientUsers::Load(std::shared_ptr<const ClientUserTable>* out) const {
  auto table = std::make_shared<ClientUserTable>();
  if (!options_.file.empty()) CANAL_RETURN_IF_ERROR(ReadUsersFile(options_.file, table.get()));
  if (!options_.legacy_user.empty()) {
    if (const ClientUser* twice = table->Find(options_.legacy_user)) {
      return Status::InvalidArgument(options_.file + ":" + std::to_string(twice->line) + ": user " + twice->name +
                                     " is canal.user in canal.properties too; keep one (canal.user is allowed "
                                     "every destination, a file user what its line says)");
    }
    ClientUser legacy;
    legacy.name = options_.legacy_user;
    legacy.password_stored = options_.legacy_password_stored;
    legacy.all_destinations = true;
    table->Add(std::move(legacy));
  }
  *out = std::move(table);
  return Status::OK();
}

std::shared_ptr<const ClientUserTable> ClientUsers::Snapshot() const {
  std::lock_guard lock(table_mu_);
  return table_;
}

ClientUsers::Check ClientUsers::CheckNow(std::string* message) {
  message->clear();
  if (options_.file.empty()) return Check::kUnchanged;
  const Stamp now = StatFile();
  if (now == seen_) return Check::kUnchanged;
  if (now.exists && options_.settle.count() > 0) {
    const int64_t age_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count() -
        now.mtime_ns;
    // Still being written, perhaps: next time (the stamp is not recorded).
    if (age_ns >= 0 && age_ns < std::chrono::nanoseconds(options_.settle).count()) return Check::kUnchanged;
  }
  seen_ = now;
  std::shared_ptr<const ClientUserTable> next;
  if (Status s = Load(&next); !s.ok()) {
    *message = std::string(s.message());
    return Check::kRefused;
  }
  const std::shared_ptr<const ClientUserTable> current = Snapshot();
  std::string changes = DescribeUserChanges(*current, *next);
  if (changes.empty()) return Check::kSame;
  {
    std::lock_guard lock(table_mu_);
    table_ = std::move(next);
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  *message = std::move(changes);
  return Check::kApplied;
}

void ClientUsers::Start() {
  if (options_.file.empty() || watcher_.joinable()) return;
  if (log_) {
    log_->info("client users: {} user(s) from {}{}; the file is checked for changes every {} ms", Snapshot()->size(),
               options_.file, options_.legacy_user.empty() ? "" : " and canal.user " + options_.legacy_user,
               options_.check_interval.count());
  }
  watcher_ = std::thread([this] { Watch(); });
}

void ClientUsers::Stop() {
  {
    std::lock_guard lock(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void ClientUsers::Watch() {
  std::unique_lock lock(watch_mu_);
  while (!watch_cv_.wait_for(lock, options_.check_interval, [this] { return stopping_; })) {
    lock.unlock();
    std::string message;
    const Check check = CheckNow(&message);
    if (log_) {
      switch (check) {
        case Check::kApplied:
          log_->info("client users: {} changed and is in force: {}", options_.file, message);
          break;
        case Check::kSame:
          log_->info("client users: {} changed; its users did not", options_.file);
          break;
        case Check::kRefused:
          // Once per change of the file (CheckNow): a bad file is not logged every second.
          log_->error("client users: a change of the users file is refused, the {} user(s) before it stay in "
                      "force: {}",
                      Snapshot()->size(), message);
          break;
        case Check::kUnchanged:
          break;
      }
    }
    lock.lock();
  }
}

}  // namespace canal::server
