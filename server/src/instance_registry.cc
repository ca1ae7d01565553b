#include "canal/server/instance_registry.h"

#include "file_text.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace canal::server {
namespace {

namespace fs = std::filesystem;

// instance.properties is a few KiB; anything this large is not one.
constexpr size_t kMaxInstancePropertiesBytes = 16u << 20;

std::optional<std::string> ReadFile(const std::string& path) { return ReadFileText(path, kMaxInstancePropertiesBytes); }

}  // namespace

InstanceRegistry::InstanceRegistry(CanalConfig canal, RegistryOptions options)
    : canal_(std::move(canal)),
      options_(std::move(options)),
      log_(options_.logger ? options_.logger : std::make_shared<spdlog::logger>("canal-registry")) {}

InstanceRegistry::~InstanceRegistry() { Stop(); }

Status InstanceRegistry::Wanted(std::map<std::string, Seen>* wanted) const {
  const auto see = [](const std::string& path, Seen* seen) {
    std::error_code ec;
    seen->contents = ReadFile(path);
    seen->mtime = fs::last_write_time(path, ec);
    // Present but unreadable (out of descriptors, say): not the same as gone.
    if (!seen->contents) seen->unreadable = fs::exists(path, ec) || (ec && ec != std::errc::no_such_file_or_directory);
  };
  if (!canal_.auto_scan) {
    for (const std::string& name : canal_.destinations) see(InstancePropertiesPath(canal_, name), &(*wanted)[name]);
    return Status::OK();
  }
  std::error_code ec;
  for (fs::directory_iterator it(canal_.conf_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_directory(ec2)) continue;
    const std::string name = it->path().filename().string();
    const std::string path = InstancePropertiesPath(canal_, name);
    const bool regular = fs::is_regular_file(path, ec2);
    if (ec2 && ec2 != std::errc::no_such_file_or_directory) {
      (*wanted)[name].unreadable = true;
      continue;
    }
    if (regular) see(path, &(*wanted)[name]);
  }
  if (ec) return Status::IOError("scanning " + canal_.conf_dir + " for destinations: " + ec.message());
  return Status::OK();
}

Status InstanceRegistry::Launch(const std::string& name, const std::optional<std::string>& contents, Entry* entry) {
  const std::string path = InstancePropertiesPath(canal_, name);
  entry->contents = contents.value_or("");
  entry->file_present = contents.has_value();
  Status s;
  if (!contents) {
    s = Status::NotFound(path + " is missing or unreadable (destination " + name +
                         " is in canal.destinations; create its instance.properties, e.g. from "
                         "conf/example/instance.properties)");
  }
  InstanceConfig config;
  if (s.ok()) s = ParseInstanceConfig(canal_, name, path, *contents, &config);
  std::shared_ptr<ManagedDestination> instance;
  if (s.ok()) s = options_.factory(config, &instance);
  if (s.ok() && instance == nullptr) s = Status::Aborted("the instance factory made nothing");
  if (s.ok() && options_.arbiter == nullptr) s = instance->Start();
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry->failure = s.ok() ? std::string() : s.ToString();
  }
  if (!s.ok()) {
    log_->error("destination {} not started: {}", name, s.ToString());
    return s.WithContext("destination " + name);
  }
  if (options_.arbiter == nullptr) {
    log_->info("destination {} started ({})", name, path);
    std::lock_guard<std::mutex> lock(mu_);
    entry->instance = std::move(instance);
    return Status::OK();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry->instance = instance;
  }
  // The arbiter starts it when this server wins it.
  log_->info("destination {} ready ({}); it runs here while this server is active for it", name, path);
  DestinationArbiter::Handler handler;
  handler.activate = [instance] { return instance->Start(); };
  handler.deactivate = [instance](const std::string&) { instance->Stop(); };
  handler.weight = config.cluster_weight;
  handler.preferred = config.cluster_preferred;
  handler.excluded = config.cluster_excluded;
  options_.arbiter->Join(name, std::move(handler));
  return Status::OK();
}

void InstanceRegistry::Retire(const std::string& name, Entry* entry, const char* why) {
  std::shared_ptr<ManagedDestination> instance;
  {
    std::lock_guard<std::mutex> lock(mu_);
    instance = std::move(entry->instance);
    entry->instance = nullptr;
    if (instance != nullptr) retired_why_[name] = why;
  }
  if (instance == nullptr) return;
  log_->info("destination {}: {}; stopping it", name, why);
  if (options_.arbiter != nullptr) options_.arbiter->Leave(name);
  instance->Stop();
}

