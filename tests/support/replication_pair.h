// ReplicationPair: two MariadbSandboxes, A and B, as a GTID primary and
// replica, with the moves a failover manager (orchestrator) makes on MariaDB:
// kill the primary, promote the replica, rejoin the old primary as a replica,
// a planned switchover. For the failover tests, which watch canal follow them.
//
//   ReplicationPair pair(TestPort("failover", 2), TestPort("failover", 3));
//   std::string error;
//   ASSERT_TRUE(pair.Start(&error)) << error;              // A primary, B replica
//   ASSERT_TRUE(pair.primary().Sql("INSERT ...")) << pair.primary().error();
//   ASSERT_TRUE(pair.WaitReplicaCaughtUp(30s, &error)) << error;
//   ASSERT_TRUE(pair.KillPrimary(&error)) << error;        // kill -9 of A
//   ASSERT_TRUE(pair.PromoteReplica(&error)) << error;     // now B is primary()
//   ASSERT_TRUE(pair.RejoinOldPrimaryAsReplica(&error)) << error;  // A replicates B
//
// The servers' settings (each start writes them into my.cnf):
// - server_id 1 (A) and 2 (B), both gtid_domain_id=0: one domain, as in a
//   single-primary topology, so a GTID's server id says who wrote it.
// - log_slave_updates=ON: a replica's binlog holds what it applied, so once
//   promoted it serves its replicas (and canal) the whole history.
// - gtid_strict_mode=ON: what a real deployment chooses. A divergence (a
//   transaction one server has and the other lacks) then stops replication
//   with an error instead of being silently skipped or duplicated; the
//   divergence tests rely on seeing it.
// - read_only=ON on both in my.cnf, and Start sets it OFF on the primary
//   (orchestrator's convention: any server that restarts comes back read-only
//   until a failover manager says otherwise). So a primary restarted through
//   its sandbox needs `SET GLOBAL read_only=OFF` again. Root (ALL PRIVILEGES,
//   so READ ONLY ADMIN) writes even to a read-only server; the flag is the
//   role marker that probes and tests check.
// - binlog ROW, FULL row image and FULL metadata: the sandbox script's own.
//
// Every replica (B in Start, the old primary after a switchover or rejoin) is
// set up with CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos,
// MASTER_DEMOTE_TO_SLAVE=1, MASTER_CONNECT_RETRY=1. A demoted primary's
// gtid_slave_pos is stale (it stops where it last replicated, before what it
// wrote as primary), so plain slave_pos would ask for transactions it already
// has; MASTER_DEMOTE_TO_SLAVE first merges its gtid_binlog_pos into
// gtid_slave_pos. That is what MASTER_USE_GTID=current_pos did, which MariaDB
// deprecated in 10.10 (MDEV-20122) in favour of this.
//
// Every function returns false with *error naming the step, the server (role
// and port) and the server's message; none aborts. MariadbSandbox references
// stay valid for the pair's life (the roles swap, the objects do not move).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/mariadb_sandbox.h"

namespace canal::testing {

// One GTID, domain-server-sequence.
struct Gtid {
  uint32_t domain = 0;
  uint32_t server_id = 0;
  uint64_t seq = 0;
  std::string ToString() const;
};

// A GTID position such as @@gtid_binlog_pos ("0-1-5,1-3-9"), by domain;
// false on malformed text. "" is the empty position.
bool ParseGtidPos(const std::string& text, std::map<uint32_t, Gtid>* pos);

// Has `applied` everything `target` names: for each of target's domains a
// later sequence number, or the same GTID (the same number from another
// server id is a divergence, not a catch-up).
bool GtidPosCovers(const std::map<uint32_t, Gtid>& applied, const std::map<uint32_t, Gtid>& target);

// SHOW SLAVE STATUS (the fields the harness reads) plus @@gtid_slave_pos.
struct ReplicaStatus {
  bool configured = false;  // false: SHOW SLAVE STATUS is empty (not a replica)
  std::string io_running;   // "Yes", "No", "Connecting"
  std::string sql_running;  // "Yes", "No"
  int io_errno = 0;
  std::string io_error;
  int sql_errno = 0;
  std::string sql_error;
  std::string sql_state;  // Slave_SQL_Running_State
  uint16_t master_port = 0;
  std::string master_log_file;  // "" until the primary accepted the GTID start position
  std::string gtid_io_pos;
  std::string gtid_slave_pos;
  std::string ToString() const;  // one line for error messages
};

// Reads `server`'s replica status as root over its socket.
bool ReadReplicaStatus(MariadbSandbox& server, ReplicaStatus* status, std::string* error);

struct ReplicationPairOptions {
  uint16_t port_a = 0;  // required: A, the first primary
  uint16_t port_b = 0;  // required: B, the first replica
  std::string dir_a;    // "" = MariadbSandbox's default for the port
  std::string dir_b;
  uint32_t server_id_a = 1;
  uint32_t server_id_b = 2;
  std::vector<std::string> extra_options;  // more my.cnf lines for both, after the pair's
};

class ReplicationPair {
 public:
  explicit ReplicationPair(ReplicationPairOptions options);
  ReplicationPair(uint16_t port_a, uint16_t port_b);
  ~ReplicationPair();  // stops whatever still runs
  ReplicationPair(const ReplicationPair&) = delete;
  ReplicationPair& operator=(const ReplicationPair&) = delete;

