// ReplayPrimary: a small MySQL 8 primary for tests. It speaks the server side of
// the client/server protocol (handshake v10; mysql_native_password and
// caching_sha2_password with its fast path, full authentication over TLS and
// over RSA key exchange; the statements a replica sends) and answers
// COM_REGISTER_SLAVE, COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID by streaming real
// binlog files (the fake ROTATE and the FORMAT_DESCRIPTION first, heartbeats
// when idle, GTID dumps skipping the transactions the replica has).
//
// Faults on demand (Arm*): drop the connection in the middle of an event,
// corrupt an event's checksum, switch authentication to an unknown plugin,
// refuse the dump with ERROR 1236. A primary's and a replica's state for
// failover tests: read_only, the replication status, gtid_executed and
// gtid_purged, changeable while serving. See tests/support/README.md.
//
// Threads: Start() runs an accept thread and one thread per client; every public
// method may be called from any thread. Stop() closes every connection and
// joins the client threads, as a killed server; it keeps its port, closing each
// new connection at once, until the destructor, so that another test's primary
// (tests run in parallel over one port range) cannot take it while a client
// still reconnects to it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "canal/common/status.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace replay {
struct Shared;
}

struct ReplayPrimaryOptions {
  // Binlog files served in this order (their base names are the file names
  // the replica sees); read whole at Start().
  std::vector<std::string> binlog_files;
  std::string user = "repl";
  std::string password = "repl-secret";
  // The account's plugin: mysql_native_password or caching_sha2_password.
  std::string account_plugin = "caching_sha2_password";
  // The plugin the greeting names ("" = the account's); a client answering
  // with another one is switched to the account's.
  std::string default_plugin;
  // caching_sha2_password: whether the account is in the server's cache at
  // start (fast path). A successful full authentication caches it, as MySQL does.
  bool sha2_cached = false;
  // Offer TLS (a self-signed certificate generated at Start() into work_dir).
  bool tls = true;
  // Where the certificate and public key PEM files are written; "" = a fresh
  // directory under $TMPDIR, removed by the destructor.
  std::string work_dir;
  std::string server_version = "8.0.36-replay";
  uint32_t server_id = 1;
  std::string server_uuid = "5a1b2c3d-0000-4000-8000-00000000cafe";
  // GTID sets as text ("uuid:1-5,uuid2:tag:1-3"): what the server has executed
  // (SHOW MASTER STATUS, @@gtid_executed) and purged (@@gtid_purged). A GTID
  // dump is refused as MySQL refuses it (ERROR 1236) when the replica has
  // transactions of server_uuid (untagged) that gtid_executed lacks, or lacks
  // some of gtid_purged. Start() refuses text it cannot parse.
  std::string gtid_executed;
  std::string gtid_purged;
  // @@read_only (SELECT: 0/1, SHOW VARIABLES: ON/OFF).
  bool read_only = false;
  // "host:port" of the server this one replicates from: SHOW SLAVE STATUS /
  // SHOW REPLICA STATUS then show one running replication connection to it;
  // "" = not a replica (an empty result).
  std::string replicating_from;
  // Extra or overriding values for SHOW VARIABLES / SELECT @@name (read_only,
  // gtid_executed and gtid_purged given here stand for the options above).
  std::map<std::string, std::string> variables;
  // Listening port: the first free one in [port_first, port_last].
  uint16_t port_first = canal::testing::TestPort("replay_primary");
  uint16_t port_last = canal::testing::TestPort("replay_primary", 199);
};

// What the server saw, for tests to assert on.
struct ReplayPrimaryStats {
  uint64_t connections = 0;
  uint64_t logins = 0;             // successful authentications
  uint64_t fast_auths = 0;         // caching_sha2_password from the cache
  uint64_t full_auths_tls = 0;     // caching_sha2_password full, password over TLS
  uint64_t full_auths_rsa = 0;     // caching_sha2_password full, RSA-encrypted password
  uint64_t public_key_requests = 0;
  uint64_t native_auths = 0;
  uint64_t auth_failures = 0;
  uint64_t queries = 0;
  uint64_t schema_queries = 0;     // SELECTs from information_schema (answered with no rows)
  uint64_t registrations = 0;      // COM_REGISTER_SLAVE
  uint64_t dumps = 0;              // COM_BINLOG_DUMP
  uint64_t gtid_dumps = 0;         // COM_BINLOG_DUMP_GTID
  uint64_t events_sent = 0;        // binlog events from the files (not fake/heartbeat)
  uint64_t transactions_skipped = 0;  // GTID dumps: transactions in the replica's set (tagged ones too)
  uint64_t gtid_refusals = 0;         // GTID dumps refused: replica ahead of gtid_executed, or purged
  uint64_t heartbeats = 0;
  uint64_t faults_fired = 0;
  std::string last_dump_file;      // of the last dump request
  uint64_t last_dump_position = 0;
  uint32_t last_slave_server_id = 0;
};

class ReplayPrimary {
 public:
  explicit ReplayPrimary(ReplayPrimaryOptions options);
  ~ReplayPrimary();
  ReplayPrimary(const ReplayPrimary&) = delete;
  ReplayPrimary& operator=(const ReplayPrimary&) = delete;

  // Loads the files, makes the keys, listens. Errors name the file or port.
  Status Start();
  void Stop();

  uint16_t port() const { return port_; }
  // PEM files written at Start(): the TLS certificate (a CA for itself) and the
  // RSA public key caching_sha2_password sends on request.
  const std::string& certificate_file() const { return cert_file_; }
  const std::string& public_key_file() const { return public_key_file_; }
  ReplayPrimaryStats stats() const;

  // Faults. The event ones fire once, on the nth binlog event (0-based, counted
  // per dump from the first event after the FORMAT_DESCRIPTION) of the next
  // dump that reaches it; the others hold until disarmed.
  void ArmDropMidEvent(uint64_t nth_event);
  void ArmCorruptChecksum(uint64_t nth_event);
  void SetUnknownAuthPlugin(bool on);  // auth switch to a plugin no client has
  void SetBinlogPurged(bool on);       // dumps answered with ERROR 1236
  // Forget cached caching_sha2_password logins (the next login is a full one).
  void FlushAuthCache();

  // What a promotion (or a demotion) changes, while serving: the statements and
  // dumps that come after the call see the new value. The GTID sets are
  // InvalidArgument (and left as they were) when the text does not parse.
  void SetReadOnly(bool on);
  void SetReplicatingFrom(std::string host_port);  // "" = not a replica
  Status SetGtidExecuted(std::string gtid_set);
  Status SetGtidPurged(std::string gtid_set);

 private:
  void AcceptLoop();

  ReplayPrimaryOptions options_;
  std::shared_ptr<replay::Shared> shared_;
  int listen_fd_ = -1;
  std::atomic<bool> release_port_{false};  // the destructor: the accept thread ends
  uint16_t port_ = 0;
  bool own_work_dir_ = false;
  std::string cert_file_, public_key_file_;
  std::thread accept_thread_;
  std::mutex threads_mu_;
  std::vector<std::thread> session_threads_;
};

}  // namespace canal::testing
