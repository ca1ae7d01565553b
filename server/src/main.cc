// canal-server: the daemon. Reads conf/canal.properties, runs one Instance per
// destination (InstanceRegistry, with auto scan), keeps client cursors in
// meta.dat files (FileMetaManager) and serves Canal clients (SessionServer).
// With canal.zkServers set, it runs a destination only while it is the active
// server for it (RunningMonitor, docs/cluster.md).
//
//   canal-server [--conf DIR] [--logs DIR] [--data DIR]
//
// Exit codes: 0 after SIGTERM/SIGINT and a clean stop; 2 when the
// configuration is refused (the message names file, key and value); 1 when
// the server cannot start for another reason (port taken, data folder not
// writable) or could not write the cursors at the end. docs/operations.md.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "canal/coord/zk_client.h"
#include "canal/meta/file_meta_manager.h"
#include "canal/meta/zk_history_store.h"
#include "canal/meta/zk_meta_manager.h"
#include "canal/server/config.h"
#include "canal/server/instance.h"
#include "canal/server/instance_registry.h"
#include "canal/server/mq_destination.h"
#include "canal/server/observability.h"
#include "canal/server/cluster_placement.h"
#include "canal/server/running_monitor.h"
#include "canal/server/session_server.h"
#include "canal/server/memory_trimmer.h"
#include "canal/store/memory_budget.h"
#include "canal/store/ring_store.h"
#include "canal/server/users_file.h"

namespace {

namespace fs = std::filesystem;
using canal::Status;

constexpr size_t kLogFileBytes = 256u << 20;  // rotate at 256 MiB...
constexpr size_t kLogFiles = 8;               // ...keeping 8 old files
constexpr const char* kLogPattern = "%Y-%m-%d %H:%M:%S.%e %-5l [%t] %v";
constexpr int kExitFailure = 1;
constexpr int kExitConfig = 2;

// A logger writing logs/<dir>/<file>.log, rotating.
Status MakeFileLogger(const std::string& name, const fs::path& file, std::shared_ptr<spdlog::logger>* out) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) {
    return Status::IOError("creating the log folder " + file.parent_path().string() + ": " + ec.message() +
                           " (give a writable folder with --logs DIR)");
  }
  try {
    auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(file.string(), kLogFileBytes, kLogFiles);
    auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
    logger->set_pattern(kLogPattern);
    logger->set_level(spdlog::level::info);
    // Operators tail these files; lines are few (status every 10 s), so
    // flushing each costs nothing that matters.
    logger->flush_on(spdlog::level::info);
    *out = std::move(logger);
    return Status::OK();
  } catch (const spdlog::spdlog_ex& e) {
    return Status::IOError("opening the log file " + file.string() + ": " + e.what() +
                           " (give a writable folder with --logs DIR)");
  }
}

// Start-up errors go to stderr (startup.sh shows them) and to the log.
void Report(const std::shared_ptr<spdlog::logger>& log, const std::string& message) {
  std::fprintf(stderr, "canal-server: %s\n", message.c_str());
  std::fflush(stderr);
  if (log) log->error("{}", message);
}

// conf/ of an install (bin/canal-server next to conf/), else ./conf.
std::string DefaultConfDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path candidate = exe.parent_path().parent_path() / "conf";
    if (fs::exists(candidate / "canal.properties", ec)) return candidate.string();
  }
  return "conf";
}

// The one place that picks where cursors live (canal.meta.mode). With
// ZooKeeper, a write to a destination's cursors is refused unless this server
// is active for it, so a deposed server cannot move a cursor back behind the
// new active server's.
std::unique_ptr<canal::meta::MetaManager> MakeMetaManager(const canal::server::CanalConfig& config,
                                                         canal::coord::ZkClient* zk,
                                                         canal::server::RunningMonitor* monitor) {
  if (config.meta_mode == canal::server::CanalConfig::MetaMode::kZookeeper && zk != nullptr && monitor != nullptr) {
    canal::meta::ZkMetaOptions zk_options;
    zk_options.zk = zk;
    zk_options.flush_period = std::chrono::milliseconds(config.zk_flush_period_ms);
    zk_options.write_fence = [monitor](const std::string& destination) {
      // (MayWrite, not IsActive: a destination starting here may write, e.g. an MQ destination
      // subscribing its publisher's client before its instance starts.)
      if (monitor->MayWrite(destination)) return Status::OK();
      return Status::Aborted("cursor write for destination " + destination + " refused: server " +
                             monitor->address() + " is not active for it (another server may be)");
    };
    return std::make_unique<canal::meta::ZkMetaManager>(std::move(zk_options));
  }
  canal::meta::FileMetaOptions meta_options;
  meta_options.data_dir = config.file_data_dir;
  meta_options.flush_period = std::chrono::milliseconds(config.file_flush_period_ms);
  return std::make_unique<canal::meta::FileMetaManager>(meta_options);
}

