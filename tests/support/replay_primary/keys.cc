// Key material made fresh for every replay primary: one RSA key serves the
// self-signed TLS certificate and caching_sha2_password's key exchange.
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>

#include <memory>

#include "support/replay_primary/replay_internal.h"

namespace canal::testing::replay {
namespace {

std::string OpenSslError(std::string_view what) {
  const unsigned long e = ERR_get_error();
  char buf[256] = "unknown error";
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return std::string(what) + ": " + buf;
}

std::string Digest(const EVP_MD* md, std::string_view a, std::string_view b) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1 || EVP_DigestUpdate(ctx.get(), a.data(), a.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), b.data(), b.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), out, &len) != 1) {
    return std::string();  // allocation failure: the login then fails
  }
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

}  // namespace

std::string Sha1(std::string_view a, std::string_view b) { return Digest(EVP_sha1(), a, b); }
std::string Sha256(std::string_view a, std::string_view b) { return Digest(EVP_sha256(), a, b); }

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n));
  for (char& c : out) c = static_cast<char>(0x21 + static_cast<uint8_t>(c) % 0x5E);  // printable, never NUL
  return out;
}

KeyMaterial::~KeyMaterial() {
  if (tls != nullptr) SSL_CTX_free(tls);
  if (key != nullptr) EVP_PKEY_free(key);
}

Status MakeKeyMaterial(KeyMaterial* km) {
  // One key per process: making a 2048-bit key costs a few hundred ms, and a
  // suite starts dozens of primaries.
  static EVP_PKEY* const shared_key = EVP_RSA_gen(2048);
  if (shared_key == nullptr) return Status::IOError(OpenSslError("generating the RSA key"));
  if (EVP_PKEY_up_ref(shared_key) != 1) return Status::IOError(OpenSslError("EVP_PKEY_up_ref"));
  km->key = shared_key;

  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
  if (!cert) return Status::IOError(OpenSslError("X509_new"));
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), km->key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("canal-replay-primary"),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost") ||
      X509_sign(cert.get(), km->key, EVP_sha256()) == 0) {
    return Status::IOError(OpenSslError("making the self-signed certificate"));
  }

  std::unique_ptr<BIO, decltype(&BIO_free)> pub(BIO_new(BIO_s_mem()), &BIO_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> crt(BIO_new(BIO_s_mem()), &BIO_free);
  if (!pub || !crt || PEM_write_bio_PUBKEY(pub.get(), km->key) != 1 || PEM_write_bio_X509(crt.get(), cert.get()) != 1) {
    return Status::IOError(OpenSslError("writing PEM"));
  }
  km->public_pem = BioText(pub.get());
  km->cert_pem = BioText(crt.get());

  km->tls = SSL_CTX_new(TLS_server_method());
  if (km->tls == nullptr || SSL_CTX_use_certificate(km->tls, cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(km->tls, km->key) != 1) {
    return Status::IOError(OpenSslError("setting up the TLS context"));
  }
  return Status::OK();
}

bool RsaDecrypt(EVP_PKEY* key, std::string_view cipher, std::string* plain) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new(key, nullptr), &EVP_PKEY_CTX_free);
  size_t len = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(cipher.data());
  if (!ctx || EVP_PKEY_decrypt_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING) <= 0 ||
      EVP_PKEY_decrypt(ctx.get(), nullptr, &len, in, cipher.size()) <= 0) {
    ERR_clear_error();
    return false;
  }
  plain->resize(len);
  if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(plain->data()), &len, in, cipher.size()) <= 0) {
    ERR_clear_error();
    return false;
  }
  plain->resize(len);
  return true;
}

}  // namespace canal::testing::replay
