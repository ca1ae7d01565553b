// The users file's format and the per-user checks (users_file.h).
#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <set>
#include <type_traits>

#include "canal/proto/password_scramble.h"
#include "canal/server/client_text.h"
#include "canal/server/users_file.h"

namespace canal::server {

namespace {

constexpr size_t kMaxUserNameBytes = 128;
constexpr const char* kKeys = "password, destinations, clients";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Visible ASCII without '=' (which would make a name look like a key) and '#'.
bool ValidUserName(std::string_view name) {
  if (name.empty() || name.size() > kMaxUserNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 127 && c != '=' && c != '#'; });
}

// The rule of canal.destinations (config.cc): a destination names a folder.
bool ValidDestinationName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

bool IsHex40(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string_view> SplitComma(std::string_view s) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t comma = s.find(',');
    parts.push_back(s.substr(0, comma));
    if (comma == std::string_view::npos) return parts;
    s.remove_prefix(comma + 1);
  }
}

// Operators' text in a message: bounded and escaped like a client's.
std::string Quoted(std::string_view s) { return "'" + ClientText(s, kClientTextMax, false) + "'"; }

template <typename T>
std::string JoinList(const std::vector<T>& items) {
  std::string out;
  for (const T& item : items) {
    if (!out.empty()) out += ", ";
    if constexpr (std::is_same_v<T, std::string>) {
      out += item;
    } else {
      out += std::to_string(item);
    }
  }
  return out;
}

class LineParser {
 public:
  LineParser(const std::string& file_name, int line) : where_(file_name + ":" + std::to_string(line) + ": ") {}

  Status Parse(const std::vector<std::string_view>& tokens, ClientUser* user) const {
    const std::string_view name = tokens[0];
    if (name.find('=') != std::string_view::npos) {
      return Bad("a line starts with the user name, not " + Quoted(name) +
                 " (e.g. alice password=<40 hex> destinations=orders)");
    }
    if (!ValidUserName(name)) {
      return Bad("user name " + Quoted(name) + " is not 1-" + std::to_string(kMaxUserNameBytes) +
                 " visible ASCII characters without '=' or '#'");
    }
    user->name = std::string(name);
    std::set<std::string_view> seen;
    for (size_t i = 1; i < tokens.size(); ++i) {
      const std::string_view token = tokens[i];
      const size_t eq = token.find('=');
      if (eq == std::string_view::npos) {
        return Bad("expected key=value after the user name, found " + Quoted(token) +
                   " (no spaces around '='; keys: " + kKeys + ")");
      }
      const std::string_view key = token.substr(0, eq);
      const std::string_view value = token.substr(eq + 1);
      if (!seen.insert(key).second) return Bad("key " + Quoted(key) + " is given twice for user " + user->name);
      if (key == "password") {
        CANAL_RETURN_IF_ERROR(Password(value, user));
      } else if (key == "destinations") {
        CANAL_RETURN_IF_ERROR(Destinations(value, user));
      } else if (key == "clients") {
        CANAL_RETURN_IF_ERROR(Clients(value, user));
      } else {
        return Bad("unknown key " + Quoted(key) + " for user " + user->name + " (keys: " + kKeys + ")");
      }
    }
    if (!seen.contains("password")) {
      return Bad("user " + user->name + " has no password=<40 hex digits of SHA1(SHA1(password))>");
    }
    if (!seen.contains("destinations")) {
      return Bad("user " + user->name + " has no destinations= (a comma-separated list, or * for every destination)");
    }
    return Status::OK();
  }

  Status Bad(const std::string& what) const { return Status::InvalidArgument(where_ + what); }

 private:
  Status Password(std::string_view value, ClientUser* user) const {
    if (!IsHex40(value)) {
      return Bad("the password of user " + user->name +
                 " is not a stored password: 40 hex digits of SHA1(SHA1(password)), e.g. printf %s 'PASSWORD' | "
                 "openssl sha1 -binary | openssl sha1 (see docs/configuration.md)");
    }
    user->password_stored = Lower(value);
    return Status::OK();
  }

  Status Destinations(std::string_view value, ClientUser* user) const {
    if (value.empty()) {
      return Bad("user " + user->name + " has an empty destination list (name them, or * for every destination)");
    }
    if (value == "*") {
      user->all_destinations = true;
      return Status::OK();
    }
    for (std::string_view d : SplitComma(value)) {
      if (d == "*") return Bad("* stands alone in destinations= (user " + user->name + ")");
      if (!ValidDestinationName(d)) {
        return Bad("destination " + Quoted(d) + " of user " + user->name +
                   " is not a destination name (letters, digits, '_', '-', '.'; lists have no spaces)");
      }
      user->destinations.emplace_back(d);
    }
    std::sort(user->destinations.begin(), user->destinations.end());
    user->destinations.erase(std::unique(user->destinations.begin(), user->destinations.end()),
                             user->destinations.end());
    return Status::OK();
  }