void InstanceRegistry::Reconcile(std::vector<Status>* failures) {
  std::map<std::string, Seen> wanted;
  if (Status s = Wanted(&wanted); !s.ok()) {
    // Out of descriptors, say: a scan that could not look proves nothing gone.
    log_->warn("{}; every destination is left as it is until a scan succeeds", s.ToString());
    return;
  }
  // Gone: stop.
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (wanted.count(it->first) == 0) {
      Retire(it->first, &it->second, "its instance.properties is gone");
      std::lock_guard<std::mutex> lock(mu_);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [name, seen] : wanted) {
    auto it = entries_.find(name);
    // Stopped by an operator: held until a start, which reads the file then.
    if (it != entries_.end() && it->second.stopped_by_operator) continue;
    if (seen.unreadable) {
      if (it == entries_.end() || it->second.file_present) {
        log_->warn("destination {}: {} could not be read now; left as it is", name, InstancePropertiesPath(canal_, name));
        continue;
      }
    }
    const std::optional<std::string>& contents = seen.contents;
    if (it == entries_.end()) {
      std::lock_guard<std::mutex> lock(mu_);
      it = entries_.emplace(name, Entry{}).first;
    } else {
      Entry& e = it->second;
      const bool same = e.file_present == contents.has_value() && e.contents == contents.value_or("");
      // A touch restarts a destination that failed to start or stopped on an
      // error (docs/operations.md); a running one is left alone.
      const bool touched = contents && seen.mtime != e.mtime;
      const bool halted = e.instance == nullptr || (options_.arbiter == nullptr && (e.instance->Halted() ||
                                                                                    !e.instance->running()));
      if (same && !(touched && halted)) {
        e.mtime = seen.mtime;
        continue;  // unchanged (running, or failed with this very text)
      }
      Retire(name, &e, same ? "instance.properties touched" : "instance.properties changed");
      if (same) log_->info("destination {}: instance.properties touched; starting it again", name);
    }
    it->second.mtime = seen.mtime;
    Status s = Launch(name, contents, &it->second);
    if (!s.ok() && failures != nullptr) failures->push_back(std::move(s));
  }
}

Status InstanceRegistry::Start(std::vector<Status>* failures) {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  if (started_) return Status::InvalidArgument("the instance registry is started already");
  started_ = true;
  if (!options_.factory) return Status::InvalidArgument("the instance registry needs a factory");
  if (canal_.auto_scan) {
    for (const std::string& name : canal_.destinations) {
      std::error_code ec;
      if (!fs::is_regular_file(InstancePropertiesPath(canal_, name), ec)) {
        log_->warn("canal.destinations lists {}, but {} does not exist; with canal.auto.scan=true only folders of "
                   "{} holding an instance.properties run",
                   name, InstancePropertiesPath(canal_, name), canal_.conf_dir);
      }
    }
  }
  Reconcile(failures);
  if (entries_.empty()) {
    log_->warn("no destination to run: {}", canal_.auto_scan
                                                 ? "no folder of " + canal_.conf_dir + " holds an instance.properties"
                                                 : std::string("canal.destinations is empty"));
  }
  if (canal_.auto_scan) {
    {
      std::lock_guard<std::mutex> lock(scan_mu_);
      scan_stop_ = false;
    }
    scan_thread_ = std::thread([this] { ScanLoop(); });
  }
  return Status::OK();
}

void InstanceRegistry::ScanLoop() {
  const auto period = options_.scan_interval.count() > 0
                          ? options_.scan_interval
                          : std::chrono::milliseconds(int64_t{canal_.auto_scan_interval_s} * 1000);
  std::unique_lock<std::mutex> lock(scan_mu_);
  for (;;) {
    if (scan_cv_.wait_for(lock, period, [this] { return scan_stop_; })) return;
    lock.unlock();
    ScanNow();
    lock.lock();
  }
}

void InstanceRegistry::ScanNow() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  if (!started_) return;
  Reconcile(nullptr);
}

