// Client users (docs/configuration.md, "Client users"): who may log in to
// the client port with which password, and which destinations and client ids
// each may read.
//
// The users file (canal.users.file), one user per line, `#` starts a comment:
//
//   alice  password=<40 hex: SHA1(SHA1(pw))>  destinations=orders,users  clients=1001,1002
//   bob    password=<...>                     destinations=*
//
// `destinations` is required (`*`: every destination); `clients` is optional
// (`*`, the default: any client id). canal.user / canal.passwd, when set, add
// one more user allowed everything; a name in both is refused.
//
// ClientUserTable is immutable once built; ClientUsers holds the current one
// and replaces it when the file changes (a watcher thread polls the file's
// stamp). Sessions read generation() (one relaxed atomic load) on each request
// and take a new Snapshot() only when it moved, so a change reaches sessions
// already logged in at their next request.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "canal/common/status.h"

namespace spdlog {
class logger;
}

namespace canal::server {

// Larger users files are refused unread.
inline constexpr size_t kUsersFileMaxBytes = size_t{1} << 20;

struct ClientUser {
  std::string name;
  std::string password_stored;  // hex SHA1(SHA1(pw)); "" = any password (canal.user without canal.passwd)
  bool all_destinations = false;
  std::vector<std::string> destinations;  // sorted, when !all_destinations
  bool all_clients = true;
  std::vector<int16_t> clients;  // sorted, when !all_clients
  int line = 0;                  // in the users file; 0: canal.user

  bool MayRead(std::string_view destination) const;
  bool MayUseClient(int16_t client_id) const;
  // Whether this password (the client's scrambled token for `seed`) is the user's.
  bool PasswordMatches(std::string_view seed, std::string_view token_hex) const;
  // "orders, users" or "every destination"; "1001, 1002" or "any client id".
  std::string DestinationsText() const;
  std::string ClientsText() const;
  bool SameAccess(const ClientUser& o) const {
    return all_destinations == o.all_destinations && destinations == o.destinations &&
           all_clients == o.all_clients && clients == o.clients;
  }
};

class ClientUserTable {
 public:
  const ClientUser* Find(std::string_view name) const {
    auto it = users_.find(name);
    return it == users_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, ClientUser, std::less<>>& users() const { return users_; }
  size_t size() const { return users_.size(); }
  // Adds `user`; false when the name is taken.
  bool Add(ClientUser user) { return users_.emplace(user.name, std::move(user)).second; }

 private:
  std::map<std::string, ClientUser, std::less<>> users_;
};

// Parses a users file's text; `file_name` names it in errors, which read
// "<file_name>:<line>: <what is wrong>" (InvalidArgument).
Status ParseUsersFile(std::string_view text, const std::string& file_name, ClientUserTable* out);
// Reads and parses `path` (at most kUsersFileMaxBytes).
Status ReadUsersFile(const std::string& path, ClientUserTable* out);

// What changed between two tables, for the log (never a password).
std::string DescribeUserChanges(const ClientUserTable& before, const ClientUserTable& after);

struct ClientUsersOptions {
  std::string file;  // absolute path of canal.users.file; "" = canal.user alone
  // canal.user / canal.passwd: one user allowed everything ("" = none).
  std::string legacy_user;
  std::string legacy_password_stored;
  std::chrono::milliseconds check_interval{1000};  // canal.users.reload.interval
  // A changed file is read once its mtime is this old, so that a write in
  // two steps (truncate, then write) is not read half done.
  std::chrono::milliseconds settle{200};
};

class ClientUsers {
 public:
  // Reads the file (a bad or unreadable one is refused, naming file and
  // line). Does not start watching: Start().
  static Status Create(ClientUsersOptions options, std::shared_ptr<spdlog::logger> logger,
                       std::shared_ptr<ClientUsers>* out);
  ~ClientUsers();
  ClientUsers(const ClientUsers&) = delete;
  ClientUsers& operator=(const ClientUsers&) = delete;

  // The watcher thread: CheckNow() every check_interval, logging what it did.
  void Start();
  void Stop();

  // Moves on every applied change; cheap enough for each request.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  std::shared_ptr<const ClientUserTable> Snapshot() const;

  enum class Check {
    kUnchanged,  // same stamp as last time (or a change still settling)
    kApplied,    // a new table is in force; *message says what changed
    kSame,       // the file changed but its users did not
    kRefused,    // the file changed and was refused (the old table stays); *message names file:line
  };
  // Looks at the file once (stat; read and parse only when its stamp moved).
  // A refused file is reported once per stamp: the next kRefused comes only
  // after the file changes again.
  Check CheckNow(std::string* message);

  const ClientUsersOptions& options() const { return options_; }

 private:
  struct Stamp {
    bool exists = false;
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  ClientUsers(ClientUsersOptions options, std::shared_ptr<spdlog::logger> logger);
  Stamp StatFile() const;
  // The file's table with canal.user added; errors name the file and line.
  Status Load(std::shared_ptr<const ClientUserTable>* out) const;
  void Watch();

  const ClientUsersOptions options_;
  const std::shared_ptr<spdlog::logger> log_;

  mutable std::mutex table_mu_;
  std::shared_ptr<const ClientUserTable> table_;  // guarded by table_mu_
  std::atomic<uint64_t> generation_{1};

  Stamp seen_;  // CheckNow's (one caller at a time: the watcher, or a test)

  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  bool stopping_ = false;  // guarded by watch_mu_
  std::thread watcher_;
};

}  // namespace canal::server