  Status Clients(std::string_view value, ClientUser* user) const {
    if (value.empty()) return Bad("user " + user->name + " has an empty client list (name them, or * for any)");
    if (value == "*") {
      user->all_clients = true;
      return Status::OK();
    }
    user->all_clients = false;
    for (std::string_view c : SplitComma(value)) {
      int id = 0;
      auto [ptr, ec] = std::from_chars(c.data(), c.data() + c.size(), id);
      if (c.empty() || ec != std::errc() || ptr != c.data() + c.size() || id < std::numeric_limits<int16_t>::min() ||
          id > std::numeric_limits<int16_t>::max()) {
        return Bad("client id " + Quoted(c) + " of user " + user->name +
                   " is not a number between -32768 and 32767 (Canal's client ids)");
      }
      user->clients.push_back(static_cast<int16_t>(id));
    }
    std::sort(user->clients.begin(), user->clients.end());
    user->clients.erase(std::unique(user->clients.begin(), user->clients.end()), user->clients.end());
    return Status::OK();
  }

  const std::string where_;
};

}  // namespace

bool ClientUser::MayRead(std::string_view destination) const {
  return all_destinations || std::binary_search(destinations.begin(), destinations.end(), destination);
}

bool ClientUser::MayUseClient(int16_t client_id) const {
  return all_clients || std::binary_search(clients.begin(), clients.end(), client_id);
}

bool ClientUser::PasswordMatches(std::string_view seed, std::string_view token_hex) const {
  if (password_stored.empty()) return true;
  return !token_hex.empty() && proto::VerifyScrambledPassword(seed, token_hex, password_stored);
}

std::string ClientUser::DestinationsText() const {
  return all_destinations ? std::string("every destination") : JoinList(destinations);
}

std::string ClientUser::ClientsText() const { return all_clients ? std::string("any client id") : JoinList(clients); }

Status ParseUsersFile(std::string_view text, const std::string& file_name, ClientUserTable* out) {
  ClientUserTable table;
  std::map<std::string, int, std::less<>> lines;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    std::vector<std::string_view> tokens;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && IsSpace(line[i])) ++i;
      if (i >= line.size() || line[i] == '#') break;  // the rest is a comment
      const size_t start = i;
      while (i < line.size() && !IsSpace(line[i])) ++i;
      tokens.push_back(line.substr(start, i - start));
    }
    if (tokens.empty()) continue;
    const LineParser parser(file_name, line_no);
    ClientUser user;
    user.line = line_no;
    CANAL_RETURN_IF_ERROR(parser.Parse(tokens, &user));
    if (auto it = lines.find(user.name); it != lines.end()) {
      return parser.Bad("user " + user.name + " is listed twice (first at line " + std::to_string(it->second) + ")");
    }
    lines.emplace(user.name, line_no);
    table.Add(std::move(user));
  }
  *out = std::move(table);
  return Status::OK();
}

Status ReadUsersFile(const std::string& path, ClientUserTable* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument(path + ":0: cannot be read (missing, or no permission)");
  std::string text(kUsersFileMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::InvalidArgument(path + ":0: read error");
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kUsersFileMaxBytes) {
    return Status::InvalidArgument(path + ":0: larger than " + std::to_string(kUsersFileMaxBytes) +
                                   " bytes; a users file is a few lines per user");
  }
  return ParseUsersFile(text, path, out);
}

std::string DescribeUserChanges(const ClientUserTable& before, const ClientUserTable& after) {
  std::string added, removed, changed;
  const auto append = [](std::string* list, const std::string& item) { *list += (list->empty() ? "" : ", ") + item; };
  for (const auto& [name, user] : after.users()) {
    const ClientUser* old = before.Find(name);
    if (old == nullptr) {
      append(&added, name + " (destinations: " + user.DestinationsText() + "; clients: " + user.ClientsText() + ")");
      continue;
    }
    std::string what;
    if (old->password_stored != user.password_stored) what = "password";
    if (old->all_destinations != user.all_destinations || old->destinations != user.destinations) {
      what += (what.empty() ? "" : "; ") + std::string("destinations: ") + old->DestinationsText() + " -> " +
              user.DestinationsText();
    }
    if (old->all_clients != user.all_clients || old->clients != user.clients) {
      what += (what.empty() ? "" : "; ") + std::string("clients: ") + old->ClientsText() + " -> " + user.ClientsText();
    }
    if (!what.empty()) append(&changed, name + " (" + what + ")");
  }
  for (const auto& [name, user] : before.users()) {
    if (after.Find(name) == nullptr) append(&removed, name);
  }
  std::string out;
  if (!added.empty()) out += "added " + added;
  if (!removed.empty()) out += (out.empty() ? "" : "; ") + std::string("removed ") + removed;
  if (!changed.empty()) out += (out.empty() ? "" : "; ") + std::string("changed ") + changed;
  return out;
}

}  // namespace canal::server
