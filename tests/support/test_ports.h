// Every TCP port a test binds, in one table: named blocks that never overlap
// (TestPorts.BlocksDoNotOverlap checks), so tests that ctest runs side by side
// cannot take each other's ports. A test takes its ports from its block:
//
//   constexpr uint16_t kSandboxPort = canal::testing::TestPort("server_e2e");      // the block's first
//   constexpr uint16_t kKillPort = canal::testing::TestPort("server_e2e", 11);     // its twelfth
//
// TestPort is consteval: an unknown block or an index past the block's end
// does not compile. A new test adds a block here (after the last one in its
// range, or a fresh range) and, when it shares sandboxes with other suites,
// joins their ctest group in tests/CMakeLists.txt (integration_groups). A
// literal port in a test (kXxxPort = 14001, ServerSuite<14001>,
// StartServer(14001)) fails TestPorts.NoTestDeclaresALiteralPort.
#pragma once

#include <cstdint>
#include <string_view>

namespace canal::testing {

struct PortBlock {
  std::string_view name;
  uint16_t first;
  uint16_t count;
  std::string_view users;
};

inline constexpr PortBlock kPortBlocks[] = {
    {"zk_coord", 12181, 1, "canal_coord_tests, canal_meta_zk_tests: shared ZooKeeper (ctest fixture zk_12181)"},
    {"zk_server_ha", 12182, 1, "canal_server_ha_tests: shared ZooKeeper (fixture zk_12182)"},
    {"zk_client_cluster", 12183, 1, "canal_client_cluster_tests: shared ZooKeeper (fixture zk_12183)"},
    {"ha_zk", 12191, 1, "Ha.*: the pair's ZooKeeper (ha_fixture.h)"},
    {"mariadb_live", 13421, 1, "MariadbLive.*"},
    {"dump_query_live", 13431, 3, "DumpConnectionLive.* (13431), QueryConnectionLive*.* (13432-13433)"},
    {"replication", 13441, 1, "Replication.*, Misconfigured.*, StartPositions.*"},
    {"daemon", 13451, 1, "ServerDaemonTest.*, StopScript.*"},
    {"pipeline", 13461, 1, "Pipeline.*"},
    {"server_e2e", 13471, 16, "ServerE2e.*: the sandbox, then one canal-server per test"},
    {"ha_mariadb", 13521, 1, "Ha.*: the pair's MariaDB (ha_fixture.h)"},
    {"ha_servers", 13531, 9, "Ha.*: canal-server pairs"},
    {"observability", 14100, 100, "Observability.*, ObservabilityHa.*: sandboxes, servers, Prometheus"},
    {"mq", 14200, 100,
     "canal_mq_kafka_tests, canal_mq_rabbitmq_tests: sandboxes, brokers, servers (KafkaSnapshot.*: 14240-14245; "
     "canal_mq_kafka_pair_tests, KafkaPair.*: 14260-14265; KafkaBadBroker.* and RabbitMq's bad-broker tests: "
     "14250-14259; canal_mq_exactly_once_tests, KafkaExactlyOnce.*: 14280-14283)"},
    {"canal_wire", 14351, 13, "CanalWire.* (14351), LowLatencyGet.* (14361-14363)"},
    {"ha_servers_late", 14371, 6, "Ha.*: the later canal-server pairs"},
    {"server_messages", 14381, 2, "ServerMessages.*"},
    {"hostile", 14401, 4, "HostileClients.*: the sandbox and three canal-servers"},
    {"schema_history", 14601, 8, "SchemaHistoryLive.* (14601), SchemaHistoryRandom.* (14602), SchemaHistoryZk.*"},
    {"slave_id", 14702, 1, "SlaveIdConflict.*"},
    {"osc", 14810, 5, "*OnlineSchemaChange*: MariaDB, canal-servers, ZooKeeper"},
    {"old_temporal", 14861, 5, "MariadbOldTemporal.*"},
    {"optmeta", 14880, 2, "*OptionalMetadataLive.*"},
    {"schema_lag", 14905, 3, "SchemaHistoryLag.* (14905-14906), SchemaHistoryRandom.* FULL (14907)"},
    {"snapshot_live", 14951, 1, "canal_snapshot_live_tests: ChunkReaderLive.*, ChunkConsistencyLive.*"},
    {"snapshot_value", 14961, 2, "SnapshotSameValueLive.* (14961), SnapshotSameValueMinimalLive.* (14962)"},
    {"mirror", 15010, 4, "MirrorOracle.*: the source and mirror sandboxes (15010, 15011), canal-servers (15012-15013)"},
    {"snapshot_e2e", 15020, 4, "SnapshotE2e.*: the source and mirror sandboxes (15020, 15021), canal-server (15022)"},
    {"snapshot_ha", 15030, 5, "SnapshotHa.*: source and mirror (15030, 15031), ZooKeeper (15032), canal-servers (15033-15034)"},
    {"admin", 15040, 8, "AdminApiE2e.*: the sandbox (15040), canal-servers (15041-15043), their metrics ports (15044-15047)"},
    {"client_tls", 15050, 8, "ClientTls*.*: the sandbox (15050), canal-servers and their metrics ports (15051-15057)"},
    {"client_users", 15060, 8, "ClientUsers*.*: the sandbox (15060), canal-servers and their metrics ports (15061-15067)"},
    {"admin_page", 15070, 8, "AdminPageBrowser.*: the sandbox (15070), canal-server (15071), its metrics port (15072), chromedriver (15073)"},
    {"admin_ops", 15080, 16, "AdminOps*.*: the sandbox (15080), canal-servers and their metrics ports (15081-15095)"},
    {"memory_budget", 15096, 4, "MemoryBudgetE2e.*: the sandbox (15096), a canal-server (15097), its metrics port (15098)"},
    {"value_oracle", 15110, 40, "ValueOracle.*: the sandbox and a canal-server per table"},
    {"failover", 15200, 20,
     "ReplicationPair.* (15200-15201), Failover*.* (15202-15209: primary/replica pairs, canal-servers, ZooKeeper), "
     "PrimaryProbeLive.* (15210-15212)"},
    {"fleet", 15300, 40,
     "Fleet*.*: MariaDB sandboxes (15300-15302), ZooKeeper (15303), canal-servers (15310-15319), their metrics "
     "ports (15320-15329)"},
    {"replay_primary", 15600, 200, "the replay primary's listeners (replay_primary.h)"},
};

// The port `index` of block `block`; a compile error when there is none.
consteval uint16_t TestPort(std::string_view block, uint16_t index = 0) {
  for (const PortBlock& b : kPortBlocks) {
    if (b.name != block) continue;
    if (index >= b.count) throw "TestPort: index past the end of the block (tests/support/test_ports.h)";
    return static_cast<uint16_t>(b.first + index);
  }
  throw "TestPort: no such port block (tests/support/test_ports.h)";
}

}  // namespace canal::testing
