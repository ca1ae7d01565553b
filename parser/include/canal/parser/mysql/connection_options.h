// ConnectionOptions: how to reach and log in to one MySQL/MariaDB primary.
//
// Shared by the query connection (libmysqlclient) and the dump connection (our
// own protocol client); filled from canal.instance.master.address,
// canal.instance.dbUsername / dbPassword / connectionCharset.
#pragma once

#include <cstdint>
#include <string>

namespace canal::mysql {

enum class TlsMode : uint8_t {
  kDisabled,   // never TLS
  kPreferred,  // TLS when the server offers it (the default, like the mysql client)
  kRequired,   // fail when the server does not offer TLS
};

struct ConnectionOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 3306;
  std::string user;
  std::string password;
  // Character set of the session (canal.instance.connectionCharset).
  std::string charset = "utf8mb4";
  TlsMode tls = TlsMode::kPreferred;
  std::string tls_ca_file;  // verify the server certificate against it; "" = no verification
  // caching_sha2_password without TLS: the server's RSA public key (PEM file).
  // When empty the key is requested from the server (allow_public_key_retrieval).
  std::string server_public_key_file;
  bool allow_public_key_retrieval = true;
  int connect_timeout_ms = 10'000;
  // A read that sees no byte for this long fails (the dump connection's server
  // sends heartbeats well inside it, so silence means a dead peer).
  int read_timeout_ms = 30'000;

  // "host:port" for messages.
  std::string Address() const { return host + ":" + std::to_string(port); }
};

}  // namespace canal::mysql
