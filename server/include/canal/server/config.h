// The daemon's configuration, read from Canal's files with Canal's keys:
//
//   <conf>/canal.properties            server-wide keys (CanalConfig), and the
//                                      defaults of every canal.instance.* key
//   <canal.conf.dir>/<dest>/instance.properties
//                                      one destination (InstanceConfig)
//
// An instance key is looked up in the environment (see properties.h), then
// in instance.properties, then in canal.properties, then takes its built-in
// default. A value that cannot be used is refused with InvalidArgument
// naming where it was set (file and line, or the environment variable), the
// key, the value and what would be accepted. Keys this server does not use
// (Canal's TSDB, admin, ... settings) are ignored, so a Canal configuration
// loads as it is; the MQ mode's keys are read by mq_destination.h.
// docs/configuration.md lists every key.
//
// Relative paths (canal.conf.dir, canal.file.data.dir) are resolved against
// the directory holding canal.properties: Canal's shipped `../conf` (relative
// to the bin/ it runs in) names that same directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "canal/common/properties.h"
#include "canal/common/status.h"
#include "canal/parser/event_parser.h"
#include "canal/server/session_server.h"
#include "canal/sink/entry_sink.h"
#include "canal/snapshot/snapshot_options.h"
#include "canal/store/ring_store_options.h"

namespace canal::server {

// What the command line may override.
struct ConfigOverrides {
  std::optional<std::string> data_dir;  // --data: canal.file.data.dir
};

struct CanalConfig {
  std::string properties_file;  // absolute path of canal.properties
  std::string base_dir;         // its directory: relative paths start here

  SessionServerOptions session;       // canal.ip, canal.port, canal.user, canal.passwd
  std::vector<std::string> destinations;  // canal.destinations (comma-separated)
  std::string conf_dir;               // canal.conf.dir, absolute; default: base_dir
  bool auto_scan = true;              // canal.auto.scan
  int auto_scan_interval_s = 5;       // canal.auto.scan.interval (seconds, >= 1)
  // canal.memory.budget: the bytes every destination's ring shares
  // (store::MemoryBudget); default DefaultMemoryBudget().
  uint64_t memory_budget_bytes = 0;
  std::string file_data_dir;          // canal.file.data.dir, absolute; default: conf_dir
  int64_t file_flush_period_ms = 1000;  // canal.file.flush.period
  // Client users (users_file.h): the file, absolute ("" = canal.user alone),
  // and how often it is checked for changes.
  std::string users_file;               // canal.users.file
  int users_reload_interval_ms = 1000;  // canal.users.reload.interval

  // HA (docs/cluster.md). With zk_servers empty no ZooKeeper code runs.
  std::string zk_servers;                  // canal.zkServers: "host:port[,host:port...][/chroot]"
  int64_t zk_flush_period_ms = 1000;       // canal.zookeeper.flush.period: cursors to ZooKeeper
  int zk_session_timeout_ms = 6000;        // canal.zookeeper.session.timeout
  int zk_takeover_delay_ms = 1000;         // canal.zookeeper.takeover.delay
  int zk_fence_timeout_ms = 0;             // canal.zookeeper.fence.timeout; 0 = half the granted session timeout
  std::string register_ip;                 // canal.register.ip: the address announced in ZooKeeper
  // Placement (docs/cluster.md): "race" (Canal's: every server contends for every destination;
  // the pair) or "balanced" (an elected leader assigns destinations to servers evenly).
  bool cluster_balanced = false;           // canal.cluster.placement = race | balanced
  int cluster_max_destinations = 0;        // canal.cluster.max.destinations: this server's cap; 0 = none
  int cluster_lost_delay_ms = 0;           // canal.cluster.lost.delay: wait before moving a lost server's share
  enum class MetaMode : uint8_t { kFile, kZookeeper };
  MetaMode meta_mode = MetaMode::kFile;    // canal.meta.mode: auto (zookeeper when canal.zkServers is set) | file | zookeeper

  // The metrics and status endpoint (docs/operations.md). Port 0 turns it off.
  uint16_t metrics_port = 11112;       // canal.metrics.pull.port
  std::string metrics_ip;              // canal.metrics.pull.ip; default: canal.ip
  int metrics_max_connections = 16;    // canal.metrics.pull.max.connections

  Properties properties;  // canal.properties as read (the instance defaults)
  EnvLookup env;          // the environment the values were read with
};

// Reads `canal_properties` (a file path) with the process environment, or
// with `env` when given (tests).
Status LoadCanalConfig(const std::string& canal_properties, const ConfigOverrides& overrides, CanalConfig* out,
                       EnvLookup env = nullptr);

struct InstanceConfig {
  std::string destination;
  std::string properties_file;  // absolute path of instance.properties
  std::string contents;         // the file's text as read (edits are detected by it)

  parser::EventParserOptions parser;
  store::RingStoreOptions store;
  // The filter keys as written (after substitution), for logs and the
  // sink; compiled into `sink` already.
  std::string filter_regex, filter_black_regex, filter_field, filter_black_field;
  sink::EntrySinkOptions sink;
  snapshot::SnapshotOptions snapshot;  // canal.instance.snapshot.*
  // canal.instance.cluster.*: a balanced cluster's hints (docs/cluster.md).
  double cluster_weight = 1.0;                  // .weight
  std::vector<std::string> cluster_preferred;   // .preferred: ip:port, comma-separated
  std::vector<std::string> cluster_excluded;    // .excluded
};

// canal.memory.budget's default: 1 GiB, or a quarter of the machine's
// memory when that is less.
uint64_t DefaultMemoryBudget();
// "1073741824", "1024m", "1g", "512k" (case-insensitive; 1k = 1024): *bytes;
// false for anything else or an overflow.
bool ParseByteSize(std::string_view text, uint64_t* bytes);

// Where a destination's instance.properties lives.
std::string InstancePropertiesPath(const CanalConfig& canal, const std::string& destination);

// Reads conf_dir/<destination>/instance.properties (NotFound when missing)
// over canal.properties' defaults.
Status LoadInstanceConfig(const CanalConfig& canal, const std::string& destination, InstanceConfig* out);
// The same from text already read (the registry reads the file once).
Status ParseInstanceConfig(const CanalConfig& canal, const std::string& destination, const std::string& path,
                           const std::string& contents, InstanceConfig* out);

// canal.instance.connectionCharset: Canal writes Java names (UTF-8,
// ISO-8859-1, GBK); the server speaks MySQL names. "UTF-8" -> "utf8mb4".
// InvalidArgument for a name neither knows.
Status MysqlCharsetName(std::string_view name, std::string* mysql_name);

}  // namespace canal::server