void InstanceRegistry::Stop() {
  {
    std::lock_guard<std::mutex> lock(scan_mu_);
    scan_stop_ = true;
  }
  scan_cv_.notify_all();
  if (scan_thread_.joinable()) scan_thread_.join();

  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  if (!started_) return;
  started_ = false;
  for (auto& [name, entry] : entries_) Retire(name, &entry, "the server is stopping");
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

std::shared_ptr<Destination> InstanceRegistry::Find(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  if (it == entries_.end() || it->second.instance == nullptr) return nullptr;
  if (options_.arbiter != nullptr && !options_.arbiter->IsActive(name)) return nullptr;
  return it->second.instance;
}

std::string InstanceRegistry::WhyNotServed(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(name);
  if (options_.arbiter != nullptr && it != entries_.end() && it->second.instance != nullptr &&
      !options_.arbiter->IsActive(name)) {
    return "another server is active for it, or this one lost ZooKeeper";
  }
  auto why = retired_why_.find(name);
  return why == retired_why_.end() ? std::string() : why->second;
}

const char* OperatorActionName(OperatorAction action) {
  switch (action) {
    case OperatorAction::kStop: return "stop";
    case OperatorAction::kStart: return "start";
    case OperatorAction::kRestart: return "restart";
  }
  return "?";
}

void InstanceRegistry::SetHeld(Entry* entry, bool stopped_by_operator) {
  // Written under lifecycle_mu_ (scans read it there) and mu_ (Held reads it there).
  std::lock_guard<std::mutex> lock(mu_);
  entry->stopped_by_operator = stopped_by_operator;
}

bool InstanceRegistry::Up(const Entry& entry) const {
  if (entry.instance == nullptr) return false;
  // With an arbiter the instance is joined: running it or not is the
  // arbiter's call (standby), not a start's.
  if (options_.arbiter != nullptr) return true;
  return entry.instance->running() && !entry.instance->Halted();
}

Status InstanceRegistry::Control(std::string_view name, OperatorAction action, std::string* done) {
  done->clear();
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  if (!started_) return Status::Aborted("the server is stopping");
  auto it = entries_.find(name);
  if (it == entries_.end()) return Status::NotFound("no destination with that name on this server");
  const std::string dest = it->first;
  Entry& e = it->second;
  if (action == OperatorAction::kStop) {
    if (e.instance == nullptr) {
      *done = e.stopped_by_operator ? "already stopped" : "was not running (its last start failed)";
    } else {
      Retire(dest, &e, "stopped by an operator (admin API)");
      *done = "stopped";
    }
    SetHeld(&e, true);
    return Status::OK();
  }
  if (action == OperatorAction::kStart && Up(e)) {
    *done = "already running";
    return Status::OK();
  }
  // Start and restart: a halted or running instance is retired, then a new
  // one is made from instance.properties as it is now.
  const bool was_up = Up(e);
  if (e.instance != nullptr) {
    Retire(dest, &e, action == OperatorAction::kRestart ? "restarted by an operator (admin API)"
                                                        : "started again by an operator (admin API)");
  }
  SetHeld(&e, false);
  const std::string path = InstancePropertiesPath(canal_, dest);
  std::error_code ec;
  e.mtime = fs::last_write_time(path, ec);
  const std::optional<std::string> contents = ReadFile(path);
  Status s = Launch(dest, contents, &e);
  if (!s.ok()) return s;
  *done = action == OperatorAction::kRestart ? (was_up ? "restarted" : "started (it was not running)") : "started";
  return Status::OK();
}

HeldState InstanceRegistry::Held(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  HeldState held;
  auto it = entries_.find(name);
  if (it == entries_.end()) return held;
  held.stopped_by_operator = it->second.stopped_by_operator;
  held.failure = it->second.failure;
  return held;
}

std::vector<std::string> InstanceRegistry::Running() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) {
    if (entry.instance != nullptr && (options_.arbiter == nullptr || options_.arbiter->IsActive(name))) {
      names.push_back(name);
    }
  }
  return names;
}

bool InstanceRegistry::Knows(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.find(name) != entries_.end();
}

std::vector<std::pair<std::string, std::shared_ptr<ManagedDestination>>> InstanceRegistry::Destinations() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::shared_ptr<ManagedDestination>>> out;
  for (const auto& [name, entry] : entries_) out.emplace_back(name, entry.instance);
  return out;
}

}  // namespace canal::server