// HA: the ZooKeeper session (connecting in the background; an unreachable
// ZooKeeper is retried, never fatal) and the running monitor, when
// canal.zkServers is set. *zk_meta and *serving are read later, by the
// monitor's callbacks. 0, or the exit code.
int StartHa(const canal::server::CanalConfig& config, const std::shared_ptr<spdlog::logger>& log,
            canal::server::Observability* observability, std::atomic<canal::server::SessionServer*>* serving,
            canal::meta::ZkMetaManager** zk_meta, std::unique_ptr<canal::coord::ZkClient>* zk,
            std::unique_ptr<canal::server::RunningMonitor>* monitor,
            std::unique_ptr<canal::server::ClusterPlacement>* placement,
            std::atomic<canal::server::InstanceRegistry*>* registry_ptr) {
  if (!config.zk_servers.empty()) {
    canal::coord::ZkOptions zk_options;
    zk_options.servers = config.zk_servers;
    zk_options.session_timeout_ms = config.zk_session_timeout_ms;
    if (Status s = canal::coord::ZkClient::Create(zk_options, zk); !s.ok()) {
      Report(log, "configuration refused: canal.zkServers = " + config.zk_servers + " in " + config.properties_file +
                      ": " + s.ToString());
      return kExitConfig;
    }
    canal::server::RunningMonitorOptions monitor_options;
    monitor_options.address = canal::server::ClusterAddress(config.register_ip, config.session.ip, config.session.port);
    monitor_options.takeover_delay = std::chrono::milliseconds(config.zk_takeover_delay_ms);
    monitor_options.fence_after = std::chrono::milliseconds(config.zk_fence_timeout_ms);
    monitor_options.logger = log;
    monitor_options.placement = config.cluster_balanced;
    monitor_options.before_activate = [zk_meta](const std::string& destination) {
      // Another server may have moved the cursors since we last read them.
      return *zk_meta != nullptr ? (*zk_meta)->Reload(destination) : Status::OK();
    };
    monitor_options.on_deactivated = [serving, observability](const std::string& destination,
                                                              const std::string& reason) {
      observability->ha_events()->OnDeactivated(destination, reason);
      if (canal::server::SessionServer* server = serving->load()) server->CloseDestination(destination, reason);
    };
    *monitor = std::make_unique<canal::server::RunningMonitor>(zk->get(), std::move(monitor_options));
    log->info("HA: ZooKeeper {} (session timeout {} ms asked); this server is {} in it", config.zk_servers,
              config.zk_session_timeout_ms, (*monitor)->address());
    if (Status s = (*monitor)->Start(); !s.ok()) {
      Report(log, s.ToString());
      return kExitFailure;
    }
    if (config.cluster_balanced) {
      canal::server::ClusterPlacementOptions placement_options;
      placement_options.zk_servers = config.zk_servers;
      placement_options.session_timeout_ms = config.zk_session_timeout_ms;
      placement_options.cap = static_cast<uint32_t>(config.cluster_max_destinations);
      placement_options.lost_delay = std::chrono::milliseconds(config.cluster_lost_delay_ms);
      placement_options.logger = log;
      placement_options.bytes_read = [registry_ptr] {
        std::map<std::string, uint64_t> bytes;
        canal::server::InstanceRegistry* registry = registry_ptr->load();
        if (registry == nullptr) return bytes;
        for (const auto& [name, instance] : registry->Destinations()) {
          canal::server::InstanceStatus status;
          if (instance != nullptr && instance->Report(&status) && status.running) bytes[name] = status.parser.bytes;
        }
        return bytes;
      };
      // (Started once the registry has joined the conf's destinations: a member announcing an
      // empty list first would have the leader place a partial list, then move things again.)
      Status s = canal::server::ClusterPlacement::Create(monitor->get(), std::move(placement_options), placement);
      if (!s.ok()) {
        Report(log, "cluster placement: " + s.ToString());
        return kExitFailure;
      }
    }
  }
  return 0;
}

