// SessionServer: Canal's client protocol over TCP (Boost.Asio, C++20
// coroutines): handshake, authentication, SUBSCRIPTION, GET (every timeout
// form), CLIENTACK, CLIENTROLLBACK, UNSUBSCRIPTION, and 400 for the packet
// types Canal does not serve — byte-compatible with Canal 1.1.x clients (see
// docs/protocol.md).
//
// A waiting GET never blocks an I/O thread: it waits on the ring's
// NotifyWhen and a timer. An ack moves the client's cursor in the meta
// manager and is made durable (MetaManager::Flush) before the server answers
// that client's next request; the flush runs on a small blocking pool, awaited,
// so a slow disk or ZooKeeper never holds an I/O thread. One subscriber per destination at a time (the
// ring has one consumer); a second is refused with 400 naming the holder.
// Bad input from a client (zero or oversized frame length, unparsable packet,
// unknown destination) ends that client's session with an error Ack or a closed
// socket; everyone else is served on. A GET or ack for a destination the
// registry no longer finds (HA: not active here any more) ends the session
// with an error Ack, never data.
//
// Threads: Start() runs `io_threads` threads, each with its own I/O context;
// a session is given to one of them at accept (round-robin) and stays there.
// Stop() closes the listener and every session and joins them. Safe to call
// Stop() from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "canal/common/status.h"
#include "canal/server/destination.h"

namespace spdlog {
class logger;
}

namespace canal::server {

class ClientStatsBook;
class ClientUsers;

// TLS on the client port (docs/configuration.md, "TLS"). Off: plain TCP,
// byte for byte Canal's protocol. Paths are absolute (config.cc resolves
// them from the folder of canal.properties).
struct ServerTlsOptions {
  bool enabled = false;         // canal.tls.enabled
  std::string cert_file;        // canal.tls.cert: PEM, the server's certificate (and its chain)
  std::string key_file;         // canal.tls.key: PEM, its private key
  std::string client_ca_file;   // canal.tls.clientCa: set = clients must show a certificate it signed
  std::string min_version = "TLSv1.2";  // canal.tls.minVersion: TLSv1.2 or TLSv1.3
};

struct SessionServerOptions {
  std::string ip = "0.0.0.0";             // canal.ip ("" = all interfaces)
  uint16_t port = 11111;                  // canal.port; 0 = any free port (tests)
  std::string user;                       // canal.user ("" = any user)
  std::string password_stored;            // canal.passwd: hex SHA1(SHA1(pw)); "" = no password
  // canal.users.file (users_file.h): set, it decides who logs in (canal.user
  // among its users) and what each may read; null: canal.user / canal.passwd above.
  std::shared_ptr<ClientUsers> users;
  uint32_t max_frame_bytes = 64u << 20;   // larger (or zero) frame lengths close the connection
  int io_threads = 2;
  // Used when a client sends no net_read_timeout; its own value otherwise.
  int default_idle_timeout_ms = 3'600'000;
  // canal.get.low.latency (ours): every waiting GET returns as soon as any
  // entry is there, as if each client asked with Get.low_latency; off keeps
  // Canal's rule (wait for a full batch or the timeout).
  bool low_latency_get = false;
  // canal.file.flush.warn (ms): a cursor flush (an fsync of meta.dat, or a ZooKeeper write)
  // that takes longer is logged as a warning: a client's next reply waits for it, so a slow
  // disk shows as delivery stalls. 0: never.
  int slow_flush_warn_ms = 100;
  // Where sessions count requests, rows and latencies per destination
  // (metrics, /status); null counts nothing.
  std::shared_ptr<ClientStatsBook> client_stats;

  // Until a client has logged in it gets almost nothing (docs/operations.md,
  // "Hostile clients"): frames over pre_auth_max_frame_bytes close it, and
  // it must log in within login_timeout_ms.
  uint32_t pre_auth_max_frame_bytes = 64u << 10;  // canal.connections.preauth.max.frame.bytes
  int login_timeout_ms = 10'000;                  // canal.connections.login.timeout (ms)
  // Connections past these are closed on accept, before the handshake; 0 = no limit.
  size_t max_connections = 1024;             // canal.connections.max
  size_t max_connections_per_address = 64;   // canal.connections.max.per.address
  // The TLS handshake counts as part of the login: it must end within
  // login_timeout_ms, and a failed one closes the connection.
  ServerTlsOptions tls;
};

class SessionServer {
 public:
  // Binds and listens (an error names the address); serves after Start().
  static Status Create(SessionServerOptions options, DestinationRegistry* registry,
                       std::shared_ptr<spdlog::logger> logger, std::unique_ptr<SessionServer>* out);
  virtual ~SessionServer() = default;
  virtual void Start() = 0;
  virtual void Stop() = 0;
  // The bound port (the real one when options.port was 0).
  virtual uint16_t port() const = 0;
  // Sessions open now (tests, status lines).
  virtual size_t sessions() const = 0;
  // Closes every session subscribed to `destination`, from any thread
  // (HA: this server stopped being active for it). New subscriptions and
  // each GET and ack ask the registry, which refuses the destination while
  // it is not active here, so nothing is served in between.
  virtual void CloseDestination(const std::string& destination, const std::string& reason) = 0;
};

}  // namespace canal::server
