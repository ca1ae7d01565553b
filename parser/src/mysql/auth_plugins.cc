#include "canal/parser/mysql/auth_plugins.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>

namespace canal::mysql::auth {
namespace {

// Digest of a + b; the EVP interface because OpenSSL 3 deprecates SHA1_Init & co.
std::string Digest(const EVP_MD* md, std::string_view a, std::string_view b = {}) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1 || EVP_DigestUpdate(ctx.get(), a.data(), a.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), b.data(), b.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), out, &len) != 1) {
    return std::string();  // only on allocation failure; the server then rejects the login
  }
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Sha1(std::string_view a, std::string_view b = {}) { return Digest(EVP_sha1(), a, b); }
std::string Sha256(std::string_view a, std::string_view b = {}) { return Digest(EVP_sha256(), a, b); }

std::string Xor(std::string a, std::string_view b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] = static_cast<char>(a[i] ^ b[i]);
  return a;
}

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

}  // namespace

bool IsSupportedPlugin(std::string_view plugin) {
  return plugin == kNativePassword || plugin == kCachingSha2Password || plugin == kSha256Password;
}

std::string NativePasswordScramble(std::string_view password, std::string_view nonce) {
  if (password.empty()) return "";
  const std::string stage1 = Sha1(password);
  const std::string stage2 = Sha1(stage1);
  return Xor(stage1, Sha1(nonce, stage2));
}

std::string CachingSha2Scramble(std::string_view password, std::string_view nonce) {
  if (password.empty()) return "";
  const std::string stage1 = Sha256(password);
  const std::string stage2 = Sha256(stage1);
  return Xor(stage1, Sha256(stage2, nonce));
}

Status RsaEncryptPassword(std::string_view password, std::string_view nonce, std::string_view pem_public_key,
                          std::string* out) {
  if (nonce.empty()) return Status::InvalidArgument("RSA password encryption: the server sent no nonce");
  std::string plain(password);
  plain.push_back('\0');
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<char>(plain[i] ^ nonce[i % nonce.size()]);

  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem_public_key.data(), static_cast<int>(pem_public_key.size())),
                                                 &BIO_free);
  if (!bio) return Status::IOError("RSA password encryption: " + OpenSslError());
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
                                                           &EVP_PKEY_free);
  if (!key) {
    return Status::InvalidArgument("the server's RSA public key is not a PEM \"PUBLIC KEY\": " + OpenSslError());
  }
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new(key.get(), nullptr),
                                                                  &EVP_PKEY_CTX_free);
  size_t len = 0;
  if (!ctx || EVP_PKEY_encrypt_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING) <= 0 ||
      EVP_PKEY_encrypt(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(plain.data()),
                       plain.size()) <= 0) {
    return Status::InvalidArgument("RSA password encryption failed (password longer than the key allows?): " +
                                   OpenSslError());
  }
  out->resize(len);
  if (EVP_PKEY_encrypt(ctx.get(), reinterpret_cast<unsigned char*>(out->data()), &len,
                       reinterpret_cast<const unsigned char*>(plain.data()), plain.size()) <= 0) {
    return Status::InvalidArgument("RSA password encryption failed (password longer than the key allows?): " +
                                   OpenSslError());
  }
  out->resize(len);
  return Status::OK();
}

}  // namespace canal::mysql::auth