// Makes each destination's instance (TCP) or MQ publisher, with its own log
// and, when the cursors are in ZooKeeper, its schema history there too.
canal::server::DestinationFactory MakeDestinationFactory(const canal::server::CanalConfig& config,
                                                         const canal::mq::MqSettings& mq_settings,
                                                         canal::meta::MetaManager* meta, canal::coord::ZkClient* zk,
                                                         canal::server::RunningMonitor* monitor,
                                                         canal::meta::ZkMetaManager* zk_meta, fs::path logs,
                                                         std::shared_ptr<canal::store::MemoryBudget> budget) {
  return [meta, &config, &mq_settings, zk, monitor, zk_meta, logs, budget](
             const canal::server::InstanceConfig& instance_config,
             std::shared_ptr<canal::server::ManagedDestination>* out) {
    canal::server::InstanceOptions instance_options;
    instance_options.memory_budget = budget;
    const std::string& dest = instance_config.destination;
    std::shared_ptr<spdlog::logger> instance_log;
    CANAL_RETURN_IF_ERROR(MakeFileLogger(dest, logs / dest / (dest + ".log"), &instance_log));
    canal::server::InstanceConfig with_history = instance_config;
    if (zk_meta != nullptr && zk != nullptr && monitor != nullptr && !with_history.parser.schema_history_file.empty()) {
      // Cursors in ZooKeeper: the schema history goes there too, so that a
      // standby decodes exactly from them (docs/schema-history.md).
      canal::server::RunningMonitor* m = monitor;
      with_history.parser.schema_history_store = std::make_shared<canal::meta::ZkHistoryStore>(
          zk, dest, [m](const std::string& destination) {
            if (m->MayWrite(destination)) return Status::OK();
            return Status::Aborted("schema history write for destination " + destination + " refused: server " +
                                   m->address() + " is not active for it");
          });
    }
    if (mq_settings.mode != canal::mq::ServerMode::kTcp) {
      return canal::server::MqDestination::Create(mq_settings, config, with_history, meta,
                                                  std::move(instance_log), out, std::move(instance_options));
    }
    *out = std::make_shared<canal::server::Instance>(with_history, meta, std::move(instance_log),
                                                     std::move(instance_options));
    return Status::OK();
  };
}

// The signals were blocked before any thread started, so only this wait sees them.
int WaitForStopSignal() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  return sig;
}

