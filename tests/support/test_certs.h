// TestPki: throwaway certificates for the TLS tests, made at test time with
// OpenSSL's C API (no private key is ever committed). Two CAs, and from them
// server and client certificates for every case the tests need:
//
//   TestPki pki(dir);                       // writes PEM files into dir
//   ASSERT_TRUE(pki.ok()) << pki.error();
//   o.tls.ca_file = pki.ca();               // the CA that signed pki.server
//   server.cert_file = pki.server.cert; server.key_file = pki.server.key;
//
// Server certificates hold IP 127.0.0.1 and DNS localhost. EC P-256 keys:
// making the whole set takes milliseconds.
#pragma once

#include <filesystem>
#include <string>

namespace canal::testing {

struct CertFiles {
  std::string cert;  // PEM certificate
  std::string key;   // PEM private key (unencrypted)
};

class TestPki {
 public:
  explicit TestPki(const std::filesystem::path& dir);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  const std::string& ca() const { return ca_.cert; }              // signs the certificates below but *_other_ca
  const std::string& other_ca() const { return other_ca_.cert; }  // a second, unrelated CA

  CertFiles server;            // by ca(), valid now
  CertFiles server_expired;    // by ca(), expired a day ago
  CertFiles server_other_ca;   // by other_ca(), valid now
  CertFiles client;            // by ca(), valid now, for client authentication
  CertFiles client_expired;    // by ca(), expired a day ago
  CertFiles client_other_ca;   // by other_ca(), valid now

 private:
  CertFiles ca_, other_ca_;
  std::string error_;
};

}  // namespace canal::testing
