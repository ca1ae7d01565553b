#include "client_tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace canal::client::detail {

namespace {

// ---- the socket BIO -----------------------------------------------------------

SocketBioState* StateOf(BIO* b) { return static_cast<SocketBioState*>(BIO_get_data(b)); }

int BioWrite(BIO* b, const char* data, size_t n, size_t* written) {
  BIO_clear_retry_flags(b);
  const ssize_t r = ::send(StateOf(b)->fd, data, n, MSG_NOSIGNAL);
  if (r >= 0) {
    *written = static_cast<size_t>(r);
    return 1;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(b);
  return 0;
}

int BioRead(BIO* b, char* data, size_t n, size_t* read) {
  BIO_clear_retry_flags(b);
  const ssize_t r = ::recv(StateOf(b)->fd, data, n, 0);
  if (r > 0) {
    *read = static_cast<size_t>(r);
    return 1;
  }
  if (r == 0) {
    StateOf(b)->eof = true;
  } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
    BIO_set_retry_read(b);
  }
  return 0;
}

long BioCtrl(BIO* b, int cmd, long /*num*/, void* /*ptr*/) {
  switch (cmd) {
    case BIO_CTRL_FLUSH: return 1;  // nothing is buffered here
    case BIO_CTRL_EOF: return StateOf(b)->eof ? 1 : 0;
    default: return 0;
  }
}

int BioCreate(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

const BIO_METHOD* SocketBioMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "canal client socket");
    if (m == nullptr) return m;
    BIO_meth_set_write_ex(m, BioWrite);
    BIO_meth_set_read_ex(m, BioRead);
    BIO_meth_set_ctrl(m, BioCtrl);
    BIO_meth_set_create(m, BioCreate);
    return m;
  }();
  return method;
}

// ---- files ----------------------------------------------------------------------

Status Refused(const char* option, const std::string& path, const std::string& why) {
  return Status::InvalidArgument(std::string("TLS option ") + option + " = " + path + ": " + why);
}

Status CheckReadable(const char* option, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const std::string why =
        errno == ENOENT ? "the file does not exist" : "cannot be read: " + std::string(std::strerror(errno));
    return Refused(option, path, why);
  }
  if (!S_ISREG(st.st_mode)) return Refused(option, path, "is not a file (give a PEM file)");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Refused(option, path, "cannot be read: " + std::string(std::strerror(errno)));
  ::close(fd);
  return Status::OK();
}

std::string LastReason() {
  const unsigned long e = ERR_peek_last_error();
  const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
  ERR_clear_error();
  return reason != nullptr ? reason : "OpenSSL gave no reason";
}

Status Configure(const TlsOptions& tls, SSL_CTX* ctx) {
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A server that closes without close_notify has just closed: the frames
  // are length-prefixed, so a cut is seen anyway.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
  if (tls.verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (!tls.ca_file.empty()) {
      CANAL_RETURN_IF_ERROR(CheckReadable("tls.ca_file", tls.ca_file));
      if (SSL_CTX_load_verify_locations(ctx, tls.ca_file.c_str(), nullptr) != 1) {
        return Refused("tls.ca_file", tls.ca_file, "not PEM CA certificates: " + LastReason());
      }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
      return Status::InvalidArgument("TLS: the system's CA store cannot be loaded (" + LastReason() +
                                     "); give tls.ca_file");
    }
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return Status::InvalidArgument(tls.cert_file.empty()
                                       ? "TLS option tls.key_file = " + tls.key_file +
                                             " is set but tls.cert_file is not: give the certificate it belongs to"
                                       : "TLS option tls.cert_file = " + tls.cert_file +
                                             " is set but tls.key_file is not: give the certificate's private key");
  }
  if (!tls.cert_file.empty()) {
    CANAL_RETURN_IF_ERROR(CheckReadable("tls.cert_file", tls.cert_file));
    CANAL_RETURN_IF_ERROR(CheckReadable("tls.key_file", tls.key_file));
    if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) != 1) {
      return Refused("tls.cert_file", tls.cert_file, "not a PEM certificate: " + LastReason());
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      return Refused("tls.key_file", tls.key_file,
                     "not the private key of tls.cert_file = " + tls.cert_file + " (" + LastReason() + ")");
    }
  }
  ERR_clear_error();
  return Status::OK();
}

// A hint for a certificate the client refused.
const char* VerifyHint(long verify) {
  switch (verify) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return " (the server's canal.tls.cert needs a certificate valid now)";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return " (it is not signed by a CA this client trusts: tls.ca_file must hold the CA that signed the server's "
             "certificate)";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return " (connect by a name or address the certificate holds, or set tls.server_name)";
    default: return "";
  }
}

// A hint for an alert the server sent.
const char* AlertHint(int reason) {
  switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return " (the server requires a client certificate: give tls.cert_file and tls.key_file)";
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
      return " (the server refused this client's certificate: it has expired)";
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
      return " (the server refused this client's certificate: it must be signed by the CA of the server's "
             "canal.tls.clientCa)";
    default: return "";
  }
}

}  // namespace

bio_st* NewSocketBio(SocketBioState* state) {
  const BIO_METHOD* method = SocketBioMethod();
  if (method == nullptr) return nullptr;
  BIO* b = BIO_new(method);
  if (b != nullptr) BIO_set_data(b, state);
  return b;
}

Status MakeClientTlsContext(const TlsOptions& tls, ssl_ctx_st** out) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::IOError("TLS: cannot make a context: " + LastReason());
  Status s = Configure(tls, ctx);
  if (!s.ok()) {
    SSL_CTX_free(ctx);
    return s;
  }
  *out = ctx;
  return Status::OK();
}

bool SetPeerName(ssl_st* ssl, const std::string& name) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  unsigned char ip[16];
  if (inet_pton(AF_INET, name.c_str(), ip) == 1 || inet_pton(AF_INET6, name.c_str(), ip) == 1) {
    return X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1;  // no SNI for an address (RFC 6066)
  }
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set_tlsext_host_name(ssl, name.c_str()) == 1 && X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0) == 1;
}

std::string TlsFailure(ssl_st* ssl, int err, bool handshake) {
  const int saved_errno = errno;
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && (e == 0 && saved_errno == 0))) {
    return handshake ? "the server closed the connection during the TLS handshake" : "connection closed by the server";
  }
  if (err == SSL_ERROR_SYSCALL && e == 0) return std::strerror(saved_errno);
  const int reason = ERR_GET_REASON(e);
  const char* text = e != 0 ? ERR_reason_error_string(e) : nullptr;
  const std::string why = text != nullptr ? text : "TLS error " + std::to_string(err);
  if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
    const long verify = SSL_get_verify_result(ssl);
    return "server certificate: " + std::string(X509_verify_cert_error_string(verify)) + VerifyHint(verify);
  }
  if (why.find("alert") != std::string::npos || reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
    return "the server refused the connection: " + why + AlertHint(reason);
  }
  if (handshake && SSL_get0_peer_certificate(ssl) == nullptr) {
    // Bytes that are not TLS: "wrong version number", "packet length too long".
    return why + " (the server did not answer in TLS: does it have canal.tls.enabled = true?)";
  }
  return why;
}

}  // namespace canal::client::detail
