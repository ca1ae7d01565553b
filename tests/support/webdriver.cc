#include "support/webdriver.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/loopback_http.h"
#include "support/wait.h"

extern char** environ;

namespace canal::testing {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The key W3C WebDriver names an element reference by.
constexpr const char* kElementKey = "element-6066-11e4-a52e-4f735466cecf";

bool Executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

struct Reply {
  int status = 0;  // 0: no answer
  std::string body;
};

// Decodes a chunked body; false when it is cut short.
bool Unchunk(std::string_view in, std::string* out) {
  out->clear();
  for (;;) {
    const size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) return false;
    const size_t size = std::strtoul(std::string(in.substr(0, eol)).c_str(), nullptr, 16);
    in.remove_prefix(eol + 2);
    if (size == 0) return true;
    if (in.size() < size + 2) return false;
    out->append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

// One HTTP/1.1 exchange with chromedriver on 127.0.0.1 (Connection: close).
// Reads until the body is complete (Content-Length or chunked) or the peer
// closes, at most `limit`.
Reply Exchange(uint16_t port, const std::string& method, const std::string& path, const std::string& body,
               std::chrono::milliseconds limit) {
  Reply r;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return r;
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nConnection: close\r\nAccept: application/json\r\n";
  if (method == "POST") {
    req += "Content-Type: application/json; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  std::string_view rest = req;
  while (!rest.empty()) {
    const ssize_t n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      return r;
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  std::string raw;
  char buf[16384];
  const auto deadline = std::chrono::steady_clock::now() + limit;
  size_t header_end = std::string::npos;
  long long length = -1;
  bool chunked = false;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
    if (header_end == std::string::npos && (header_end = raw.find("\r\n\r\n")) != std::string::npos) {
      std::string headers = raw.substr(0, header_end);
      for (char& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (size_t at = headers.find("\r\ncontent-length:"); at != std::string::npos) {
        length = std::atoll(headers.c_str() + at + 17);
      }
      chunked = headers.find("\r\ntransfer-encoding: chunked") != std::string::npos;
    }
    if (header_end == std::string::npos) continue;
    const std::string_view got = std::string_view(raw).substr(header_end + 4);
    if (length >= 0 && got.size() >= static_cast<size_t>(length)) break;
    if (chunked && got.find("\r\n0\r\n\r\n") != std::string_view::npos) break;
    if (chunked && got.starts_with("0\r\n\r\n")) break;
  }
  ::close(fd);
  if (!raw.starts_with("HTTP/1.") || header_end == std::string::npos) return r;
  r.status = std::atoi(raw.c_str() + raw.find(' ') + 1);
  r.body = raw.substr(header_end + 4);
  if (chunked) {
    std::string plain;
    if (!Unchunk(r.body, &plain)) return Reply{};
    r.body = std::move(plain);
  } else if (length >= 0) {
    r.body.resize(std::min(r.body.size(), static_cast<size_t>(length)));
  }
  return r;
}

bool Exited(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

// The command line of a process, NULs as spaces ("" when it is gone).
std::string CommandLine(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

}  // namespace

std::string FindChromium(ChromiumPaths* paths) {
  if (const char* c = std::getenv("CANAL_TEST_CHROMIUM"); c != nullptr && *c != '\0') paths->chromium = c;
  if (const char* d = std::getenv("CANAL_TEST_CHROMEDRIVER"); d != nullptr && *d != '\0') paths->chromedriver = d;
  std::string missing;
  if (!Executable(paths->chromium)) missing += " " + paths->chromium;
  if (!Executable(paths->chromedriver)) missing += " " + paths->chromedriver;
  if (missing.empty()) return "";
  return "no headless browser here (missing:" + missing +
         "); install the Debian packages chromium and chromium-driver (scripts/install-deps.sh), or set "
         "CANAL_TEST_CHROMIUM and CANAL_TEST_CHROMEDRIVER";
}

Status WebDriver::Open(const ChromiumPaths& paths, uint16_t port, const std::string& log_file,
                       std::unique_ptr<WebDriver>* out) {
  std::unique_ptr<WebDriver> d(new WebDriver());
  d->port_ = port;
  std::string tmpl = (std::filesystem::temp_directory_path() / "canal-chromium-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return Status::IOError("mkdtemp " + tmpl + ": " + std::strerror(errno));
  d->profile_dir_ = tmpl;

  // chromedriver in a process group of its own, its output to the log.
  const std::string port_arg = "--port=" + std::to_string(port);
  std::vector<std::string> args = {paths.chromedriver, port_arg, "--allowed-ips=127.0.0.1"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, paths.chromedriver.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::IOError("spawn " + paths.chromedriver + ": " + std::strerror(rc));
  d->driver_pid_ = pid;

  // Ready: GET /status says so (the port may be taken: then it exits).
  json ready;
  const bool up = WaitFor(
      [&] {
        if (Exited(d->driver_pid_)) return true;
        const Reply r = Exchange(port, "GET", "/status", "", 2s);
        if (r.status != 200) return false;
        ready = json::parse(r.body, nullptr, false);
        return ready.is_object() && ready["value"].is_object() && ready["value"].value("ready", false);
      },
      15s, 50ms);
  if (!up || Exited(d->driver_pid_)) {
    d->driver_pid_ = Exited(d->driver_pid_) ? -1 : d->driver_pid_;
    return Status::IOError("chromedriver on port " + std::to_string(port) + " did not become ready (see " + log_file +
                           ")");
  }

  json chrome = {{"binary", paths.chromium},
                 {"args", json::array({"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                       "--no-first-run", "--window-size=1280,900",
                                       "--user-data-dir=" + d->profile_dir_})}};
  json match = {{"browserName", "chrome"},
                // A confirm() must wait for the test to accept or dismiss it.
                {"unhandledPromptBehavior", "ignore"},
                {"goog:chromeOptions", std::move(chrome)}};
  const json caps = {{"capabilities", {{"alwaysMatch", std::move(match)}}}};
  json value;
  CANAL_RETURN_IF_ERROR(d->Command("POST", "/session", caps, &value, /*global=*/true));
  d->session_ = value.is_object() ? value.value("sessionId", std::string()) : std::string();
  if (d->session_.empty()) return Status::IOError("chromedriver: POST /session gave no session id: " + value.dump());
  *out = std::move(d);
  return Status::OK();
}

WebDriver::~WebDriver() { Close().PermitUncheckedError(); }

Status WebDriver::Close() {
  std::string problems;
  if (!session_.empty()) {
    json ignored;
    const Status s = Command("DELETE", "", json(nullptr), &ignored);
    if (!s.ok()) problems += " " + s.ToString() + ";";
    session_.clear();
  }
  if (driver_pid_ > 0) {
    ::kill(driver_pid_, SIGTERM);
    if (!WaitFor([&] { return Exited(driver_pid_); }, 10s)) {
      ::kill(-driver_pid_, SIGKILL);  // its own process group: chromedriver and what it started
      WaitFor([&] { return Exited(driver_pid_); }, 5s);
      problems += " chromedriver ignored SIGTERM and was killed;";
    }
    driver_pid_ = -1;
  }
  if (!profile_dir_.empty()) {
    // Chromium quits with the session; wait for its last helper processes.
    if (!WaitFor([&] { return BrowserPids().empty(); }, 10s)) {
      for (pid_t pid : BrowserPids()) ::kill(pid, SIGKILL);
      problems += " Chromium processes outlived the session and were killed;";
    }
    std::error_code ec;
    std::filesystem::remove_all(profile_dir_, ec);
    profile_dir_.clear();
  }
  if (problems.empty()) return Status::OK();
  return Status::IOError("closing the browser:" + problems);
}

std::vector<pid_t> WebDriver::BrowserPids() const {
  std::vector<pid_t> pids;
  if (profile_dir_.empty()) return pids;
  const std::string mark = "--user-data-dir=" + profile_dir_;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (CommandLine(static_cast<pid_t>(pid)).find(mark) != std::string::npos) pids.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return pids;
}

Status WebDriver::Command(const std::string& method, const std::string& path, const json& body, json* value,
                          bool global) {
  const std::string target = global ? path : "/session/" + session_ + path;
  const std::string what = "webdriver " + method + " " + target;
  if (!global && session_.empty()) return Status::InvalidArgument(what + ": no session");
  const Reply r =
      Exchange(port_, method, target, body.is_null() ? std::string() : body.dump(-1, ' ', false, json::error_handler_t::replace), 60s);
  if (r.status == 0) return Status::IOError(what + ": no answer from chromedriver");
  const json j = json::parse(r.body, nullptr, false);
  if (!j.is_object()) return Status::IOError(what + ": not JSON (" + std::to_string(r.status) + "): " + r.body);
  *value = j.contains("value") ? j["value"] : json(nullptr);
  if (r.status != 200) {
    const std::string error = value->is_object() ? value->value("error", std::string("?")) : std::string("?");
    const std::string message = value->is_object() ? value->value("message", std::string()) : std::string();
    const std::string text = what + ": " + std::to_string(r.status) + " " + error + ": " + message.substr(0, 500);
    if (error == "no such element" || error == "no such alert") return Status::NotFound(text);
    return Status::IOError(text);
  }
  return Status::OK();
}

Status WebDriver::Navigate(const std::string& url) {
  json v;
  return Command("POST", "/url", json{{"url", url}}, &v);
}

Status WebDriver::Find(const std::string& css, std::string* element) {
  json v;
  CANAL_RETURN_IF_ERROR(Command("POST", "/element", json{{"using", "css selector"}, {"value", css}}, &v));
  if (!v.is_object() || !v.contains(kElementKey)) return Status::IOError("webdriver: no element reference for " + css);
  *element = v[kElementKey].get<std::string>();
  return Status::OK();
}

Status WebDriver::Click(const std::string& element) {
  json v;
  return Command("POST", "/element/" + element + "/click", json::object(), &v);
}

Status WebDriver::Clear(const std::string& element) {
  json v;
  return Command("POST", "/element/" + element + "/clear", json::object(), &v);
}

Status WebDriver::SendKeys(const std::string& element, const std::string& text) {
  json v;
  return Command("POST", "/element/" + element + "/value", json{{"text", text}}, &v);
}

Status WebDriver::AlertText(std::string* text) {
  json v;
  CANAL_RETURN_IF_ERROR(Command("GET", "/alert/text", json(nullptr), &v));
  *text = v.is_string() ? v.get<std::string>() : std::string();
  return Status::OK();
}

Status WebDriver::AcceptAlert() {
  json v;
  return Command("POST", "/alert/accept", json::object(), &v);
}

Status WebDriver::DismissAlert() {
  json v;
  return Command("POST", "/alert/dismiss", json::object(), &v);
}

Status WebDriver::Execute(const std::string& script, const json& args, json* result) {
  return Command("POST", "/execute/sync", json{{"script", script}, {"args", args}}, result);
}

Status WebDriver::Text(const std::string& css, std::string* text) {
  json v;
  CANAL_RETURN_IF_ERROR(
      Execute("const e = document.querySelector(arguments[0]); return e ? e.textContent : '';", json::array({css}), &v));
  *text = v.is_string() ? v.get<std::string>() : std::string();
  return Status::OK();
}

bool WebDriver::WaitForText(const std::string& css, const std::string& want, std::chrono::milliseconds limit,
                            std::string* last) {
  std::string text;
  const bool ok = WaitFor([&] { return Text(css, &text).ok() && text == want; }, limit, 50ms);
  if (last != nullptr) *last = text;
  return ok;
}

bool WebDriver::WaitForTextContaining(const std::string& css, const std::string& part,
                                      std::chrono::milliseconds limit, std::string* last) {
  std::string text;
  const bool ok = WaitFor([&] { return Text(css, &text).ok() && text.find(part) != std::string::npos; }, limit, 50ms);
  if (last != nullptr) *last = text;
  return ok;
}

}  // namespace canal::testing
