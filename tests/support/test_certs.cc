#include "support/test_certs.h"

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace canal::testing {

namespace {

namespace fs = std::filesystem;

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* x) const { X509_free(x); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

constexpr long kDay = 24 * 3600;

std::string OpenSslError(const std::string& what) {
  char buf[256] = {};
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  return what + ": " + buf;
}

struct Spec {
  std::string common_name;
  bool is_ca = false;
  bool server = false;  // serverAuth and the loopback names; else clientAuth
  long not_before = -kDay;
  long not_after = 30 * kDay;
};

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key`, signed by issuer/issuer_key (itself when null).
Cert MakeCert(const Spec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, long serial) {
  Cert cert(X509_new());
  if (!cert) return nullptr;
  X509* x = cert.get();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
  X509_gmtime_adj(X509_getm_notBefore(x), spec.not_before);
  X509_gmtime_adj(X509_getm_notAfter(x), spec.not_after);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("canal tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : x;
  X509_set_issuer_name(x, X509_get_subject_name(signer));
  bool ok = AddExtension(x, signer, NID_subject_key_identifier, "hash") &&
            AddExtension(x, signer, NID_authority_key_identifier, "keyid:always");
  if (spec.is_ca) {
    ok = ok && AddExtension(x, signer, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExtension(x, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    ok = ok && AddExtension(x, signer, NID_basic_constraints, "critical,CA:FALSE") &&
         AddExtension(x, signer, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
         AddExtension(x, signer, NID_ext_key_usage, spec.server ? "serverAuth" : "clientAuth");
    if (spec.server) ok = ok && AddExtension(x, signer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  }
  if (!ok || X509_sign(x, issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) return nullptr;
  return cert;
}

bool WritePem(const fs::path& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = cert != nullptr ? PEM_write_X509(f, cert) == 1
                                  : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

TestPki::TestPki(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  long serial = 1;
  // Makes a key and certificate, writes them as <name>.pem and <name>.key.
  const auto make = [&](const std::string& file, const Spec& spec, X509* issuer, EVP_PKEY* issuer_key, Key* key_out,
                        Cert* cert_out) -> CertFiles {
    if (!error_.empty()) return {};
    Key key(EVP_EC_gen("P-256"));
    if (!key) {
      error_ = OpenSslError("EC key for " + file);
      return {};
    }
    Cert cert = MakeCert(spec, key.get(), issuer, issuer_key, serial++);
    if (!cert) {
      error_ = OpenSslError("certificate " + file);
      return {};
    }
    CertFiles files{(dir / (file + ".pem")).string(), (dir / (file + ".key")).string()};
    if (!WritePem(files.cert, cert.get(), nullptr) || !WritePem(files.key, nullptr, key.get())) {
      error_ = "cannot write " + files.cert + " or its key";
      return {};
    }
    if (key_out != nullptr) *key_out = std::move(key);
    if (cert_out != nullptr) *cert_out = std::move(cert);
    return files;
  };
  Key ca_key, other_key;
  Cert ca_cert, other_cert;
  ca_ = make("ca", {"canal test CA", true, false}, nullptr, nullptr, &ca_key, &ca_cert);
  other_ca_ = make("other-ca", {"another test CA", true, false}, nullptr, nullptr, &other_key, &other_cert);
  if (!error_.empty()) return;
  const long expired_from = -10 * kDay, expired_until = -kDay;
  server = make("server", {"127.0.0.1", false, true}, ca_cert.get(), ca_key.get(), nullptr, nullptr);
  server_expired = make("server-expired", {"127.0.0.1", false, true, expired_from, expired_until}, ca_cert.get(),
                        ca_key.get(), nullptr, nullptr);
  server_other_ca = make("server-other-ca", {"127.0.0.1", false, true}, other_cert.get(), other_key.get(), nullptr,
                         nullptr);
  client = make("client", {"canal client", false, false}, ca_cert.get(), ca_key.get(), nullptr, nullptr);
  client_expired = make("client-expired", {"canal client", false, false, expired_from, expired_until}, ca_cert.get(),
                        ca_key.get(), nullptr, nullptr);
  client_other_ca = make("client-other-ca", {"canal client", false, false}, other_cert.get(), other_key.get(), nullptr,
                         nullptr);
}

}  // namespace canal::testing
