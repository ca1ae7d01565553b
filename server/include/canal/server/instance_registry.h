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
// Threads: Find() from any thread; Start/Stop/ScanNow are serialised.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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

// Makes (not starts) the instance of a destination.
using DestinationFactory =
    std::function<Status(const InstanceConfig& config, std::shared_ptr<ManagedDestination>* out)>;

struct RegistryOptions {
  DestinationFactory factory;            // required
  std::shared_ptr<spdlog::logger> logger;  // the server's log; null logs nowhere
  // Scan period; 0 uses canal.auto.scan.interval. Tests shorten it.
  std::chrono::milliseconds scan_interval{0};
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

  std::shared_ptr<Destination> Find(std::string_view name) override;
  // Names of the running destinations, sorted.
  std::vector<std::string> Running() const;

 private:
  struct Entry {
    std::shared_ptr<ManagedDestination> instance;  // null when its config failed
    std::string contents;                          // instance.properties as last seen
    bool file_present = false;
  };

  // The destinations wanted now: name -> instance.properties text (absent
  // file: nullopt).
  std::map<std::string, std::optional<std::string>> Wanted() const;
  // Starts `name` from `contents`; logs and returns the failure.
  Status Launch(const std::string& name, const std::optional<std::string>& contents, Entry* entry);
  void Retire(const std::string& name, Entry* entry, const char* why);
  void Reconcile(std::vector<Status>* failures);
  void ScanLoop();

  const CanalConfig canal_;
  const RegistryOptions options_;
  std::shared_ptr<spdlog::logger> log_;

  std::mutex lifecycle_mu_;  // serialises Start/Stop/ScanNow
  bool started_ = false;

  mutable std::mutex mu_;  // guards entries_ (Find)
  std::map<std::string, Entry, std::less<>> entries_;

  std::thread scan_thread_;
  std::mutex scan_mu_;
  std::condition_variable scan_cv_;
  bool scan_stop_ = false;  // guarded by scan_mu_
};

}  // namespace canal::server