int Run(int argc, char** argv) {
  CLI::App app{"canal-server: a Canal-compatible binlog change-data-capture server"};
  std::string conf_dir, logs_dir, data_dir;
  app.add_option("--conf", conf_dir,
                 "folder holding canal.properties (default: conf/ beside the bin/ holding this program, else ./conf)");
  app.add_option("--logs", logs_dir, "log folder (default: logs/ beside the conf folder)");
  app.add_option("--data", data_dir, "folder for the cursors' meta.dat files (overrides canal.file.data.dir)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitConfig;
  }

  if (conf_dir.empty()) conf_dir = DefaultConfDir();
  std::error_code ec;
  const fs::path conf = fs::absolute(conf_dir, ec).lexically_normal();
  const fs::path logs = logs_dir.empty() ? (conf / ".." / "logs").lexically_normal() : fs::absolute(logs_dir, ec);

  std::shared_ptr<spdlog::logger> log;
  if (Status s = MakeFileLogger("canal", logs / "canal" / "canal.log", &log); !s.ok()) {
    Report(nullptr, s.ToString());
    return kExitFailure;
  }
  log->info("canal-server starting: conf {}, logs {}, pid {}", conf.string(), logs.string(), ::getpid());

  canal::server::ConfigOverrides overrides;
  if (!data_dir.empty()) overrides.data_dir = data_dir;
  canal::server::CanalConfig config;
  if (Status s = canal::server::LoadCanalConfig((conf / "canal.properties").string(), overrides, &config); !s.ok()) {
    Report(log, "configuration refused: " + std::string(s.message()));
    return s.code() == Status::Code::kIOError ? kExitFailure : kExitConfig;
  }

  // MQ mode (docs/mq.md): destinations publish to a broker instead of serving TCP clients.
  canal::mq::MqSettings mq_settings;
  if (Status s = canal::server::LoadServerMode(config, &mq_settings); !s.ok()) {
    Report(log, "configuration refused: " + std::string(s.message()));
    return kExitConfig;
  }
  for (const std::string& warning : mq_settings.warnings) log->warn("{}", warning);

  // The admin API's token (canal.admin.*, docs/admin.md): refused like any other key.
  canal::server::AdminConfig admin_config;
  std::vector<std::string> admin_warnings;
  if (Status s = canal::server::LoadAdminConfig(config, &admin_config, &admin_warnings); !s.ok()) {
    Report(log, "configuration refused: " + std::string(s.message()));
    return kExitConfig;
  }
  for (const std::string& warning : admin_warnings) log->warn("{}", warning);

  // Client users (canal.users.file): a bad file refuses to start, naming its line.
  std::shared_ptr<canal::server::ClientUsers> users;
  if (!config.users_file.empty()) {
    canal::server::ClientUsersOptions users_options;
    users_options.file = config.users_file;
    users_options.legacy_user = config.session.user;
    users_options.legacy_password_stored = config.session.password_stored;
    users_options.check_interval = std::chrono::milliseconds(config.users_reload_interval_ms);
    if (Status s = canal::server::ClientUsers::Create(users_options, log, &users); !s.ok()) {
      Report(log, "configuration refused: canal.users.file: " + std::string(s.message()));
      return kExitConfig;
    }
    users->Start();  // stopped by its destructor on every way out
    config.session.users = users;
  }

  // Metrics and status (canal.metrics.pull.port): counters first, served below.
  canal::server::Observability observability(config, log);
  observability.SetAdmin(std::move(admin_config), canal::mq::ServerModeName(mq_settings.mode));
  config.session.client_stats = observability.client_stats();

  // HA: the ZooKeeper session and the running monitor (none without canal.zkServers).
  std::unique_ptr<canal::coord::ZkClient> zk;
  std::unique_ptr<canal::server::RunningMonitor> monitor;
  std::unique_ptr<canal::server::ClusterPlacement> placement;  // canal.cluster.placement = balanced
  std::atomic<canal::server::SessionServer*> serving{nullptr};  // for the monitor's session closing
  canal::meta::ZkMetaManager* zk_meta = nullptr;  // set below, before any destination can activate
  std::atomic<canal::server::InstanceRegistry*> registry_ptr{nullptr};  // for the cluster's load samples
  if (const int code =
          StartHa(config, log, &observability, &serving, &zk_meta, &zk, &monitor, &placement, &registry_ptr);
      code != 0) {
    return code;
  }
  // Releases this server's running nodes on every way out below (the
  // ZooKeeper session itself ends last: cursors may live there).
  const auto stop_ha = [&] {
    if (placement) placement->Stop();
    if (monitor) monitor->Stop();
  };

  auto meta = MakeMetaManager(config, zk.get(), monitor.get());
  zk_meta = dynamic_cast<canal::meta::ZkMetaManager*>(meta.get());
  const std::string cursors_in = zk_meta != nullptr
                                     ? "ZooKeeper " + config.zk_servers
                                     : config.file_data_dir;
  if (Status s = meta->Start(); !s.ok()) {
    Report(log, "cannot keep cursors in " + cursors_in + ": " + s.ToString());
    stop_ha();
    return kExitFailure;
  }

  // One memory budget for every destination's ring (canal.memory.budget).
  auto budget = std::make_shared<canal::store::MemoryBudget>(config.memory_budget_bytes);
  canal::server::RegistryOptions registry_options;
  registry_options.logger = log;
  registry_options.arbiter = placement ? static_cast<canal::server::DestinationArbiter*>(placement.get())
                                       : static_cast<canal::server::DestinationArbiter*>(monitor.get());
  registry_options.factory =
      MakeDestinationFactory(config, mq_settings, meta.get(), zk.get(), monitor.get(), zk_meta, logs, budget);
  canal::server::InstanceRegistry registry(config, std::move(registry_options));
  registry_ptr.store(&registry);
  std::vector<Status> failures;
  if (Status s = registry.Start(&failures); !s.ok()) failures.push_back(std::move(s));
  if (placement) {
    if (Status s = placement->Start(); !s.ok()) failures.push_back(s.WithContext("cluster placement"));
  }
  if (!failures.empty()) {
    bool config_error = false;
    for (const Status& f : failures) {
      config_error = config_error || f.code() == Status::Code::kInvalidArgument || f.IsNotFound();
      Report(log, "configuration refused: " + std::string(f.message()));
    }
    registry.Stop();
    stop_ha();
    meta->Stop().PermitUncheckedError();
    return config_error ? kExitConfig : kExitFailure;
  }

  std::unique_ptr<canal::server::SessionServer> server;
  if (Status s = canal::server::SessionServer::Create(config.session, &registry, log, &server); !s.ok()) {
    Report(log, "cannot serve clients: " + s.ToString() + " (canal.ip / canal.port in " + config.properties_file +
                    ")");
    registry.Stop();
    stop_ha();
    meta->Stop().PermitUncheckedError();
    return kExitFailure;
  }
  serving.store(server.get());
  server->Start();
  canal::server::AdminOperations admin_operations(config, &registry, meta.get(), logs.string(), log);
  observability.SetOperations(&admin_operations);
  observability.SetCluster(placement.get());
  // A metrics port that cannot be bound is logged; clients are served anyway.
  observability
      .Start(&registry, monitor.get(),
             monitor ? monitor->address() : config.session.ip + ":" + std::to_string(server->port()))
      .PermitUncheckedError();

  // Memory freed after a burst goes back to the system within seconds
  // (docs/operations.md, "Memory").
  canal::server::MemoryTrimmer trimmer(std::chrono::seconds(2), size_t{16} << 20, log);
  trimmer.Start();
  std::string names;
  for (const std::string& name : registry.Running()) names += (names.empty() ? "" : ", ") + name;
  {
    // What the budget holds now: a reserve for the server, each destination's fixed cost (its
    // smallest slot array, its connection buffers), and equal shares of the rest.
    const uint64_t mib = 1 << 20;
    const size_t rings = budget->rings();
    log->info("memory budget {} MiB (canal.memory.budget): {} MiB reserved for the server, {} destination(s) with "
              "{} MiB of fixed costs in all, {} MiB for each one's entries, slots, buffers and batches",
              budget->total() / mib, budget->reserve() / mib, rings, budget->fixed_bytes() / mib,
              budget->share() / mib);
    if (rings != 0 && budget->fixed_bytes() > budget->total() / 2) {
      log->warn("the fixed costs of {} destinations take {} MiB of the {} MiB memory budget, leaving each little "
                "room (back-pressure sooner, smaller batches); raise canal.memory.budget or run fewer destinations "
                "on this server (canal.cluster.max.destinations)",
                rings, budget->fixed_bytes() / mib, budget->total() / mib);
    }
  }
  log->info("canal-server started: mode {}, listening on {}:{}, destinations [{}]{}, cursors in {}, auto scan {}",
            canal::mq::ServerModeName(mq_settings.mode), config.session.ip, server->port(), names,
            monitor ? " active here (the others stand by in ZooKeeper)" : "",
            cursors_in,
            config.auto_scan ? "every " + std::to_string(config.auto_scan_interval_s) + " s" : std::string("off"));

  const int sig = WaitForStopSignal();
  log->info("canal-server stopping on {}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  observability.Stop();
  // A cluster member hands its destinations over first, while its instances can still flush.
  if (placement) placement->Stop();

  server->Stop();
  serving.store(nullptr);
  registry.Stop();
  stop_ha();
  Status flushed = meta->Stop();
  if (zk) zk->Close();
  if (flushed.code() == Status::Code::kAborted) {
    // Fenced: another server runs the destination now and keeps its cursors; this one's are older.
    log->warn("cursors not written at stop: {}", flushed.ToString());
  } else if (!flushed.ok()) {
    log->error("writing the cursors at stop failed: {}", flushed.ToString());
    return kExitFailure;
  }
  log->info("canal-server stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so every thread inherits the mask and
  // SIGTERM/SIGINT reach only the sigwait in Run().
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A client that disconnects mid-write must not kill the server.
  signal(SIGPIPE, SIG_IGN);
  // Also before any thread: the kernel's registration is instant only then.
  canal::store::RingStore::PrepareProcess();

  int code = Run(argc, argv);
  spdlog::shutdown();
  return code;
}