  // Starts A and B from empty data dirs (side by side), A read-write, and
  // makes B a GTID replica of A; true once both of B's threads run.
  bool Start(std::string* error);
  // Clean shutdown of both, side by side. True when both are down.
  bool Stop(std::string* error = nullptr);

  // The roles: primary() is the one written to; replica() the other, even
  // while it is down (killed, not yet rejoined).
  MariadbSandbox& primary() { return *servers_[primary_]; }
  MariadbSandbox& replica() { return *servers_[1 - primary_]; }
  uint16_t primary_port() const { return servers_[primary_]->port(); }
  uint16_t replica_port() const { return servers_[1 - primary_]->port(); }
  // The servers by name, whatever their role.
  MariadbSandbox& a() { return *servers_[0]; }
  MariadbSandbox& b() { return *servers_[1]; }

  // Waits until the replica has applied everything in the primary's
  // @@gtid_binlog_pos as it is at the call. Fails early when a replication
  // thread stops, with its error.
  bool WaitReplicaCaughtUp(std::chrono::milliseconds timeout, std::string* error);

  // kill -9 of the primary's mariadbd. The roles stay until PromoteReplica.
  bool KillPrimary(std::string* error);

  // Promotes the replica as orchestrator does: stop the IO thread, let the
  // SQL thread apply what the relay log holds (bounded by `drain_timeout`),
  // then STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only=OFF. The roles
  // swap: the promoted server is primary().
  bool PromoteReplica(std::string* error,
                      std::chrono::milliseconds drain_timeout = std::chrono::seconds(30));

  // STOP / START SLAVE IO_THREAD on the replica: it misses (then fetches)
  // what the primary writes meanwhile, for divergence tests.
  bool StopReplicaIo(std::string* error);
  bool StartReplicaIo(std::string* error);

  // Both up: read_only=ON on the primary, wait until the replica caught up
  // (else read_only goes back OFF and the roles stay), promote the replica,
  // and make the old primary a GTID replica of it. The roles swap.
  bool PlannedSwitchover(std::string* error, std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // After KillPrimary and PromoteReplica: starts the killed server again (same
  // data, read_only=ON) and makes it a GTID replica of the new primary; true
  // once it has caught up. When its binlog holds transactions the new primary
  // lacks, the IO thread stops with error 1236 ("... diverged ..."): false,
  // with *error saying so; the server stays up, its replication stopped.
  bool RejoinOldPrimaryAsReplica(std::string* error,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  // "role (port N)" of a server, for messages.
  std::string Name(const MariadbSandbox& server) const;
  // Runs `sql` on `server`; on failure *error = "<step> on <name>: <message>".
  bool Run(MariadbSandbox& server, const std::string& sql, const std::string& step, std::string* error,
           std::string* output = nullptr);
  // CHANGE MASTER TO `source` on `target`, START SLAVE, and wait (`timeout`)
  // until `target` runs both threads and has caught up with `source`.
  bool ReplicateFrom(MariadbSandbox& target, MariadbSandbox& source, std::chrono::milliseconds timeout,
                     std::string* error);
  // Waits until `target`'s gtid_slave_pos covers `source`'s gtid_binlog_pos
  // (and, with `require_running`, both threads run, connected); fails early
  // when a replication thread stops.
  bool WaitCaughtUp(MariadbSandbox& target, MariadbSandbox& source, std::chrono::milliseconds timeout,
                    bool require_running, std::string* error);

  std::unique_ptr<MariadbSandbox> servers_[2];
  int primary_ = 0;   // index into servers_
  int killed_ = -1;   // the server KillPrimary took down, until it is started again
};

}  // namespace canal::testing
