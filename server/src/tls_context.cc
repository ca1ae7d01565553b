#include "tls_context.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstring>
#include <exception>

namespace canal::server {

namespace ssl = boost::asio::ssl;

namespace {

// OpenSSL's reason for the last error on this thread ("no start line"),
// clearing the queue so that the next check starts afresh.
std::string OpenSslReason() {
  const unsigned long e = ERR_peek_last_error();
  std::string why;
  if (e != 0) {
    const char* reason = ERR_reason_error_string(e);
    why = reason != nullptr ? reason : "error " + std::to_string(e);
  }
  ERR_clear_error();
  return why.empty() ? "OpenSSL gave no reason" : why;
}

Status Refused(const char* key, const std::string& path, const std::string& why) {
  return Status::InvalidArgument(std::string(key) + " = " + path + ": " + why);
}

// The file exists, is a regular file and this process may read it.
Status CheckReadable(const char* key, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const std::string why =
        errno == ENOENT ? "the file does not exist" : "cannot be read: " + std::string(std::strerror(errno));
    return Refused(key, path, why);
  }
  if (!S_ISREG(st.st_mode)) return Refused(key, path, "is not a file (give a PEM file)");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Refused(key, path, "cannot be read: " + std::string(std::strerror(errno)));
  ::close(fd);
  return Status::OK();
}

std::string TimeText(const ASN1_TIME* t) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "?";
  ASN1_TIME_print(bio, t);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string text(data != nullptr && n > 0 ? std::string(data, static_cast<size_t>(n)) : "?");
  BIO_free(bio);
  return text;
}

Status Configure(const ServerTlsOptions& o, ssl::context* ctx, std::vector<std::string>* warnings) {
  SSL_CTX* native = ctx->native_handle();
  if (o.cert_file.empty() && o.key_file.empty()) {
    return Status::InvalidArgument("canal.tls.enabled = true needs canal.tls.cert and canal.tls.key (PEM files)");
  }
  if (o.cert_file.empty()) {
    return Status::InvalidArgument("canal.tls.key = " + o.key_file +
                                   " is set but canal.tls.cert is not: give the certificate the key belongs to");
  }
  if (o.key_file.empty()) {
    return Status::InvalidArgument("canal.tls.cert = " + o.cert_file +
                                   " is set but canal.tls.key is not: give the certificate's private key");
  }
  CANAL_RETURN_IF_ERROR(CheckReadable("canal.tls.cert", o.cert_file));
  CANAL_RETURN_IF_ERROR(CheckReadable("canal.tls.key", o.key_file));
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(native, o.cert_file.c_str()) != 1) {
    return Refused("canal.tls.cert", o.cert_file, "not a PEM certificate: " + OpenSslReason());
  }
  if (SSL_CTX_use_PrivateKey_file(native, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    const std::string why = OpenSslReason();
    if (why.find("mismatch") != std::string::npos) {
      return Refused("canal.tls.key", o.key_file,
                     "does not match the certificate of canal.tls.cert = " + o.cert_file + " (" + why + ")");
    }
    return Refused("canal.tls.key", o.key_file, "not a PEM private key (or one with a passphrase): " + why);
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return Refused("canal.tls.key", o.key_file,
                   "does not match the certificate of canal.tls.cert = " + o.cert_file + " (" + OpenSslReason() + ")");
  }
  if (X509* cert = SSL_CTX_get0_certificate(native); cert != nullptr) {
    if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
      warnings->push_back("canal.tls.cert = " + o.cert_file + ": the certificate expired on " +
                          TimeText(X509_get0_notAfter(cert)) + "; clients will refuse it");
    } else if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
      warnings->push_back("canal.tls.cert = " + o.cert_file + ": the certificate is valid only from " +
                          TimeText(X509_get0_notBefore(cert)) + "; clients will refuse it until then");
    }
  }

  const int min_version = o.min_version == "TLSv1.3" ? TLS1_3_VERSION : TLS1_2_VERSION;
  SSL_CTX_set_min_proto_version(native, min_version);
  // No resumption: a session is one long connection, and without tickets
  // a client never reads post-handshake messages it did not ask for.
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_options(native, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_num_tickets(native, 0);

  if (!o.client_ca_file.empty()) {
    CANAL_RETURN_IF_ERROR(CheckReadable("canal.tls.clientCa", o.client_ca_file));
    if (SSL_CTX_load_verify_locations(native, o.client_ca_file.c_str(), nullptr) != 1) {
      return Refused("canal.tls.clientCa", o.client_ca_file, "not PEM CA certificates: " + OpenSslReason());
    }
    // The CA names the server sends in its certificate request.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(o.client_ca_file.c_str());
    if (names == nullptr) {
      return Refused("canal.tls.clientCa", o.client_ca_file, "holds no CA certificate: " + OpenSslReason());
    }
    SSL_CTX_set_client_CA_list(native, names);
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  ERR_clear_error();
  return Status::OK();
}

}  // namespace

Status MakeServerTlsContext(const ServerTlsOptions& options, std::shared_ptr<ssl::context>* out,
                            std::vector<std::string>* warnings) {
  std::shared_ptr<ssl::context> ctx;
  try {
    ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  } catch (const std::exception& e) {
    return Status::IOError(std::string("canal.tls.enabled: cannot make a TLS context: ") + e.what());
  }
  CANAL_RETURN_IF_ERROR(Configure(options, ctx.get(), warnings));
  *out = std::move(ctx);
  return Status::OK();
}

Status CheckServerTls(const ServerTlsOptions& options) {
  std::shared_ptr<ssl::context> ctx;
  std::vector<std::string> warnings;
  return MakeServerTlsContext(options, &ctx, &warnings);
}

}  // namespace canal::server
