// InstanceRegistry: the destinations this server runs, found by name for the
// session server.
//
// Which destinations: with canal.auto.scan=false, those of
// canal.destinations; with canal.auto.scan=true, every folder of
// canal.conf.dir that holds an instance.properties (canal.destinations is
// then only checked: a listed name without such a folder is logged).
//
// Start() starts them all. A destination whose configuration is refused or
// whose instance does not start is logged and left out; Start() reports each
// such failure in `*failures` (the daemon refuses to start on any) and runs
// the others.
//
// Auto scan: every canal.auto.scan.interval seconds the folder is scanned
// again: a new folder starts its instance, a removed folder (or
// instance.properties) stops its instance, and an instance.properties whose
// text changed restarts that instance alone with the new settings. A file
// that fails is logged once per distinct text and retried when it changes;
// the other instances run on.
//
// HA (RegistryOptions::arbiter, the RunningMonitor): the registry then
// starts no instance itself. It offers each destination it can run to the
// arbiter (Join), which starts and stops the instance as this server wins or
// loses it; Find() and Running() show only the destinations active here, and
// a stopped or changed destination is withdrawn (Leave) before it stops.
//
// Operator control (the admin API, docs/admin.md): Control() stops, starts or
// restarts one destination of a running server. A stop retires it as a
// removed folder would (with an arbiter: Leave, so the running node in
// ZooKeeper is released and the other server of the pair takes over) and
// holds it stopped: scans leave it alone, even when its instance.properties
// changes, until a start. A start reads instance.properties again, so a
// start or restart also applies an edited file.
//
// Threads: Find() from any thread; Start/Stop/ScanNow/Control are serialised.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <string>
#include <thread>
#include <vector>

#include "canal/common/status.h"
#include "canal/server/config.h"
#include "canal/server/destination.h"
#include "canal/server/instance.h"

namespace spdlog {
class logger;
}

namespace canal::server {

// Decides which destinations run on this server when several servers share
// them (RunningMonitor). Calls the handler from its own threads.
class DestinationArbiter {
 public:
  struct Handler {
    std::function<Status()> activate;                         // start the instance
    std::function<void(const std::string& reason)> deactivate;  // stop it
    // canal.instance.cluster.*: where a balanced cluster should run it (ClusterPlacement).
    double weight = 1.0;
    std::vector<std::string> preferred, excluded;
  };
  virtual ~DestinationArbiter() = default;
  // This server can run `destination`: contend for it.
  virtual void Join(const std::string& destination, Handler handler) = 0;
  // Stops contending; deactivates it first when active. No handler call for
  // it is running or follows once this returns.
  virtual void Leave(const std::string& destination) = 0;
  // Whether this server may serve `destination` now (cheap; no I/O).
  virtual bool IsActive(std::string_view destination) const = 0;
};

// Makes (not starts) the instance of a destination.
using DestinationFactory =
    std::function<Status(const InstanceConfig& config, std::shared_ptr<ManagedDestination>* out)>;

// What an operator asks of one destination (InstanceRegistry::Control).
enum class OperatorAction { kStop, kStart, kRestart };
const char* OperatorActionName(OperatorAction action);  // "stop", "start", "restart"

// Why a known destination is not running, for the admin API's view.
struct HeldState {
  bool stopped_by_operator = false;  // a Control stop, not undone yet
  std::string failure;               // why its last start failed; empty when it did not
};

struct RegistryOptions {
  DestinationFactory factory;            // required
  std::shared_ptr<spdlog::logger> logger;  // the server's log; null logs nowhere
  // Scan period; 0 uses canal.auto.scan.interval. Tests shorten it.
  std::chrono::milliseconds scan_interval{0};
  // HA: who decides which destinations run here (must outlive the
  // registry); null runs every destination (no ZooKeeper).
  DestinationArbiter* arbiter = nullptr;
};

class InstanceRegistry final : public DestinationRegistry {
 public:
  InstanceRegistry(CanalConfig canal, RegistryOptions options);
  ~InstanceRegistry() override;  // Stop()s
  InstanceRegistry(const InstanceRegistry&) = delete;
  InstanceRegistry& operator=(const InstanceRegistry&) = delete;

  // Starts the destinations and, with auto scan, the scan thread. Always OK
  // unless called twice; per-destination failures go to *failures (optional).
  Status Start(std::vector<Status>* failures = nullptr);
  // Stops the scan thread and every instance. Idempotent.
  void Stop();

  // One scan now (what the scan thread does each period), on the caller's thread.
  void ScanNow();

  // Null also while an arbiter says the destination is not active here.
  std::shared_ptr<Destination> Find(std::string_view name) override;
  std::string WhyNotServed(std::string_view name) override;
  bool Arbitrated() const override { return options_.arbiter != nullptr; }
  // Names of the running destinations (with an arbiter: active here), sorted.
  std::vector<std::string> Running() const;
  // Stops, starts or restarts `name` (see the top of this file); *done says
  // what happened ("stopped", "already stopped", "started", ...). NotFound
  // for a destination this server does not know; Aborted while the server
  // stops; a start whose configuration or instance fails returns that error
  // (and the destination stays down, its failure in Held()).
  Status Control(std::string_view name, OperatorAction action, std::string* done);
  HeldState Held(std::string_view name) const;

  // Every destination this server knows, active here or not (HA standby),
  // sorted by name; a null instance marks a configuration that was refused.
  std::vector<std::pair<std::string, std::shared_ptr<ManagedDestination>>> Destinations() const;
  // Whether `name` is one of them (the admin API's check before a name reaches the file system).
  bool Knows(std::string_view name) const;

 private:
  struct Entry {
    std::shared_ptr<ManagedDestination> instance;  // null when its config failed
    std::string contents;                          // instance.properties as last seen
    bool file_present = false;
    std::filesystem::file_time_type mtime{};       // its modification time as last seen
    bool stopped_by_operator = false;              // Control stop: scans leave it alone (SetHeld)
    std::string failure;                           // the last Launch error (guarded by mu_)
  };
  // One destination as a scan sees it.
  struct Seen {
    std::optional<std::string> contents;  // nullopt: no instance.properties
    std::filesystem::file_time_type mtime{};
    bool unreadable = false;  // there, but could not be read now (e.g. out of descriptors): leave it be
  };

  // The destinations wanted now. An error when the conf folder could not be
  // read: then nobody knows, and nothing may be stopped for it.
  Status Wanted(std::map<std::string, Seen>* wanted) const;
  // Starts `name` from `contents`; logs and returns the failure.
  Status Launch(const std::string& name, const std::optional<std::string>& contents, Entry* entry);
  void Retire(const std::string& name, Entry* entry, const char* why);
  void Reconcile(std::vector<Status>* failures);
  void ScanLoop();
  // Running here, or (with an arbiter) joined: nothing for a start to do.
  bool Up(const Entry& entry) const;
  void SetHeld(Entry* entry, bool stopped_by_operator);

  const CanalConfig canal_;
  const RegistryOptions options_;
  std::shared_ptr<spdlog::logger> log_;

  std::mutex lifecycle_mu_;  // serialises Start/Stop/ScanNow
  bool started_ = false;

  mutable std::mutex mu_;  // guards entries_ (Find)
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, std::string, std::less<>> retired_why_;  // name -> why it last stopped

  std::thread scan_thread_;
  std::mutex scan_mu_;
  std::condition_variable scan_cv_;
  bool scan_stop_ = false;  // guarded by scan_mu_
};

}  // namespace canal::server
